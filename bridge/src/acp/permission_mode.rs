//! Maps a Claude permission mode onto whatever the agent offers: one of its
//! modes (any id; matched by id, then name, then description), a value of a
//! select config option about modes or permissions, or a boolean config
//! option that means allow-all or read-only. Generic over agents: the rule
//! is the table of meanings below, read against the agent's own structure.

use crate::acp::session_state::{ConfigOption, Current, Offer, SessionState};

/// How to switch the agent's permission mode (or model): the classic
/// `session/set_mode` / `session/set_model` call or the newer
/// `session/set_config_option` route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeChange {
    SetMode {
        mode_id: String,
    },
    SetConfigOption {
        config_id: String,
        value: String,
    },
    /// A boolean config option (an allow-all or read-only switch).
    SetConfigSwitch {
        config_id: String,
        value: bool,
    },
}

/// A Claude permission mode: one of the four [`MEANINGS`] knows, or any
/// other name (an agent mode of the same id may still match it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionMode {
    Default,
    AcceptEdits,
    BypassPermissions,
    Plan,
    Other(String),
}

impl PermissionMode {
    /// The mode a Claude mode name names.
    pub fn parse(name: &str) -> PermissionMode {
        match name {
            "default" => PermissionMode::Default,
            "acceptEdits" => PermissionMode::AcceptEdits,
            "bypassPermissions" => PermissionMode::BypassPermissions,
            "plan" => PermissionMode::Plan,
            other => PermissionMode::Other(other.to_string()),
        }
    }

    /// Claude's name of the mode.
    pub fn as_str(&self) -> &str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::Plan => "plan",
            PermissionMode::Other(name) => name,
        }
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a Claude permission mode means to an agent.
struct Meaning {
    claude: &'static str,
    /// Mode / value ids and names meaning it, most specific first (compared
    /// loosely: case, `-`, `_` and spaces ignored).
    words: &'static [&'static str],
    /// Phrases that, inside a description, mean it (last resort).
    phrases: &'static [&'static str],
    /// The value an allow-all switch takes in this mode.
    allow_all: bool,
    /// The value a read-only switch takes in this mode.
    read_only: bool,
}

/// The table: Claude's four modes.
const MEANINGS: &[Meaning] = &[
    Meaning {
        claude: "default",
        words: &[
            "default",
            "ask",
            "read-only",
            "ask-always",
            "manual",
            "normal",
        ],
        phrases: &[
            "ask before",
            "asks before",
            "approval for each",
            "confirm each",
        ],
        allow_all: false,
        read_only: false,
    },
    Meaning {
        claude: "acceptEdits",
        words: &[
            "acceptEdits",
            "auto-edit",
            "auto",
            "accept-edits",
            "edit-automatically",
            // an approval preset that edits the workspace unasked
            "workspace-write",
        ],
        phrases: &[
            "accept edits",
            "accepts edits",
            "auto-accept edits",
            "edits automatically",
            "approve edit",
            "approve file edit",
        ],
        allow_all: false,
        read_only: false,
    },
    Meaning {
        claude: "bypassPermissions",
        words: &[
            "bypassPermissions",
            "yolo",
            "full-access",
            "agent-full-access",
            "bypass",
            "allow-all",
            "dangerously-skip-permissions",
        ],
        phrases: &[
            "bypass permission",
            "allow all",
            "allows all",
            "skip all permission",
            "skips all permission",
            "without asking",
            "never ask",
            "never asks",
            "approve all",
            "approve everything",
        ],
        allow_all: true,
        read_only: false,
    },
    Meaning {
        claude: "plan",
        // a spec mode writes a specification and changes nothing; an
        // approval preset that only reads is the nearest to planning
        words: &["plan", "planning", "plan-mode", "spec", "read-only"],
        phrases: &[
            "plan only",
            "plans only",
            "planning mode",
            "read-only planning",
        ],
        allow_all: false,
        read_only: true,
    },
];

/// Names of a boolean option that switches every permission prompt off.
const ALLOW_ALL_SWITCH: &[&str] = &[
    "bypass permission",
    "allow all",
    "yolo",
    "auto approve",
    "auto-approve",
    "skip permission",
    "full access",
    "dangerously",
];

/// Names of a boolean option that makes the agent read-only.
const READ_ONLY_SWITCH: &[&str] = &["read only", "read-only", "readonly"];

