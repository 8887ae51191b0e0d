//! Id sources: the core mints no ids of its own (no output of it depends on
//! randomness), so ids come from outside.

/// Supplies the uuids the bridge stamps on stream-json messages.
pub trait IdSource {
    fn next_uuid(&mut self) -> String;
}

/// Deterministic ids (`00000000-0000-4000-8000-000000000001`, ...) for replay and tests.
#[derive(Debug, Default)]
pub struct CounterIds {
    next: u64,
}

/// The fixed head of a [`CounterIds`] uuid.
const COUNTER_HEAD: &str = "00000000-0000-4000-8000-";

impl IdSource for CounterIds {
    /// The counter as the last group's 12 hex digits, written digit by
    /// digit: `format!`'s zero padding goes through the formatter one
    /// character at a time, a visible cost where every tool call takes a
    /// uuid. A counter past 12 digits takes as many as it needs.
    fn next_uuid(&mut self) -> String {
        self.next += 1;
        if self.next >> 48 != 0 {
            return format!("{COUNTER_HEAD}{:012x}", self.next);
        }
        let mut id = String::with_capacity(COUNTER_HEAD.len() + 12);
        id.push_str(COUNTER_HEAD);
        for shift in (0..12).rev() {
            let digit = ((self.next >> (shift * 4)) & 0xf) as u32;
            id.push(char::from_digit(digit, 16).unwrap_or('0'));
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_uuids_are_the_counter_in_twelve_hex_digits_or_more() {
        for next in [
            0,
            1,
            0xa,
            0xff,
            0x1234_5678,
            (1 << 48) - 2,
            (1 << 48) - 1,
            1 << 52,
        ] {
            let mut ids = CounterIds { next };
            let want = format!("00000000-0000-4000-8000-{:012x}", next + 1);
            assert_eq!(ids.next_uuid(), want, "after {next}");
        }
    }
}
