//! One tool call, from the agent's first frame to the panel's `tool_use` and
//! `tool_result`: its frame read ([`frame`]), its fields merged across frames
//! ([`fields`]), its identity and Claude tool name ([`identity`],
//! [`server_tools`]), its input in Claude's shape ([`input`]), the permission
//! the agent asks for it ([`permission`]) and the call a request is about
//! ([`pairing`]), its result ([`result`]), its way
//! through its stages ([`stages`]: held, announced, finished), and the
//! session's table of calls ([`table`]).

pub(crate) mod fields;
pub(crate) mod frame;
pub mod identity;
pub mod input;
pub(crate) mod pairing;
pub(crate) mod permission;
pub mod result;
pub mod server_tools;
pub(crate) mod stages;
pub(crate) mod table;
