//! Prompt image fixtures. Generated fixtures keep binary blobs out of the
//! repository and are byte-identical on every machine (same encoder input,
//! same PNG bytes), so a scenario's recordings stay comparable.

use base64::Engine as _;

use super::PromptImage;

/// Names accepted by `images = [{ fixture = "..." }]`.
pub const FIXTURE_NAMES: &[&str] = &["red-dot-png", "blue-square-png"];

/// A generated fixture image by name, or `None` if the name is unknown.
pub fn fixture_image(name: &str) -> Option<PromptImage> {
    let (size, rgb) = match name {
        "red-dot-png" => (4u32, [255u8, 0, 0]),
        "blue-square-png" => (16, [0, 0, 255]),
        _ => return None,
    };
    let bytes = encode_png(size, rgb);
    Some(PromptImage {
        media_type: "image/png".to_owned(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

fn encode_png(size: u32, rgb: [u8; 3]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, size, size);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        // Writing into a Vec cannot fail; an error here is a bug in png.
        let mut writer = encoder.write_header().expect("png header into a Vec");
        let data: Vec<u8> = (0..size * size).flat_map(|_| rgb).collect();
        writer.write_image_data(&data).expect("png data into a Vec");
    }
    out
}

/// The media type for an image file, from its extension.
pub(crate) fn media_type_for(path: &std::path::Path) -> Option<&'static str> {
    match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}
