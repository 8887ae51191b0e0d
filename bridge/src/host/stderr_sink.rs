//! Our stderr (diagnostics and the agent's forwarded stderr), written by its
//! own task. A panel that pipes our stderr and never reads it must not stall
//! the session: when the queue is full (in lines or in bytes), lines are
//! dropped and counted, and the count is reported as soon as there is room
//! again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

const QUEUE: usize = 1024;
/// Bytes that may wait for stderr (an agent's stderr lines may be long).
const QUEUE_BYTES: usize = 4 << 20;

pub struct StderrSink {
    tx: mpsc::Sender<String>,
    queued: Arc<AtomicUsize>,
    dropped: usize,
    task: JoinHandle<()>,
}

impl StderrSink {
    pub fn start() -> StderrSink {
        StderrSink::to(tokio::io::stderr())
    }

    /// A sink writing to `writer` (tests use an in-memory pipe).
    pub fn to<W: AsyncWrite + Unpin + Send + 'static>(writer: W) -> StderrSink {
        let (tx, rx) = mpsc::channel(QUEUE);
        let queued = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(write_all_lines(writer, rx, queued.clone()));
        StderrSink {
            tx,
            queued,
            dropped: 0,
            task,
        }
    }

    fn try_send(&self, text: String) -> bool {
        let len = text.len();
        if self.queued.load(Ordering::Acquire) + len > QUEUE_BYTES {
            return false;
        }
        self.queued.fetch_add(len, Ordering::AcqRel);
        match self.tx.try_send(text) {
            Ok(()) => true,
            Err(_) => {
                self.queued.fetch_sub(len, Ordering::AcqRel);
                false
            }
        }
    }

    /// Queues one line (without its newline); never waits.
    pub fn line(&mut self, text: String) {
        if self.dropped > 0 {
            let note = format!(
                "acp-bridge: {} stderr line(s) dropped: stderr was not being read",
                self.dropped
            );
            if !self.try_send(note) {
                self.dropped += 1;
                return;
            }
            self.dropped = 0;
        }
        if !self.try_send(text) {
            self.dropped += 1;
        }
    }

    /// Writes out what is queued, waiting at most `limit`.
    pub async fn close(self, limit: Duration) {
        drop(self.tx);
        let _ = tokio::time::timeout(limit, self.task).await;
    }
}

async fn write_all_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<String>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(line) = rx.recv().await {
        queued.fetch_sub(line.len(), Ordering::AcqRel);
        let written = async {
            writer.write_all(line.as_bytes()).await?;
            writer.write_all(b"\n").await?;
            if rx.is_empty() {
                writer.flush().await?;
            }
            std::io::Result::Ok(())
        };
        if written.await.is_err() {
            return; // stderr is gone; nothing left to tell
        }
    }
    let _ = writer.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_reader_that_never_reads_costs_lines_not_a_stall() {
        // A 64-byte pipe nobody reads until the end.
        let (writer, mut reader) = tokio::io::duplex(64);
        let mut sink = StderrSink::to(writer);
        for i in 0..(QUEUE * 3) {
            sink.line(format!("line {i} with some padding to fill the pipe"));
        }
        // Reaching here at all is the point: `line` never waited.
        sink.close(Duration::from_millis(200)).await;
        let mut got = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), reader.read_to_end(&mut got)).await;
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("line 0 "), "{text:.80}");
    }

    #[tokio::test]
    async fn long_lines_are_dropped_once_the_byte_budget_is_used_up() {
        let (writer, _reader) = tokio::io::duplex(64);
        let mut sink = StderrSink::to(writer);
        for _ in 0..8 {
            sink.line("x".repeat(1 << 20));
        }
        assert!(sink.dropped >= 4, "{} dropped", sink.dropped);
        assert!(sink.queued.load(Ordering::Acquire) <= QUEUE_BYTES);
    }

    #[tokio::test]
    async fn dropped_lines_are_counted_once_there_is_room() {
        let (writer, mut reader) = tokio::io::duplex(1 << 20);
        let mut sink = StderrSink::to(writer);
        sink.dropped = 5;
        sink.line("after".into());
        sink.close(Duration::from_secs(2)).await;
        let mut got = String::new();
        reader.read_to_string(&mut got).await.unwrap();
        assert_eq!(
            got,
            "acp-bridge: 5 stderr line(s) dropped: stderr was not being read\nafter\n"
        );
    }
}
