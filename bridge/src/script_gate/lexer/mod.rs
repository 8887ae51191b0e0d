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

/// The segment and word being lexed.
#[derive(Default)]
struct Pending {
    seg: Segment,
    word: String,
    in_word: bool,
    /// The word opened with a quote or a group (so it is no stream number).
    quoted: bool,
}

impl Pending {
    fn end_word(&mut self) {
        if self.in_word {
            self.seg.push(Tok::Word {
                text: std::mem::take(&mut self.word),
                quoted: self.quoted,
            });
            self.in_word = false;
            self.quoted = false;
        }
    }

    fn end_segment(&mut self, segments: &mut Vec<Segment>) {
        self.end_word();
        if !self.seg.is_empty() {
            segments.push(std::mem::take(&mut self.seg));
        }
    }
}

/// How deep the gate looks into nested `( ... )` / `$( ... )` groups.
const MAX_GROUP_DEPTH: usize = 16;

impl Lexer<'_> {
    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    /// Lexes `chars[pos..end]` into `self.segments`.
    fn run(&mut self, end: usize) -> Option<()> {
        let mut w = Pending::default();
        let mut heredocs: Vec<(String, bool)> = Vec::new();
        while self.pos < end {
            let c = self.chars[self.pos];
            match c {
                ' ' | '\t' => {
                    w.end_word();
                    self.pos += 1;
                }
                '\n' | '\r' => {
                    w.end_segment(&mut self.segments);
                    self.pos += 1;
                    if c == '\n' && !heredocs.is_empty() {
                        self.skip_heredoc_bodies(end, &mut heredocs);
                    }
                }
                ';' | '|' => {
                    w.end_segment(&mut self.segments);
                    self.pos += 1;
                }
                '&' => {
                    if self.peek(1) == Some('>') {
                        // `&>file`: both streams to a file
                        w.end_word();
                        self.pos += 1;
                        self.lex_redirect_out(&mut w.seg);
                    } else {
                        w.end_segment(&mut self.segments);
                        self.pos += 1;
                    }
                }
                '>' => {
                    // a pending all-digits or `*` word is the stream number (`2>`, `*>`)
                    if w.in_word
                        && !w.quoted
                        && (w.word == "*" || w.word.chars().all(|d| d.is_ascii_digit()))
                    {
                        w.word.clear();
                        w.in_word = false;
                    }
                    w.end_word();
                    self.lex_redirect_out(&mut w.seg);
                }
                '<' => {
                    w.end_word();
                    self.lex_redirect_in(end, &mut w.seg, &mut heredocs)?;
                }
                '#' if !w.in_word => {
                    while self.pos < end && self.chars[self.pos] != '\n' {
                        self.pos += 1;
                    }
                }
                '\'' | '"' => {
                    self.pos += 1;
                    let text = self.lex_quoted(c, end)?;
                    w.word.push_str(&text);
                    w.quoted |= !w.in_word;
                    w.in_word = true;
                }
                '@' if !w.in_word
                    && matches!(self.peek(1), Some('"' | '\''))
                    && self.here_string_start() =>
                {
                    let text = self.lex_here_string(end)?;
                    w.word.push_str(&text);
                    w.in_word = true;
                    w.quoted = true;
                }
                '(' if !self.no_group_match => self.lex_group(end, &mut w)?,
                '\\' => match self.peek(1) {
                    Some('\n') => self.pos += 2,
                    Some(n @ (' ' | '"' | '\'')) => {
                        w.word.push(n);
                        w.in_word = true;
                        self.pos += 2;
                    }
                    _ => {
                        w.word.push('\\');
                        w.in_word = true;
                        self.pos += 1;
                    }
                },
                _ => {
                    w.word.push(c);
                    w.in_word = true;
                    self.pos += 1;
                }
            }
        }
        w.end_segment(&mut self.segments);
        Some(())
    }

    /// At `<`: `<<<` and `<` are input redirections; `<<` (and `<<-`) opens a
    /// heredoc whose body the next newline skips.
    fn lex_redirect_in(
        &mut self,
        end: usize,
        seg: &mut Segment,
        heredocs: &mut Vec<(String, bool)>,
    ) -> Option<()> {
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
        Some(())
    }

    /// At `(`: the group is part of the word, and its own commands are
    /// lexed as commands too (to [`MAX_GROUP_DEPTH`]); an unmatched `(` is
    /// a literal character.
    fn lex_group(&mut self, end: usize, w: &mut Pending) -> Option<()> {
        match self.find_group_end(end) {
            Some(close) => {
                let inner_start = self.pos + 1;
                w.word.extend(&self.chars[self.pos..=close]);
                w.quoted |= !w.in_word;
                w.in_word = true;
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
                w.word.push('(');
                w.in_word = true;
                self.pos += 1;
            }
        }
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
