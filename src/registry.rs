//! Published versions of an agent's npm packages, for bisect: `npm view
//! <package> versions --json` through npm itself (its config, proxy and
//! cache apply), bounded by a timeout.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `npm view` may take.
pub const NPM_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("npm view {package} versions: cannot run npm: {source}")]
    Spawn {
        package: String,
        source: std::io::Error,
    },
    #[error("npm view {package} versions: no answer within {secs} s")]
    Timeout { package: String, secs: u64 },
    #[error("npm view {package} versions: exit {code:?}: {stderr}")]
    Failed {
        package: String,
        code: Option<i32>,
        stderr: String,
    },
    #[error("npm view {package} versions: not a JSON list of versions: {why}")]
    Parse { package: String, why: String },
}

/// Every published version of `package` that parses as semver, ascending.
pub fn npm_versions(package: &str) -> Result<Vec<semver::Version>, RegistryError> {
    let mut child = Command::new("npm")
        .args(["view", package, "versions", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| RegistryError::Spawn {
            package: package.into(),
            source,
        })?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < NPM_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(100))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RegistryError::Timeout {
                    package: package.into(),
                    secs: NPM_TIMEOUT.as_secs(),
                });
            }
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|source| RegistryError::Spawn {
            package: package.into(),
            source,
        })?;
    if !out.status.success() {
        return Err(RegistryError::Failed {
            package: package.into(),
            code: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    parse_versions(&String::from_utf8_lossy(&out.stdout)).map_err(|why| RegistryError::Parse {
        package: package.into(),
        why,
    })
}

/// `npm view ... --json` prints a list, or a bare string for a package with
/// one version. Versions that are not semver are skipped.
pub fn parse_versions(json: &str) -> Result<Vec<semver::Version>, String> {
    let v: serde_json::Value = serde_json::from_str(json.trim()).map_err(|e| e.to_string())?;
    let list: Vec<&str> = match &v {
        serde_json::Value::Array(items) => items.iter().filter_map(|i| i.as_str()).collect(),
        serde_json::Value::String(s) => vec![s.as_str()],
        other => return Err(format!("got {other}")),
    };
    let mut out: Vec<semver::Version> = list
        .iter()
        .filter_map(|s| semver::Version::parse(s).ok())
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_a_list_or_a_single_string_in_semver_order() {
        let v = parse_versions(r#"["0.10.0","0.9.2","1.0.0-rc.1","not-a-version"]"#).unwrap();
        assert_eq!(
            v.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
            ["0.9.2", "0.10.0", "1.0.0-rc.1"]
        );
        assert_eq!(parse_versions(r#""2.6.0""#).unwrap().len(), 1);
        assert!(parse_versions("{}").is_err());
    }
}
