//! The recording format, shared: the harness's corpus writes and reads it,
//! the bridge's tap writes it, and both name the values they scrub with the
//! same placeholders. Reading a corpus that a pull request may have changed
//! is done here once ([`regular_file`]: regular files only), as is the store
//! of large payloads by content ([`blobs`]).

pub mod blobs;
pub mod placeholder;
pub mod regular_file;
