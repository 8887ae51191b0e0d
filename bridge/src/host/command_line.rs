//! The agent command line (`--agent-cmd`, `ACP_BRIDGE_AGENT`) split into
//! argv the way the platform's users write it: POSIX shell words on Unix;
//! on Windows the rules of `CommandLineToArgvW` (and of every MSVC-built
//! program), where a backslash is a path separator, so `C:\tools\agent.exe`
//! and `"C:\Program Files\agent.cmd"` survive.

/// Splits `line` by the rules of the platform this runs on.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    if cfg!(windows) {
        split_windows(line)
    } else {
        shell_words::split(line).map_err(|e| e.to_string())
    }
}

/// Splits `line` by the Windows rules: words are separated by spaces and
/// tabs outside double quotes; in the program name (the first word) quotes
/// only group and backslashes are literal; in arguments `2n` backslashes
/// before a quote stand for `n` and the quote groups, `2n+1` for `n` and a
/// literal quote, other backslashes are literal, and `""` inside quotes is
/// a literal quote. An unclosed quote is an error (Windows would run it to
/// the end of the line, which hides a typo).
pub fn split_windows(line: &str) -> Result<Vec<String>, String> {
    let mut argv = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars
            .next_if(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
            .is_some()
        {}
        if chars.peek().is_none() {
            return Ok(argv);
        }
        let mut word = String::new();
        let mut quoted = false;
        let program = argv.is_empty();
        while let Some(c) = chars.next() {
            match c {
                ' ' | '\t' | '\r' | '\n' if !quoted => break,
                '"' if program => quoted = !quoted,
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    word.push('"');
                }
                '"' => quoted = !quoted,
                '\\' if !program => {
                    let mut n = 1;
                    while chars.next_if_eq(&'\\').is_some() {
                        n += 1;
                    }
                    if chars.peek() == Some(&'"') {
                        word.extend(std::iter::repeat_n('\\', n / 2));
                        if n % 2 == 1 {
                            chars.next();
                            word.push('"');
                        }
                    } else {
                        word.extend(std::iter::repeat_n('\\', n));
                    }
                }
                c => word.push(c),
            }
        }
        if quoted {
            return Err(format!("unclosed double quote in word {}", argv.len() + 1));
        }
        argv.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_rules_keep_backslashes_and_quoted_paths() {
        let cases: &[(&str, &[&str])] = &[
            (r"Z:\tools\agent.exe", &[r"Z:\tools\agent.exe"]),
            (
                r#""C:\Program Files\nodejs\gemini.cmd" --experimental-acp"#,
                &[r"C:\Program Files\nodejs\gemini.cmd", "--experimental-acp"],
            ),
            (
                r#"agent --config "C:\Users\me\My Config\a.toml""#,
                &["agent", "--config", r"C:\Users\me\My Config\a.toml"],
            ),
            // a quoted directory ending in a backslash is the program, literally
            (r#""C:\dir\" x"#, &[r"C:\dir\", "x"]),
            (
                r"\\?\C:\long\agent.exe  a	b",
                &[r"\\?\C:\long\agent.exe", "a", "b"],
            ),
            (r"\\server\share\agent.cmd", &[r"\\server\share\agent.cmd"]),
            // the escapes of the argument rules
            (r#"p a\\\"b"#, &["p", r#"a\"b"#]),
            (r#"p "a\\" b"#, &["p", r"a\", "b"]),
            (r#"p "say ""hi""""#, &["p", r#"say "hi""#]),
            (r#"p a\\b c\"#, &["p", r"a\\b", r"c\"]),
            (r#"p ab"c d"e"#, &["p", "abc de"]),
            (r#"p "" x"#, &["p", "", "x"]),
            ("  ", &[]),
        ];
        for (line, want) in cases {
            assert_eq!(split_windows(line).unwrap(), *want, "{line}");
        }
    }

    #[test]
    fn an_unclosed_quote_is_an_error_naming_the_word() {
        let e = split_windows(r#"agent --cwd "C:\x"#).unwrap_err();
        assert!(e.contains("word 3"), "{e}");
        assert!(split_windows(r#""C:\agent.exe"#).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn unix_uses_shell_words() {
        assert_eq!(split(r"agent 'a b' c\ d").unwrap(), ["agent", "a b", "c d"]);
    }

    #[cfg(windows)]
    #[test]
    fn windows_uses_the_windows_rules() {
        assert_eq!(split(r"C:\a\b.exe x").unwrap(), [r"C:\a\b.exe", "x"]);
    }
}
