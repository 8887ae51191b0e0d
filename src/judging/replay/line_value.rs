//! A JSON line parsed into its `Value` without a second copy of its longest
//! string: a bridge's folded message or an agent's image is one string of
//! megabytes, and serde_json would hold it three times at once (the line,
//! its unescaping scratch, the `Value`'s string). Here that string is
//! unescaped in place inside the line's own buffer, which then becomes the
//! string of the `Value`; the rest of the line (small) is parsed as usual.
//! The `Value` is the one `serde_json::from_str` gives; a line that is not
//! JSON comes back as it was.

use serde_json::Value;

/// Lines shorter than this are parsed the usual way.
pub const MOVE_AT: usize = 1 << 20;

/// Stands for the moved string in what is parsed of the rest of the line
/// (a line that parses to it anywhere else is parsed the usual way).
const MARKER: &str = "\\u0000acp-moved-string\\u0000";
const MARKER_DECODED: &str = "\0acp-moved-string\0";

/// `line` parsed, its longest string moved into the `Value` when the line is
/// at least [`MOVE_AT`] bytes; the line itself when it is not JSON.
pub fn parse(line: String) -> Result<Value, String> {
    parse_moving_at(line, MOVE_AT)
}

/// [`parse`] with the size from which a string is moved.
pub fn parse_moving_at(line: String, at: usize) -> Result<Value, String> {
    let usual = |line: String| serde_json::from_str(&line).map_err(|_| line);
    if line.len() < at {
        return usual(line);
    }
    let Some((start, end)) = longest_value_string(line.as_bytes())
        .filter(|&(s, e)| e - s >= at / 2 && valid_escapes(&line.as_bytes()[s..e]))
    else {
        return usual(line);
    };
    let mut rest = String::with_capacity(line.len() - (end - start) + MARKER.len());
    rest.push_str(&line[..start]);
    rest.push_str(MARKER);
    rest.push_str(&line[end..]);
    // the rest parses and the string's escapes are valid: the line is JSON
    let parsed = serde_json::from_str::<Value>(&rest);
    drop(rest);
    let mut value = match parsed {
        Ok(v) if markers(&v) == 1 => v,
        _ => return usual(line),
    };
    let mut bytes = line.into_bytes();
    let len = unescape_in_place(&mut bytes, start, end);
    bytes.truncate(len);
    // valid: `valid_escapes` passed, and what is copied between escapes is
    // whole characters of a `str`
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    if let Some(slot) = find_marker(&mut value) {
        *slot = Value::String(text);
    }
    Ok(value)
}

/// The byte range (inside its quotes) of the longest string literal that
/// is a value, not an object key.
fn longest_value_string(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < bytes.len() && bytes[j] != b'"' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        if j >= bytes.len() {
            return None;
        }
        let after = bytes[j + 1..].iter().find(|b| !b.is_ascii_whitespace());
        if after != Some(&b':') && best.is_none_or(|(s, e)| j - start > e - s) {
            best = Some((start, j));
        }
        i = j + 1;
    }
    best
}

