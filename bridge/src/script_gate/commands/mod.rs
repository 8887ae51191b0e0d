//! Command knowledge: which words of which commands name a file the command
//! writes. [`posix`] knows `tee`, `sed -i`, `dd of=`, `cp`/`mv`/`install`;
//! [`powershell`] knows the `*-Content`/`Out-File`/`New-Item`/`Tee-Object`
//! and `Copy-Item`/`Move-Item` parameters and `[IO.File]::WriteAll*`.
//! Redirections are the lexer's. Paths come out as written; the path check
//! is the policy's.

mod posix;
mod powershell;

use posix::{posix_copy_targets, sed_targets};
use powershell::{dotnet_write_targets, has_ps_param, ps_copy_targets, ps_write_targets};

use super::lexer::{Segment, Tok, tokenize};

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
