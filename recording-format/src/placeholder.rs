//! The placeholders recordings and taps put where a value of the machine,
//! the run or a secret stood. One spelling each, whoever scrubs.

/// A secret: an Authorization value, an API key, text shaped like a credential.
pub const REDACTED: &str = "<redacted>";
