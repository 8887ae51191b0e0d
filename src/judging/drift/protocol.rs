//! What each side of a drift report says about the protocol it spoke (the
//! recordings' headers): a move of the negotiated ACP protocol is a finding
//! of its own.

use std::collections::BTreeSet;

use crate::corpus::recording::Recording;

/// What each side's recordings say about the protocol they spoke: the
/// `protocolVersion` the agent negotiated, and the ACP schema the recorder
/// validated against (absent in recordings made before it was written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtocolDrift {
    pub a: BTreeSet<u64>,
    pub b: BTreeSet<u64>,
    pub schema_a: BTreeSet<String>,
    pub schema_b: BTreeSet<String>,
}

/// Which way the negotiated protocol moved from one side to the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolMove {
    Newer,
    Older,
    /// Neither wholly newer nor older (a side with several versions).
    Changed,
}

impl ProtocolDrift {
    pub(super) fn between(a: &[&Recording], b: &[&Recording]) -> ProtocolDrift {
        let versions = |recs: &[&Recording]| -> BTreeSet<u64> {
            recs.iter()
                .filter(|r| {
                    r.header
                        .extra
                        .get("protocol")
                        .is_none_or(|p| p != "stream-json")
                })
                .map(|r| r.header.protocol_version)
                .filter(|v| *v > 0)
                .collect()
        };
        let schemas = |recs: &[&Recording]| -> BTreeSet<String> {
            recs.iter()
                .filter_map(|r| r.header.acp_schema.clone())
                .collect()
        };
        ProtocolDrift {
            a: versions(a),
            b: versions(b),
            schema_a: schemas(a),
            schema_b: schemas(b),
        }
    }

    /// How the agent's negotiated protocol moved (`None`: it did not, or a
    /// side has no recording that negotiated one): **a move is a finding of
    /// its own**, whatever the frames show.
    pub fn moved(&self) -> Option<ProtocolMove> {
        let (Some(a_min), Some(a_max), Some(b_min), Some(b_max)) =
            (self.a.first(), self.a.last(), self.b.first(), self.b.last())
        else {
            return None;
        };
        if self.a == self.b {
            None
        } else if b_min > a_max {
            Some(ProtocolMove::Newer)
        } else if b_max < a_min {
            Some(ProtocolMove::Older)
        } else {
            Some(ProtocolMove::Changed)
        }
    }

    /// The sentence the report gives a move.
    pub fn finding(&self) -> Option<String> {
        let list = |s: &BTreeSet<u64>| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let what = match self.moved()? {
            ProtocolMove::Newer => "the agent moved to a newer protocol revision",
            ProtocolMove::Older => "the agent moved to an older protocol revision",
            ProtocolMove::Changed => "the agent's protocol revision changed",
        };
        Some(format!(
            "{what}: protocolVersion {} -> {}",
            list(&self.a),
            list(&self.b)
        ))
    }

    /// Whether the recorders validated against different schemas (context
    /// for the schema section, not a finding: the harness moved, not the agent).
    pub fn schemas_differ(&self) -> bool {
        !self.schema_a.is_empty() && !self.schema_b.is_empty() && self.schema_a != self.schema_b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::recording;
    use std::path::Path;

    #[test]
    fn a_newer_negotiated_protocol_version_is_a_finding_of_its_own() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("recordings/claude-agent-acp");
        let read = |v: &str| recording::read(&root.join(v).join("text-only.jsonl")).unwrap();
        let (old, mut new) = (read("0.23.1"), read("0.101.0"));
        assert_eq!(ProtocolDrift::between(&[&old], &[&new]).moved(), None);
        new.header.protocol_version = 2;
        new.header.acp_schema = Some("agent-client-protocol-schema 9.9.9".into());
        let forward = ProtocolDrift::between(&[&old], &[&new]);
        assert_eq!(forward.moved(), Some(ProtocolMove::Newer));
        assert_eq!(
            forward.finding().as_deref(),
            Some("the agent moved to a newer protocol revision: protocolVersion 1 -> 2")
        );
        // a recording that predates `acp_schema` says nothing of its schema
        assert!(!forward.schemas_differ());
        assert_eq!(
            ProtocolDrift::between(&[&new], &[&old]).moved(),
            Some(ProtocolMove::Older)
        );
    }
}
