//! stub-mcp's integration tests, one binary: a module per suite
//! (`cargo test -p stub-mcp --test it rmcp_client::` runs one).

mod binary;
mod http_edges;
mod rmcp_client;
