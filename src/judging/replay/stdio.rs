//! Serving a [`FakeAgent`] on stdio, so any ACP client (the `acp-bridge`
//! binary, an editor) can talk to a recording as if it were the agent.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use super::fake_agent::FakeAgent;

/// The client's real workspace directory standing for the recording's
/// `<workspace>`: a client needs a real directory to start a session in,
/// and the recording holds the placeholder, so the path is swapped for the
/// placeholder in what the client sends and back in what the agent releases.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// The path as it appears inside a JSON string (escaped, unquoted).
    real: Option<String>,
}

impl Workspace {
    pub const PLACEHOLDER: &'static str = "<workspace>";

    /// `None`: lines pass unchanged.
    pub fn new(real: Option<&std::path::Path>) -> Workspace {
        let real = real.map(|p| {
            let quoted = serde_json::Value::from(p.to_string_lossy().into_owned()).to_string();
            quoted[1..quoted.len() - 1].to_string()
        });
        Workspace { real }
    }

    fn to_recorded<'a>(&self, client_line: &'a str) -> std::borrow::Cow<'a, str> {
        match &self.real {
            Some(real) if client_line.contains(real.as_str()) => {
                client_line.replace(real.as_str(), Self::PLACEHOLDER).into()
            }
            _ => client_line.into(),
        }
    }

    fn to_client<'a>(&self, agent_line: &'a str) -> std::borrow::Cow<'a, str> {
        match &self.real {
            Some(real) if agent_line.contains(Self::PLACEHOLDER) => {
                agent_line.replace(Self::PLACEHOLDER, real).into()
            }
            _ => agent_line.into(),
        }
    }
}

/// How a stdio session ended.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub divergences: usize,
    /// Recorded client frames the client never sent.
    pub never_sent: usize,
    pub unreleased: usize,
    /// The client went quiet for longer than the idle timeout.
    pub timed_out: bool,
}

impl Summary {
    pub fn clean(&self) -> bool {
        *self == Summary::default()
    }
}

/// Reads client lines from `input` until EOF (or `idle` passes without one),
/// writes the released agent lines to `output`, divergences to `log`.
pub fn serve(
    mut agent: FakeAgent,
    input: impl Read + Send + 'static,
    mut output: impl Write,
    log: &mut dyn Write,
    idle: Duration,
    workspace: &Workspace,
) -> std::io::Result<Summary> {
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>();
    // The reader thread ends with the input; if we stop first (timeout), it
    // ends with the process.
    std::thread::spawn(move || {
        for line in BufReader::new(input).lines() {
            let stop = line.is_err();
            if tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    let mut summary = Summary::default();
    let mut deliver =
        |served: super::fake_agent::Served, output: &mut dyn Write, log: &mut dyn Write| {
            for d in &served.divergences {
                writeln!(log, "fake-agent: divergence: {d}")?;
            }
            summary.divergences += served.divergences.len();
            for r in &served.released {
                writeln!(output, "{}", workspace.to_client(&r.line))?;
            }
            output.flush()
        };
    deliver(agent.start(), &mut output, log)?;
    loop {
        match rx.recv_timeout(idle) {
            Ok(Ok(line)) if line.trim().is_empty() => {}
            Ok(Ok(line)) => deliver(
                agent.on_client_line(&workspace.to_recorded(line.trim_end_matches('\r'))),
                &mut output,
                log,
            )?,
            Ok(Err(e)) => return Err(e),
            Err(RecvTimeoutError::Timeout) => {
                writeln!(
                    log,
                    "fake-agent: no client line for {} s; stopping",
                    idle.as_secs()
                )?;
                summary.timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let never_sent = agent.never_sent();
    for d in &never_sent {
        writeln!(log, "fake-agent: {}", d.headline())?;
    }
    summary.never_sent = never_sent.len();
    if let Some(e) = agent.read_error() {
        return Err(std::io::Error::other(format!(
            "the recording could not be read again: {e}"
        )));
    }
    summary.unreleased = agent.unreleased();
    if summary.unreleased > 0 {
        writeln!(
            log,
            "fake-agent: {} recorded agent frame(s) never released",
            summary.unreleased
        )?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::replay::fake_agent::{AcpFrame, Direction};

    #[test]
    fn serves_released_lines_on_output_and_reports_what_the_client_never_sent() {
        let frames = vec![
            AcpFrame {
                seq: 1,
                ms: 0,
                dir: Direction::ToAgent,
                raw: r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.into(),
            },
            AcpFrame {
                seq: 2,
                ms: 1,
                dir: Direction::FromAgent,
                raw: r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into(),
            },
            AcpFrame {
                seq: 3,
                ms: 2,
                dir: Direction::ToAgent,
                raw: r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}"#.into(),
            },
        ];
        let input =
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{}}\n".as_slice();
        let mut out = Vec::new();
        let mut log = Vec::new();
        let summary = serve(
            FakeAgent::new(frames),
            input,
            &mut out,
            &mut log,
            Duration::from_secs(5),
            &Workspace::default(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n"
        );
        assert_eq!(summary.never_sent, 1);
        assert!(String::from_utf8(log).unwrap().contains("session/new"));
    }

    #[test]
    fn a_real_workspace_stands_for_the_recorded_placeholder_both_ways() {
        let frames = vec![
            AcpFrame {
                seq: 1,
                ms: 0,
                dir: Direction::ToAgent,
                raw: r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"<workspace>"}}"#.into(),
            },
            AcpFrame {
                seq: 2,
                ms: 1,
                dir: Direction::FromAgent,
                raw: r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","path":"<workspace>/a.txt"}}"#.into(),
            },
        ];
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp/my \\\"dir\\\"\"}}\n".as_slice();
        let (mut out, mut log) = (Vec::new(), Vec::new());
        let summary = serve(
            FakeAgent::new(frames),
            input,
            &mut out,
            &mut log,
            Duration::from_secs(5),
            &Workspace::new(Some(std::path::Path::new("/tmp/my \"dir\""))),
        )
        .unwrap();
        assert!(summary.clean(), "{}", String::from_utf8_lossy(&log));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s\",\"path\":\"/tmp/my \\\"dir\\\"/a.txt\"}}\n"
        );
    }
}
