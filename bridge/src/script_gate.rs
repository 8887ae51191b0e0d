//! The script gate (seed 001): agents must not write `*.cs` / `*.asmdef`
//! under `Assets/` directly. They stage scripts in [`STAGING_FOLDER`] and call
//! [`COMMIT_TOOL`], which moves them into `Assets/` only if they compile.
//!
//! One piece of code serves both layers that enforce it, so they can never
//! disagree: the bridge (`--script-gate`, answering permission requests) and
//! the Claude Code PreToolUse hook (`acp-bridge gate-hook`, see
//! [`hook_decision`]), which also fires when a user's "always allow" rule
//! means no permission request is ever asked.
//!
//! Everything here fails open: a command or input it cannot parse is allowed.
//! The gate is a guard rail for a cooperating agent, not a sandbox. Known
//! blind spots that stay so: dynamic-code tools (C# run inside the editor),
//! paths built in variables, interpreter one-liners (`python -c ...`).

use serde_json::{Value, json};

/// The folder (project root, outside `Assets/`) where scripts are staged.
pub const STAGING_FOLDER: &str = "UapStaging/";
/// The unity-ops tool that compiles staged scripts and moves them into `Assets/`.
pub const COMMIT_TOOL: &str = "uap_scripts_commit";
/// Claude tool names that run a shell command (Windows CLIs say `PowerShell`).
pub const SHELL_TOOL_NAMES: [&str; 3] = ["Bash", "PowerShell", "Shell"];
/// Claude tool names that write one file named by `file_path`.
pub const FILE_TOOL_NAMES: [&str; 3] = ["Write", "Edit", "MultiEdit"];

/// Whether `name` is a shell tool whose command the gate reads.
pub fn is_shell_tool_name(name: &str) -> bool {
    SHELL_TOOL_NAMES.contains(&name)
}

/// The command text of a shell tool's input: `command`, else `script` (the
/// same order the panel's tool describer uses). An argv array (codex sends
/// `["bash", "-lc", "<script>"]`) yields the script after `-c`/`-lc`/
/// `-Command`, else the words joined by spaces. A string that is a
/// shell-quoted argv (codex-acp 2.x sends the script shell-quoted as one
/// word, e.g. `'mkdir -p "$(dirname '"'Assets/…`) is unquoted the same way
/// (see [`unquoted_script`]). An ACP `execute` call with neither (Gemini
/// CLI) yields its title.
pub fn shell_command(input: &Value) -> Option<String> {
    for key in ["command", "script"] {
        match &input[key] {
            Value::String(s) if !s.trim().is_empty() => {
                return Some(unquoted_script(s).unwrap_or_else(|| s.clone()));
            }
            Value::Array(items) => {
                let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                if words.len() != items.len() || words.is_empty() {
                    return None;
                }
                return Some(argv_script(&words));
            }
            _ => {}
        }
    }
    // Gemini CLI sends no rawInput: the title of its shell call is the command
    // (plus ` [in <dir>]` / ` (<description>)`). Only ACP calls the bridge
    // relays carry `kind`; a Claude hook input never does.
    if input["kind"] == "execute" {
        return input["title"].as_str().map(str::to_string);
    }
    None
}

/// The script an argv runs: the word after `-c`/`-lc`/`-ic`/`-Command`/`/c`
/// when it is the last but one, else the words joined by spaces.
fn argv_script(words: &[&str]) -> String {
    let n = words.len();
    if n >= 2 {
        let flag = words[n - 2].to_ascii_lowercase();
        if matches!(flag.as_str(), "-c" | "-lc" | "-ic" | "-command" | "/c") {
            return words[n - 1].to_string();
        }
    }
    words.join(" ")
}

