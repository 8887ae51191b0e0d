//! PowerShell cmdlets (and their aliases) that write files named by their
//! parameters, and the .NET `[IO.File]::WriteAll*` calls.

use super::Arg;
use super::posix::push_destination;

/// `[IO.File]::WriteAllText(` / `WriteAllLines(` / `WriteAllBytes(` take
/// their first argument, only when it is a quoted literal.
pub(super) fn dotnet_write_targets(command: &str, out: &mut Vec<String>) {
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

pub(super) fn has_ps_param(args: &[Arg], name: &str) -> bool {
    parse_ps_args(args).get(&[name]).is_some()
}

const PS_PATH_PARAMS: &[&str] = &["path", "literalpath", "filepath", "pspath"];

/// `Set-Content` / `Add-Content` / `Out-File` / `New-Item` / `Tee-Object`:
/// the named path, else the first positional. `New-Item -Name` joins the name
/// to the path (`New-Item -Path Assets/Editor -Name Foo.cs`).
pub(super) fn ps_write_targets(name: &str, args: &[Arg], out: &mut Vec<String>) {
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
pub(super) fn ps_copy_targets(args: &[Arg], out: &mut Vec<String>) {
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
