//! Scenario errors: every message names the file, the line and the field.

use std::ops::Range;
use std::path::PathBuf;

use toml::de::{DeTable, DeValue};

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{}: cannot read: {source}", file.display())]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid scenario. `field` is a dotted path such as
    /// `step[2].model[0].tool_calls[0].tool` (indices 0-based, as in the file).
    #[error("{}:{line}:{column}: {field}: {message}", file.display())]
    Invalid {
        file: PathBuf,
        line: usize,
        column: usize,
        field: String,
        message: String,
    },
    /// An imported scenario named to `record` or `update`.
    #[error("{}: scenario {name} is imported from a tapped session: it has no scripted model replies, so it is replayed, never recorded", file.display())]
    NotRecordable { file: PathBuf, name: String },
    #[error("no scenario named `{name}` in {} (available: {})", dir.display(), available.join(", "))]
    NotFound {
        dir: PathBuf,
        name: String,
        available: Vec<String>,
    },
}

/// Turns a byte span of the source into a 1-based (line, column).
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The dotted path of the deepest key or value whose span contains `span`,
/// found by walking the document tree (the typed parse loses the path).
pub(crate) fn path_at(doc: &DeTable<'_>, span: &Range<usize>) -> String {
    let mut path = String::new();
    walk_table(doc, span, &mut path);
    if path.is_empty() {
        "(top level)".to_owned()
    } else {
        path
    }
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end && outer.start < outer.end
}

/// The source range a value really covers. A table of an array of tables
/// (`[[step]]`) is spanned by its header only, so widen by its children.
fn extent(span: Range<usize>, value: &DeValue<'_>) -> Range<usize> {
    let mut r = span;
    let mut widen = |o: Range<usize>| {
        r.start = r.start.min(o.start);
        r.end = r.end.max(o.end);
    };
    match value {
        DeValue::Table(t) => {
            for (k, v) in t.iter() {
                widen(k.span());
                widen(extent(v.span(), v.get_ref()));
            }
        }
        DeValue::Array(a) => {
            for e in a.iter() {
                widen(extent(e.span(), e.get_ref()));
            }
        }
        _ => {}
    }
    r
}

fn walk_table(table: &DeTable<'_>, span: &Range<usize>, path: &mut String) {
    for (key, value) in table.iter() {
        let in_key = contains(&key.span(), span);
        if in_key || contains(&extent(value.span(), value.get_ref()), span) {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key.get_ref());
            if !in_key {
                walk_value(value.get_ref(), span, path);
            }
            return;
        }
    }
}

fn walk_value(value: &DeValue<'_>, span: &Range<usize>, path: &mut String) {
    match value {
        DeValue::Table(t) => walk_table(t, span, path),
        DeValue::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                if contains(&extent(e.span(), e.get_ref()), span) {
                    path.push_str(&format!("[{i}]"));
                    walk_value(e.get_ref(), span, path);
                    return;
                }
            }
        }
        _ => {}
    }
}
