//! A [`ToolResultContent`] as JSON: its `Serialize` (a string when there
//! is no image, else `[text block?, image blocks...]`), and the same bytes
//! written straight into a panel line. An image's checked base64 needs no
//! escaping, so the line copies it as it is instead of scanning megabytes
//! for characters to escape, into a line grown once for all its images.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::{Image, Passed, ToolResultContent};
use crate::stream_json::ResultContent;

impl Serialize for ToolResultContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.text();
        if self.images.is_empty() {
            return s.serialize_str(&text);
        }
        let mut seq = s.serialize_seq(Some(self.images.len() + usize::from(!text.is_empty())))?;
        if !text.is_empty() {
            seq.serialize_element(&TextBlock { text: &text })?;
        }
        for image in &self.images {
            seq.serialize_element(image)?;
        }
        seq.end()
    }
}

/// `{"type":"text","text":...}`
struct TextBlock<'a> {
    text: &'a str,
}

impl Serialize for TextBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", "text")?;
        m.serialize_entry("text", self.text)?;
        m.end()
    }
}

/// `{"type":"image","source":{"type":"base64","media_type":...,"data":...}}`
impl Serialize for Image<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Source<'b>(&'b Image<'b>);
        impl Serialize for Source<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("type", "base64")?;
                m.serialize_entry("media_type", &self.0.mime)?;
                m.serialize_entry("data", &*self.0.data)?;
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("type", "image")?;
        m.serialize_entry("source", &Source(self))?;
        m.end()
    }
}

impl ResultContent for ToolResultContent<'_> {
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let text = self.text();
        if self.images.is_empty() {
            return serde_json::to_writer(out, &*text);
        }
        // room for the blocks' keys and the rest of the line (its keys,
        // ids and stamps)
        const KEYS: usize = 1024;
        let data: usize = self.images.iter().map(|i| i.data.len()).sum();
        out.reserve(data + text.len() + KEYS);
        out.push(b'[');
        if !text.is_empty() {
            serde_json::to_writer(&mut *out, &TextBlock { text: &text })?;
            out.push(b',');
        }
        for (i, image) in self.images.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            image.write_to(out)?;
        }
        out.push(b']');
        Ok(())
    }
}

impl Image<'_> {
    /// The bytes of its `Serialize`; base64 the check passed is copied as it
    /// is (it has no character JSON escapes).
    fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"type":"image","source":{"type":"base64","media_type":"#);
        serde_json::to_writer(&mut *out, &*self.mime)?;
        out.extend_from_slice(br#","data":"#);
        match self.passed {
            Passed::Base64 => {
                out.push(b'"');
                out.extend_from_slice(self.data.as_bytes());
                out.push(b'"');
            }
            Passed::Unchecked => serde_json::to_writer(&mut *out, &*self.data)?,
        }
        out.extend_from_slice(b"}}");
        Ok(())
    }
}
