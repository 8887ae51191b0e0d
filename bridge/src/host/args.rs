//! The command line: Claude's flags (both `--flag value` and `--flag=value`)
//! plus a few of our own, turned into a [`HostConfig`].
//!
//! A panel launches us exactly as it would launch `claude`, so every flag it
//! knows must be accepted; the ones the bridge has no use for are ignored
//! without error. An unknown flag must never swallow the next known flag:
//! `--x=y` is one token, and for `--x y` the `y` is skipped only when it does
//! not itself start with `--`.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_bridge::LaunchSpec;
use acp_bridge::SessionStateLines;
use acp_bridge::acp::revision::Offer;
use anyhow::{Context, Result, anyhow, bail};

use super::mcp_config;

/// Environment variable holding the agent command line when `--agent-cmd` is absent.
pub const AGENT_ENV: &str = "ACP_BRIDGE_AGENT";
/// Environment variable holding the line cap when `--max-line-bytes` is absent.
pub const MAX_LINE_ENV: &str = "ACP_BRIDGE_MAX_LINE_BYTES";
/// Environment variable holding the tap path when `--tap` is absent (for
/// panels that start the bridge with flags of their own).
pub const TAP_ENV: &str = "ACP_BRIDGE_TAP";
/// Environment variable holding session config options (`id=value`, comma
/// separated) when no `--acp-config` is given.
pub const CONFIG_ENV: &str = "ACP_BRIDGE_CONFIG";
/// Environment variable holding the ACP revision offered when no
/// `--acp-protocol` is given.
pub const ACP_PROTOCOL_ENV: &str = "ACP_BRIDGE_ACP_PROTOCOL";
/// Environment variable that, set to `1`, does what `--acp-mcp-unadvertised` does.
pub const MCP_UNADVERTISED_ENV: &str = "ACP_BRIDGE_MCP_UNADVERTISED";

/// The variables of ours the command line falls back to.
#[derive(Debug, Default, Clone)]
pub struct Env {
    /// [`AGENT_ENV`]
    pub agent: Option<String>,
    /// [`MAX_LINE_ENV`]
    pub max_line_bytes: Option<String>,
    /// [`TAP_ENV`]
    pub tap: Option<String>,
    /// [`CONFIG_ENV`]
    pub config: Option<String>,
    /// [`MCP_UNADVERTISED_ENV`]
    pub mcp_unadvertised: Option<String>,
    /// [`ACP_PROTOCOL_ENV`]
    pub acp_protocol: Option<String>,
    /// `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS` and
    /// `CLAUDE_CODE_SDK_READS_SESSION_STATE`, as Claude Code reads them.
    pub emit_session_state: Option<String>,
    pub sdk_reads_session_state: Option<String>,
    /// `HOME`: what a tap path's `~/` means.
    pub home: Option<PathBuf>,
}

impl Env {
    pub fn from_process() -> Env {
        Env {
            agent: std::env::var(AGENT_ENV).ok(),
            max_line_bytes: std::env::var(MAX_LINE_ENV).ok(),
            tap: std::env::var(TAP_ENV).ok(),
            config: std::env::var(CONFIG_ENV).ok(),
            mcp_unadvertised: std::env::var(MCP_UNADVERTISED_ENV).ok(),
            acp_protocol: std::env::var(ACP_PROTOCOL_ENV).ok(),
            emit_session_state: std::env::var("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS").ok(),
            sdk_reads_session_state: std::env::var("CLAUDE_CODE_SDK_READS_SESSION_STATE").ok(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
        }
    }
}

/// What the command line asked for.
#[derive(Debug)]
pub enum Invocation {
    /// `--version` / `-v`: SDKs probe it before launching.
    Version,
    Help,
    Run(Box<HostConfig>),
}

/// Everything the host needs to run one session.
#[derive(Debug, Clone)]
pub struct HostConfig {
    pub spec: LaunchSpec,
    /// The agent's argv (program first), already split like a shell would.
    pub agent_argv: Vec<String>,
    /// The directory the agent runs in (also `spec.cwd`).
    pub cwd: PathBuf,
    pub timing: Timing,
    /// `--bridge-log`: the tap's tagged text view, appended as lines come.
    pub bridge_log: Option<PathBuf>,
    /// `--tap` (or [`TAP_ENV`]): the session's tap, written whole at exit; a
    /// directory gets a new file named by the time and pid.
    pub tap: Option<PathBuf>,
    /// Values the tap never writes (MCP header and environment values).
    pub secrets: Vec<String>,
    /// The longest line read from the panel or the agent; a longer one is
    /// skipped and reported.
    pub max_line_bytes: usize,
    /// `-p "<prompt>"` (print mode with a positional prompt, as older SDKs and
    /// shell users run `claude`): sent as the only user message; stdin is not read.
    pub print_prompt: Option<String>,
    /// Human notes about what was ignored or chosen (printed at start).
    pub notes: Vec<String>,
}

/// How long the host waits at each step of ending the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// After the panel's stdin closed: longest wait for the core to finish the
    /// running turn before the agent's stdin is closed anyway.
    pub eof_drain: Duration,
    /// After the agent's stdin closed: how long it may take to exit on its own
    /// before SIGTERM, and again after SIGTERM before SIGKILL.
    pub grace: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            eof_drain: Duration::from_secs(600),
            grace: Duration::from_secs(2),
        }
    }
}

