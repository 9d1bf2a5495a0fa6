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
    /// Byte range of each tool's whole object (`{"name":…}`), in input order: what a
    /// subset of the catalogue costs is the sum over its tools.
    pub(crate) objects: Vec<Range<usize>>,
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
        let mut objects = Vec::with_capacity(tools.len());
        out.push(b'[');
        for (i, tool) in tools.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let object = out.len();
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
            objects.push(object..out.len());
        }
        out.push(b']');
        Self {
            bytes: Arc::new(out),
            schemas,
            objects,
        }
    }
}

/// Characters of UTF-8 text: every byte that is not a continuation byte starts one.
pub(crate) fn count_chars(bytes: &[u8]) -> usize {
    // Fixed-size blocks with a byte-wide sum, which the compiler turns into vector code.
    let (blocks, rest) = bytes.as_chunks::<64>();
    let mut total = 0;
    for block in blocks {
        let mut starts = 0_u8;
        for &b in block {
            starts += u8::from((b & 0xC0) != 0x80);
        }
        total += usize::from(starts);
    }
    total + rest.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// Whether a byte must be escaped in a JSON string (as serde_json escapes).
fn is_special(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

/// Whether any byte must be escaped.
fn has_special(bytes: &[u8]) -> bool {
    // Fixed-size blocks, branch-free inside, so the compiler vectorises the test; the tail
    // is padded to a block with a byte that needs no escape.
    let (blocks, rest) = bytes.as_chunks::<16>();
    let mut tail = [b' '; 16];
    if let Some(head) = tail.get_mut(..rest.len()) {
        head.copy_from_slice(rest);
    }
    let test = |block: &[u8; 16]| {
        let mut any = false;
        for &b in block {
            any |= is_special(b);
        }
        any
    };
    blocks.iter().any(test) || test(&tail)
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

/// The position of the first byte that must be escaped (16-byte blocks at a time).
fn find_special(bytes: &[u8]) -> Option<usize> {
    let (blocks, rest) = bytes.as_chunks::<16>();
    for (i, block) in blocks.iter().enumerate() {
        let mut any = false;
        for &b in block {
            any |= is_special(b);
        }
        if any {
            return block
                .iter()
                .position(|&b| is_special(b))
                .map(|at| i * 16 + at);
        }
    }
    rest.iter()
        .position(|&b| is_special(b))
        .map(|at| blocks.len() * 16 + at)
}

/// A JSON string, escaped exactly as serde_json escapes: copied whole when nothing in it
/// needs escaping (the usual case); otherwise `"`, backslash and control characters get
/// serde_json's escapes (`\n`, …, `\u001f` with lowercase hex).
fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if !has_special(bytes) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut run = 0;
    while let Some(i) = bytes.get(run..).and_then(find_special).map(|at| run + at) {
        let b = bytes.get(i).copied().unwrap_or(b' ');
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        run = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'));
                out.push(HEX.get(usize::from(b & 0xF)).copied().unwrap_or(b'0'));
            }
        }
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
    out.push(b'"');
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
        let controls: String = (0_u8..0x20).map(char::from).collect();
        tools.push(
            ToolDefinition::new(
                "controls",
                json!({"type": "object", "description": controls}),
            )
            .with_description(format!("{controls}\"\\ x {}", "long ".repeat(40))),
        );
        let written = CatalogueText::write(&tools);
        let expected = serde_json::to_vec(&tools).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written.bytes),
            String::from_utf8_lossy(&expected)
        );
        assert_eq!(
            count_chars(&written.bytes),
            String::from_utf8(expected).unwrap().chars().count()
        );
        for (tool, range) in tools.iter().zip(&written.schemas) {
            assert_eq!(
                parse_schema(&written.bytes, range.clone()),
                tool.input_schema
            );
        }
        for (tool, range) in tools.iter().zip(&written.objects) {
            assert_eq!(
                written.bytes.get(range.clone()).unwrap(),
                serde_json::to_vec(tool).unwrap().as_slice()
            );
        }
        assert_eq!(CatalogueText::write(&[]).bytes.as_slice(), b"[]");
    }

    #[test]
    fn a_range_outside_the_text_reads_as_a_schema_that_accepts_nothing() {
        assert_eq!(parse_schema(b"{}", 0..9), Value::Bool(false));
        assert_eq!(parse_schema(b"{]", 0..2), Value::Bool(false));
    }
}
