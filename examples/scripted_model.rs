//! Serve a scenario's scripted model alone, for trying an agent by hand:
//! `cargo run --example scripted_model -- scenarios/text-only.toml [FLAVOUR [NAMING]]`
//! with FLAVOUR one of responses (default), chat_completions, gemini,
//! anthropic, and NAMING the fallback tool naming, `namespace:<ns>` or
//! `flat:<template>` (e.g. `flat:unity-ops__{tool}`). Prints the base URL,
//! then every model exchange as one JSON line, until stdin closes or 10
//! minutes pass.

use std::time::Duration;

use acp_harness::capture::model_server::{
    Flavour, ModelExchange, ModelScript, ModelServer, ToolNaming,
};
use anyhow::Context as _;
use stub_mcp::Exchange;
use tokio::io::AsyncReadExt as _;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .context("usage: scripted_model <scenario.toml> [FLAVOUR]")?;
    let flavour: Flavour = match args.next() {
        Some(f) => {
            serde_json::from_value(serde_json::Value::String(f.clone())).with_context(|| {
                format!("unknown flavour `{f}` (responses, chat_completions, gemini, anthropic)")
            })?
        }
        None => Flavour::Responses,
    };
    let naming = match args.next() {
        None => ToolNaming::default(),
        Some(n) => match n.split_once(':') {
            Some(("namespace", ns)) => ToolNaming::Namespace {
                namespace: ns.to_owned(),
            },
            Some(("flat", template)) => ToolNaming::Flat {
                template: template.to_owned(),
            },
            _ => anyhow::bail!("naming `{n}`: expected namespace:<ns> or flat:<template>"),
        },
    };
    let scenario = acp_harness::corpus::scenario::load(&path)?;
    let mut running =
        ModelServer::start(flavour, ModelScript::from_scenario(&scenario), naming).await?;
    println!("{}", running.url());
    let mut events = running.take_events().context("events already taken")?;
    let printer = tokio::spawn(async move {
        while let Some(e) = events.recv().await {
            let line = match e {
                ModelExchange::Http(Exchange::Request {
                    id,
                    method,
                    path,
                    body,
                    ..
                }) => {
                    serde_json::json!({"request": id, "method": method, "path": path, "body": body})
                }
                ModelExchange::Http(Exchange::Response {
                    id, status, body, ..
                }) => {
                    serde_json::json!({"response": id, "status": status, "body": body})
                }
                ModelExchange::OffScript { id, text, .. } => {
                    serde_json::json!({"off_script": id, "text": text})
                }
                ModelExchange::Note { id, text, .. } => {
                    serde_json::json!({"note": id, "text": text})
                }
            };
            println!("{line}");
        }
    });
    let stdin_closed = async {
        let mut buf = [0u8; 1024];
        let mut stdin = tokio::io::stdin();
        while stdin.read(&mut buf).await.map(|n| n > 0).unwrap_or(false) {}
    };
    let _ = tokio::time::timeout(Duration::from_secs(600), stdin_closed).await;
    running.shutdown().await;
    printer.abort();
    Ok(())
}
