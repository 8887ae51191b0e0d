//! PowerShell-only syntax: here-strings (`@"` ... `"@`), read as one
//! quoted word.

use super::Lexer;

impl Lexer<'_> {
    /// Whether `@"` / `@'` at `pos` opens a PowerShell here-string (the quote
    /// is followed by the end of the line).
    pub(super) fn here_string_start(&self) -> bool {
        let mut i = 2;
        while matches!(self.peek(i), Some(' ' | '\t')) {
            i += 1;
        }
        matches!(self.peek(i), Some('\n' | '\r'))
    }

    /// Reads a here-string from `@"` to the line that starts with `"@`.
    pub(super) fn lex_here_string(&mut self, end: usize) -> Option<String> {
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
}
