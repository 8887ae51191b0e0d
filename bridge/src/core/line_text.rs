//! The text of a panel line: written into room reserved for it, a big
//! line sized exactly (measured first) instead of grown by doubling.

use serde_json::Value;

/// Bytes reserved for a panel line's text before it is written: the lines
/// of a turn (a delta, a `tool_use`, a `tool_result`) mostly fit, so their
/// text is not regrown and copied on the way (serde_json starts at 128).
pub(super) const LINE_CAPACITY: usize = 1024;

/// `value` as the text of one line.
fn line_text<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    line_written(|text| serde_json::to_writer(text, value))
}

/// The text of one line `write` writes with serde_json.
pub(super) fn line_written(
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<String> {
    line_written_into(Vec::with_capacity(LINE_CAPACITY), write)
}

/// [`line_written`] into `text`'s room.
pub(super) fn line_written_into(
    mut text: Vec<u8>,
    write: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
) -> serde_json::Result<String> {
    write(&mut text)?;
    // Checking the bytes again would be a second pass over a line of up
    // to 8 MiB (an image).
    // SAFETY: serde_json's serialiser writes only UTF-8 (JSON syntax and
    // escaped `str`s); `serde_json::to_string` relies on the same.
    Ok(unsafe { String::from_utf8_unchecked(text) })
}

/// A `Value` line holding at least this many bytes of strings is measured
/// before it is written: a line of megabytes (a folded message, an image)
/// then takes its size once, instead of doubling its way there with a copy
/// at each step and up to twice its size held.
const MEASURED_FROM: usize = 1 << 16;

/// [`line_text`] of a `Value`, sized exactly when it is big.
pub(super) fn value_line_text(value: &Value) -> serde_json::Result<String> {
    if string_bytes(value, MEASURED_FROM) < MEASURED_FROM {
        return line_text(value);
    }
    line_written_into(Vec::with_capacity(json_len(value)), |text| {
        serde_json::to_writer(text, value)
    })
}

/// How many bytes `value` takes as JSON (0 when it does not serialise).
pub(super) fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).map_or(0, |()| count.0)
}

/// The bytes of the strings (keys too) in `value`, counted up to `limit`.
fn string_bytes(value: &Value, limit: usize) -> usize {
    let mut total = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => total += s.len(),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, v) in map {
                    total += k.len();
                    stack.push(v);
                }
            }
            _ => {}
        }
        if total >= limit {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_big_value_line_has_the_bytes_of_the_usual_form_and_no_spare_capacity() {
        let text = "a \"quoted\"\nline é ".repeat(MEASURED_FROM / 10);
        for value in [
            json!({"type": "result", "result": text, "n": [1, 2.5, null]}),
            json!({"type": "system", "subtype": "init"}),
        ] {
            let line = value_line_text(&value).unwrap();
            assert_eq!(line, value.to_string());
            if line.len() > MEASURED_FROM {
                assert_eq!(line.capacity(), line.len());
            }
        }
    }
}
