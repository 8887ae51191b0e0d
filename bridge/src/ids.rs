//! Id sources: the core mints no ids of its own (no output of it depends on
//! randomness), so ids come from outside.

/// Supplies the uuids the bridge stamps on stream-json messages.
pub trait IdSource {
    fn next_uuid(&mut self) -> String;
}

/// Deterministic ids (`00000000-0000-4000-8000-000000000001`, ...) for replay and tests.
#[derive(Debug, Default)]
pub struct CounterIds {
    next: u64,
}

impl IdSource for CounterIds {
    fn next_uuid(&mut self) -> String {
        self.next += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.next)
    }
}
