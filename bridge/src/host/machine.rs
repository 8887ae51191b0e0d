//! What names this machine and its user, for the tap to keep off disk:
//! agents echo them (Gemini's system prompt has the OS version, stderr the
//! host name, `initialize` `_meta` the user) and a tap goes to maintainers.
//! Also the values of the environment's secret-named variables, which the
//! agent inherits and may print.

use std::ffi::OsStr;

/// The names each value is scrubbed under: (kind, placeholder, value).
/// Short values are left out (they would hit ordinary words): a host name
/// under 6 characters, a user name under 5, `localhost`.
pub fn identity() -> Vec<(&'static str, &'static str, String)> {
    let mut out = Vec::new();
    if let Some(host) = hostname().filter(|h| h.len() >= 6 && h != "localhost") {
        out.push(("hostname", "<hostname>", host));
    }
    if let Some(release) = kernel_release().filter(|r| r.len() >= 6) {
        out.push(("kernel-release", "<kernel-release>", release));
    }
    let user = ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()));
    if let Some(user) = user.filter(|u| u.len() >= 5) {
        out.push(("user", "<user>", user));
    }
    out
}

/// The values of the environment's variables named like secrets
/// (`*_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, `*PASSWD*`,
/// `*CREDENTIAL*`), at least 8 bytes long.
pub fn secret_values() -> Vec<String> {
    std::env::vars_os()
        .filter(|(name, _)| secret_named(name))
        .filter_map(|(_, value)| value.into_string().ok())
        .filter(|v| v.len() >= 8)
        .collect()
}

fn secret_named(name: &OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    name.ends_with("_KEY")
        || name.ends_with("_TOKEN")
        || ["SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
            .iter()
            .any(|w| name.contains(w))
}

#[cfg(unix)]
fn uname() -> Option<libc::utsname> {
    // SAFETY: uname fills the zeroed struct it is given and returns 0.
    unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        (libc::uname(&mut name) == 0).then_some(name)
    }
}

#[cfg(unix)]
fn field(chars: &[libc::c_char]) -> Option<String> {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8(bytes).ok().filter(|s| !s.is_empty())
}

#[cfg(unix)]
fn hostname() -> Option<String> {
    uname().and_then(|u| field(&u.nodename))
}

#[cfg(unix)]
fn kernel_release() -> Option<String> {
    uname().and_then(|u| field(&u.release))
}

#[cfg(windows)]
fn hostname() -> Option<String> {
    std::env::var("COMPUTERNAME").ok().filter(|h| !h.is_empty())
}

#[cfg(windows)]
fn kernel_release() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_named_variables_are_those_an_agent_reads_keys_from() {
        for name in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "db_password",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(secret_named(OsStr::new(name)), "{name}");
        }
        for name in ["PATH", "HOME", "KEYBOARD", "TOKENIZERS_PARALLELISM", "LANG"] {
            assert!(!secret_named(OsStr::new(name)), "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_kernel_release_is_read() {
        assert!(kernel_release().is_some());
    }
}
