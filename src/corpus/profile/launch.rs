//! A recipe made runnable: the values its placeholders stand for in one run
//! ([`Vars`]) and the recipe with every placeholder filled ([`Launch`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::{Profile, ProfileError, Recipe};

/// The values placeholders stand for in one run.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub home: String,
    pub workspace: String,
    pub package_dir: String,
    /// Side packages' directories by their `as` name (`{package_dir:<as>}`).
    pub packages: BTreeMap<String, String>,
    pub model_url: String,
    /// stub-mcp's URL and bearer token (for agents configured by file).
    pub mcp_url: String,
    pub mcp_token: String,
    pub api_key: String,
    pub version: String,
}

impl Vars {
    /// Fills `{name}` placeholders in `text`; `what` names it in errors.
    /// `{{` is a literal `{`, and a `}}` closing it a literal `}` (so
    /// `{{name}}` is the text `{name}`); a `}}` with no `{{` open, as JSON's
    /// nested objects end, and a `{` that starts no placeholder name, stay
    /// as written. An unknown `{name}` is an error naming it.
    pub fn fill(&self, text: &str, what: &str) -> Result<String, ProfileError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        // `{{` escapes open and not yet closed by `}}`
        let mut open = 0usize;
        while let Some(at) = rest.find(['{', '}']) {
            out.push_str(&rest[..at]);
            let here = &rest[at..];
            if let Some(after) = here.strip_prefix("{{") {
                out.push('{');
                open += 1;
                rest = after;
                continue;
            }
            if let Some(after) = here.strip_prefix("}}")
                && open > 0
            {
                out.push('}');
                open -= 1;
                rest = after;
                continue;
            }
            if let Some(after) = here.strip_prefix('}') {
                out.push('}');
                rest = after;
                continue;
            }
            let after = &here[1..];
            let Some(end) = after.find('}') else {
                out.push_str(here);
                rest = "";
                break;
            };
            let name = &after[..end];
            if let Some(alias) = name.strip_prefix("package_dir:") {
                let Some(dir) = self.packages.get(alias) else {
                    return Err(ProfileError::Placeholder {
                        name: name.to_string(),
                        what: what.to_string(),
                    });
                };
                out.push_str(dir);
                rest = &after[end + 1..];
                continue;
            }
            let value = match name {
                "home" => &self.home,
                "workspace" => &self.workspace,
                // where the program lives: the npm prefix or the venv
                "package_dir" | "install_dir" => &self.package_dir,
                "model_url" => &self.model_url,
                "mcp_url" => &self.mcp_url,
                "mcp_token" => &self.mcp_token,
                "api_key" => &self.api_key,
                "version" => &self.version,
                _ if name.is_empty()
                    || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    // Not a placeholder (e.g. a TOML inline table): keep it.
                    out.push('{');
                    rest = after;
                    continue;
                }
                _ => {
                    return Err(ProfileError::Placeholder {
                        name: name.to_string(),
                        what: what.to_string(),
                    });
                }
            };
            out.push_str(value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `path` with `.` and `..` resolved by their names alone (nothing on disk
/// is looked at: the files are written into fresh directories); `None` for
/// a relative path or one that climbs above the root.
fn normalise(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out)
}

/// A recipe with every placeholder filled: what to write and what to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub files: Vec<(PathBuf, String)>,
}

impl Launch {
    pub fn resolve(
        profile: &Profile,
        recipe: &Recipe,
        vars: &Vars,
    ) -> Result<Launch, ProfileError> {
        let program = vars.fill(&recipe.program, "program")?;
        let args = recipe
            .args
            .iter()
            .map(|a| vars.fill(a, "args"))
            .collect::<Result<_, _>>()?;
        let mut env = BTreeMap::new();
        for (k, v) in profile.env.iter().chain(recipe.env.iter()) {
            env.insert(k.clone(), vars.fill(v, &format!("env {k}"))?);
        }
        let files = recipe
            .files
            .iter()
            .map(|f| {
                let path = PathBuf::from(vars.fill(&f.path, "files.path")?);
                let inside = normalise(&path).filter(|p| {
                    [&vars.home, &vars.workspace]
                        .iter()
                        .filter(|root| !root.is_empty())
                        .filter_map(|root| normalise(Path::new(root.as_str())))
                        .any(|root| p.starts_with(&root) && *p != root)
                });
                let Some(path) = inside else {
                    return Err(ProfileError::Recipe {
                        path: profile.path.clone(),
                        index: profile
                            .recipes
                            .iter()
                            .position(|r| r == recipe)
                            .map_or(0, |i| i + 1),
                        message: format!(
                            "[[recipe.files]] path = {:?} is not inside {{home}} or {{workspace}} (it resolves to {})",
                            f.path,
                            path.display()
                        ),
                    });
                };
                Ok((path, vars.fill(&f.content, &format!("file {}", f.path))?))
            })
            .collect::<Result<_, ProfileError>>()?;
        Ok(Launch {
            program,
            args,
            env,
            files,
        })
    }
}
