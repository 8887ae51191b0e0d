//! `stub-mcp`: run the unity-ops stub alone.
//!
//! Prints one JSON line `{"url":..., "token":...}` on stdout once it listens,
//! optionally logs every exchange as JSON Lines, and stops on SIGTERM, SIGINT
//! or end of stdin (so a parent that dies takes it down too).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use stub_mcp::{Config, ResponseMode};

/// A deterministic unity-ops MCP server (Streamable HTTP) on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Bearer token clients must send; random when absent.
    #[arg(long)]
    token: Option<String>,
    /// Response framing: json (stateless) or sse (sessions).
    #[arg(long, default_value = "sse")]
    mode: ResponseMode,
    /// Comma-separated tool names to offer; all when absent.
    #[arg(long, value_delimiter = ',')]
    tools: Option<Vec<String>>,
    /// Append every HTTP exchange to this file as JSON Lines.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Target base64 length of the screenshot image.
    #[arg(long, default_value_t = stub_mcp::DEFAULT_SCREENSHOT_BASE64_LEN)]
    screenshot_base64_len: usize,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = stub_mcp::DEFAULT_BODY_LIMIT)]
    body_limit: usize,
    /// Project root as tool texts name it.
    #[arg(long, default_value = stub_mcp::DEFAULT_WORKSPACE)]
    workspace: String,
    /// Keep running when stdin closes (only signals stop it).
    #[arg(long)]
    ignore_stdin: bool,
    /// Serve requests without the bearer token (still loopback only, Host and
    /// Origin still checked): for the MCP conformance suite, which sends no
    /// Authorization header. Never for an agent's recording.
    #[arg(long)]
    no_auth: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let config = Config {
        addr: SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)),
        token: args.token,
        mode: args.mode,
        tools: args.tools,
        screenshot_base64_len: args.screenshot_base64_len,
        body_limit: args.body_limit,
        workspace: args.workspace,
        staged: Vec::new(),
        no_auth: args.no_auth,
        ..Config::default()
    };
    let mut running = stub_mcp::serve(config)
        .await
        .context("starting the server")?;

    let logger = match &args.log {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening the exchange log {}", path.display()))?;
            let mut events = running
                .take_events()
                .context("event receiver already taken")?;
            let path = path.clone();
            Some(tokio::spawn(async move {
                let mut out = std::io::LineWriter::new(file);
                while let Some(event) = events.recv().await {
                    if let Err(e) = writeln!(out, "{}", event.to_json()) {
                        eprintln!("stub-mcp: cannot write {}: {e}", path.display());
                        return;
                    }
                }
            }))
        }
        None => {
            // Nobody reads the events: close the channel so they are not kept.
            drop(running.take_events());
            None
        }
    };

    let hello = if args.no_auth {
        serde_json::json!({"url": running.url(), "token": null})
    } else {
        serde_json::json!({"url": running.url(), "token": running.token()})
    };
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{hello}").context("writing the url line")?;
        stdout.flush().context("flushing stdout")?;
    }

    wait_for_stop(args.ignore_stdin).await?;
    running.shutdown().await;
    if let Some(logger) = logger {
        // The channel closes once the server is gone; don't hang if a stream lingers.
        let _ = tokio::time::timeout(Duration::from_secs(2), logger).await;
    }
    Ok(())
}

async fn wait_for_stop(ignore_stdin: bool) -> Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    // A plain thread, not tokio's stdin: a blocking read would keep the
    // runtime from shutting down after a signal.
    let (closed_tx, closed_rx) = tokio::sync::oneshot::channel::<()>();
    if !ignore_stdin {
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = [0u8; 1024];
            while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
            let _ = closed_tx.send(());
        });
    }
    let stdin_closed = async move {
        if ignore_stdin {
            std::future::pending::<()>().await;
        }
        let _ = closed_rx.await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
        _ = stdin_closed => {}
    }
    Ok(())
}
