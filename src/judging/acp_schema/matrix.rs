//! Recordings' conformance summed per agent and version, rendered as a
//! table, Markdown or JSON (what `acp-harness conformance` prints).

use serde_json::{Value, json};

use super::{RecordingConformance, Tally};

/// One agent version: its recordings' frames by side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionRow {
    pub agent: String,
    pub version: String,
    pub recordings: usize,
    pub agent_frames: Tally,
    pub client_frames: Tally,
    pub bridge_frames: Tally,
    /// Recordings whose replay did not run (their bridge frames are unknown).
    pub not_replayed: usize,
}

/// Every agent version, in the order first added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matrix {
    pub rows: Vec<VersionRow>,
}

impl Matrix {
    pub fn add(&mut self, agent: &str, version: &str, recording: &RecordingConformance) {
        let i = match self
            .rows
            .iter()
            .position(|r| r.agent == agent && r.version == version)
        {
            Some(i) => i,
            None => {
                self.rows.push(VersionRow {
                    agent: agent.to_string(),
                    version: version.to_string(),
                    ..VersionRow::default()
                });
                self.rows.len() - 1
            }
        };
        let row = &mut self.rows[i];
        row.recordings += 1;
        row.agent_frames.merge(&recording.agent);
        row.client_frames.merge(&recording.client);
        match &recording.bridge {
            Some(b) => row.bridge_frames.merge(b),
            None => row.not_replayed += 1,
        }
    }

    /// Frames the bridge sent that the schema rejects (what fails the command).
    pub fn bridge_invalid(&self) -> usize {
        self.rows.iter().map(|r| r.bridge_frames.invalid).sum()
    }

    fn sides(row: &VersionRow) -> [(&'static str, &Tally); 3] {
        [
            ("agent", &row.agent_frames),
            ("client", &row.client_frames),
            ("bridge", &row.bridge_frames),
        ]
    }

    fn totals(&self) -> [(&'static str, Tally); 3] {
        let mut out = [
            ("agent", Tally::default()),
            ("client", Tally::default()),
            ("bridge", Tally::default()),
        ];
        for row in &self.rows {
            for (i, (_, t)) in Matrix::sides(row).iter().enumerate() {
                out[i].1.merge(t);
            }
        }
        out
    }

    fn table_rows(&self) -> Vec<[String; 7]> {
        let mut out = Vec::new();
        for row in &self.rows {
            for (side, t) in Matrix::sides(row) {
                out.push([
                    row.agent.clone(),
                    row.version.clone(),
                    side.to_string(),
                    t.frames.to_string(),
                    t.valid.to_string(),
                    t.invalid.to_string(),
                    t.outside.to_string(),
                ]);
            }
        }
        out
    }

    /// Each violation and outside method, one line each, under its version.
    fn details(&self, bullet: &str, code: &str) -> String {
        let mut out = String::new();
        for row in &self.rows {
            for (side, t) in Matrix::sides(row) {
                for ((method, pointer, message), n) in &t.violations {
                    let pointer = if pointer.is_empty() { "/" } else { pointer };
                    out.push_str(&format!(
                        "{bullet}{} {} {side}: invalid {code}{method}{code} at {code}{pointer}{code}: {} ({n} frame(s))\n",
                        row.agent,
                        row.version,
                        one_line(message)
                    ));
                }
                for (method, n) in &t.outside_methods {
                    out.push_str(&format!(
                        "{bullet}{} {} {side}: outside the schema: {code}{method}{code} ({n} frame(s))\n",
                        row.agent, row.version
                    ));
                }
            }
        }
        out
    }

    fn summary(&self) -> String {
        let totals = self.totals();
        // a `+acp2` version directory negotiated v2: its frames met the v2 schema
        let v2 = self.rows.iter().any(|r| {
            r.version
                .ends_with(&format!("+{}", crate::corpus::recording::REVISION_2_BUILD))
        });
        let against = match v2 {
            false => format!(
                "judged against the ACP v1 schema {}\n",
                super::schema::version()
            ),
            true => format!(
                "judged against the ACP v1 schema {}; recordings that negotiated v2 against {}\n",
                super::schema::version(),
                super::schema::version_for(2)
            ),
        };
        let mut parts: Vec<String> = totals
            .iter()
            .map(|(side, t)| {
                format!(
                    "{side} {} frame(s): {} valid, {} invalid, {} outside the schema",
                    t.frames, t.valid, t.invalid, t.outside
                )
            })
            .collect();
        let not_replayed: usize = self.rows.iter().map(|r| r.not_replayed).sum();
        if not_replayed > 0 {
            parts.push(format!("{not_replayed} recording(s) not replayed"));
        }
        against + &parts.join("; ") + "\n"
    }

    pub fn render_table(&self) -> String {
        let mut out = crate::text_table::render(
            [
                "agent", "version", "side", "frames", "valid", "invalid", "outside",
            ],
            &self.table_rows(),
        );
        self.append_footer(&mut out, "", "");
        out
    }

    /// The violations and outside methods (each line opened by `bullet`,
    /// names wrapped in `code`), then the totals.
    fn append_footer(&self, out: &mut String, bullet: &str, code: &str) {
        let details = self.details(bullet, code);
        if !details.is_empty() {
            out.push('\n');
            out.push_str(&details);
        }
        out.push('\n');
        out.push_str(&self.summary());
    }

    pub fn render_markdown(&self) -> String {
        let mut out = String::from(
            "| agent | version | side | frames | valid | invalid | outside |\n|---|---|---|---:|---:|---:|---:|\n",
        );
        for r in self.table_rows() {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        self.append_footer(&mut out, "- ", "`");
        out
    }

    /// `{schema, versions: [{agent, version, recordings, not_replayed, sides: {agent|client|bridge: {frames, valid, invalid, outside, violations: [{method, pointer, message, frames}], outside_methods: {method: frames}}}}], bridge_invalid}`.
    pub fn to_json(&self) -> Value {
        let versions: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let mut sides = serde_json::Map::new();
                for (side, t) in Matrix::sides(row) {
                    sides.insert(side.to_string(), tally_json(t));
                }
                json!({
                    "agent": row.agent,
                    "version": row.version,
                    "recordings": row.recordings,
                    "not_replayed": row.not_replayed,
                    "sides": sides,
                })
            })
            .collect();
        json!({
            "schema": super::schema::version(),
            "versions": versions,
            "bridge_invalid": self.bridge_invalid(),
        })
    }
}

fn tally_json(t: &Tally) -> Value {
    let violations: Vec<Value> = t
        .violations
        .iter()
        .map(|((method, pointer, message), n)| {
            json!({"method": method, "pointer": pointer, "message": message, "frames": n})
        })
        .collect();
    json!({
        "frames": t.frames,
        "valid": t.valid,
        "invalid": t.invalid,
        "outside": t.outside,
        "violations": violations,
        "outside_methods": t.outside_methods,
    })
}

/// A schema message on one line, cut so a big instance does not flood the table.
fn one_line(message: &str) -> String {
    const MAX: usize = 200;
    let flat: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &flat[..i]),
        None => flat,
    }
}