/// Names of a select option about permissions when it has no `mode` category.
const PERMISSION_SELECT: &[&str] = &["permission", "approval", "mode"];

/// Ids compare loosely: `autoEdit`, `auto-edit` and `auto_edit` are one id.
fn loose(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The last segment of an id that is a path or URI (`modes/ask`, `x#ask`).
fn tail(id: &str) -> &str {
    id.rsplit(['/', '#', ':', '.']).next().unwrap_or(id)
}

/// One thing the agent offers: a mode or a select value.
struct Choice {
    id: String,
    name: String,
    description: String,
}

/// Words that, in a mode's description, say it restricts what the agent
/// may do: such a mode never stands for a Claude mode that allows more than
/// `default` (OpenCode's `plan` is "Disallows all edit tools").
const RESTRICTING: &[&str] = &[
    "disallow",
    "disallows",
    "disallowed",
    "restrict",
    "restricts",
    "restricted",
    "read only",
    "readonly",
    "deny",
    "denies",
    "forbid",
    "forbids",
    "prevent",
    "prevents",
    "block",
    "blocks",
    "cannot",
    "no edits",
    "without edits",
];

/// The lowercase words of `s` (runs of letters and digits).
fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `phrase`'s words occur in `hay` as whole, consecutive words:
/// **modes by meaning, never by a substring** ("allows all" is not in
/// "Disallows all edit tools").
fn says(hay: &[String], phrase: &str) -> bool {
    let want = words(phrase);
    // a plural is the same word (`Permissions` says `permission`)
    let same = |h: &String, w: &String| h == w || h.strip_suffix('s') == Some(w.as_str());
    !want.is_empty()
        && hay
            .windows(want.len())
            .any(|win| win.iter().zip(&want).all(|(h, w)| same(h, w)))
}

/// Whether a choice's description or name restricts what the agent may do.
fn restricts(c: &Choice) -> bool {
    let hay = [words(&c.name), words(&c.description)].concat();
    RESTRICTING.iter().any(|r| says(&hay, r))
}

/// How a choice matched a Claude mode: by its id, its name, or only by a
/// phrase of its name or description. A phrase match is the weakest: a
/// description that mentions allowing all ("Autonomous mode that enables
/// allow-all and runs until task completion") may describe a mode that
/// does much more than approve every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rung {
    Id,
    Name,
    Phrase,
}

/// The best choice for `m`: by id (or its last segment), then by name, then
/// by a phrase in the name or description (whole words); within a rung,
/// the table's word order. A mode allowing more than `default` never lands
/// on a choice that [`restricts`].
fn pick<'a>(m: &Meaning, choices: &'a [Choice]) -> Option<(&'a Choice, Rung)> {
    let widens = m.allow_all || m.claude == "acceptEdits";
    let fits = |c: &&Choice| !(widens && restricts(c));
    for word in m.words {
        let w = loose(word);
        if let Some(c) = choices
            .iter()
            .filter(fits)
            .find(|c| loose(&c.id) == w || loose(tail(&c.id)) == w)
        {
            return Some((c, Rung::Id));
        }
    }
    for word in m.words {
        let w = loose(word);
        if let Some(c) = choices.iter().filter(fits).find(|c| loose(&c.name) == w) {
            return Some((c, Rung::Name));
        }
    }
    for phrase in m.phrases {
        if let Some(c) = choices
            .iter()
            .filter(fits)
            .find(|c| says(&words(&c.name), phrase) || says(&words(&c.description), phrase))
        {
            return Some((c, Rung::Phrase));
        }
    }
    None
}

fn or_empty(s: &Option<String>) -> String {
    s.clone().unwrap_or_default()
}

/// The values of a select config option (groups flattened); a value
/// without a name is named by its id.
fn select_values(opt: &ConfigOption) -> Vec<Choice> {
    opt.values
        .iter()
        .map(|v| Choice {
            id: v.id.clone(),
            name: v.name_or_id().to_string(),
            description: or_empty(&v.description),
        })
        .collect()
}

/// A mode as a choice (a mode without a name has none).
fn mode_choice(m: &Offer) -> Choice {
    Choice {
        id: m.id.clone(),
        name: or_empty(&m.name),
        description: or_empty(&m.description),
    }
}