/// Claude flags whose value the bridge reads or that are known to take one.
const VALUE_FLAGS: &[&str] = &[
    "--model",
    "--permission-mode",
    "--mcp-config",
    "--system-prompt",
    "--append-system-prompt",
    "--system-prompt-file",
    "--append-system-prompt-file",
    "--resume",
    "-r",
    // ours
    "--agent-cmd",
    "--cwd",
    "--auth-method",
    "--bridge-log",
    "--tap",
    "--agent-grace-ms",
    "--eof-drain-ms",
    "--cancel-grace-ms",
    "--max-line-bytes",
    "--acp-config",
    "--acp-protocol",
];

/// Claude flags known to take no value; listed so they never skip a token.
const BOOL_FLAGS: &[&str] = &[
    "--acp-mcp-unadvertised",
    "--verbose",
    "--print",
    "-p",
    "--include-partial-messages",
    "--replay-user-messages",
    "--continue",
    "-c",
    "--fork-session",
    "--strict-mcp-config",
    "--ide",
    "--no-session-persistence",
    "--disable-slash-commands",
    "--mcp-debug",
    "--allow-dangerously-skip-permissions",
    "--dangerously-skip-permissions",
    // sent bare by the TypeScript Agent SDK
    "--debug",
    "--include-hook-events",
    "--managed-settings-in-initialize",
    "--session-mirror",
];

/// Flags whose values a tap keeps in the bridge's argv: they say how the
/// session ran and hold nothing of the user's.
const TAPPED_VALUES: &[&str] = &[
    "--model",
    "--permission-mode",
    "--output-format",
    "--input-format",
    "--resume",
    "-r",
    "--auth-method",
    "--agent-grace-ms",
    "--eof-drain-ms",
    "--cancel-grace-ms",
    "--max-line-bytes",
    "--acp-config",
    "--acp-protocol",
];

/// The bridge's own argv as a tap records it: every flag named, the values
/// of [`TAPPED_VALUES`] kept, every other flag's value `<dropped>` (an
/// `--mcp-config` with a stdio server's arguments, `--settings` with an
/// `env`, the agent command line, paths: the header has what the session
/// needs, scrubbed). Positionals (a prompt) stay.
pub fn tap_argv(args: &[String]) -> Vec<String> {
    const DROPPED: &str = "<dropped>";
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let token = &args[i];
        i += 1;
        if token == "--" {
            out.extend(args[i - 1..].iter().cloned());
            break;
        }
        if !token.starts_with('-') || token == "-" {
            out.push(token.clone());
            continue;
        }
        let (name, inline) = match token.split_once('=') {
            Some((n, v)) if token.starts_with("--") => (n, Some(v)),
            _ => (token.as_str(), None),
        };
        let keep = TAPPED_VALUES.contains(&name);
        if let Some(value) = inline {
            out.push(format!("{name}={}", if keep { value } else { DROPPED }));
            continue;
        }
        out.push(token.clone());
        if BOOL_FLAGS.contains(&name) {
            continue;
        }
        // the values the reader takes: one for a value flag, every one up
        // to the next flag for --add-dir, the next non-flag for the rest
        let takes = |v: &String| match name {
            "--add-dir" => !v.starts_with('-'),
            n if VALUE_FLAGS.contains(&n) => true,
            _ => !v.starts_with("--"),
        };
        while let Some(value) = args.get(i).filter(|v| takes(v)) {
            out.push(if keep { value.clone() } else { DROPPED.into() });
            i += 1;
            if name != "--add-dir" {
                break;
            }
        }
    }
    out
}

