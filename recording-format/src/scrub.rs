//! What a tap keeps off disk: the user's paths in every spelling a line can
//! carry them, the MCP server's header values, and anything shaped like a
//! credential. Pure: the host says which paths and values are the user's.
//!
//! Literal values (paths, header values, the MCP URL) are found in one pass
//! by an Aho-Corasick automaton over all their spellings; credential shapes
//! by one regex over all [`SECRET_PATTERNS`]. A line holding neither is not
//! copied. What was replaced is counted by kind, never kept.

use std::borrow::Cow;
use std::collections::BTreeMap;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

/// What replaces a credential.
pub use crate::placeholder::REDACTED;

/// Credential shapes the scrubber replaces wherever they occur, as
/// (kind, regex). A group named `v` marks the part replaced (the rest of the
/// match stays, e.g. `Bearer ` or `API_KEY=`); without one the whole match
/// goes. Each pattern starts with a literal, so the search skips to those
/// (a base64 image is scanned at memchr speed); a case-insensitive name
/// list multiplies into too many literals for that, so query names are
/// lower case and each assignment is a pass of its own. A match glued to a letter or
/// digit before it (inside a longer word or a base64 run) is left alone,
/// unless that letter ends a JSON escape such as `\n` or the match starts
/// at a separator (`_KEY=` ending a variable's name, a URL's `://`, `?` or
/// `&`); so is a fixed-length shape ([`FIXED_LENGTH`]) that runs on into
/// more letters or digits.
pub const SECRET_PATTERNS: &[(&str, &str)] = &[
    (
        "sk-key",
        r"sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    (
        "github-token",
        r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}"),
    ("aws-access-key", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    ("xai-key", r"xai-[A-Za-z0-9]{20,}"),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    ("stripe-key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("npm-token", r"npm_[A-Za-z0-9]{36}"),
    ("gitlab-token", r"glpat-[A-Za-z0-9_-]{20,}"),
    (
        "slack-webhook",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9_-]+/[A-Za-z0-9_-]+/[A-Za-z0-9_-]{8,}",
    ),
    (
        "url-token",
        r#"[?&](?:token|key|api_key|apikey|access_token|auth|secret|sig|signature|password)=(?P<v>[^&\s"'#<>\\]{8,})"#,
    ),
    (
        "url-password",
        r#"://[^/ \t\r\n:@"'<>]+:(?P<v>[^/ \t\r\n@"'<>]{3,})@"#,
    ),
    (
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    ),
    (
        "bearer-token",
        r"(?i:bearer)\s+(?P<v>[A-Za-z0-9._~+/_-]{8,}=*)",
    ),
    (
        "secret-assignment",
        r#"(?i:api[_-]?key|secret|password|passwd|auth[_-]?token|access[_-]?token|refresh[_-]?token)\\?["']?\s*[:=]\s*\\?["']?(?P<v>[^\s"'\\,;&<]{8,})"#,
    ),
    (
        "secret-assignment",
        r#"_(?i:key|token|secret|password|passwd|pwd)\\?["']?\s*[:=]\s*\\?["']?(?P<v>[^\s"'\\,;&<]{8,})"#,
    ),
];

/// The kind of [`SECRET_PATTERNS`] that names a value rather than shapes it.
const ASSIGNMENT: &str = "secret-assignment";

/// One regex over some of [`SECRET_PATTERNS`], each pattern a group.
struct Pass {
    regex: Regex,
    /// Per group: the index into [`SECRET_PATTERNS`], the whole match's
    /// group name and the value group's.
    groups: Vec<(usize, String, Option<String>)>,
}

impl Pass {
    fn new<'a>(patterns: impl Iterator<Item = (usize, &'a (&'a str, &'a str))>) -> Pass {
        let mut groups = Vec::new();
        let mut alternatives = Vec::new();
        for (i, (_, pattern)) in patterns {
            let value = pattern.contains("(?P<v>").then(|| format!("v{i}"));
            let pattern = pattern.replace("(?P<v>", &format!("(?P<v{i}>"));
            alternatives.push(format!("(?P<k{i}>{pattern})"));
            groups.push((i, format!("k{i}"), value));
        }
        let regex = Regex::new(&alternatives.join("|")).expect("SECRET_PATTERNS are valid regexes");
        Pass { regex, groups }
    }

    /// Which pattern matched and the span to replace, or `None` when the
    /// match is glued to a word or base64 run.
    fn span(&self, text: &str, caps: &regex::Captures) -> Option<(usize, usize, usize)> {
        let (i, whole, value) = self
            .groups
            .iter()
            .find_map(|(i, k, v)| caps.name(k).map(|m| (*i, m, v)))?;
        let fixed = FIXED_LENGTH.contains(&SECRET_PATTERNS[i].0);
        // a match that starts at a separator (`_KEY=` ending a variable's
        // name, a URL's `://`, `?`, `&`) is glued to nothing
        let separated = text[whole.start()..].starts_with(['_', ':', '?', '&']);
        if !separated && glued_before(&text[..whole.start()])
            || fixed && glued_after(&text[whole.end()..])
        {
            return None;
        }
        let span = match value {
            Some(v) => caps.name(v).map_or(whole.range(), |m| m.range()),
            None => whole.range(),
        };
        Some((i, span.start, span.end))
    }
}