/// Select values that carry no description take the description of the
/// mode of the same id: an agent offering its modes both ways (a `mode`
/// select and `availableModes`) often describes them only once, and the
/// select is the route that stays.
fn with_mode_descriptions(mut values: Vec<Choice>, session: &SessionState) -> Vec<Choice> {
    let modes = session.modes.iter().flat_map(|m| &m.available);
    for v in values.iter_mut().filter(|v| v.description.is_empty()) {
        if let Some(mode) = modes.clone().find(|m| m.id == v.id) {
            v.description = or_empty(&mode.description);
        }
    }
    values
}

/// Whether an option's id, name or description says one of `names`, as
/// whole words (an id `autoApprove` reads as its loose form too).
fn option_says(opt: &ConfigOption, names: &[&str]) -> bool {
    let texts = [
        or_empty(&opt.id),
        or_empty(&opt.name),
        or_empty(&opt.description),
    ];
    let hay: Vec<Vec<String>> = texts.iter().map(|t| words(&split_camel(t))).collect();
    names
        .iter()
        .any(|n| hay.iter().any(|h| says(h, n)) || texts.iter().any(|t| loose(t) == loose(n)))
}

/// `autoApprove` as `auto Approve`: camel-case ids read as words.
fn split_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// Loose spellings of a switch's two values.
const ON_VALUES: &[&str] = &["on", "true", "enabled", "enable", "yes"];
const OFF_VALUES: &[&str] = &["off", "false", "disabled", "disable", "no"];

/// The on and off values of a select option that is a switch in all but
/// type: exactly two values, one saying on and one saying off (by id or
/// name), as Copilot CLI's `allow_all` `on` / `off`.
fn on_off_values(opt: &ConfigOption) -> Option<(String, String)> {
    let values = select_values(opt);
    let says_one = |c: &Choice, of: &[&str]| {
        of.iter()
            .any(|v| loose(&c.id) == *v || loose(&c.name) == *v)
    };
    let [a, b] = values.as_slice() else {
        return None;
    };
    if says_one(a, ON_VALUES) && says_one(b, OFF_VALUES) {
        Some((a.id.clone(), b.id.clone()))
    } else if says_one(b, ON_VALUES) && says_one(a, OFF_VALUES) {
        Some((b.id.clone(), a.id.clone()))
    } else {
        None
    }
}

/// A switch meaning `names`, boolean or a select of on/off values.
struct Switch<'a> {
    id: &'a str,
    /// Whether it is on now, when the agent says.
    current: Option<bool>,
    /// The select's on and off values; `None` for a boolean option.
    values: Option<(String, String)>,
}

impl Switch<'_> {
    /// The change that turns it `on` or off.
    fn set(&self, on: bool) -> ModeChange {
        let config_id = self.id.to_string();
        match &self.values {
            None => ModeChange::SetConfigSwitch {
                config_id,
                value: on,
            },
            Some((on_value, off_value)) => ModeChange::SetConfigOption {
                config_id,
                value: if on { on_value } else { off_value }.clone(),
            },
        }
    }
}

/// A switch meaning `names` (a boolean option, or a select whose values are
/// on and off), with its id and current value.
fn switch<'a>(session: &'a SessionState, names: &[&str]) -> Option<Switch<'a>> {
    session
        .config_options
        .iter()
        .filter(|o| option_says(o, names))
        .find_map(|o| {
            let id = o.id.as_deref()?;
            if o.is_bool() {
                let current = match o.current {
                    Current::Bool(b) => Some(b),
                    _ => None,
                };
                return Some(Switch {
                    id,
                    current,
                    values: None,
                });
            }
            let (on, off) = on_off_values(o)?;
            let current = o
                .current_text()
                .and_then(|v| (v == on).then_some(true).or((v == off).then_some(false)));
            Some(Switch {
                id,
                current,
                values: Some((on, off)),
            })
        })
}