/// Parses `args` (without the program name) with `env`'s fallbacks;
/// `current_dir` anchors relative paths.
pub fn parse(args: &[String], env: Env, current_dir: &Path) -> Result<Invocation> {
    let mut flags = match Flags::read(args, current_dir)? {
        ControlFlow::Break(done) => return Ok(done),
        ControlFlow::Continue(flags) => flags,
    };
    let session_state_lines = session_state_lines(&env);
    let max_line_bytes = match (flags.max_line, env.max_line_bytes) {
        (Some(cap), _) => cap,
        (None, Some(v)) if !v.trim().is_empty() => line_cap(v.trim(), MAX_LINE_ENV)?,
        _ => super::line_io::DEFAULT_MAX_LINE,
    };
    let home = env.home.as_deref();
    let tap = match (flags.tap.take(), env.tap) {
        (Some(v), _) => tap_path(&v, "--tap", current_dir, home, &mut flags.notes)?,
        (None, Some(v)) if !v.trim().is_empty() => {
            tap_path(v.trim(), TAP_ENV, current_dir, home, &mut flags.notes)?
        }
        _ => None,
    };
    let agent_argv = agent_argv(flags.agent_cmd, env.agent, current_dir)?;
    if flags.config_options.is_empty()
        && let Some(list) = env.config.as_deref().filter(|v| !v.trim().is_empty())
    {
        for item in list.split(',').filter(|i| !i.trim().is_empty()) {
            flags
                .config_options
                .push(config_option(item.trim(), CONFIG_ENV)?);
        }
    }
    let acp_protocol = match (
        flags.acp_protocol,
        env.acp_protocol.as_deref().map(str::trim),
    ) {
        (Some(offer), _) => offer,
        (None, Some(v)) if !v.is_empty() => acp_protocol(v, ACP_PROTOCOL_ENV)?,
        _ => Offer::default(),
    };
    let mcp_unadvertised = flags.mcp_unadvertised
        || match env.mcp_unadvertised.as_deref().map(str::trim) {
            None | Some("") | Some("0") | Some("false") => false,
            Some("1") | Some("true") => true,
            Some(other) => bail!("{MCP_UNADVERTISED_ENV} takes 1 or 0, got {other:?}"),
        };

    let cwd = flags.cwd.unwrap_or_else(|| current_dir.to_path_buf());
    if !cwd.is_dir() {
        bail!("--cwd {}: not a directory", cwd.display());
    }

    let launch_servers = mcp_config::read(&flags.mcp_configs, current_dir)?;
    flags.notes.extend(launch_servers.picked.notes);
    let secrets = acp_bridge::acp::mcp_servers::secrets(&launch_servers.servers);

    if flags.permission_mode.is_none() && flags.skip_permissions {
        flags.permission_mode = Some("bypassPermissions".to_string());
    }
    let append_system_prompt =
        (!flags.append_prompts.is_empty()).then(|| flags.append_prompts.join("\n\n"));

    let print_prompt = if flags.print_mode && !flags.positionals.is_empty() {
        Some(flags.positionals.join(" "))
    } else {
        let positionals = flags
            .positionals
            .iter()
            .map(|a| format!("positional {a:?}"));
        flags.ignored.extend(positionals);
        None
    };
    if !flags.ignored.is_empty() {
        flags
            .notes
            .push(format!("ignored: {}", flags.ignored.join(", ")));
    }

    let spec = LaunchSpec {
        resume_session_id: flags.resume,
        model: flags.model,
        permission_mode: flags.permission_mode,
        system_prompt: flags.system_prompt,
        append_system_prompt,
        mcp: launch_servers.picked.endpoint,
        mcp_servers: launch_servers.servers,
        await_initialize: flags.await_initialize,
        cwd: cwd.to_string_lossy().into_owned(),
        auth_method: flags.auth_method,
        mcp_unadvertised,
        config_options: flags.config_options,
        acp_protocol,
        session_state_lines,
        script_gate: flags.script_gate,
        cancel_grace: flags.cancel_grace,
        additional_directories: flags.add_dirs,
        // Fields the command line does not set (e.g. `compat`) keep their defaults.
        ..LaunchSpec::default()
    };
    Ok(Invocation::Run(Box::new(HostConfig {
        spec,
        agent_argv,
        cwd,
        timing: flags.timing,
        bridge_log: flags.bridge_log,
        tap,
        secrets,
        max_line_bytes,
        print_prompt,
        notes: flags.notes,
    })))
}

