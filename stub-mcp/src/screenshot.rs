//! A deterministic, decodable PNG whose base64 is about a requested length.
//!
//! Pixels come from a fixed-seed generator so the image does not compress
//! away, and it is stored uncompressed so its size is predictable: the point is
//! to reproduce the ~560 KB base64 payload of a real editor screenshot.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// A rendered screenshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    pub width: u32,
    pub height: u32,
    pub png: Vec<u8>,
    pub base64: String,
}

const SEED: u64 = 0x5eed_0003_u64 ^ 0x9e37_79b9_7f4a_7c15;

/// Render a PNG whose base64 length is close to `target_base64_len`
/// (within one pixel row; never smaller than a 1x1 image).
pub fn render(target_base64_len: usize) -> Screenshot {
    let target_png = target_base64_len / 4 * 3;
    // Container overhead: signature, IHDR, IEND, IDAT framing, zlib header and
    // checksum, and 5 bytes per stored deflate block of at most 65535 bytes.
    let overhead = 8 + 25 + 12 + 12 + 6 + 5 * (target_png / 65_535 + 1);
    let raw = target_png.saturating_sub(overhead).max(4);
    let pixels = (raw / 3).max(1) as f64;
    let width = ((pixels * 16.0 / 9.0).sqrt().round() as u32).max(1);
    let row = 1 + 3 * width as usize;
    let height = ((raw / row).max(1)) as u32;
    let first = encode(width, height);
    // One correction step from the measured size.
    let b64_per_row = row as f64 * 4.0 / 3.0;
    let delta = (target_base64_len as f64 - encoded_len(first.len()) as f64) / b64_per_row;
    let height2 = ((height as f64 + delta.round()).max(1.0)) as u32;
    let png = if height2 == height {
        first
    } else {
        encode(width, height2)
    };
    let base64 = STANDARD.encode(&png);
    Screenshot {
        width,
        height: height2,
        png,
        base64,
    }
}

fn encoded_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

fn encode(width: u32, height: u32) -> Vec<u8> {
    let mut data = vec![0u8; width as usize * height as usize * 3];
    let mut state = SEED;
    for chunk in data.chunks_mut(8) {
        // xorshift64*: cheap, fixed, and incompressible enough.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let v = state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    let mut out = Vec::with_capacity(data.len() + 1024);
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::NoCompression);
        encoder.set_filter(png::Filter::NoFilter);
        // Writing to a Vec cannot fail; the dimensions are non-zero by construction.
        let mut writer = encoder.write_header().expect("PNG header into a Vec");
        writer.write_image_data(&data).expect("PNG data into a Vec");
        writer.finish().expect("PNG end into a Vec");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png_bytes: &[u8]) -> (u32, u32) {
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().expect("valid PNG header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("valid PNG data");
        (info.width, info.height)
    }

    #[test]
    fn base64_length_lands_within_one_row_of_the_target() {
        for target in [2_000usize, 50_000, 200_000, 560_068, 1_500_000] {
            let shot = render(target);
            let row_b64 = (1 + 3 * shot.width as usize) * 4 / 3 + 4;
            let diff = shot.base64.len().abs_diff(target);
            assert!(
                diff <= row_b64,
                "target {target}: got {} ({}x{})",
                shot.base64.len(),
                shot.width,
                shot.height
            );
            assert_eq!(decode(&shot.png), (shot.width, shot.height));
        }
    }

    #[test]
    fn rendering_is_deterministic() {
        assert_eq!(render(100_000), render(100_000));
    }

    #[test]
    fn tiny_targets_still_give_a_valid_png() {
        for target in [0usize, 1, 10, 100] {
            let shot = render(target);
            assert_eq!(decode(&shot.png), (shot.width, shot.height));
        }
    }
}
