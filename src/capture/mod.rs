//! Capturing a recording: the record command, the sandbox a real panel runs an agent in, importing a tapped session, the scripted model server, the minimal ACP client, isolation and interrupts.

pub mod acp_client;
pub mod import;
pub mod interrupt;
pub mod isolation;
pub mod migrate;
pub mod model_server;
pub mod record;
pub mod rescrub;
pub mod sandbox;