/// Whether every escape in a string literal's body is one serde_json
/// accepts, and no control character stands unescaped.
fn valid_escapes(body: &[u8]) -> bool {
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\\' => {
                let Some(&e) = body.get(i + 1) else {
                    return false;
                };
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        let Some(unit) = hex4(body, i + 2) else {
                            return false;
                        };
                        match unit {
                            0xD800..=0xDBFF => {
                                let low = (body.get(i + 6..i + 8) == Some(b"\\u"))
                                    .then(|| hex4(body, i + 8))
                                    .flatten();
                                if !matches!(low, Some(0xDC00..=0xDFFF)) {
                                    return false;
                                }
                                i += 12;
                            }
                            0xDC00..=0xDFFF => return false,
                            _ => i += 6,
                        }
                    }
                    _ => return false,
                }
            }
            c if c < 0x20 => return false,
            _ => i += 1,
        }
    }
    true
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16)
        .ok()
        .filter(|_| digits.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Unescapes the literal body at `start..end` (its escapes checked by
/// [`valid_escapes`]) to the front of `bytes`; its decoded length. Every
/// escape is longer than what it stands for, so the write never passes the
/// read.
fn unescape_in_place(bytes: &mut [u8], start: usize, end: usize) -> usize {
    let (mut r, mut w) = (start, 0);
    while r < end {
        let run = bytes[r..end]
            .iter()
            .position(|&b| b == b'\\')
            .unwrap_or(end - r);
        bytes.copy_within(r..r + run, w);
        r += run;
        w += run;
        if r >= end {
            break;
        }
        let (c, used) = match bytes[r + 1] {
            b'b' => ('\u{8}', 2),
            b'f' => ('\u{c}', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => {
                let unit = hex4(bytes, r + 2).unwrap_or(0xFFFD);
                if (0xD800..=0xDBFF).contains(&unit) {
                    let low = hex4(bytes, r + 8).unwrap_or(0xDC00);
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code).unwrap_or('\u{FFFD}'), 12)
                } else {
                    (char::from_u32(unit).unwrap_or('\u{FFFD}'), 6)
                }
            }
            other => (other as char, 2),
        };
        let mut buf = [0; 4];
        let encoded = c.encode_utf8(&mut buf).as_bytes();
        bytes[w..w + encoded.len()].copy_from_slice(encoded);
        w += encoded.len();
        r += used;
    }
    w
}

fn markers(value: &Value) -> usize {
    match value {
        Value::String(s) => usize::from(s == MARKER_DECODED),
        Value::Array(items) => items.iter().map(markers).sum(),
        Value::Object(map) => map.values().map(markers).sum(),
        _ => 0,
    }
}

/// The string the marker parsed to.
fn find_marker(value: &mut Value) -> Option<&mut Value> {
    match value {
        Value::String(s) if s == MARKER_DECODED => Some(value),
        Value::Array(items) => items.iter_mut().find_map(find_marker),
        Value::Object(map) => map.values_mut().find_map(find_marker),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_parsed_with_its_longest_string_moved_is_the_line_parsed_by_serde_json() {
        let long =
            "é and \\\"quotes\\\" and \\n lines and \\u00e9 \\ud83d\\ude00 \\/ \\t ".repeat(40);
        let lines = [
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{long}"}}]}},"n":1.5}}"#
            ),
            format!(r#"["{long}", "short", {{"k": "{long}x"}}]"#),
            format!(r#"{{"{long}": "key is longest", "v": "short"}}"#),
            format!(r#"{{"dup": "{long}", "dup": "later wins"}}"#),
            format!(r#""{long}""#),
            format!(r#"{{"a": "{long}\u0001"}}"#),
            format!(r#"{{"a": "{long}\ud800"}}"#),
            format!(r#"{{"a": "{long}\udc00x"}}"#),
            format!(r#"{{"a": "{long}\q"}}"#),
            format!(r#"{{"a": "{long}"#),
            format!(r#"{{"a": "{long}"}} trailing"#),
            format!(r#"{{"a": "{long}", "m": "\u0000acp-moved-string\u0000"}}"#),
            format!(r#"{{"a": "{long}\\"}}"#),
            format!("{{\"a\": \"{long}\u{1}\"}}"),
        ];
        for line in lines {
            let expected = serde_json::from_str::<Value>(&line).map_err(|_| line.clone());
            assert_eq!(parse_moving_at(line.clone(), 512), expected, "{line}");
            assert_eq!(parse(line.clone()), expected, "{line}");
        }
    }

    #[test]
    fn the_moved_string_keeps_the_buffer_of_the_line() {
        let long = "x\\\\n".repeat(1000);
        let line = format!(r#"{{"type":"result","result":"{long}","n":[1,2]}}"#);
        let buffer = line.as_ptr();
        let value = parse_moving_at(line, 512).unwrap();
        let text = value["result"].as_str().unwrap();
        assert_eq!(text.as_ptr(), buffer);
        assert_eq!(text, "x\\n".repeat(1000));
    }
}
