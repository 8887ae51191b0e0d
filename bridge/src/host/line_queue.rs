//! The byte budgets that bound what the host holds between the pipes and the
//! core, so a flood from either side is met with backpressure, not memory.
//!
//! Reading: a reader takes a line's size from a [`ReadBudget`] before it hands
//! the line over, and the line gives it back when the session loop drops it;
//! with the budget used up the reader stops reading, so the peer blocks on
//! its own pipe. Writing: the core's output goes to a writer through a
//! [`LineQueue`] that counts the bytes waiting; the session loop takes no new
//! input while a queue is over its budget (an input's output is never refused,
//! so the queue overshoots by at most one input's worth), and the writer wakes
//! it once the queue has drained to half. A line larger than a budget takes
//! the whole budget, so it travels alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc};

/// Bytes of lines a reader may have handed over and the loop not yet dropped.
pub const READ_BUDGET: usize = 4 << 20;
/// Bytes of lines that may wait for a writer before the loop stops taking input.
pub const WRITE_BUDGET: usize = 4 << 20;

/// The bytes a reader may have in flight (see the module doc).
#[derive(Clone)]
pub struct ReadBudget {
    permits: Arc<Semaphore>,
    bytes: u32,
}

/// A share of a [`ReadBudget`], given back when dropped.
#[derive(Debug)]
pub struct Held(#[allow(dead_code)] OwnedSemaphorePermit);

impl ReadBudget {
    pub fn new(bytes: usize) -> ReadBudget {
        let bytes = bytes.clamp(1, u32::MAX as usize) as u32;
        ReadBudget {
            permits: Arc::new(Semaphore::new(bytes as usize)),
            bytes,
        }
    }

    /// Waits until `len` bytes (at most the whole budget) are free and takes them.
    pub async fn take(&self, len: usize) -> Held {
        let n = len.clamp(1, self.bytes as usize) as u32;
        let permit = self
            .permits
            .clone()
            .acquire_many_owned(n)
            .await
            .expect("the budget's semaphore is never closed");
        Held(permit)
    }
}

/// What a writer should do next.
pub enum WriteCmd {
    Line(String),
    /// Flush and close the pipe (for the agent: its stdin EOF).
    Close,
}

/// How full a [`LineQueue`] is, shared by its two ends.
struct Level {
    queued: AtomicUsize,
    room: Notify,
    budget: usize,
}

/// The session loop's end of a queue to a writer.
pub struct LineQueue {
    tx: mpsc::UnboundedSender<WriteCmd>,
    level: Arc<Level>,
}

/// The writer's end of a [`LineQueue`].
pub struct QueueRx {
    rx: mpsc::UnboundedReceiver<WriteCmd>,
    level: Arc<Level>,
}

/// A queue whose loop end has room while fewer than `budget` bytes wait.
pub fn line_queue(budget: usize) -> (LineQueue, QueueRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    let level = Arc::new(Level {
        queued: AtomicUsize::new(0),
        room: Notify::new(),
        budget: budget.max(1),
    });
    (
        LineQueue {
            tx,
            level: level.clone(),
        },
        QueueRx { rx, level },
    )
}

impl LineQueue {
    /// Queues `line`; never waits (the caller checks [`LineQueue::has_room`]
    /// before taking the input this line answers).
    pub fn push(&self, line: String) {
        let len = line.len();
        // counted before it can be taken, so the writer never counts below zero
        self.level.queued.fetch_add(len, Ordering::AcqRel);
        if self.tx.send(WriteCmd::Line(line)).is_err() {
            self.level.queued.fetch_sub(len, Ordering::AcqRel);
        }
    }

    pub fn close(&self) {
        let _ = self.tx.send(WriteCmd::Close);
    }

    pub fn has_room(&self) -> bool {
        self.level.queued.load(Ordering::Acquire) < self.level.budget
    }

    /// Resolves once the writer has drained the queue to half its budget
    /// (or earlier, spuriously: the caller checks again).
    pub async fn room(&self) {
        if !self.has_room() {
            self.level.room.notified().await;
        }
    }
}

impl QueueRx {
    pub async fn recv(&mut self) -> Option<WriteCmd> {
        self.rx.recv().await
    }

    pub fn blocking_recv(&mut self) -> Option<WriteCmd> {
        self.rx.blocking_recv()
    }

    pub fn is_empty(&self) -> bool {
        self.rx.is_empty()
    }

    /// A line of `len` bytes has left the queue (written or dropped).
    pub fn written(&self, len: usize) {
        let before = self.level.queued.fetch_sub(len, Ordering::AcqRel);
        let low = self.level.budget / 2;
        if before >= low && before.saturating_sub(len) < low {
            // a stored permit if the loop is not waiting yet: no lost wake-up
            self.level.room.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_queue_over_its_budget_has_room_again_once_drained_to_half() {
        let (q, mut rx) = line_queue(100);
        q.push("a".repeat(60));
        assert!(q.has_room());
        q.push("b".repeat(60));
        assert!(!q.has_room(), "120 of 100 bytes queued");
        let writer = tokio::spawn(async move {
            while let Some(WriteCmd::Line(line)) = rx.recv().await {
                rx.written(line.len());
            }
        });
        tokio::time::timeout(Duration::from_secs(1), async {
            while !q.has_room() {
                q.room().await;
            }
        })
        .await
        .expect("the writer's drain woke the waiting loop");
        q.close();
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn a_reader_budget_waits_until_lines_are_dropped() {
        let budget = ReadBudget::new(10);
        let a = budget.take(6).await;
        let b = budget.take(4).await;
        let waiting = tokio::time::timeout(Duration::from_millis(50), budget.take(1)).await;
        assert!(waiting.is_err(), "the budget is used up");
        drop(a);
        // a line larger than the budget takes all of it once free
        drop(b);
        let all = tokio::time::timeout(Duration::from_secs(1), budget.take(1000))
            .await
            .expect("the whole budget is free");
        assert_eq!(budget.permits.available_permits(), 0);
        drop(all);
        assert_eq!(budget.permits.available_permits(), 10);
    }
}
