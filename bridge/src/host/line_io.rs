//! Line-framed pipes. Readers run as their own tasks and hand whole lines to
//! the session loop over a channel; writers run as their own tasks (or, for
//! our stdout, a blocking thread) fed by [`LineQueue`]s. So the session loop
//! never waits on a pipe: a slow or stuck peer cannot block the other
//! direction (no pipe deadlock), and the channel receive it selects on is
//! cancel-safe. What may wait in between is bounded in bytes (see
//! [`super::line_queue`]), and so is one line: a line longer than the cap is
//! never buffered past it but skipped to its end and reported.
//!
//! [`LineQueue`]: super::line_queue::LineQueue

use std::io::Write;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

pub use super::line_queue::WriteCmd;
use super::line_queue::{Held, QueueRx, ReadBudget};

/// The default longest line, either direction (`--max-line-bytes`).
pub const DEFAULT_MAX_LINE: usize = 128 << 20;

/// How much a reader asks of its pipe at a time.
const READ_BUF: usize = 1 << 16;

/// One line without its terminator. `lossy` says invalid UTF-8 was replaced.
#[derive(Debug)]
pub struct Line {
    pub text: String,
    pub lossy: bool,
    /// Its bytes of the reader's budget, given back when the line is dropped.
    _held: Option<Held>,
}

/// What a reader hands over, in pipe order.
#[derive(Debug)]
pub enum Read {
    Line(Line),
    /// The line being read has grown past the cap: it is being skipped
    /// (sent once, as soon as the cap is passed, so an endless line is
    /// reported while it lasts).
    OverCap,
    /// The over-cap line ended (its newline, or EOF) after `bytes` bytes.
    Skipped {
        bytes: u64,
    },
    /// The pipe ended: `None` at a clean EOF, `Some(text)` on a read error.
    End(Option<String>),
}

/// Reads `reader` line by line, sending `wrap(read)` for each non-blank line
/// (an unterminated last line too), [`Read::OverCap`] and [`Read::Skipped`]
/// for a line longer than `max_line` bytes, and [`Read::End`] once. Each line
/// first takes its size from `budget` (when given), so the reader stops
/// reading while the session loop holds the whole budget. Bytes are copied
/// once, from the pipe buffer into the line.
pub async fn read_lines<R, E>(
    reader: R,
    max_line: usize,
    budget: Option<ReadBudget>,
    events: mpsc::Sender<E>,
    wrap: impl Fn(Read) -> E,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = BufReader::with_capacity(READ_BUF, reader);
    let mut buf: Vec<u8> = Vec::new();
    // bytes of the over-cap line being skipped
    let mut skipping: Option<u64> = None;
    let end = loop {
        let chunk = match reader.fill_buf().await {
            Ok(chunk) => chunk,
            Err(e) => break Some(e.to_string()),
        };
        if chunk.is_empty() {
            let last = match skipping.take() {
                Some(bytes) => Some(Read::Skipped { bytes }),
                None => deliver(std::mem::take(&mut buf), budget.as_ref()).await,
            };
            if let Some(read) = last
                && events.send(wrap(read)).await.is_err()
            {
                return;
            }
            break None;
        }
        let newline = memchr::memchr(b'\n', chunk);
        let piece = &chunk[..newline.unwrap_or(chunk.len())];
        let mut crossed = false;
        match skipping.as_mut() {
            Some(bytes) => *bytes += piece.len() as u64,
            None if buf.len() + piece.len() > max_line => {
                skipping = Some((buf.len() + piece.len()) as u64);
                buf = Vec::new();
                crossed = true;
            }
            None => buf.extend_from_slice(piece),
        }
        let used = newline.map_or(chunk.len(), |i| i + 1);
        reader.consume(used);
        if crossed && events.send(wrap(Read::OverCap)).await.is_err() {
            return;
        }
        if newline.is_none() {
            continue;
        }
        let read = match skipping.take() {
            Some(bytes) => Some(Read::Skipped { bytes }),
            None => deliver(std::mem::take(&mut buf), budget.as_ref()).await,
        };
        if let Some(read) = read
            && events.send(wrap(read)).await.is_err()
        {
            return; // the session is over
        }
    };
    let _ = events.send(wrap(Read::End(end))).await;
}