/// How to put the agent into the Claude permission mode `claude_mode`, in
/// order: a value of the agent's mode select option (category `mode`, else
/// one named for permissions or approval) or one of its modes matched by id
/// or name; then an allow-all or read-only switch (boolean, or a select of
/// on/off values) set to what the mode means (turned off only when it is
/// on); then a value or mode matched only by a phrase of its description.
/// **A switch that approves every call and changes nothing else beats a
/// mode that merely mentions allowing all** (an autopilot that also keeps
/// the agent re-prompting itself). `None` when nothing the agent offers
/// fits.
pub fn resolve_permission_mode(claude_mode: &str, session: &SessionState) -> Option<ModeChange> {
    let meaning = MEANINGS.iter().find(|m| m.claude == claude_mode);
    // an unknown Claude mode still matches an agent mode of the same id
    let unknown = Meaning {
        claude: "",
        words: &[],
        phrases: &[],
        allow_all: false,
        read_only: false,
    };
    let m = meaning.unwrap_or(&unknown);
    let pick_in = |choices: &[Choice]| -> Option<(String, Rung)> {
        choices
            .iter()
            .find(|c| c.id == claude_mode)
            .map(|c| (c, Rung::Id))
            .or_else(|| pick(m, choices))
            .map(|(c, rung)| (c.id.clone(), rung))
    };
    let is_mode_select = |o: &&ConfigOption| !o.is_bool() && on_off_values(o).is_none();
    let options = || session.config_options.iter().filter(is_mode_select);
    let select = options()
        .find(|o| o.category.as_deref() == Some("mode"))
        .or_else(|| {
            options().find(|o| {
                o.category.as_deref().is_none_or(|c| c != "model")
                    && option_says(o, PERMISSION_SELECT)
            })
        });
    let from_select = select.and_then(|opt| {
        let (value, rung) = pick_in(&with_mode_descriptions(select_values(opt), session))?;
        let change = ModeChange::SetConfigOption {
            config_id: opt.id.as_deref().unwrap_or("mode").to_string(),
            value,
        };
        Some((change, rung))
    });
    let from_modes = session.modes.as_ref().and_then(|modes| {
        let choices: Vec<Choice> = modes.available.iter().map(mode_choice).collect();
        let (mode_id, rung) = pick_in(&choices)?;
        Some((ModeChange::SetMode { mode_id }, rung))
    });
    let (strong, weak): (Vec<_>, Vec<_>) = [from_select, from_modes]
        .into_iter()
        .flatten()
        .partition(|(_, rung)| *rung < Rung::Phrase);
    if let Some((change, _)) = strong.into_iter().next() {
        return Some(change);
    }
    if let Some(meaning) = meaning {
        for (names, want) in [
            (ALLOW_ALL_SWITCH, meaning.allow_all),
            (READ_ONLY_SWITCH, meaning.read_only),
        ] {
            if let Some(found) = switch(session, names)
                && (want || found.current == Some(true))
            {
                return Some(found.set(want));
            }
        }
    }
    weak.into_iter().next().map(|(change, _)| change)
}

/// Whether `change` is already in effect according to the session result.
pub fn already_in_effect(change: &ModeChange, session: &SessionState) -> bool {
    let has = |id: &str, current: &dyn Fn(&ConfigOption) -> bool| {
        session
            .config_options
            .iter()
            .any(|o| o.id.as_deref() == Some(id) && current(o))
    };
    match change {
        ModeChange::SetMode { mode_id } => {
            session.modes.as_ref().and_then(|m| m.current.as_deref()) == Some(mode_id)
        }
        ModeChange::SetConfigOption { config_id, value } => {
            has(config_id, &|o| o.current_text() == Some(value))
        }
        ModeChange::SetConfigSwitch { config_id, value } => {
            has(config_id, &|o| o.current == Current::Bool(*value))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Claude mode name reads back as it was given, known or not.
    #[test]
    fn mode_names_read_back_as_given() {
        let known = [
            ("default", PermissionMode::Default),
            ("acceptEdits", PermissionMode::AcceptEdits),
            ("bypassPermissions", PermissionMode::BypassPermissions),
            ("plan", PermissionMode::Plan),
        ];
        for (name, mode) in known {
            assert_eq!(PermissionMode::parse(name), mode);
            assert_eq!(mode.as_str(), name);
        }
        for name in ["dontAsk", "", "Plan"] {
            assert_eq!(PermissionMode::parse(name).to_string(), name);
            assert!(matches!(
                PermissionMode::parse(name),
                PermissionMode::Other(_)
            ));
        }
        assert!(
            MEANINGS
                .iter()
                .all(|m| !matches!(PermissionMode::parse(m.claude), PermissionMode::Other(_)))
        );
    }
}
