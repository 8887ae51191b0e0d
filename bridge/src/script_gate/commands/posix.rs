//! POSIX commands that write files named by their arguments.

use super::{Arg, is_option};

/// `sed -i` writes its file operands; the first operand is the script unless
/// `-e` / `-f` gave one.
pub(super) fn sed_targets(args: &[Arg], out: &mut Vec<String>) {
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
pub(super) fn posix_copy_targets(args: &[Arg], out: &mut Vec<String>) {
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

pub(super) fn push_destination(dest: &str, sources: &[&str], is_dir: bool, out: &mut Vec<String>) {
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
