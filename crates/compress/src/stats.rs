//! What a compression did, in numbers.

use std::io;

use serde::Serialize;

use crate::{
    options::{Level, MapStyle},
    validate::Normalisation,
};

/// Statistics of one [`compress`](crate::compress) call.
///
/// Character counts are **Unicode scalar values** (Rust `char`s) of compact JSON, not
/// UTF-16 code units (a JavaScript artefact) and not bytes (which would penalise
/// non-English prose three-fold). For ASCII text, the usual case, all three agree.
///
/// `original_chars` measures the input tools in chef's neutral serde shape
/// (`{name, description, input_schema, …}`), in the order given; `compressed_chars` is the
/// JSON of the wire tools plus the system preamble.
///
/// # Format
///
/// Serialises with snake_case keys in declaration order; absent values are omitted:
///
/// ```json
/// {"level":3,"map_style":"name+required","tool_count":149,"wire_tool_count":2,
///  "original_chars":163520,"compressed_chars":5738,"saved_pct":96.5,
///  "ambiguous_map_lines":101,"largest_lookalike_group":66}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// The level used.
    pub level: Level,
    /// The map style selected (reported at every level).
    pub map_style: MapStyle,
    /// The caller's explicit style, only when it was replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_map_style: Option<MapStyle>,
    /// Why it was replaced, only when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    /// Number of input tools.
    pub tool_count: usize,
    /// Number of wire tools.
    pub wire_tool_count: usize,
    /// Characters of the input tools as JSON.
    pub original_chars: usize,
    /// Characters of the wire tools as JSON plus the preamble.
    pub compressed_chars: usize,
    /// `round_half_up((1 − compressed/original) × 1000) / 10`; negative when the output
    /// grew; 0 when there are no tools (nothing to save, even though the level-3 legend
    /// is longer than `[]`).
    pub saved_pct: f64,
    /// Levels 3–4: tools whose map line body is shared with another tool (level 4: the
    /// compiled `def` line after its name, so tools without a compiled line all share the
    /// empty body).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambiguous_map_lines: Option<usize>,
    /// Levels 3–4: size of the largest group of identical bodies (1 when none repeat).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_lookalike_group: Option<usize>,
    /// Level 4: tools rendered without a compiled docstring (no line, or a stale one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncompiled_tools: Option<usize>,
    /// Level 4: `"{name}: {problem}"` for each compiled line that no longer verifies
    /// against its tool, in code order (present, possibly empty, at level 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_compiled_tools: Option<Vec<String>>,
    /// Level 4: compiled-map keys that name no tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orphaned_compiled_entries: Option<usize>,
    /// Level 4: the orphaned keys themselves, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub orphaned_compiled_names: Vec<String>,
    /// Rewrites applied to schemas from the wild (`{tool, path, what}`), in code order
    /// (tools sorted by name, as the level-3 codes are; each tool's rewrites in the order
    /// its schema walk met them), so the list does not depend on the input order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub normalisations: Vec<Normalisation>,
    /// o200k_base tokens of the input tools as JSON (feature `tokens`, when asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_tokens: Option<usize>,
    /// o200k_base tokens of the wire tools as JSON plus the preamble (feature `tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compressed_tokens: Option<usize>,
}

/// `round_half_up((1 − compressed/original) × 1000) / 10`, never negative zero.
pub(crate) fn saved_pct(original: usize, compressed: usize) -> f64 {
    if original == 0 {
        return 0.0;
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "character counts are far below 2^52"
    )]
    let ratio = 1.0 - compressed as f64 / original as f64;
    let pct = (ratio * 1000.0 + 0.5).floor() / 10.0;
    if pct == 0.0 { 0.0 } else { pct }
}

/// Counts the characters of what is written through it, without keeping the text.
#[derive(Debug, Default)]
pub(crate) struct CharCounter {
    pub(crate) chars: usize,
}

impl io::Write for CharCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Every UTF-8 byte that is not a continuation byte starts a char.
        self.chars += buf.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Characters of `value` as compact JSON.
pub(crate) fn json_chars<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = CharCounter::default();
    // Serialising plain data into a counter cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.chars
}

/// A count with comma thousands separators, as chef's messages print sizes:
/// `42713` → `42,713` (never locale-dependent).
///
/// ```
/// assert_eq!(chef_compress::thousands(204_800), "204,800");
/// ```
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(42_713), "42,713");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn saved_pct_rounds_half_up_with_one_decimal() {
        assert_eq!(saved_pct(0, 10), 0.0);
        assert_eq!(saved_pct(1000, 1000), 0.0);
        assert!(saved_pct(1000, 1000).is_sign_positive());
        assert_eq!(saved_pct(1000, 545), 45.5);
        assert_eq!(saved_pct(2000, 1091), 45.5); // 45.45 rounds half up
        assert_eq!(saved_pct(1000, 1150), -15.0);
        assert_eq!(saved_pct(163_520, 89_697), 45.1);
    }

    #[test]
    fn json_chars_counts_scalar_values() {
        assert_eq!(json_chars("é—😀"), 5);
        assert_eq!(json_chars(&serde_json::json!({"a": "\n"})), 10);
    }
}