/// The kinds of [`SECRET_PATTERNS`] with a fixed length.
const FIXED_LENGTH: &[&str] = &["google-api-key", "aws-access-key", "npm-token"];

/// Finds and replaces the user's values and credential shapes in text.
pub struct Scrubber {
    /// (kind, placeholder, value) it was built from, kept to add a value
    /// learnt later.
    values: Vec<(&'static str, String, String)>,
    literals: Option<AhoCorasick>,
    /// Per automaton pattern: (kind, placeholder). A path is replaced
    /// wherever it occurs, also where text runs on after it (`/tmp` in
    /// `/tmpfoo`): a user's path glued to other text must not slip through.
    replacements: Vec<(&'static str, String)>,
    /// The regex passes over [`SECRET_PATTERNS`], in order.
    passes: Vec<Pass>,
    counts: BTreeMap<&'static str, u64>,
}

/// The values a [`Scrubber`] is built from.
#[derive(Debug, Default, Clone)]
pub struct ScrubberBuilder {
    /// (kind, placeholder, value)
    values: Vec<(&'static str, String, String)>,
}

impl ScrubberBuilder {
    /// A directory of the user's (home, workspace, temp) in every spelling:
    /// as is, JSON-escaped (also with `\uXXXX` for non-ASCII and `\/` for
    /// `/`, and escaped twice for JSON inside a JSON string),
    /// percent-encoded as in a `file://` URL (also with `/` as `%2F`), and
    /// with `\` for `/` (or `/` for `\` and either case of the drive letter,
    /// for a Windows path). Paths shorter than 2 characters (`/`) are ignored.
    pub fn path(&mut self, kind: &'static str, placeholder: &str, path: &str) {
        let path = path.trim_end_matches(['/', '\\']);
        if path.chars().count() < 2 {
            return;
        }
        for form in path_forms(path) {
            self.values.push((kind, placeholder.to_string(), form));
        }
    }

    /// A literal value (an MCP header value, the MCP URL) in its plain and
    /// JSON-escaped spellings. Values shorter than 4 bytes are ignored (they
    /// would hit ordinary text).
    pub fn literal(&mut self, kind: &'static str, placeholder: &str, value: &str) {
        if value.len() < 4 {
            return;
        }
        let mut forms = vec![value.to_string()];
        let json = json_inner(value);
        forms.push(json.replace('/', "\\/"));
        forms.push(json_inner(&json));
        forms.push(json);
        forms.sort();
        forms.dedup();
        for form in forms {
            self.values.push((kind, placeholder.to_string(), form));
        }
    }

    pub fn build(mut self) -> Scrubber {
        // Longest first, so of two values where one is the other's prefix
        // (a workspace inside home) the longer is listed first and, with
        // leftmost-first matching, wins; leftmost-first also lets the
        // search use its SIMD prefilter, which leftmost-longest does not.
        self.values
            .sort_by(|a, b| b.2.len().cmp(&a.2.len()).then(a.2.cmp(&b.2)));
        self.values.dedup_by(|a, b| a.2 == b.2);
        let (literals, replacements) = automaton(&self.values);
        // Assignments first: a shape glued in front (`Bearer x..API_KEY=y`)
        // would otherwise take the assignment's name into its own match.
        // Each assignment is a pass of its own: joined, their case-insensitive
        // names are too many literals for the search to skip ahead by.
        let numbered = || SECRET_PATTERNS.iter().enumerate();
        let passes = numbered()
            .filter(|(_, (kind, _))| *kind == ASSIGNMENT)
            .map(|entry| Pass::new(std::iter::once(entry)))
            .chain(std::iter::once(Pass::new(
                numbered().filter(|(_, (kind, _))| *kind != ASSIGNMENT),
            )))
            .collect();
        Scrubber {
            values: self.values,
            literals,
            replacements,
            passes,
            counts: BTreeMap::new(),
        }
    }
}

/// The literal search over `values` (sorted longest first) and, per pattern,
/// its (kind, placeholder).
fn automaton(
    values: &[(&'static str, String, String)],
) -> (Option<AhoCorasick>, Vec<(&'static str, String)>) {
    let literals = (!values.is_empty())
        .then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(values.iter().map(|v| v.2.as_str()))
                .ok()
        })
        .flatten();
    let replacements = values
        .iter()
        .map(|(kind, placeholder, _)| (*kind, placeholder.clone()))
        .collect();
    (literals, replacements)
}

impl Scrubber {
    pub fn builder() -> ScrubberBuilder {
        ScrubberBuilder::default()
    }

    /// Adds a literal value learnt after the start (an MCP server's header
    /// in the panel's `initialize`), in the spellings [`ScrubberBuilder::literal`]
    /// knows; the search is rebuilt, once per value, which is rare.
    pub fn add_literal(&mut self, kind: &'static str, placeholder: &str, value: &str) {
        if self.values.iter().any(|v| v.2 == value) {
            return;
        }
        let mut more = ScrubberBuilder {
            values: std::mem::take(&mut self.values),
        };
        more.literal(kind, placeholder, value);
        more.values
            .sort_by(|a, b| b.2.len().cmp(&a.2.len()).then(a.2.cmp(&b.2)));
        more.values.dedup_by(|a, b| a.2 == b.2);
        (self.literals, self.replacements) = automaton(&more.values);
        self.values = more.values;
    }

    /// `text` with every known value and credential shape replaced; counts
    /// what it replaced.
    pub fn scrub<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        let text = self.scrub_literals(text);
        match self.scrub_patterns(&text) {
            Some(out) => Cow::Owned(out),
            None => text,
        }
    }

    /// How many values of each kind were replaced so far.
    pub fn counts(&self) -> &BTreeMap<&'static str, u64> {
        &self.counts
    }

    /// Whether `text` still holds a credential shape (an importer refuses such a file).
    pub fn finds_secret(&self, text: &str) -> bool {
        self.find_secret(text).is_some()
    }

    /// The kind ([`SECRET_PATTERNS`]) of the first credential shape left in
    /// `text` and where it starts, so a refusal names what and where
    /// without repeating the value.
    pub fn find_secret(&self, text: &str) -> Option<(&'static str, usize)> {
        self.passes
            .iter()
            .filter_map(|p| p.regex.captures_iter(text).find_map(|c| p.span(text, &c)))
            .min_by_key(|(_, start, _)| *start)
            .map(|(i, start, _)| (SECRET_PATTERNS[i].0, start))
    }

    /// Every known value and credential shape in `text`, as (kind,
    /// placeholder, start, end), in order and not overlapping (of two
    /// overlapping finds the earlier, then the longer, is kept). Nothing is
    /// counted: the caller says what it replaced ([`Scrubber::count`]).
    pub fn spans(&self, text: &str) -> Vec<(&'static str, String, usize, usize)> {
        let mut found: Vec<(&'static str, String, usize, usize)> = Vec::new();
        if let Some(ac) = &self.literals {
            for m in ac.find_iter(text) {
                let (kind, placeholder) = &self.replacements[m.pattern().as_usize()];
                found.push((kind, placeholder.clone(), m.start(), m.end()));
            }
        }
        for pass in &self.passes {
            for caps in pass.regex.captures_iter(text) {
                if let Some((i, start, end)) = pass.span(text, &caps) {
                    found.push((SECRET_PATTERNS[i].0, REDACTED.to_string(), start, end));
                }
            }
        }
        found.sort_by(|a, b| a.2.cmp(&b.2).then(b.3.cmp(&a.3)));
        let mut out: Vec<(&'static str, String, usize, usize)> = Vec::new();
        for f in found {
            if out.last().is_none_or(|last| f.2 >= last.3) {
                out.push(f);
            }
        }
        out
    }

    /// Counts one replacement of `kind` made outside [`Scrubber::scrub`].
    pub fn count(&mut self, kind: &'static str) {
        *self.counts.entry(kind).or_default() += 1;
    }

    fn scrub_literals<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        let Some(ac) = &self.literals else {
            return Cow::Borrowed(text);
        };
        let mut out: Option<String> = None;
        let mut copied = 0;
        for m in ac.find_iter(text) {
            let (kind, placeholder) = &self.replacements[m.pattern().as_usize()];
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..m.start()]);
            out.push_str(placeholder);
            copied = m.end();
            *self.counts.entry(kind).or_default() += 1;
        }
        match out {
            Some(mut out) => {
                out.push_str(&text[copied..]);
                Cow::Owned(out)
            }
            None => Cow::Borrowed(text),
        }
    }

    fn scrub_patterns(&mut self, text: &str) -> Option<String> {
        let mut changed: Option<String> = None;
        for pass in &self.passes {
            let current = changed.as_deref().unwrap_or(text);
            let mut out: Option<String> = None;
            let mut copied = 0;
            for caps in pass.regex.captures_iter(current) {
                let Some((i, start, end)) = pass.span(current, &caps) else {
                    continue;
                };
                let out = out.get_or_insert_with(|| String::with_capacity(current.len()));
                out.push_str(&current[copied..start]);
                out.push_str(REDACTED);
                copied = end;
                *self.counts.entry(SECRET_PATTERNS[i].0).or_default() += 1;
            }
            if let Some(mut out) = out {
                out.push_str(&current[copied..]);
                changed = Some(out);
            }
        }
        changed
    }
}

fn glued_before(before: &str) -> bool {
    let mut chars = before.chars().rev();
    match chars.next() {
        Some(c) if c.is_ascii_alphanumeric() => {
            // `\nsk-...`: the letter ends an escape, not a word
            !("nrtbf".contains(c) && chars.next() == Some('\\'))
        }
        _ => false,
    }
}

fn glued_after(after: &str) -> bool {
    after
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// The spellings of `path` a line may carry (see [`ScrubberBuilder::path`]).
fn path_forms(path: &str) -> Vec<String> {
    let mut bases = vec![path.to_string()];
    if path.contains('\\') {
        bases.push(path.replace('\\', "/"));
    } else {
        bases.push(path.replace('/', "\\"));
    }
    for base in bases.clone() {
        let mut chars = base.chars();
        if let (Some(d), Some(':')) = (chars.next(), chars.next())
            && d.is_ascii_alphabetic()
        {
            let other = if d.is_ascii_uppercase() {
                d.to_ascii_lowercase()
            } else {
                d.to_ascii_uppercase()
            };
            bases.push(format!("{other}{}", &base[1..]));
        }
    }
    let mut forms = Vec::new();
    for base in &bases {
        forms.push(base.clone());
        for json in [
            json_inner(base),
            json_ascii(base, false),
            json_ascii(base, true),
        ] {
            forms.push(json.replace('/', "\\/"));
            forms.push(json_inner(&json));
            forms.push(json);
        }
        // a URL's path keeps `/`; a Windows path encoded whole has its
        // backslashes as %5C
        for upper in [true, false] {
            forms.push(percent_encode(base, "/:", upper));
            forms.push(percent_encode(base, "/", upper));
            forms.push(percent_encode(base, "", upper));
            // JavaScript's encodeURI leaves these as they are
            forms.push(percent_encode(base, ";,/?:@&=+$!*'()#", upper));
        }
    }
    forms.sort();
    forms.dedup();
    forms
}

/// `s` as it appears between the quotes of a JSON string (serde_json's escaping).
fn json_inner(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_string()
}

/// `s` JSON-escaped with every non-ASCII character as `\uXXXX` (as Python's
/// `json.dumps` writes by default), hex digits upper or lower case.
fn json_ascii(s: &str, upper: bool) -> String {
    escape_non_ascii(&json_inner(s), "\\u", upper)
}

/// `s` with each non-ASCII character as `{prefix}XXXX`, one per UTF-16 unit,
/// hex digits upper or lower case. The harness's recording scrubber spells
/// escaped paths with it too.
pub fn escape_non_ascii(s: &str, prefix: &str, upper: bool) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            if upper {
                out.push_str(&format!("{prefix}{unit:04X}"));
            } else {
                out.push_str(&format!("{prefix}{unit:04x}"));
            }
        }
    }
    out
}

