//! Judging what the bridge emits: replay, the judge, expectations, the stream-json contract, the ACP schema check, drift, the report, the Agent SDKs' stream-json surface, and the same session under either ACP revision.

pub mod acp_schema;
pub mod contract;
pub mod drift;
pub mod expect;
pub mod judge;
pub mod replay;
pub mod report;
pub mod revision_equivalence;
pub mod sdk_surface;