/// The line in `bytes` (its `\r` ends cut), or `None` when it is blank.
async fn deliver(mut bytes: Vec<u8>, budget: Option<&ReadBudget>) -> Option<Read> {
    while bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let held = match budget {
        Some(b) => Some(b.take(bytes.len()).await),
        None => None,
    };
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    Some(Read::Line(Line {
        text,
        lossy,
        _held: held,
    }))
}

/// Writes each line plus `\n`, flushing whenever the queue runs empty. Returns
/// the write error, if any, after which the pipe is dropped.
pub async fn write_lines<W>(writer: W, mut commands: QueueRx) -> Option<std::io::Error>
where
    W: AsyncWrite + Unpin,
{
    let mut writer = BufWriter::with_capacity(1 << 16, writer);
    while let Some(cmd) = commands.recv().await {
        let result = match cmd {
            WriteCmd::Line(line) => {
                let r = write_line(&mut writer, &line, commands.is_empty()).await;
                commands.written(line.len());
                r
            }
            WriteCmd::Close => break,
        };
        if let Err(e) = result {
            return Some(e);
        }
    }
    let flushed = writer.flush().await.err();
    let _ = writer.into_inner().shutdown().await;
    flushed
}

/// [`write_lines`] on a blocking writer, for a thread of its own (not an
/// async task): our stdout. tokio writes stdout on a blocking thread anyway,
/// but in 2 MiB pieces each handed over by the runtime's one thread, so a
/// large line stalled whenever the core was busy; here the whole line is
/// written while the core goes on.
pub fn write_lines_blocking<W: Write>(writer: W, mut commands: QueueRx) -> Option<std::io::Error> {
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, writer);
    while let Some(cmd) = commands.blocking_recv() {
        let result = match cmd {
            WriteCmd::Line(line) => {
                let r = writer
                    .write_all(line.as_bytes())
                    .and_then(|()| writer.write_all(b"\n"))
                    .and_then(|()| match commands.is_empty() {
                        true => writer.flush(),
                        false => Ok(()),
                    });
                commands.written(line.len());
                r
            }
            WriteCmd::Close => break,
        };
        if let Err(e) = result {
            return Some(e);
        }
    }
    writer.flush().err()
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &mut BufWriter<W>,
    line: &str,
    flush: bool,
) -> std::io::Result<()> {
    writer.write_all(line.as_bytes()).await?;
    writer.write_all(b"\n").await?;
    if flush {
        writer.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use tokio::io::ReadBuf;

    use super::super::line_queue::line_queue;
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Ev {
        Line(String, bool),
        OverCap,
        Skipped(u64),
        End(Option<String>),
    }

    fn ev(read: Read) -> Ev {
        match read {
            Read::Line(l) => Ev::Line(l.text, l.lossy),
            Read::OverCap => Ev::OverCap,
            Read::Skipped { bytes } => Ev::Skipped(bytes),
            Read::End(e) => Ev::End(e),
        }
    }

    /// A pipe that hands out one piece per read, as a real pipe may.
    struct Pieces(VecDeque<Vec<u8>>);

    impl AsyncRead for Pieces {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            out: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            if let Some(mut piece) = self.0.pop_front() {
                let n = piece.len().min(out.remaining());
                out.put_slice(&piece[..n]);
                if n < piece.len() {
                    self.0.push_front(piece.split_off(n));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    async fn read_pieces(pieces: &[&[u8]], max_line: usize) -> Vec<Ev> {
        let pipe = Pieces(pieces.iter().map(|p| p.to_vec()).collect());
        let (tx, mut rx) = mpsc::channel(64);
        read_lines(pipe, max_line, None, tx, ev).await;
        let mut out = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            out.push(ev);
        }
        out
    }

    async fn lines_of(input: &'static [u8]) -> Vec<Ev> {
        read_pieces(&[input], DEFAULT_MAX_LINE).await
    }

    fn line(text: &str) -> Ev {
        Ev::Line(text.into(), false)
    }

    #[tokio::test]
    async fn reader_splits_lines_and_keeps_an_unterminated_tail() {
        let got = lines_of(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}").await;
        assert_eq!(
            got,
            vec![
                line("{\"a\":1}"),
                line("{\"b\":2}"),
                line("{\"c\":3}"),
                Ev::End(None),
            ]
        );
    }

    #[tokio::test]
    async fn reader_replaces_invalid_utf8_and_says_so() {
        let got = lines_of(b"ok\n\xff\xfe bad\n").await;
        assert_eq!(got[0], line("ok"));
        assert_eq!(got[1], Ev::Line("\u{fffd}\u{fffd} bad".into(), true));
    }

    #[tokio::test]
    async fn reader_joins_lines_split_across_reads() {
        let got = read_pieces(&[b"{\"a\"", b":1}\n{", b"\"b\":2", b"}\n"], 64).await;
        assert_eq!(
            got,
            vec![line("{\"a\":1}"), line("{\"b\":2}"), Ev::End(None)]
        );
    }

    #[tokio::test]
    async fn reader_skips_an_over_cap_line_exactly_to_its_newline() {
        // a cap of 8: 8 bytes pass, 9 do not, however the reads are cut
        let cases: &[&[&[u8]]] = &[
            &[b"12345678\n123456789\nnext\n"],
            &[b"1234", b"5678\n12345", b"6789", b"\nne", b"xt\n"],
            &[b"12345678\n123456789", b"abcdef", b"\nnext"],
        ];
        let skipped = [9, 9, 15];
        for (pieces, bytes) in cases.iter().zip(skipped) {
            let got = read_pieces(pieces, 8).await;
            assert_eq!(
                got,
                vec![
                    line("12345678"),
                    Ev::OverCap,
                    Ev::Skipped(bytes),
                    line("next"),
                    Ev::End(None)
                ],
                "{pieces:?}"
            );
        }
    }

    #[tokio::test]
    async fn reader_reports_an_over_cap_line_cut_by_eof() {
        let got = read_pieces(&[b"ok\n", b"0123456789", b"0123456789"], 8).await;
        assert_eq!(
            got,
            vec![line("ok"), Ev::OverCap, Ev::Skipped(20), Ev::End(None)]
        );
    }

    #[tokio::test]
    async fn reader_holds_back_lines_while_its_budget_is_used_up() {
        let pipe = Pieces([b"aaaaaa\nbbbbbb\n".to_vec()].into());
        let (tx, mut rx) = mpsc::channel(64);
        let reader = tokio::spawn(read_lines(pipe, 64, Some(ReadBudget::new(10)), tx, |r| r));
        let first = rx.recv().await;
        assert!(matches!(&first, Some(Read::Line(l)) if l.text == "aaaaaa"));
        let second = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await;
        assert!(second.is_err(), "6 + 6 bytes do not fit a budget of 10");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(1), rx.recv()).await;
        assert!(matches!(second, Ok(Some(Read::Line(l))) if l.text == "bbbbbb"));
        reader.await.unwrap();
    }

    /// Two lines, a close, and a line after it (never written).
    fn lines_then_close() -> QueueRx {
        let (q, rx) = line_queue(1 << 20);
        q.push("one".into());
        q.push("two".into());
        q.close();
        q.push("after close".into());
        rx
    }

    #[tokio::test]
    async fn writer_terminates_each_line_and_stops_at_close() {
        let mut out = Vec::new();
        assert!(write_lines(&mut out, lines_then_close()).await.is_none());
        assert_eq!(out, b"one\ntwo\n");
    }

    #[test]
    fn blocking_writer_terminates_each_line_and_stops_at_close() {
        let mut out = Vec::new();
        assert!(write_lines_blocking(&mut out, lines_then_close()).is_none());
        assert_eq!(out, b"one\ntwo\n");
    }
}