/// The flags as given, before the environment fills the gaps and the
/// launch is worked out from them.
#[derive(Default)]
struct Flags {
    model: Option<String>,
    permission_mode: Option<String>,
    mcp_configs: Vec<String>,
    system_prompt: Option<String>,
    append_prompts: Vec<String>,
    resume: Option<String>,
    agent_cmd: Option<String>,
    cwd: Option<PathBuf>,
    auth_method: Option<String>,
    script_gate: bool,
    bridge_log: Option<PathBuf>,
    tap: Option<String>,
    timing: Timing,
    cancel_grace: Option<Duration>,
    max_line: Option<usize>,
    skip_permissions: bool,
    /// `--add-dir` values, absolute.
    add_dirs: Vec<String>,
    notes: Vec<String>,
    ignored: Vec<String>,
    positionals: Vec<String>,
    print_mode: bool,
    await_initialize: bool,
    mcp_unadvertised: bool,
    /// `--acp-config` values, in order.
    config_options: Vec<(String, String)>,
    acp_protocol: Option<Offer>,
}

impl Flags {
    /// Reads every token; `--version` and `--help` end the reading with
    /// what to do instead of running.
    fn read(args: &[String], current_dir: &Path) -> Result<ControlFlow<Invocation, Flags>> {
        let mut flags = Flags::default();
        let mut i = 0;
        while i < args.len() {
            let token = &args[i];
            i += 1;
            if token == "--" {
                // Claude's `-- <prompt>`: a positional prompt, which the bridge
                // does not take (the panel sends prompts on stdin).
                flags.positionals.extend(args[i..].iter().cloned());
                break;
            }
            if !token.starts_with('-') || token == "-" {
                flags.positionals.push(token.clone());
                continue;
            }
            let (name, inline) = match token.split_once('=') {
                Some((n, v)) if token.starts_with("--") => (n, Some(v.to_string())),
                _ => (token.as_str(), None),
            };
            match name {
                "--version" | "-v" => return Ok(ControlFlow::Break(Invocation::Version)),
                "--help" | "-h" => return Ok(ControlFlow::Break(Invocation::Help)),
                "--script-gate" => {
                    flags.script_gate = match inline.as_deref() {
                        None | Some("true") | Some("1") | Some("yes") => true,
                        Some("false") | Some("0") | Some("no") => false,
                        Some(other) => bail!("--script-gate takes true or false, got {other:?}"),
                    }
                }
                "--dangerously-skip-permissions" => flags.skip_permissions = true,
                "--add-dir" => {
                    // Claude's `--add-dir <directories...>`: every value up
                    // to the next flag (the SDKs repeat the flag per directory)
                    let mut values: Vec<String> = inline.into_iter().collect();
                    if values.is_empty() {
                        while let Some(next) = args.get(i).filter(|v| !v.starts_with('-')) {
                            values.push(next.clone());
                            i += 1;
                        }
                    }
                    if values.iter().all(|v| v.is_empty()) {
                        bail!("--add-dir needs a directory");
                    }
                    flags.add_dirs.extend(
                        values
                            .iter()
                            .filter(|v| !v.is_empty())
                            .map(|v| current_dir.join(v).to_string_lossy().into_owned()),
                    );
                }
                "--await-initialize" => flags.await_initialize = true,
                "--acp-mcp-unadvertised" => flags.mcp_unadvertised = true,
                "--print" | "-p" => flags.print_mode = true,
                "--output-format" | "--input-format" => {
                    let value = match inline {
                        Some(v) => Some(v),
                        None if args.get(i).is_some_and(|v| !v.starts_with("--")) => {
                            i += 1;
                            Some(args[i - 1].clone())
                        }
                        None => None,
                    };
                    if value.as_deref() != Some("stream-json") {
                        flags.notes.push(format!(
                            "{name} {}: only stream-json is spoken; using it",
                            value.as_deref().unwrap_or("(no value)")
                        ));
                    }
                }
                n if BOOL_FLAGS.contains(&n) => {
                    if inline.is_some() {
                        flags.ignored.push(format!("{n} (and its value)"));
                    }
                }
                n if VALUE_FLAGS.contains(&n) => {
                    let value = match inline {
                        Some(v) => v,
                        None => {
                            let v = args
                                .get(i)
                                .cloned()
                                .ok_or_else(|| anyhow!("{n} needs a value"))?;
                            i += 1;
                            v
                        }
                    };
                    flags.take(n, value, current_dir)?;
                }
                _ => {
                    // Unknown flag: skip its value unless the value is the next flag.
                    // Only the flag is named in the note (a value may be a secret).
                    if inline.is_none() && args.get(i).is_some_and(|next| !next.starts_with("--")) {
                        flags.ignored.push(format!("{name} (and its value)"));
                        i += 1;
                    } else if inline.is_some() {
                        flags.ignored.push(format!("{name} (and its value)"));
                    } else {
                        flags.ignored.push(token.clone());
                    }
                }
            }
        }
        Ok(ControlFlow::Continue(flags))
    }