/// Percent-encoding of `s` as in a URL path: unreserved characters and
/// those in `keep` stay, every other byte is `%XX` (hex digits upper or
/// lower case). The harness's recording scrubber spells paths with it too.
pub fn percent_encode(s: &str, keep: &str, upper: bool) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || "-._~".contains(c) || keep.contains(c) {
            out.push(c);
            continue;
        }
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            if upper {
                out.push_str(&format!("%{b:02X}"));
            } else {
                out.push_str(&format!("%{b:02x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrubber() -> Scrubber {
        let mut b = Scrubber::builder();
        b.path("home", "<home>", "/home/Zoë Q");
        b.path("workspace", "<workspace>", "/home/Zoë Q/My Game (2)");
        b.path("temp", "<temp>", "/tmp");
        b.path("home", "<home>", r"C:\Users\Zoë");
        b.literal("mcp-token", "<mcp-token>", "tok-12345678");
        b.build()
    }

    #[test]
    fn a_value_learnt_mid_session_is_scrubbed_in_every_spelling_from_then_on() {
        let mut s = Scrubber::builder().build();
        let line = r#"{"headers":{"X-Key":"k3y/v4lue"}} k3y\/v4lue"#;
        assert_eq!(s.scrub(line), line, "not known yet");
        s.add_literal("mcp-header", REDACTED, "k3y/v4lue");
        s.add_literal("mcp-header", REDACTED, "k3y/v4lue");
        let out = s.scrub(line);
        assert!(!out.contains("k3y"), "{out}");
        assert_eq!(s.counts().get("mcp-header"), Some(&2));
    }

    #[test]
    fn every_spelling_of_a_user_path_is_replaced_wherever_it_occurs() {
        let cases = [
            (
                "/home/Zoë Q/My Game (2)/Assets/a.cs",
                "<workspace>/Assets/a.cs",
            ),
            (
                r#"{"cwd":"\/home\/Zo\u00eb Q\/My Game (2)"}"#,
                r#"{"cwd":"<workspace>"}"#,
            ),
            (r#"{"cwd":"/home/Zo\u00EB Q"}"#, r#"{"cwd":"<home>"}"#),
            (
                "file:///home/Zo%C3%AB%20Q/My%20Game%20%282%29/x",
                "file://<workspace>/x",
            ),
            ("file:///home/Zo%c3%ab%20Q/notes", "file://<home>/notes"),
            ("%2Fhome%2FZo%C3%AB%20Q%2F.codex", "<home>%2F.codex"),
            (r"C:\Users\Zoë\AppData", r"<home>\AppData"),
            (r#""c:\\Users\\Zoë\\x""#, r#""<home>\\x""#),
            ("file:///C:/Users/Zo%C3%AB/x", "file:///<home>/x"),
            (
                "/tmp/acp-1/sock and /tmpfiles and /home/Zoë Qx",
                // glued text does not hide a path
                "<temp>/acp-1/sock and <temp>files and <home>x",
            ),
            ("Bearer tok-12345678", "Bearer <mcp-token>"),
        ];
        for (input, want) in cases {
            assert_eq!(scrubber().scrub(input), want, "{input}");
        }
    }

    #[test]
    fn credential_shapes_are_redacted_and_words_that_contain_them_are_not() {
        let key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx";
        let cases = [
            (format!("key {key} end"), "key <redacted> end".to_string()),
            (
                format!(r#"{{"t":"a\n{key}"}}"#),
                r#"{"t":"a\n<redacted>"}"#.to_string(),
            ),
            (
                "task-sk-not-a-key-at-all-really-long".into(),
                "task-sk-not-a-key-at-all-really-long".into(),
            ),
            (
                "ghp_0123456789abcdefghijABCDEFGHIJ0123".into(),
                "<redacted>".into(),
            ),
            ("AKIAABCDEFGHIJKLMNOP!".into(), "<redacted>!".into()),
            (
                "xAKIAABCDEFGHIJKLMNOP".into(),
                "xAKIAABCDEFGHIJKLMNOP".into(),
            ),
            (
                "Authorization: Bearer abc.def-ghi_jkl==".into(),
                "Authorization: Bearer <redacted>".into(),
            ),
            (
                r#"OPENAI_API_KEY=s3cr3t-v4lue ok"#.into(),
                "OPENAI_API_KEY=<redacted> ok".into(),
            ),
            (
                r#"{\"apiKey\":\"hunter2hunter2\"}"#.into(),
                r#"{\"apiKey\":\"<redacted>\"}"#.into(),
            ),
            (
                r#"{"max_tokens":4096,"totalTokens":326}"#.into(),
                r#"{"max_tokens":4096,"totalTokens":326}"#.into(),
            ),
            (
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
                "AWS_SECRET_ACCESS_KEY=<redacted>".into(),
            ),
            (
                r#"{\"GITHUB_TOKEN\":\"0123456789abcdef0123456789abcdef01234567\"}"#.into(),
                r#"{\"GITHUB_TOKEN\":\"<redacted>\"}"#.into(),
            ),
            (
                "DEPLOY_PASSWORD: correct-horse-battery".into(),
                "DEPLOY_PASSWORD: <redacted>".into(),
            ),
            (
                "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(),
                "stripe <redacted>".into(),
            ),
            (
                "npm_abcdefghijklmnopqrstuvwxyz0123456789 done".into(),
                "<redacted> done".into(),
            ),
            ("glpat-xxxxXXXXxxxxXXXXxxxx".into(), "<redacted>".into()),
            (
                "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX".into(),
                "<redacted>".into(),
            ),
            (
                "http://127.0.0.1:9/mcp?token=0123456789abcdef&x=1".into(),
                "http://127.0.0.1:9/mcp?token=<redacted>&x=1".into(),
            ),
            (
                "https://example.com/?page=2&sort=name".into(),
                "https://example.com/?page=2&sort=name".into(),
            ),
            (
                "postgres://app:hunter2@db.internal:5432/x".into(),
                "postgres://app:<redacted>@db.internal:5432/x".into(),
            ),
            (
                "see https://example.com/a:b@c and http://localhost:8080/x".into(),
                "see https://example.com/a:b@c and http://localhost:8080/x".into(),
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\\nMIIB\\n-----END RSA PRIVATE KEY-----".into(),
                "<redacted>".into(),
            ),
        ];
        for (input, want) in cases {
            let mut s = scrubber();
            assert_eq!(s.scrub(&input), want, "{input}");
            assert!(!s.finds_secret(&want), "{want}");
        }
    }

    #[test]
    fn find_secret_names_the_first_shape_left_and_where_it_starts() {
        let s = scrubber();
        let cases: &[(&str, Option<(&str, usize)>)] = &[
            ("plain text", None),
            (
                "key: AKIAABCDEFGHIJKLMNOP then sk-0123456789abcdefghijk",
                Some(("aws-access-key", 5)),
            ),
            (
                "then sk-0123456789abcdefghijk and AKIAABCDEFGHIJKLMNOP",
                Some(("sk-key", 5)),
            ),
            ("Authorization: Bearer <mcp-token>", None),
        ];
        for (text, want) in cases {
            assert_eq!(s.find_secret(text), *want, "{text}");
        }
    }

    #[test]
    fn counts_name_kinds_and_a_clean_line_is_not_copied() {
        let mut s = scrubber();
        assert!(matches!(s.scrub(r#"{"plain":"text"}"#), Cow::Borrowed(_)));
        s.scrub("/home/Zoë Q/My Game (2) /home/Zoë Q ghp_0123456789abcdefghijABCDEFGHIJ0123");
        let counts: Vec<_> = s.counts().iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(counts, [("github-token", 1), ("home", 1), ("workspace", 1)]);
    }
}
