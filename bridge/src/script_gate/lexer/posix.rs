//! POSIX-shell-only syntax: heredocs (`<<EOF`, `<<-EOF`), whose delimiter
//! is read as a word and whose bodies are skipped (a body is data, not
//! commands).

use super::Lexer;

impl Lexer<'_> {
    /// Reads one word (quotes removed) for a heredoc delimiter.
    pub(super) fn lex_plain_word(&mut self, end: usize) -> Option<String> {
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
    pub(super) fn skip_heredoc_bodies(&mut self, end: usize, heredocs: &mut Vec<(String, bool)>) {
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
}
