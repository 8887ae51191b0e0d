//! `--bridge-log <file>`: every line in and out, tagged with its direction,
//! plus the host's own notes. Meant for debugging a real panel session; a
//! no-op without the flag.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};

pub struct TrafficLog {
    file: Option<BufWriter<File>>,
}

impl TrafficLog {
    pub fn open(path: Option<&Path>) -> Result<TrafficLog> {
        let file = match path {
            Some(p) => Some(BufWriter::new(
                File::options()
                    .create(true)
                    .append(true)
                    .open(p)
                    .with_context(|| format!("--bridge-log: cannot open {}", p.display()))?,
            )),
            None => None,
        };
        Ok(TrafficLog { file })
    }

    /// One line, tagged: `panel>` (from the panel), `<panel` (to it),
    /// `agent<` (to the agent), `<agent` (from it), `agent-stderr`, `diag`.
    pub fn record(&mut self, tag: &str, line: &str) {
        if let Some(f) = &mut self.file {
            // A failing debug log must not end the session.
            let _ = writeln!(f, "{tag} {line}");
        }
    }

    pub fn note(&mut self, text: &str) {
        self.record("host", text);
    }

    pub fn flush(&mut self) {
        if let Some(f) = &mut self.file {
            let _ = f.flush();
        }
    }
}
