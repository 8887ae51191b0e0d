//! The recording format as the harness uses it: the format itself (types,
//! reader, writer) lives in the `recording-format` crate, which the
//! bridge's tap writes too; here are the harness's build stamp and the
//! recorder's scrubber.

pub use recording_format::blobs;
pub use recording_format::recording::*;

/// The harness's own build, named in the header of every recording it writes.
pub const HARNESS_BUILD: acp_bridge::build_stamp::BuildStamp =
    acp_bridge::build_stamp::BuildStamp::new(
        "acp-harness",
        env!("CARGO_PKG_VERSION"),
        env!("VERGEN_GIT_SHA"),
        env!("VERGEN_GIT_DIRTY"),
        env!("VERGEN_CARGO_TARGET_TRIPLE"),
    );

mod scrubber;
pub use scrubber::{Scrubber, temp_placeholder};

#[cfg(test)]
mod tests;
