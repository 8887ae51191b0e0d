//! A profile's PyPI pin overrides (`overrides = ["name==version"]`), as data.

/// A PyPI pin override: `name<spec>` (e.g. `foo==1.2.3.post1`) that stands
/// in for the package's own requirement of `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinOverride {
    /// The dependency's name in its normal form (PEP 503).
    pub name: String,
    /// The override as written.
    pub text: String,
}

impl PinOverride {
    /// Parses `name<spec>`: a distribution name, then a version specifier
    /// (`==`, `>=`, `~=`, ...).
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(t.len());
        let (name, spec) = t.split_at(end);
        let spec = spec.trim_start();
        let ops = ["===", "==", "~=", "!=", ">=", "<=", ">", "<"];
        if name.is_empty() || !ops.iter().any(|op| spec.starts_with(op)) {
            return Err(format!(
                "override {text:?} is not `name==version` (a dependency name, then a version specifier)"
            ));
        }
        Ok(PinOverride {
            name: normal_name(name),
            text: format!("{name}{spec}"),
        })
    }
}

/// A distribution name in its normal form: lower case, each run of `-`,
/// `_` and `.` as one `-` (PEP 503).
pub fn normal_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}
