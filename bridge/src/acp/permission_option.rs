//! A permission request's options, typed, and which one carries out what
//! the panel decided. Agents name and kind their options differently
//! (Grok's `enable-always-approve` is kind `allow_once` but approves the
//! whole session; codex-acp 1.x offered `decline` without a kind), so an
//! option is chosen by its kind and the words of its id and name, never
//! by an agent's name.

use serde_json::Value;

/// One option of a `session/request_permission`, read tolerantly: a field
/// that is missing or not a string is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionOption {
    pub option_id: Option<String>,
    pub name: Option<String>,
    pub kind: Option<String>,
}

impl PermissionOption {
    /// The options of a request's `options` (none when it is no array).
    pub fn read_all(options: &Value) -> Vec<PermissionOption> {
        let text = |o: &Value, key: &str| o.get(key).and_then(Value::as_str).map(str::to_string);
        let Some(list) = options.as_array() else {
            return Vec::new();
        };
        list.iter()
            .map(|o| PermissionOption {
                option_id: text(o, "optionId"),
                name: text(o, "name"),
                kind: text(o, "kind"),
            })
            .collect()
    }

    /// About the bytes it holds, as JSON (each field present as
    /// `"key":"text",`), for a held call's memory bound.
    pub fn held_bytes(&self) -> usize {
        let fields = [&self.option_id, &self.name, &self.kind];
        2 + fields
            .iter()
            .filter_map(|f| f.as_ref().map(|t| t.len() + 12))
            .sum::<usize>()
    }
}

/// What the panel decided about a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionIntent {
    AllowOnce,
    AllowAlways,
    Deny,
}

impl std::fmt::Display for PermissionIntent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PermissionIntent::AllowOnce => "allow once",
            PermissionIntent::AllowAlways => "allow always",
            PermissionIntent::Deny => "deny",
        })
    }
}

/// Id/name words that mean an option grants more than one call of one tool
/// (Grok's `enable-always-approve` has kind `allow_once` but switches the whole
/// session to always-approve).
const WIDENING_WORDS: &[&str] = &[
    "always",
    "session",
    "enable",
    "global",
    "yolo",
    "server",
    "forever",
    "permanent",
    "everything",
    "auto",
    "all",
];

fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    // split on non-alphanumerics and on lower->upper camel-case boundaries
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn option_words(opt: &PermissionOption) -> Vec<String> {
    let mut w = words(opt.option_id.as_deref().unwrap_or(""));
    w.extend(words(opt.name.as_deref().unwrap_or("")));
    w
}

fn has_word(opt: &PermissionOption, set: &[&str]) -> bool {
    option_words(opt).iter().any(|w| set.contains(&w.as_str()))
}

/// The option's kind; options without a kind are classified by their id.
fn option_kind(opt: &PermissionOption) -> String {
    if let Some(k) = &opt.kind {
        return k.clone();
    }
    let w = words(opt.option_id.as_deref().unwrap_or(""));
    let has = |x: &str| w.iter().any(|y| y == x);
    let rejecting = has("reject") || has("deny") || has("cancel") || has("decline") || has("no");
    let widening = w.iter().any(|y| WIDENING_WORDS.contains(&y.as_str()));
    match (rejecting, widening) {
        (true, true) => "reject_always".into(),
        (true, false) => "reject_once".into(),
        (false, true) => "allow_always".into(),
        (false, false) => "allow_once".into(),
    }
}

fn option_id(opt: &PermissionOption) -> Option<String> {
    opt.option_id.clone()
}

/// The widest `allow_always` rank the panel's "always allow" (a rule for one
/// tool) may become: server-wide (3) and global switches (4) grant more.
const WIDEST_ALWAYS_RANK: u8 = 2;

/// Narrowness rank among `allow_always` options: a per-tool grant beats a
/// per-session one, which beats an unscoped one; server-wide or global last.
fn always_rank(opt: &PermissionOption) -> u8 {
    let w = option_words(opt);
    let has = |x: &str| w.iter().any(|y| y == x);
    if has("enable") || has("global") || has("yolo") || has("everything") {
        4
    } else if has("server") || has("all") {
        3
    } else if has("tool") {
        0
    } else if has("session") {
        1
    } else {
        2
    }
}

/// The agent's option that carries out `intent`, never one that grants more
/// than the intent: allow-once picks an `allow_once` option whose id/name does
/// not suggest a session or global switch; allow-always picks the narrowest
/// `allow_always` option that is not server-wide or global (falling back to
/// a safe allow-once); deny picks
/// `reject_once`. `None` when no option fits (the caller then answers
/// `cancelled`, which agents treat as a refusal).
pub fn choose_permission_option(
    options: &[PermissionOption],
    intent: PermissionIntent,
) -> Option<String> {
    choose_permission_option_with(options, intent, &crate::launch::Compat::default())
}

/// The deny option ids a bridge matching by id alone knew (codex-acp 1.0 to
/// 1.6 offered `decline`); what `Compat::reject_option_by_kind = false` uses.
pub const LEGACY_REJECT_OPTION_IDS: &[&str] = &["decline", "reject", "deny"];

/// [`choose_permission_option`] with some agent-shape handling switched off.
pub fn choose_permission_option_with(
    options: &[PermissionOption],
    intent: PermissionIntent,
    compat: &crate::launch::Compat,
) -> Option<String> {
    if intent == PermissionIntent::Deny && !compat.reject_option_by_kind {
        return options
            .iter()
            .filter_map(option_id)
            .find(|id| LEGACY_REJECT_OPTION_IDS.contains(&id.as_str()));
    }
    let safe_once = || {
        let once: Vec<&PermissionOption> = options
            .iter()
            .filter(|o| option_kind(o) == "allow_once" && !has_word(o, WIDENING_WORDS))
            .collect();
        once.iter()
            .find(|o| has_word(o, &["once"]))
            .or(once.first())
            .and_then(|o| option_id(o))
    };
    match intent {
        PermissionIntent::AllowOnce => safe_once(),
        PermissionIntent::AllowAlways => options
            .iter()
            .filter(|o| option_kind(o) == "allow_always" && always_rank(o) <= WIDEST_ALWAYS_RANK)
            .min_by_key(|o| always_rank(o))
            .and_then(option_id)
            .or_else(safe_once),
        PermissionIntent::Deny => options
            .iter()
            .find(|o| option_kind(o) == "reject_once")
            .and_then(option_id),
    }
}

/// Whether the agent offers any `allow_always` option (then the panel gets an
/// "always allow" suggestion).
pub fn has_allow_always_option(options: &[PermissionOption]) -> bool {
    options
        .iter()
        .any(|o| option_kind(o) == "allow_always" && always_rank(o) <= WIDEST_ALWAYS_RANK)
}