/// The script of a command string that is really a shell-quoted argv: one
/// quoted word (codex-acp 2.x quotes the script it runs under `bash -lc`)
/// is that word; a shell's argv ending in `-c <script>` is the script.
/// `None` (judge the string as it is) for an ordinary command line and for
/// anything shell-words cannot split (fail open: the string's own parse
/// decides).
pub fn unquoted_script(command: &str) -> Option<String> {
    let words = shell_words::split(command).ok()?;
    match words.as_slice() {
        [only] if only != command.trim() => Some(only.clone()),
        [shell, .., _] if is_shell_program(shell) => {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let script = argv_script(&words);
            (script != words.join(" ")).then_some(script)
        }
        _ => None,
    }
}

/// Whether `program` (a path or a bare name) is a shell that runs `-c`.
fn is_shell_program(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let name = name.to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    matches!(
        name,
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "pwsh" | "powershell" | "cmd"
    )
}

/// The first `Assets/` script this tool call would write, or `None` when the
/// gate lets it through. Shell tools are judged by the write targets of their
/// command; `Write` / `Edit` / `MultiEdit` by `file_path` (else `path`, which
/// the bridge fills from ACP locations).
pub fn gated_target(tool_name: &str, input: &Value) -> Option<String> {
    if is_shell_tool_name(tool_name) {
        let command = shell_command(input)?;
        return shell_write_targets(&command)
            .into_iter()
            .find(|t| is_gated_script_path(t));
    }
    if FILE_TOOL_NAMES.contains(&tool_name) {
        let path = input["file_path"]
            .as_str()
            .or_else(|| input["path"].as_str())?;
        return is_gated_script_path(path).then(|| path.to_string());
    }
    None
}

/// [`gated_target`] for an ACP tool call the bridge relays (`fields` as
/// merged across its frames): a file tool is also judged by every file the
/// call names, its `locations` and the paths of its `diff` content, since a
/// multi-file patch lists each file there while `input` carries the first.
pub fn gated_target_in_call(tool_name: &str, input: &Value, fields: &Value) -> Option<String> {
    if let Some(target) = gated_target(tool_name, input) {
        return Some(target);
    }
    if !FILE_TOOL_NAMES.contains(&tool_name) {
        return None;
    }
    let locations = fields["locations"].as_array().into_iter().flatten();
    let diffs = ["content", "permissionContent"]
        .iter()
        .filter_map(|key| fields[*key].as_array())
        .flatten()
        .filter(|item| item["type"] == "diff");
    locations
        .chain(diffs)
        .filter_map(|item| item["path"].as_str())
        .find(|path| is_gated_script_path(path))
        .map(str::to_string)
}

/// Whether writing `path` is a direct write of a script into `Assets/`:
/// after folding `.` and `..`, case-insensitively, some directory segment is
/// `Assets` (and no `UapStaging` segment comes before it) and the file ends in
/// `.cs` or `.asmdef`. Both `/` and `\` separate segments.
pub fn is_gated_script_path(path: &str) -> bool {
    let lower = path.trim().to_ascii_lowercase();
    let mut segments: Vec<&str> = Vec::new();
    for seg in lower.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let Some((file, dirs)) = segments.split_last() else {
        return false;
    };
    if !(file.ends_with(".cs") || file.ends_with(".asmdef")) {
        return false;
    }
    let staging = STAGING_FOLDER.trim_end_matches('/').to_ascii_lowercase();
    for dir in dirs {
        if *dir == staging {
            return false;
        }
        if *dir == "assets" {
            return true;
        }
    }
    false
}

/// What the agent reads when the gate refuses a write (as the permission
/// denial or the hook's reason). Quotes the same folder and tool as
/// [`steering_text`].
pub fn deny_text(target: &str) -> String {
    format!(
        "Script gate: {target} is a script under Assets/; *.cs and *.asmdef files must not be written \
         into Assets/ directly. Write it into {STAGING_FOLDER} (project root, outside Assets) at the same \
         sub-path it should have under Assets/ ({STAGING_FOLDER}Editor/Foo.cs -> Assets/Editor/Foo.cs), \
         then call {COMMIT_TOOL}: it moves the staged files into Assets/ only if they compile and \
         returns the errors otherwise."
    )
}

