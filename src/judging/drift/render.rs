//! The drift report as Markdown: the agent's structural changes grouped by
//! kind and category with one example frame each, then the bridge output
//! diff per scenario.

use std::fmt::Write as _;

use super::*;

impl Report {
    /// Whether anything differs: a structural change or a bridge output diff.
    pub fn differs(&self) -> bool {
        !self.changes.is_empty()
            || !self.schema.is_empty()
            || self.protocol.moved().is_some()
            || self.bridge_diffs.iter().any(|(_, d)| !d.is_empty())
    }

    /// The report as JSON: `{title, differs, changes: [{change, category,
    /// key, values | removed + added}], protocol: {finding, a, b, schema_a,
    /// schema_b}, bridge: [{scenario, same, diff}]}`,
    /// each value with its example's source.
    pub fn to_json(&self) -> Value {
        let values = |v: &[(String, Example)]| -> Value {
            v.iter()
                .map(|(value, ex)| {
                    serde_json::json!({"value": value, "example": ex.source, "frame": ex.frame})
                })
                .collect()
        };
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| match c {
                Change::Added { values: v, .. } | Change::Removed { values: v, .. } => {
                    serde_json::json!({
                        "change": if matches!(c, Change::Added { .. }) { "added" } else { "removed" },
                        "category": c.category().label(),
                        "key": c.key(),
                        "values": values(v),
                    })
                }
                Change::Changed { removed, added, .. } => serde_json::json!({
                    "change": "changed",
                    "category": c.category().label(),
                    "key": c.key(),
                    "removed": values(removed),
                    "added": values(added),
                }),
            })
            .collect();
        let bridge: Vec<Value> = self
            .bridge_diffs
            .iter()
            .map(|(scenario, diff)| {
                serde_json::json!({"scenario": scenario, "same": diff.is_empty(), "diff": diff})
            })
            .collect();
        let violations = |v: &[SchemaViolation]| -> Value {
            v.iter()
                .map(|((method, pointer, message), n)| {
                    serde_json::json!({"method": method, "pointer": pointer, "message": message, "frames": n})
                })
                .collect()
        };
        serde_json::json!({
            "title": self.title,
            "differs": self.differs(),
            "changes": changes,
            "schema": {
                "appeared": violations(&self.schema.appeared),
                "disappeared": violations(&self.schema.disappeared),
                "unchecked": self.schema.unchecked,
            },
            "protocol": {
                "finding": self.protocol.finding(),
                "a": self.protocol.a,
                "b": self.protocol.b,
                "schema_a": self.protocol.schema_a,
                "schema_b": self.protocol.schema_b,
            },
            "bridge": bridge,
        })
    }

    /// Markdown: the agent's structural drift, then the bridge output diff.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Drift: {}\n", self.title);
        let _ = writeln!(
            out,
            "What the agent sent, compared structurally (methods, update kinds, fields per message type, enum values, capabilities, tool-call shapes), then what the bridge made of it for the panel. Written by `acp-harness drift`.\n"
        );
        let count = |f: fn(&Change) -> bool| self.changes.iter().filter(|c| f(c)).count();
        let _ = writeln!(
            out,
            "{} added, {} removed, {} changed.\n",
            count(|c| matches!(c, Change::Added { .. })),
            count(|c| matches!(c, Change::Removed { .. })),
            count(|c| matches!(c, Change::Changed { .. }))
        );
        for (heading, pick) in [
            (
                "Added",
                (|c: &Change| matches!(c, Change::Added { .. })) as fn(&Change) -> bool,
            ),
            ("Removed", |c: &Change| matches!(c, Change::Removed { .. })),
            ("Changed", |c: &Change| matches!(c, Change::Changed { .. })),
        ] {
            let items: Vec<&Change> = self.changes.iter().filter(|c| pick(c)).collect();
            let _ = writeln!(out, "## {heading} ({})\n", items.len());
            changes(&mut out, &items);
        }
        // Only when something moved, so a report without reads as it always did.
        if let Some(finding) = self.protocol.finding() {
            let _ = writeln!(out, "## ACP protocol revision\n\n{finding}\n");
        }
        if self.protocol.schemas_differ() {
            let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
            let _ = writeln!(
                out,
                "The recordings were validated against different ACP schemas: {} -> {}.\n",
                list(&self.protocol.schema_a),
                list(&self.protocol.schema_b)
            );
        }
        self.schema_section(&mut out);
        let _ = writeln!(out, "## Bridge output (what the panel sees)\n");
        if self.bridge_diffs.is_empty() {
            let _ = writeln!(out, "No scenario recorded on both sides.\n");
        }
        for (name, diff) in &self.bridge_diffs {
            if diff.is_empty() {
                let _ = writeln!(out, "### {name}: same\n");
            } else {
                let _ = writeln!(out, "### {name}\n\n```diff\n{}```\n", diff);
            }
        }
        out
    }

    /// The schema violations that appeared or disappeared in the agent's
    /// frames.
    fn schema_section(&self, out: &mut String) {
        // Only when something moved, so a report with no schema drift reads
        // as it always did.
        if !self.schema.is_empty() || self.schema.unchecked.is_some() {
            let _ = writeln!(out, "## ACP schema violations in the agent's frames\n");
            if let Some(why) = &self.schema.unchecked {
                let _ = writeln!(out, "Not checked: {why}\n");
            }
            for (heading, list) in [
                ("Appeared", &self.schema.appeared),
                ("Disappeared", &self.schema.disappeared),
            ] {
                if list.is_empty() {
                    continue;
                }
                let _ = writeln!(out, "### {heading} ({})\n", list.len());
                for ((method, pointer, message), n) in list {
                    let _ = writeln!(out, "- `{method}` `{pointer}`: {message} ({n} frame(s))");
                }
                out.push('\n');
            }
        }
    }
}

