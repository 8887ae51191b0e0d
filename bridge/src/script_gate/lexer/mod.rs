//! The command-line lexer the gate reads every shell command with. Agents
//! run bash, sh and PowerShell alike and the tool call does not say which,
//! so one lexer reads the syntax they share (words, quotes, separators,
//! redirections, groups); what only one of them has lives beside it:
//! [`posix`] (heredoc bodies) and [`powershell`] (here-strings). It never
//! fails on odd input except an unterminated quote (`None`: the gate then
//! allows).

mod posix;
mod powershell;

/// One token of a shell command. Quotes are resolved (a quoted word keeps
/// separators and never counts as a `-Parameter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    Word {
        text: String,
        quoted: bool,
    },
    /// `>`, `>>`, `&>`, `*>`, `2>`: the next word is written.
    RedirectOut,
    /// `<`, `<<<`, or `>&1`-style duplication: the next word (if any) is not a target.
    RedirectOther,
}

pub(super) type Segment = Vec<Tok>;

/// Splits `cmd` into simple commands (on `;` `|` `&` and newlines, outside
/// quotes) of tokens. A word that *starts* quoted is marked so (it is never a
/// `-Parameter`; `-Path:'x'` still is one). `None` when the text cannot be
/// parsed (an unterminated quote): the caller then allows. Bash heredoc bodies are skipped; a
/// parenthesised group is one word of its command and also yields its own
/// inner commands (to [`MAX_GROUP_DEPTH`] levels; deeper groups are words
/// only, so hostile nesting can neither overflow the stack nor go quadratic).
/// Backslashes are literal (Windows paths) except before a space, a quote or
/// a newline.
pub(super) fn tokenize(cmd: &str) -> Option<Vec<Segment>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct File {
        case: Vec<Case>,
    }

    #[derive(serde::Deserialize)]
    struct Case {
        name: String,
        command: String,
        segments: Option<Vec<Vec<String>>>,
    }

    /// The notation of the data files: text, "quoted text", `>`, `<`.
    fn render(segments: &[Segment]) -> Vec<Vec<String>> {
        segments
            .iter()
            .map(|seg| {
                seg.iter()
                    .map(|t| match t {
                        Tok::Word {
                            text,
                            quoted: false,
                        } => text.clone(),
                        Tok::Word { text, quoted: true } => format!("\"{text}\""),
                        Tok::RedirectOut => ">".into(),
                        Tok::RedirectOther => "<".into(),
                    })
                    .collect()
            })
            .collect()
    }

    /// Every case of `tests/data/script_gate/lexer/<part>.toml`; mismatches
    /// are reported together, by name.
    fn run_cases(part: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/script_gate/lexer")
            .join(format!("{part}.toml"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let file: File =
            toml::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        assert!(!file.case.is_empty(), "{}: no cases", path.display());
        let failures: Vec<String> = file
            .case
            .iter()
            .filter_map(|c| {
                let got = tokenize(&c.command).map(|s| render(&s));
                (got != c.segments)
                    .then(|| format!("  {}: want {:?}, got {:?}", c.name, c.segments, got))
            })
            .collect();
        assert!(failures.is_empty(), "{part}:\n{}", failures.join("\n"));
    }

    #[test]
    fn shared_syntax_splits_commands_words_quotes_redirects_and_groups() {
        run_cases("common");
    }

    #[test]
    fn posix_heredoc_bodies_are_skipped() {
        run_cases("posix");
    }

    #[test]
    fn powershell_here_strings_and_backtick_escapes_are_words() {
        run_cases("powershell");
    }
}
