//! Cutting long text for people (diagnostics, reports, failure messages).
//! Every tool of the workspace cuts the same way, so a cut line reads the
//! same wherever it shows up: the first `max` characters, then `… (N chars)`
//! with the whole length.

/// `s` cut to at most `max` characters, the cut marked with the full length.
pub fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}… ({} chars)", &s[..end], s.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn text_within_the_limit_is_kept_and_longer_text_is_cut_at_a_character() {
        for (s, max, want) in [
            ("abc", 3, "abc"),
            ("abcd", 3, "abc… (4 chars)"),
            ("ééé", 2, "éé… (3 chars)"),
            ("", 0, ""),
        ] {
            assert_eq!(shorten(s, max), want, "{s:?} {max}");
        }
    }
}