    /// Takes the value of one of [`VALUE_FLAGS`].
    fn take(&mut self, n: &str, value: String, current_dir: &Path) -> Result<()> {
        match n {
            "--model" => self.model = Some(value),
            "--permission-mode" => self.permission_mode = Some(value),
            "--mcp-config" => self.mcp_configs.push(value),
            "--system-prompt" => self.system_prompt = Some(value),
            "--system-prompt-file" => self.system_prompt = Some(read_text(&value, n, current_dir)?),
            "--append-system-prompt" => self.append_prompts.push(value),
            "--append-system-prompt-file" => {
                self.append_prompts.push(read_text(&value, n, current_dir)?)
            }
            "--resume" | "-r" => self.resume = Some(value),
            "--agent-cmd" => self.agent_cmd = Some(value),
            "--cwd" => self.cwd = Some(current_dir.join(value)),
            "--auth-method" => self.auth_method = Some(value),
            "--bridge-log" => self.bridge_log = Some(current_dir.join(value)),
            "--tap" => self.tap = Some(value),
            "--agent-grace-ms" => self.timing.grace = millis(&value, n)?,
            "--eof-drain-ms" => self.timing.eof_drain = millis(&value, n)?,
            "--cancel-grace-ms" => self.cancel_grace = Some(millis(&value, n)?),
            "--max-line-bytes" => self.max_line = Some(line_cap(&value, n)?),
            "--acp-config" => self.config_options.push(config_option(&value, n)?),
            "--acp-protocol" => self.acp_protocol = Some(acp_protocol(&value, n)?),
            _ => unreachable!("every VALUE_FLAGS entry is matched above"),
        }
        Ok(())
    }
}

/// Whom `session_state_changed` lines are for, from the two variables
/// Claude Code reads (a value of `1` or `true` turns one on).
fn session_state_lines(env: &Env) -> SessionStateLines {
    let on = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
    };
    if on(&env.emit_session_state) {
        SessionStateLines::Emitted
    } else if on(&env.sdk_reads_session_state) {
        SessionStateLines::HostOnly
    } else {
        SessionStateLines::Off
    }
}

/// `1`, `2` or `auto`; `source` names where it came from.
fn acp_protocol(text: &str, source: &str) -> Result<Offer> {
    Offer::parse(text).ok_or_else(|| anyhow!("{source} takes 1, 2 or auto, got {text:?}"))
}

/// One `<id>=<value>` session config option; `source` names where it came from.
fn config_option(item: &str, source: &str) -> Result<(String, String)> {
    match item.split_once('=') {
        Some((id, value)) if !id.trim().is_empty() && !value.trim().is_empty() => {
            Ok((id.trim().to_string(), value.trim().to_string()))
        }
        _ => bail!("{source} takes <id>=<value> (a session config option), got {item:?}"),
    }
}

/// The agent's command line, from `--agent-cmd` or else [`AGENT_ENV`], split
/// into words; a relative program path is taken from where the bridge was
/// started.
fn agent_argv(
    flag: Option<String>,
    env: Option<String>,
    current_dir: &Path,
) -> Result<Vec<String>> {
    let (agent_line, source) = match (flag, env) {
        (Some(cmd), _) => (cmd, "--agent-cmd"),
        (None, Some(env)) if !env.trim().is_empty() => (env, AGENT_ENV),
        _ => bail!("no agent command: pass --agent-cmd \"<command line>\" or set {AGENT_ENV}"),
    };
    let mut agent_argv = super::command_line::split(&agent_line)
        .map_err(anyhow::Error::msg)
        .with_context(|| {
            format!("cannot split the agent command line from {source} ({agent_line:?})")
        })?;
    if agent_argv.is_empty() {
        bail!("the agent command line from {source} is empty");
    }
    // A relative program path means relative to where we were started, not
    // to --cwd (std leaves that case platform-specific).
    if super::program::is_relative_path(&agent_argv[0], cfg!(windows)) {
        agent_argv[0] = current_dir
            .join(&agent_argv[0])
            .to_string_lossy()
            .into_owned();
    }
    Ok(agent_argv)
}

