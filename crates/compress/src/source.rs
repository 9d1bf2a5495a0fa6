//! The input catalogue as compact JSON, written once per [`compress`](crate::compress).
//!
//! One pass over the input tools serves two needs: the character count of the original
//! tools for the statistics (the text is exactly `serde_json::to_vec(tools)`, so counting
//! its chars is counting the chars of the neutral serde shape), and a private copy of each
//! schema that a [`Compressed`](crate::Compressed) keeps and parses only when something
//! needs the whole schema (a validator, the search index). A single buffer written with
//! `memcpy`-sized appends costs a fraction of a deep clone of the `serde_json::Value` trees
//! (one allocation instead of one per string and object, for the copy and again for its
//! drop).

use std::{ops::Range, sync::Arc};

use chef_ir::ToolDefinition;
use serde::Serialize;
use serde_json::Value;

/// The catalogue's JSON text and where each tool's schema sits in it.
#[derive(Debug)]
pub(crate) struct CatalogueText {
    /// `serde_json::to_vec(tools)`, shared by the entries that parse their schema from it.
    pub(crate) bytes: Arc<Vec<u8>>,
    /// Byte range of each tool's `input_schema`, in input order.
    pub(crate) schemas: Vec<Range<usize>>,
}

impl CatalogueText {
    /// Writes `tools` as compact JSON, byte for byte what `serde_json::to_vec` writes.
    ///
    /// Recursion follows the schemas' nesting; callers check nesting first (the schema
    /// normaliser refuses anything deeper than its limit).
    pub(crate) fn write(tools: &[ToolDefinition]) -> Self {
        // Roughly a kilobyte per tool for a verbose MCP catalogue; growing is amortised.
        let guess = tools
            .iter()
            .map(|t| t.description.len() + t.name.as_str().len() + 768)
            .sum::<usize>();
        let mut out = Vec::with_capacity(guess + 2);
        let mut schemas = Vec::with_capacity(tools.len());
        out.push(b'[');
        for (i, tool) in tools.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"name\":");
            string(&mut out, tool.name.as_str());
            out.extend_from_slice(b",\"description\":");
            string(&mut out, &tool.description);
            out.extend_from_slice(b",\"input_schema\":");
            let start = out.len();
            value(&mut out, &tool.input_schema);
            schemas.push(start..out.len());
            if !tool.tags.is_empty() {
                out.extend_from_slice(b",\"tags\":");
                serde_into(&mut out, &tool.tags);
            }
            if tool.defer_loading {
                out.extend_from_slice(b",\"defer_loading\":true");
            }
            if !tool.annotations.is_empty() {
                out.extend_from_slice(b",\"annotations\":");
                serde_into(&mut out, &tool.annotations);
            }
            out.push(b'}');
        }
        out.push(b']');
        Self {
            bytes: Arc::new(out),
            schemas,
        }
    }

    /// Characters (Unicode scalar values) of the text.
    pub(crate) fn chars(&self) -> usize {
        count_chars(&self.bytes)
    }
}

/// Characters of UTF-8 text: every byte that is not a continuation byte starts one.
pub(crate) fn count_chars(bytes: &[u8]) -> usize {
    // A plain reduction the compiler vectorises.
    bytes.iter().map(|&b| usize::from((b & 0xC0) != 0x80)).sum()
}

/// Appends what serde_json writes for `v` (rare fields: tags, annotations, numbers).
fn serde_into<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    // Writing plain data into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, v);
}

fn value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => serde_into(out, n),
        Value::String(s) => string(out, s),
        Value::Array(list) => {
            out.push(b'[');
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(out, key);
                out.push(b':');
                value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// A JSON string: copied whole when nothing in it needs escaping (the usual case), else
/// written by serde_json.
fn string(out: &mut Vec<u8>, s: &str) {
    // Branch-free over the bytes, so the compiler vectorises it.
    let special = s
        .bytes()
        .fold(false, |acc, b| acc | (b < 0x20) | (b == b'"') | (b == b'\\'));
    if special {
        serde_into(out, s);
    } else {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

/// Parses a schema back from its text. The text was written from a `Value`, so this
/// cannot fail; if it somehow did, the schema reads as `false` (accepts nothing), never as
/// something more permissive.
pub(crate) fn parse_schema(bytes: &[u8], range: Range<usize>) -> Value {
    bytes
        .get(range)
        .and_then(|text| serde_json::from_slice(text).ok())
        .unwrap_or(Value::Bool(false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_is_what_serde_json_writes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real-mcp-tools.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut tools = chef_ir::load_tools_from_str(&text).unwrap().tools;
        tools.push(
            ToolDefinition::new(
                "odd \"one\"\n",
                json!({"type": "object", "properties": {"é\u{1}\\": {"default": [1.5, -2, 1e300, null, true, {"\t": "\u{7f}😀"}]}}}),
            )
            .with_description("tab\there \u{0}")
            .with_tags(["a", "b\"c"])
            .with_defer_loading(true),
        );
        if let Some(t) = tools.last_mut() {
            t.annotations.title = Some("T".to_owned());
            t.annotations.read_only_hint = Some(true);
        }
        let written = CatalogueText::write(&tools);
        let expected = serde_json::to_vec(&tools).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(
            written.chars(),
            String::from_utf8(expected).unwrap().chars().count()
        );
        for (tool, range) in tools.iter().zip(&written.schemas) {
            assert_eq!(parse_schema(&written.bytes, range.clone()), tool.input_schema);
        }
        assert_eq!(CatalogueText::write(&[]).bytes.as_slice(), b"[]");
    }

    #[test]
    fn a_range_outside_the_text_reads_as_a_schema_that_accepts_nothing() {
        assert_eq!(parse_schema(b"{}", 0..9), Value::Bool(false));
        assert_eq!(parse_schema(b"{]", 0..2), Value::Bool(false));
    }
}