/// One kind's changes, grouped by category, each with one example frame;
/// following fields shown by the same frame share one line and example.
fn changes(out: &mut String, items: &[&Change]) {
    let mut last_cat = None;
    let mut i = 0;
    while i < items.len() {
        let c = items[i];
        i += 1;
        if last_cat != Some(c.category()) {
            let _ = writeln!(out, "### {}\n", c.category().label());
            last_cat = Some(c.category());
        }
        match c {
            Change::Added { key, values, .. } | Change::Removed { key, values, .. } => {
                let vals: Vec<String> = values
                    .iter()
                    .filter(|(v, _)| !v.is_empty())
                    .map(|(v, _)| format!("`{v}`"))
                    .collect();
                let mut line = format!(
                    "- `{key}`{}",
                    if vals.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", vals.join(", "))
                    }
                );
                // following fields shown by the same frame share its example
                let ex = values.first().map(|(_, e)| e);
                while let Some(next) = items.get(i)
                    && next.category() == c.category()
                    && c.category() == Category::Field
                    && first_example(next) == ex
                {
                    let (msg, _) = split_field(key);
                    let (next_msg, path) = split_field(next.key());
                    if msg != next_msg {
                        break;
                    }
                    let _ = write!(line, ", `{path}`");
                    i += 1;
                }
                let _ = writeln!(out, "{line}");
                if let Some(ex) = ex {
                    example(out, ex);
                }
            }
            Change::Changed {
                key,
                removed,
                added,
                ..
            } => {
                let show = |v: &[(String, Example)]| {
                    if v.is_empty() {
                        "(none)".to_string()
                    } else {
                        v.iter()
                            .map(|(v, _)| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                };
                let _ = writeln!(out, "- `{key}`: {} -> {}", show(removed), show(added));
                if let Some((_, ex)) = removed.first() {
                    example(out, ex);
                }
                if let Some((_, ex)) = added.first() {
                    example(out, ex);
                }
            }
        }
    }
    out.push('\n');
}

fn first_example(c: &Change) -> Option<&Example> {
    match c {
        Change::Added { values, .. } | Change::Removed { values, .. } => {
            values.first().map(|(_, e)| e)
        }
        Change::Changed { added, .. } => added.first().map(|(_, e)| e),
    }
}

/// A field key's message type and path (`session/prompt result`, `usage/inputTokens`).
fn split_field(key: &str) -> (&str, &str) {
    for marker in [" params ", " result ", " error "] {
        if let Some(at) = key.find(marker) {
            return (&key[..at + marker.len() - 1], &key[at + marker.len()..]);
        }
    }
    (key, "")
}

fn example(out: &mut String, ex: &Example) {
    let _ = writeln!(
        out,
        "  - e.g. {}: `{}`",
        ex.source,
        ex.frame.replace('`', "'")
    );
}