fn millis(value: &str, flag: &str) -> Result<Duration> {
    let ms: u64 = value
        .parse()
        .map_err(|_| anyhow!("{flag} takes a whole number of milliseconds, got {value:?}"))?;
    Ok(Duration::from_millis(ms))
}

fn line_cap(value: &str, what: &str) -> Result<usize> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => bail!("{what} takes a positive whole number of bytes, got {value:?}"),
    }
}

/// The tap's path: `~/` is the home directory (a panel's environment is not
/// expanded by a shell), relative paths are relative to where we were
/// started; a trailing `/` keeps meaning "a directory". A path that means
/// nothing here (`~/` without a home) is a note and no tap: the tap never
/// stops a session (an empty `--tap` is a usage error all the same).
fn tap_path(
    value: &str,
    what: &str,
    current_dir: &Path,
    home: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Option<PathBuf>> {
    if value.is_empty() {
        bail!("{what} needs a file or directory path");
    }
    let path = match value.strip_prefix("~/") {
        Some(rest) => match home {
            Some(home) => home.join(rest),
            None => {
                notes.push(format!(
                    "{what} {value:?}: HOME is not set, so ~ means nothing; the session runs untapped"
                ));
                return Ok(None);
            }
        },
        None => current_dir.join(value),
    };
    Ok(Some(path))
}

fn read_text(path: &str, flag: &str, current_dir: &Path) -> Result<String> {
    let full = current_dir.join(path);
    std::fs::read_to_string(&full)
        .with_context(|| format!("{flag}: cannot read {}", full.display()))
}

pub const USAGE: &str = "\
acp-bridge: run an ACP agent behind the Claude Code stream-json protocol

usage: acp-bridge --agent-cmd \"<command line>\" [claude flags...]

The agent command comes from --agent-cmd or the ACP_BRIDGE_AGENT variable.
With -p/--print and a prompt argument, that prompt is the only message and
stdin is not read (like `claude -p <prompt>`); output stays stream-json.
Claude flags used: --model, --permission-mode, --mcp-config (JSON or path),
--system-prompt[-file], --append-system-prompt[-file], --resume,
--dangerously-skip-permissions, --await-initialize (the panel's first line must
be its initialize request, whose mcpServers join --mcp-config's). Every other Claude flag is accepted and ignored.
Bridge flags: --cwd <dir>, --auth-method <id>, --script-gate[=true|false],
--acp-config <id>=<value> (repeatable, also from ACP_BRIDGE_CONFIG as id=value,...:
a session config option set right after the session opens),
--acp-mcp-unadvertised (also ACP_BRIDGE_MCP_UNADVERTISED=1: give the agent the MCP
server even though it advertises no HTTP MCP),
--acp-protocol 1|2|auto (also ACP_BRIDGE_ACP_PROTOCOL: the ACP revision offered;
default 1; auto offers v2 and falls back to v1 when the agent refuses it),
--tap <file or dir/> (also from ACP_BRIDGE_TAP: both legs of the session, scrubbed
of paths and credentials, written whole at exit; in a directory, a new file per session),
--bridge-log <file> (the same lines as tagged text, appended as they come),
--agent-grace-ms <ms> (default 2000),
--eof-drain-ms <ms> (longest wait for a running turn after stdin closes; default 600000),
--cancel-grace-ms <ms> (longest wait for the agent to answer an interrupted prompt
before the turn ends without it; default 10000),
--max-line-bytes <n> (longest line read from the panel or the agent, also from
ACP_BRIDGE_MAX_LINE_BYTES; default 134217728 = 128 MiB: a longer line is skipped
and reported, and a running turn ends with an is_error result saying so).

acp-bridge gate-hook: the script gate as a Claude Code PreToolUse hook (stdin -> stdout).
";

#[cfg(test)]
mod tests;
