//! The recording format, shared: the harness's corpus writes and reads it,
//! the bridge's tap writes it, and both keep secrets and the user's values
//! off disk with the same scrubber and placeholders. The format's lines
//! ([`recording`]), their [`reader`] and [`writer`], the store of large
//! payloads by content ([`blobs`]), and reading corpus files that a pull
//! request may have changed ([`regular_file`]: regular files only) are
//! each done here once.

pub mod blobs;
pub mod placeholder;
pub mod reader;
pub mod recording;
pub mod regular_file;
pub mod scrub;
pub mod tap;
pub mod writer;
