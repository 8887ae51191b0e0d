//! The judge's side of a replay, entry by entry as the replay happens: each
//! entry is checked (expectations, invariants, the stream-json contract,
//! the bridge's frames against the ACP schema), rendered into its
//! normalised transcript lines, written to the transcript and compared with
//! the golden read beside it. Nothing holds the replay's lines, so judging
//! a recording takes memory bounded by its largest line, not its length.

use serde_json::Value;

use super::golden::Comparison;
use super::golden::Window;
use super::golden_stream::GoldenStream;
use super::invariants::{self, CallFrames, Violation};
use super::transcript_text::{self, TranscriptText};
use crate::corpus::scenario::Expectation;
use crate::judging::acp_schema::{AcpSchema, BridgeFrames, Tally};
use crate::judging::contract::{Conformance, Contract};
use crate::judging::expect::{Evaluation, Failure};
use crate::judging::replay::divergence::Divergence;
use crate::judging::replay::replayer::Sink;
use crate::judging::replay::transcript::{Entry, Renderer};

/// What a judged replay keeps besides its verdicts.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    pub divergences: Vec<Divergence>,
    /// The bridge's diagnostics (stderr text); not part of the golden.
    pub diagnostics: Vec<String>,
    /// Every bridge line for the panel, when the corpus keeps them
    /// ([`super::Corpus::keeping_panel_lines`]); else empty.
    pub panel_lines: Vec<String>,
}

impl Replayed {
    pub fn divergences(&self) -> impl Iterator<Item = &Divergence> {
        self.divergences.iter()
    }
}

/// The judges of one replay, fed entry by entry.
pub struct Live<'a> {
    renderer: Renderer,
    expectations: Evaluation<'a>,
    calls: &'a CallFrames,
    invariants: Vec<Violation>,
    /// The `tool_use` ids the panel was shown so far.
    announced: std::collections::HashSet<String>,
    contract: Option<(&'a Contract, Conformance)>,
    schema: &'a AcpSchema,
    bridge_frames: BridgeFrames,
    bridge: Tally,
    panel_line: usize,
    replayed: Replayed,
    keep_panel_lines: bool,
    text: transcript_text::Writer,
    golden: GoldenStream,
}

/// What the judges found once the replay ended.
pub struct Judged {
    pub failures: Vec<Failure>,
    pub invariants: Vec<Violation>,
    pub contract: Option<Conformance>,
    /// The bridge's frames to the agent against the ACP schema.
    pub bridge: Tally,
    pub replayed: Replayed,
    pub transcript: Result<TranscriptText, std::io::Error>,
    pub golden: Comparison,
    pub window: Option<Window>,
}

impl<'a> Live<'a> {
    pub fn new(
        expect: &'a [Expectation],
        calls: &'a CallFrames,
        contract: Option<&'a Contract>,
        schema: &'a AcpSchema,
        golden: GoldenStream,
        keep_panel_lines: bool,
    ) -> Live<'a> {
        Live {
            renderer: Renderer::default(),
            expectations: Evaluation::new(expect),
            calls,
            invariants: Vec::new(),
            announced: Default::default(),
            contract: contract.map(|c| (c, Conformance::default())),
            schema,
            bridge_frames: BridgeFrames::default(),
            bridge: Tally::default(),
            panel_line: 0,
            replayed: Replayed::default(),
            keep_panel_lines,
            text: transcript_text::Writer::default(),
            golden,
        }
    }

    /// A transcript line of the judge's own (the header naming the recording).
    pub fn line(&mut self, line: &str) {
        for l in line.lines() {
            self.text.line("", l);
            self.golden.line("", l);
        }
    }

    pub fn finish(mut self) -> Judged {
        let (golden, window) = self.golden.finish();
        let unannounced: Vec<Violation> = self
            .calls
            .unannounced(&self.announced, self.panel_line)
            .collect();
        self.invariants.extend(unannounced);
        Judged {
            failures: self.expectations.finish(),
            invariants: self.invariants,
            contract: self.contract.map(|(_, report)| report),
            bridge: self.bridge,
            replayed: self.replayed,
            transcript: self.text.finish(),
            golden,
            window,
        }
    }
}

impl Sink for Live<'_> {
    fn entry(&mut self, mut entry: Entry, value: Option<Value>) {
        if let Some(check) = self.bridge_frames.check(self.schema, &entry) {
            self.bridge.add(&check);
        }
        match &mut entry {
            Entry::BridgeToPanel(line) => {
                let v = value.as_ref();
                self.expectations.observe(v);
                if let Some(v) = v {
                    invariants::check_line(self.panel_line, v, self.calls, &mut self.invariants);
                    self.announced.extend(invariants::tool_use_ids(v));
                }
                if let Some((contract, report)) = &mut self.contract {
                    contract.check_line(self.panel_line + 1, v, report);
                }
                self.panel_line += 1;
                if self.keep_panel_lines {
                    self.replayed.panel_lines.push(line.clone());
                }
                if value.is_some() {
                    // the render reads the parsed value: the text can go
                    // now (a folded message is megabytes)
                    *line = String::new();
                }
            }
            Entry::AgentToBridge(line) if value.is_some() => *line = String::new(),
            Entry::Divergence(d) => self.replayed.divergences.push(d.clone()),
            _ => {}
        }
        let (text, golden) = (&mut self.text, &mut self.golden);
        self.renderer.entry(&entry, value, |prefix, line| {
            text.put(prefix, line);
            golden.put(prefix, line);
        });
    }

    fn diagnostic(&mut self, text: String) {
        self.replayed.diagnostics.push(text);
    }

    fn keeps_panel_text(&self) -> bool {
        self.keep_panel_lines
    }
}
