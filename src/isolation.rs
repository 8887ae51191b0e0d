//! Network isolation for recording: the agent, stub-mcp and the model
//! server all run inside a network namespace that has only loopback, so an
//! agent can never reach the internet while it is recorded and a recording
//! never depends on it (codex tries GitHub for a plugin sync; 0.9.2 fetches
//! a model list).
//!
//! The route is the simplest robust one: `record` (outside) installs what it
//! needs, then re-executes itself as `unshare --net -- <self> record
//! --inside-netns ...`; the inner process brings `lo` up and proves that a
//! non-loopback address is unreachable before it records anything. Only a
//! proven run says `netns-loopback` in its header.

use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// Header value of a run verified to have only loopback.
pub const NETNS_LOOPBACK: &str = "netns-loopback";
/// Header value of a run that used the host network.
pub const HOST_NETWORK: &str = "none";

/// Addresses that must be unreachable from inside (public DNS, a private
/// range, the GitHub API's usual front): any success means we leak.
const PROBES: &[&str] = &["1.1.1.1:443", "140.82.112.6:443", "10.255.255.1:80"];

/// Whether `unshare --net` works here (needs root or user namespaces).
pub fn available() -> bool {
    Command::new("unshare")
        .args(["--net", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// The command that re-runs this executable with `args` inside a fresh
/// network namespace.
pub fn reexec_command(args: &[std::ffi::OsString]) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("finding the harness executable to re-run")?;
    let mut cmd = Command::new("unshare");
    cmd.arg("--net").arg("--").arg(exe).args(args);
    Ok(cmd)
}

/// Inside the namespace: bring `lo` up, then prove isolation.
pub fn enter_inside() -> anyhow::Result<()> {
    let status = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .stdin(Stdio::null())
        .status()
        .context("running `ip link set lo up` (is iproute2 installed?)")?;
    if !status.success() {
        bail!("`ip link set lo up` failed ({status})");
    }
    verify_loopback_only()
}

/// Fails unless only loopback is reachable: every probe address must refuse
/// to connect (in a namespace without routes that is immediate), and a
/// loopback listener must be reachable.
pub fn verify_loopback_only() -> anyhow::Result<()> {
    for probe in PROBES {
        let addr: SocketAddr = probe.parse().expect("probe addresses are valid");
        if TcpStream::connect_timeout(&addr, Duration::from_millis(1500)).is_ok() {
            bail!("network isolation check failed: {probe} is reachable from inside the namespace");
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .context("binding loopback inside the namespace")?;
    let local = listener.local_addr()?;
    TcpStream::connect_timeout(&local, Duration::from_millis(1500))
        .with_context(|| format!("loopback {local} is not reachable inside the namespace"))?;
    Ok(())
}
