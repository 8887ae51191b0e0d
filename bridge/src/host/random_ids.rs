//! Random uuids for a live session. Randomness lives in the host, never in
//! the core, so replay can substitute deterministic counters.

use acp_bridge::IdSource;

/// uuid v4 ids.
pub struct RandomIds;

impl IdSource for RandomIds {
    fn next_uuid(&mut self) -> String {
        uuid::Uuid::new_v4().to_string()
    }
}