/// What the panel is told when the agent wrote a script into `Assets/`
/// without asking (auto-approve modes), so the gate could only report it.
/// Quotes the same folder and tool as [`deny_text`].
pub fn unasked_write_text(target: &str) -> String {
    format!(
        "Script gate: {target} was written into Assets/ without a permission request (auto-approve), so the \
         gate could not stop it. *.cs and *.asmdef files belong in {STAGING_FOLDER} at the sub-path they should \
         have under Assets/, then {COMMIT_TOOL} moves them into Assets/ only if they compile."
    )
}

/// The lines joined to the custom instructions so the agent knows the rule
/// before it tries: empty when the gate is off (no rule nobody enforces), at
/// most three lines when on.
pub fn steering_text(gate_enabled: bool) -> String {
    if !gate_enabled {
        return String::new();
    }
    format!(
        "- Never write *.cs / *.asmdef files into Assets/ directly: the script gate denies Write/Edit and shell \
         writes (Bash / PowerShell redirection, tee, cp/mv, Set-Content, Out-File, Copy-Item, ...). Do not \
         create them with dynamic-code tools either.\n\
         - Put them in {STAGING_FOLDER} (project root, outside Assets) at the sub-path they should have under \
         Assets/ ({STAGING_FOLDER}Editor/Foo.cs -> Assets/Editor/Foo.cs) and call {COMMIT_TOOL}: it moves them \
         into Assets/ only if they compile and returns the errors otherwise. Do not start compiles or \
         refreshes yourself for staged scripts."
    )
}

/// The Claude Code PreToolUse hook: `stdin` is the hook's JSON
/// (`tool_name`, `tool_input`). A gated write gives the JSON line to print
/// (a `deny` decision with [`deny_text`]); anything else, including input
/// that is not JSON, gives `None` (print nothing, allow). Exit 0 either way.
pub fn hook_decision(stdin: &str) -> Option<String> {
    let input: Value = serde_json::from_str(stdin).ok()?;
    let tool_name = input["tool_name"].as_str()?;
    let target = gated_target(tool_name, &input["tool_input"])?;
    Some(
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": deny_text(&target),
        }})
        .to_string(),
    )
}

/// The most stdin the hook reads (a `Write` carries the whole file); larger
/// input is not parsed and so allowed.
pub const HOOK_INPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// Runs the hook on this process's stdin and stdout: reads the hook's JSON,
/// prints the decision line for a gated write, nothing otherwise. Waits at
/// most `timeout` for stdin to end; input it cannot read in time, or at all,
/// is allowed (the caller exits 0 either way).
pub fn run_hook_on_stdio(timeout: std::time::Duration) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let (tx, rx) = std::sync::mpsc::channel();
    // a detached reader: on timeout the process exits and takes it along
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let read = std::io::stdin()
            .lock()
            .take(HOOK_INPUT_LIMIT + 1)
            .read_to_end(&mut buf);
        let _ = tx.send(read.ok().map(|_| buf));
    });
    let Ok(Some(bytes)) = rx.recv_timeout(timeout) else {
        return Ok(());
    };
    if bytes.len() as u64 > HOOK_INPUT_LIMIT {
        return Ok(());
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Ok(());
    };
    if let Some(line) = hook_decision(&text) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")?;
        out.flush()?;
    }
    Ok(())
}

// ---------------------------------------------------------------- tokenizer

/// One token of a shell command. Quotes are resolved (a quoted word keeps
/// separators and never counts as a `-Parameter`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word {
        text: String,
        quoted: bool,
    },
    /// `>`, `>>`, `&>`, `*>`, `2>`: the next word is written.
    RedirectOut,
    /// `<`, `<<<`, or `>&1`-style duplication: the next word (if any) is not a target.
    RedirectOther,
}

type Segment = Vec<Tok>;

