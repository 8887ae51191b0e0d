//! Whether an image's base64 is an image of its declared type, checked
//! cheaply: the alphabet and length once, then only the first and last few
//! bytes decoded (magic bytes, the format's end marker or size). An image
//! the panel cannot decode (an agent cut its base64 short, the data is of
//! another type) becomes the `[image]` marker with a diagnostic instead;
//! data whose magic bytes are of no format known here passes as declared.

/// What the check proved of an image's data that passed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Passed {
    /// Base64 characters only: JSON writes the data as it is, with nothing
    /// to escape.
    Base64,
    /// A type this check does not know: the data is as the agent sent it.
    Unchecked,
}

/// Whether `data` looks like a whole image of type `mime` (or is of a type
/// this check does not know), else what is wrong with it.
pub(super) fn check(mime: &str, data: &str) -> Result<Passed, String> {
    let kind = match mime.to_ascii_lowercase().as_str() {
        "image/png" => Format::Png,
        "image/jpeg" | "image/jpg" => Format::Jpeg,
        "image/gif" => Format::Gif,
        "image/webp" => Format::Webp,
        _ => return Ok(Passed::Unchecked),
    };
    let bytes = data.as_bytes();
    let body = bytes
        .strip_suffix(b"==")
        .or_else(|| bytes.strip_suffix(b"="))
        .unwrap_or(bytes);
    if !bytes.len().is_multiple_of(4) || !is_base64_alphabet(body) {
        return Err(format!(
            "its base64 ({} characters) does not decode: cut short or not base64",
            bytes.len()
        ));
    }
    let head = decode(&bytes[..bytes.len().min(16)]);
    let tail = decode(&bytes[bytes.len().saturating_sub(16)..]);
    let decoded_len = bytes.len() / 4 * 3 - (bytes.len() - body.len());
    let found = if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Format::Png
    } else if head.starts_with(b"\xff\xd8\xff") {
        Format::Jpeg
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Format::Gif
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        Format::Webp
    } else {
        // data of no format this check knows is passed on as declared
        return Ok(Passed::Base64);
    };
    if found != kind {
        return Err(format!("its data is {}, not {mime}", found.mime()));
    }
    let whole = match kind {
        Format::Png => tail.ends_with(b"IEND\xae\x42\x60\x82"),
        Format::Jpeg => tail.windows(2).any(|w| w == b"\xff\xd9"),
        Format::Gif => tail.contains(&0x3b),
        Format::Webp => {
            let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            size + 8 <= decoded_len
        }
    };
    if whole {
        Ok(Passed::Base64)
    } else {
        Err(format!("its {mime} data is cut short (no end marker)"))
    }
}

/// Whether every byte of `body` is of the standard base64 alphabet (no
/// padding). Checked a block at a time without stopping early inside one,
/// so the compiler compares many bytes per instruction: an image is
/// megabytes of base64, and a byte-by-byte scan of it cost more than
/// reading it.
fn is_base64_alphabet(body: &[u8]) -> bool {
    let of_alphabet = |b: u8| {
        b.is_ascii_uppercase()
            | b.is_ascii_lowercase()
            | b.is_ascii_digit()
            | (b == b'+')
            | (b == b'/')
    };
    body.chunks(64)
        .all(|block| block.iter().fold(true, |all, &b| all & of_alphabet(b)))
}

/// A few whole groups of standard base64 (checked above) as bytes.
fn decode(groups: &[u8]) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let mut out = Vec::with_capacity(groups.len() / 4 * 3);
    for group in groups.chunks_exact(4) {
        let n = group.iter().fold(0u32, |n, &c| {
            n << 6 | u32::from(if c == b'=' { 0 } else { value(c) })
        });
        let pad = group.iter().filter(|&&c| c == b'=').count();
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl Format {
    fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    /// The block-wise alphabet check says what a byte-by-byte one says,
    /// for every byte value at any place of a block.
    #[test]
    fn the_alphabet_check_finds_any_byte_outside_it_anywhere() {
        let one_by_one = |body: &[u8]| {
            body.iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
        };
        let clean = b"AZaz09+/".repeat(20);
        assert!(is_base64_alphabet(&clean) && is_base64_alphabet(b""));
        for at in [0, 1, 63, 64, 65, 127, clean.len() - 1] {
            for byte in 0..=255u8 {
                let mut body = clean.clone();
                body[at] = byte;
                assert_eq!(
                    is_base64_alphabet(&body),
                    one_by_one(&body),
                    "{byte} at {at}"
                );
            }
        }
    }

    fn defect(mime: &str, data: &str) -> Option<String> {
        check(mime, data).err()
    }

    /// A whole image passes; a cut, mistyped or non-base64 one names why.
    #[test]
    fn images_that_do_not_decode_to_their_type_are_named() {
        assert_eq!(check("image/png", PNG), Ok(Passed::Base64));
        assert_eq!(check("image/x-unknown", "@@"), Ok(Passed::Unchecked));
        let cut = &PNG[..PNG.len() - 8];
        assert!(
            defect("image/png", cut).unwrap().contains("cut short"),
            "{cut}"
        );
        assert!(
            defect("image/png", &PNG[..PNG.len() - 3])
                .unwrap()
                .contains("does not decode")
        );
        assert!(
            defect("image/jpeg", PNG)
                .unwrap()
                .contains("is image/png, not image/jpeg")
        );
        // data of no known format is passed on as declared
        assert_eq!(check("image/png", "QUJD"), Ok(Passed::Base64));
        assert!(
            defect("image/png", "not base64!")
                .unwrap()
                .contains("does not decode")
        );
        // a JPEG ending in its EOI marker, a GIF in its trailer
        let jpeg = STANDARD.encode(b"\xff\xd8\xff\xe0 jfif body \xff\xd9");
        assert_eq!(defect("image/jpeg", &jpeg), None);
        let gif = STANDARD.encode(b"GIF89a body;");
        assert_eq!(defect("image/gif", &gif), None);
        let webp = STANDARD.encode(b"RIFF\x08\x00\x00\x00WEBPVP8 ");
        assert_eq!(defect("image/webp", &webp), None);
        let webp_cut = STANDARD.encode(b"RIFF\xff\x00\x00\x00WEBPVP8 ");
        assert!(defect("image/webp", &webp_cut).is_some());
    }
}
