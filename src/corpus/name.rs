//! Names that become path components: profile and agent ids (from a
//! profile, a recording's header, a registry entry, the command line),
//! versions and scenario names. Each is checked where it is read, before any
//! path is built from it, so nothing a file or an index says can reach
//! outside the root (`../x`, `/etc/x`) or fail as a file name too long.

/// The longest name accepted.
pub const MAX_LEN: usize = 128;

/// A value that is not a name, with the field it was read from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{field} = {value:?} is not a name: {why} (a name is letters, digits, `.`, `_`, `+` or `-`, \
     starting with a letter or digit, at most {MAX_LEN} characters)"
)]
pub struct NameError {
    pub field: String,
    /// The value, cut to a readable length.
    pub value: String,
    pub why: &'static str,
}

/// Checks `value` (read as `field`) is a single path component:
/// `^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`.
pub fn check(field: &str, value: &str) -> Result<(), NameError> {
    let why = if value.is_empty() {
        Some("it is empty")
    } else if value.chars().count() > MAX_LEN {
        Some("it is too long")
    } else if !value.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        Some("it does not start with a letter or digit")
    } else if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
    {
        Some("it holds a character a name cannot")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(NameError {
            field: field.to_string(),
            value: value.chars().take(160).collect(),
            why,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_bounded_path_components() {
        let long = "1".repeat(MAX_LEN + 1);
        let cases: &[(&str, bool)] = &[
            ("codex-acp", true),
            ("2.6.0", true),
            ("1.0.0-rc.1+build.5", true),
            ("unity-call-allowed", true),
            ("python_sdk", true),
            ("", false),
            (".", false),
            ("..", false),
            ("../x", false),
            ("a/b", false),
            ("/etc", false),
            ("-rf", false),
            (".hidden", false),
            ("a b", false),
            ("a\\b", false),
            ("é", false),
            (&long, false),
            (&long[1..], true),
        ];
        for (value, ok) in cases {
            assert_eq!(check("id", value).is_ok(), *ok, "{value:?}");
        }
        let err = check("id", "../../x").unwrap_err().to_string();
        assert!(err.starts_with("id = \"../../x\" is not a name"), "{err}");
    }
}