/// Splits `cmd` into simple commands (on `;` `|` `&` and newlines, outside
/// quotes) of tokens. A word that *starts* quoted is marked so (it is never a
/// `-Parameter`; `-Path:'x'` still is one). `None` when the text cannot be
/// parsed (an unterminated quote): the caller then allows. Bash heredoc bodies are skipped; a
/// parenthesised group is one word of its command and also yields its own
/// inner commands (to [`MAX_GROUP_DEPTH`] levels; deeper groups are words
/// only, so hostile nesting can neither overflow the stack nor go quadratic).
/// Backslashes are literal (Windows paths) except before a space, a quote or
/// a newline.
fn tokenize(cmd: &str) -> Option<Vec<Segment>> {
    let chars: Vec<char> = cmd.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        segments: Vec::new(),
        no_group_match: false,
        depth: 0,
    };
    lexer.run(chars.len())?;
    Some(lexer.segments)
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    segments: Vec<Segment>,
    /// Once a `(` found no match, later ones are literal too (keeps the scan linear).
    no_group_match: bool,
    /// How many groups `run` is inside.
    depth: usize,
}

/// How deep the gate looks into nested `( ... )` / `$( ... )` groups.
const MAX_GROUP_DEPTH: usize = 16;

impl Lexer<'_> {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    /// Lexes `chars[pos..end]` into `self.segments`.
    #[allow(unused_assignments)] // the word-state resets in the macros are dead only at the very end
    fn run(&mut self, end: usize) -> Option<()> {
        let mut seg: Segment = Vec::new();
        let mut word = String::new();
        let mut in_word = false;
        let mut quoted = false;
        let mut heredocs: Vec<(String, bool)> = Vec::new();

        macro_rules! end_word {
            () => {
                if in_word {
                    seg.push(Tok::Word {
                        text: std::mem::take(&mut word),
                        quoted,
                    });
                    in_word = false;
                    quoted = false;
                }
            };
        }
        macro_rules! end_segment {
            () => {
                end_word!();
                if !seg.is_empty() {
                    self.segments.push(std::mem::take(&mut seg));
                }
            };
        }

        while self.pos < end {
            let c = self.chars[self.pos];
            match c {
                ' ' | '\t' => {
                    end_word!();
                    self.pos += 1;
                }
                '\n' | '\r' => {
                    end_segment!();
                    self.pos += 1;
                    if c == '\n' && !heredocs.is_empty() {
                        self.skip_heredoc_bodies(end, &mut heredocs);
                    }
                }
                ';' | '|' => {
                    end_segment!();
                    self.pos += 1;
                }
                '&' => {
                    if self.peek(1) == Some('>') {
                        // `&>file`: both streams to a file
                        end_word!();
                        self.pos += 1;
                        self.lex_redirect_out(&mut seg);
                    } else {
                        end_segment!();
                        self.pos += 1;
                    }
                }
                '>' => {
                    // a pending all-digits or `*` word is the stream number (`2>`, `*>`)
                    if in_word
                        && !quoted
                        && (word == "*" || word.chars().all(|d| d.is_ascii_digit()))
                    {
                        word.clear();
                        in_word = false;
                    }
                    end_word!();
                    self.lex_redirect_out(&mut seg);
                }
                '<' => {
                    end_word!();
                    if self.peek(1) == Some('<') && self.peek(2) == Some('<') {
                        self.pos += 3;
                        seg.push(Tok::RedirectOther);
                    } else if self.peek(1) == Some('<') {
                        self.pos += 2;
                        let strip_tabs = self.peek(0) == Some('-');
                        if strip_tabs {
                            self.pos += 1;
                        }
                        while matches!(self.peek(0), Some(' ' | '\t')) {
                            self.pos += 1;
                        }
                        let delim = self.lex_plain_word(end)?;
                        if !delim.is_empty() {
                            heredocs.push((delim, strip_tabs));
                        }
                    } else {
                        self.pos += 1;
                        seg.push(Tok::RedirectOther);
                    }
                }
                '#' if !in_word => {
                    while self.pos < end && self.chars[self.pos] != '\n' {
                        self.pos += 1;
                    }
                }
                '\'' | '"' => {
                    self.pos += 1;
                    let text = self.lex_quoted(c, end)?;
                    word.push_str(&text);
                    quoted |= !in_word;
                    in_word = true;
                }
                '@' if !in_word
                    && matches!(self.peek(1), Some('"' | '\''))
                    && self.here_string_start() =>
                {
                    let text = self.lex_here_string(end)?;
                    word.push_str(&text);
                    in_word = true;
                    quoted = true;
                }
                '(' if !self.no_group_match => match self.find_group_end(end) {
                    Some(close) => {
                        let inner_start = self.pos + 1;
                        word.extend(&self.chars[self.pos..=close]);
                        quoted |= !in_word;
                        in_word = true;
                        // the group's own commands are commands too
                        if self.depth < MAX_GROUP_DEPTH {
                            self.pos = inner_start;
                            self.depth += 1;
                            let inner = self.run(close);
                            self.depth -= 1;
                            inner?;
                        }
                        self.pos = close + 1;
                    }
                    None => {
                        self.no_group_match = true;
                        word.push(c);
                        in_word = true;
                        self.pos += 1;
                    }
                },
                '\\' => match self.peek(1) {
                    Some('\n') => self.pos += 2,
                    Some(n @ (' ' | '"' | '\'')) => {
                        word.push(n);
                        in_word = true;
                        self.pos += 2;
                    }
                    _ => {
                        word.push('\\');
                        in_word = true;
                        self.pos += 1;
                    }
                },
                _ => {
                    word.push(c);
                    in_word = true;
                    self.pos += 1;
                }
            }
        }
        end_segment!();
        Some(())
    }

    /// At `>`: consumes `>`, `>>`, `>|`, `>&N` and pushes the matching token.
    fn lex_redirect_out(&mut self, seg: &mut Segment) {
        self.pos += 1; // '>'
        if self.peek(0) == Some('>') {
            self.pos += 1;
        }
        if self.peek(0) == Some('|') {
            self.pos += 1;
        }
        if self.peek(0) == Some('&') {
            self.pos += 1;
            if matches!(self.peek(0), Some(d) if d.is_ascii_digit() || d == '-') {
                while matches!(self.peek(0), Some(d) if d.is_ascii_digit() || d == '-') {
                    self.pos += 1;
                }
                seg.push(Tok::RedirectOther);
                return;
            }
        }
        seg.push(Tok::RedirectOut);
    }

    /// Reads a quoted run after its opening quote, up to the closing one.
    /// Double quotes honour `\"` and `` `" `` as escaped quotes.
    fn lex_quoted(&mut self, quote: char, end: usize) -> Option<String> {
        let mut out = String::new();
        while self.pos < end {
            let c = self.chars[self.pos];
            if c == quote {
                self.pos += 1;
                return Some(out);
            }
            if quote == '"' && (c == '\\' || c == '`') && self.peek(1) == Some('"') {
                out.push('"');
                self.pos += 2;
                continue;
            }
            out.push(c);
            self.pos += 1;
        }
        None
    }

    /// Whether `@"` / `@'` at `pos` opens a PowerShell here-string (the quote
    /// is followed by the end of the line).
    fn here_string_start(&self) -> bool {
        let mut i = 2;
        while matches!(self.peek(i), Some(' ' | '\t')) {
            i += 1;
        }
        matches!(self.peek(i), Some('\n' | '\r'))
    }

    /// Reads a here-string from `@"` to the line that starts with `"@`.
    fn lex_here_string(&mut self, end: usize) -> Option<String> {
        let quote = self.chars[self.pos + 1];
        self.pos += 2;
        let mut out = String::new();
        let mut line_start = false;
        while self.pos < end {
            let c = self.chars[self.pos];
            if line_start && c == quote && self.peek(1) == Some('@') {
                self.pos += 2;
                return Some(out);
            }
            line_start = c == '\n';
            out.push(c);
            self.pos += 1;
        }
        None
    }

    /// Reads one word (quotes removed) for a heredoc delimiter.
    fn lex_plain_word(&mut self, end: usize) -> Option<String> {
        let mut out = String::new();
        while self.pos < end {
            let c = self.chars[self.pos];
            match c {
                '\'' | '"' => {
                    self.pos += 1;
                    out.push_str(&self.lex_quoted(c, end)?);
                }
                ' ' | '\t' | '\n' | '\r' | ';' | '|' | '&' | '<' | '>' | '(' | ')' => break,
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        Some(out)
    }

    /// After a newline with pending heredocs: skips each body up to its delimiter line.
    fn skip_heredoc_bodies(&mut self, end: usize, heredocs: &mut Vec<(String, bool)>) {
        for (delim, strip_tabs) in heredocs.drain(..) {
            loop {
                if self.pos >= end {
                    return;
                }
                let start = self.pos;
                while self.pos < end && self.chars[self.pos] != '\n' {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.pos < end {
                    self.pos += 1; // the newline
                }
                let line = line.trim_end_matches('\r');
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if line == delim {
                    break;
                }
            }
        }
    }

    /// The index of the `)` matching the `(` at `pos`, skipping quoted runs.
    fn find_group_end(&self, end: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut i = self.pos;
        let mut quote: Option<char> = None;
        while i < end {
            let c = self.chars[i];
            match quote {
                Some(q) => {
                    if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    '\'' | '"' => quote = Some(c),
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => {}
                },
            }
            i += 1;
        }
        None
    }
}

// ---------------------------------------------------------------- write targets

/// Every path the shell command `command` would write, as written (before
/// the path check). Unparsable commands give none (fail open), except that
/// `[IO.File]::WriteAll*("<path>", ...)` is found by its own scan of the text.
pub fn shell_write_targets(command: &str) -> Vec<String> {
    let mut targets = Vec::new();
    if let Some(segments) = tokenize(command) {
        for seg in &segments {
            segment_targets(seg, &mut targets);
        }
    }
    dotnet_write_targets(command, &mut targets);
    targets
}

/// `[IO.File]::WriteAllText(` / `WriteAllLines(` / `WriteAllBytes(` take
/// their first argument, only when it is a quoted literal.
fn dotnet_write_targets(command: &str, out: &mut Vec<String>) {
    // ASCII lowering keeps byte offsets, so positions map back to `command`.
    let lower = command.to_ascii_lowercase();
    for method in ["::writealltext(", "::writealllines(", "::writeallbytes("] {
        let mut from = 0;
        while let Some(found) = lower[from..].find(method) {
            let args = from + found + method.len();
            from = args;
            let rest = command[args..].trim_start();
            let mut it = rest.char_indices();
            let Some((_, q @ ('"' | '\''))) = it.next() else {
                continue;
            };
            if let Some(close) = rest[1..].find(q) {
                out.push(rest[1..1 + close].to_string());
            }
        }
    }
}

/// A word of a simple command, with whether any part was quoted.
struct Arg<'a> {
    text: &'a str,
    quoted: bool,
}

fn segment_targets(seg: &Segment, out: &mut Vec<String>) {
    let mut args: Vec<Arg> = Vec::new();
    let mut redirected: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seg.len() {
        match &seg[i] {
            Tok::RedirectOut => {
                if let Some(Tok::Word { text, .. }) = seg.get(i + 1) {
                    redirected.push(text.clone());
                    i += 1;
                }
            }
            Tok::RedirectOther => {
                if let Some(Tok::Word { .. }) = seg.get(i + 1) {
                    i += 1;
                }
            }
            Tok::Word { text, quoted } => args.push(Arg {
                text,
                quoted: *quoted,
            }),
        }
        i += 1;
    }
    command_targets(&args, out);
    out.extend(redirected);
}

/// The targets a simple command's own arguments name (redirections aside).
fn command_targets(args: &[Arg], out: &mut Vec<String>) {
    // skip `VAR=value` prefixes and wrappers that run the next word
    let mut start = 0;
    while let Some(a) = args.get(start) {
        let is_assignment = !a.quoted
            && a.text.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if is_assignment
            || matches!(
                a.text,
                "sudo" | "env" | "command" | "exec" | "nohup" | "time"
            )
        {
            start += 1;
        } else {
            break;
        }
    }
    let Some(cmd) = args.get(start) else { return };
    let name = command_name(cmd.text);
    let rest = &args[start + 1..];
    match name.as_str() {
        "tee" => out.extend(
            rest.iter()
                .filter(|a| !is_option(a))
                .map(|a| a.text.to_string()),
        ),
        "sed" => sed_targets(rest, out),
        "dd" => out.extend(
            rest.iter()
                .filter_map(|a| a.text.strip_prefix("of="))
                .map(str::to_string),
        ),
        "cp" | "mv" | "install" if !has_ps_param(rest, "destination") => {
            posix_copy_targets(rest, out)
        }
        "cp" | "mv" | "copy" | "move" | "copy-item" | "move-item" | "cpi" | "mi" => {
            ps_copy_targets(rest, out)
        }
        "set-content" | "add-content" | "out-file" | "new-item" | "ac" | "ni" | "tee-object" => {
            ps_write_targets(&name, rest, out)
        }
        _ => {}
    }
}

/// `/usr/bin/tee`, `Set-Content`, `tee.exe` -> `tee`, `set-content`, `tee`.
fn command_name(word: &str) -> String {
    let base = word
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase();
    base.strip_suffix(".exe")
        .map(str::to_string)
        .unwrap_or(base)
}

fn is_option(a: &Arg) -> bool {
    !a.quoted && a.text.len() > 1 && a.text.starts_with('-')
}

/// `sed -i` writes its file operands; the first operand is the script unless
/// `-e` / `-f` gave one.
fn sed_targets(args: &[Arg], out: &mut Vec<String>) {
    let mut in_place = false;
    let mut script_given = false;
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if !is_option(a) {
            operands.push(a.text);
            continue;
        }
        if let Some(long) = a.text.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    script_given = true;
                    if !has_value {
                        i += 1;
                    }
                }
                "line-length" if !has_value => i += 1,
                _ => {}
            }
            continue;
        }
        let flags: Vec<char> = a.text[1..].chars().collect();
        for (k, f) in flags.iter().enumerate() {
            match f {
                'i' => {
                    in_place = true;
                    break; // the rest is the backup suffix
                }
                'e' | 'f' | 'l' => {
                    if *f != 'l' {
                        script_given = true;
                    }
                    if k + 1 == flags.len() {
                        i += 1; // value is the next word
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    if !in_place {
        return;
    }
    let skip = usize::from(!script_given);
    out.extend(operands.into_iter().skip(skip).map(str::to_string));
}

/// `cp` / `mv` / `install`: the destination is `-t DIR` or the last operand.
/// A destination that looks like a directory also yields `DIR/<source name>`
/// for each source, so `cp Foo.cs Assets/Editor/` is seen as a script write.
fn posix_copy_targets(args: &[Arg], out: &mut Vec<String>) {
    let mut operands: Vec<&str> = Vec::new();
    let mut target_dir: Option<&str> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if !is_option(a) {
            operands.push(a.text);
            continue;
        }
        if let Some(dir) = a.text.strip_prefix("--target-directory=") {
            target_dir = Some(dir);
        } else if a.text == "--target-directory" || a.text == "-t" {
            target_dir = args.get(i).map(|a| a.text);
            i += 1;
        } else if matches!(
            a.text,
            "-S" | "--suffix" | "-m" | "--mode" | "-o" | "--owner" | "-g" | "--group"
        ) {
            i += 1; // takes a value
        }
    }
    match target_dir {
        Some(dir) => push_destination(dir, &operands, true, out),
        None => {
            if let Some((dest, sources)) = operands.split_last()
                && !sources.is_empty()
            {
                push_destination(dest, sources, false, out);
            }
        }
    }
}

fn push_destination(dest: &str, sources: &[&str], is_dir: bool, out: &mut Vec<String>) {
    out.push(dest.to_string());
    if is_dir || looks_like_dir(dest) {
        let dir = dest.trim_end_matches(['/', '\\']);
        for src in sources {
            let name = src
                .trim_end_matches(['/', '\\'])
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(src);
            if !name.is_empty() {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
}

/// A destination ending in a separator, or whose last segment has no dot.
fn looks_like_dir(path: &str) -> bool {
    path.ends_with(['/', '\\'])
        || !path
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(path)
            .contains('.')
}

/// PowerShell switches that take no value; any other `-Param` consumes the
/// next word (so a parameter's value is never mistaken for the target).
const PS_SWITCHES: &[&str] = &[
    "force",
    "append",
    "noclobber",
    "nonewline",
    "passthru",
    "whatif",
    "confirm",
    "asbytestream",
    "verbose",
    "debug",
    "recurse",
    "container",
    "usetransaction",
    "raw",
];

/// A PowerShell command line split into named parameters and positionals.
struct PsArgs<'a> {
    named: Vec<(String, &'a str)>,
    positional: Vec<&'a str>,
}

impl PsArgs<'_> {
    fn get(&self, names: &[&str]) -> Option<&str> {
        self.named
            .iter()
            .find(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, v)| *v)
    }
}

fn parse_ps_args<'a>(args: &'a [Arg]) -> PsArgs<'a> {
    let mut parsed = PsArgs {
        named: Vec::new(),
        positional: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let param = (!a.quoted)
            .then(|| a.text.strip_prefix('-'))
            .flatten()
            .filter(|p| p.starts_with(|c: char| c.is_ascii_alphabetic()));
        let Some(param) = param else {
            parsed.positional.push(a.text);
            continue;
        };
        let (name, inline) = match param.split_once(':') {
            Some((n, v)) => (n.to_ascii_lowercase(), Some(v)),
            None => (param.to_ascii_lowercase(), None),
        };
        // `-Dest` is PowerShell's unambiguous prefix of `-Destination`
        let name = if name.len() >= 4 && "destination".starts_with(&name) {
            "destination".to_string()
        } else {
            name
        };
        match inline {
            Some(v) if !v.is_empty() => parsed.named.push((name, v)),
            Some(_) => {
                if let Some(v) = args.get(i) {
                    parsed.named.push((name, v.text));
                    i += 1;
                }
            }
            None if PS_SWITCHES.contains(&name.as_str()) => {}
            None => {
                if let Some(v) = args.get(i) {
                    parsed.named.push((name, v.text));
                    i += 1;
                }
            }
        }
    }
    parsed
}

fn has_ps_param(args: &[Arg], name: &str) -> bool {
    parse_ps_args(args).get(&[name]).is_some()
}

const PS_PATH_PARAMS: &[&str] = &["path", "literalpath", "filepath", "pspath"];

/// `Set-Content` / `Add-Content` / `Out-File` / `New-Item` / `Tee-Object`:
/// the named path, else the first positional. `New-Item -Name` joins the name
/// to the path (`New-Item -Path Assets/Editor -Name Foo.cs`).
fn ps_write_targets(name: &str, args: &[Arg], out: &mut Vec<String>) {
    let ps = parse_ps_args(args);
    let path = ps.get(PS_PATH_PARAMS).or(ps.positional.first().copied());
    let item_name = if matches!(name, "new-item" | "ni") {
        ps.get(&["name"])
    } else {
        None
    };
    match (path, item_name) {
        (Some(p), Some(n)) => out.push(format!("{}/{n}", p.trim_end_matches(['/', '\\']))),
        (None, Some(n)) => out.push(n.to_string()),
        (Some(p), None) => out.push(p.to_string()),
        (None, None) => {}
    }
}

/// `Copy-Item` / `Move-Item`: `-Destination`, else the second positional
/// (the first is the source: moving a script out of Assets is legitimate).
fn ps_copy_targets(args: &[Arg], out: &mut Vec<String>) {
    let ps = parse_ps_args(args);
    let named_source = ps.get(&["path", "literalpath"]);
    let mut positional = ps.positional.iter().copied();
    let source = named_source.or_else(|| positional.next());
    let dest = ps.get(&["destination"]).or_else(|| positional.next());
    if let Some(dest) = dest {
        let sources: Vec<&str> = source.into_iter().collect();
        push_destination(dest, &sources, false, out);
    }
}
