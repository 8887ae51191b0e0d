//! Capturing a recording: the record command, the scripted model server, the minimal ACP client, isolation, readiness waits, interrupts and workspace fixtures.

pub mod acp_client;
pub mod interrupt;
pub mod isolation;
pub mod model_server;
pub mod readiness;
pub mod record;
pub mod workspace_fixture;
