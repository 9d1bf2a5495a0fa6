//! BERT's uncased tokenizer (normaliser, pre-tokeniser and WordPiece), as the
//! `tokenizers` crate configures it for all-MiniLM-L6-v2, in plain Rust.
//!
//! The bundled static model's rows are indexed by this vocabulary, so its vectors are only
//! right when the token ids are the ones `tokenizers` would give. The steps follow that
//! crate's `BertNormalizer { clean_text, handle_chinese_chars, strip_accents: None (so
//! stripped, as lowercase is on), lowercase }`, `BertPreTokenizer` and
//! `WordPiece { unk_token: "[UNK]", continuing_subword_prefix: "##",
//! max_input_chars_per_word: 100 }`, with the same Unicode category tables
//! (`unicode_categories`) and NFD decomposition. chef-dense's tests compare the ids with
//! `tokenizers` on every tool text and request of the bundled corpora.

use rustc_hash::FxHashMap;
use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// Words longer than this (in characters) become the unknown token.
const MAX_WORD_CHARS: usize = 100;

/// BERT's special tokens: `tokenizers` finds them in the raw text before normalising
/// (added tokens with `normalized: false`), so `[SEP]` in a text is one token, not five.
const SPECIAL: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

/// A WordPiece vocabulary: token text → id.
#[derive(Debug)]
pub(crate) struct WordPiece {
    vocab: FxHashMap<Box<str>, u32>,
    unknown: u32,
    /// The special tokens the vocabulary has, with their ids.
    specials: Vec<(&'static str, u32)>,
}

impl WordPiece {
    /// The vocabulary, ids in order, and the unknown token's id.
    pub(crate) fn new<'a>(tokens: impl IntoIterator<Item = &'a str>, unknown: u32) -> Self {
        let vocab: FxHashMap<Box<str>, u32> = tokens
            .into_iter()
            .zip(0_u32..)
            .map(|(token, id)| (Box::from(token), id))
            .collect();
        let specials = SPECIAL
            .iter()
            .filter_map(|&token| vocab.get(token).map(|&id| (token, id)))
            .collect();
        Self {
            vocab,
            unknown,
            specials,
        }
    }

    /// The unknown token's id.
    pub(crate) fn unknown(&self) -> u32 {
        self.unknown
    }

    /// The ids of `text`, without special tokens (what `encode(text, false)` gives).
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut piece = String::new();
        let mut rest = text;
        loop {
            // The leftmost special token (the longest at a tie), if any.
            let next = self
                .specials
                .iter()
                .filter_map(|&(token, id)| rest.find(token).map(|at| (at, token, id)))
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.len().cmp(&a.1.len())));
            let plain = next.map_or(rest, |(at, _, _)| rest.get(..at).unwrap_or_default());
            for word in pre_tokenise(&normalise(plain)) {
                self.word(word, &mut piece, &mut ids);
            }
            let Some((at, token, id)) = next else {
                return ids;
            };
            ids.push(id);
            rest = rest.get(at + token.len()..).unwrap_or_default();
        }
    }

    /// Greedy longest-match-first pieces of one word, or the unknown token when some part
    /// of it matches nothing (or it is too long).
    fn word(&self, word: &str, piece: &mut String, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            ids.push(self.unknown);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                let Some(part) = word.get(start..end) else {
                    break;
                };
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(part);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= part.chars().next_back().map_or(1, char::len_utf8);
            }
            let Some(id) = found else {
                ids.truncate(first);
                ids.push(self.unknown);
                return;
            };
            ids.push(id);
            start = end;
        }
    }
}

/// BERT's normaliser: control characters out, whitespace to spaces, spaces around CJK
/// ideographs, accents stripped (NFD, nonspacing marks out), lower case.
pub(crate) fn normalise(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_chinese(c) {
            cleaned.extend([' ', c, ' ']);
        } else {
            cleaned.push(c);
        }
    }
    if cleaned.is_ascii() {
        cleaned.make_ascii_lowercase();
        return cleaned;
    }
    cleaned
        .nfd()
        .filter(|c| !c.is_mark_nonspacing())
        .flat_map(char::to_lowercase)
        .collect()
}

/// BERT's pre-tokeniser: split on whitespace (dropped) and around punctuation (kept, one
/// character per word).
pub(crate) fn pre_tokenise(text: &str) -> impl Iterator<Item = &str> {
    text.split(char::is_whitespace).flat_map(|chunk| {
        let mut words = Vec::new();
        let mut start = 0;
        for (at, c) in chunk.char_indices() {
            if is_punctuation(c) {
                if start < at {
                    words.extend(chunk.get(start..at));
                }
                let end = at + c.len_utf8();
                words.extend(chunk.get(at..end));
                start = end;
            }
        }
        if start < chunk.len() {
            words.extend(chunk.get(start..));
        }
        words
    })
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

// Both answer ASCII without the Unicode tables (a binary search per character): in ASCII
// the "other" categories are the C0 controls and DEL, and the punctuation is exactly
// `is_ascii_punctuation` (BERT counts every non-alphanumeric printable ASCII character).

fn is_control(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control() && !matches!(c, '\t' | '\n' | '\r');
    }
    c.is_other()
}

fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    c.is_punctuation()
}

fn is_chinese(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x2_0000..=0x2_A6DF
        | 0x2_A700..=0x2_B73F
        | 0x2_B740..=0x2_B81F
        | 0x2_B920..=0x2_CEAF
        | 0xF900..=0xFAFF
        | 0x2_F800..=0x2_FA1F)
}

#[cfg(test)]
mod tests {
    use unicode_categories::UnicodeCategories;

    use super::{WordPiece, is_control, is_punctuation, normalise, pre_tokenise};

    /// The ASCII shortcuts agree with the Unicode tables on every ASCII character.
    #[test]
    fn ascii_shortcuts_agree_with_the_unicode_tables() {
        for c in (0_u8..=127).map(char::from) {
            assert_eq!(
                is_control(c),
                !matches!(c, '\t' | '\n' | '\r') && c.is_other(),
                "{c:?}"
            );
            assert_eq!(
                is_punctuation(c),
                c.is_ascii_punctuation() || c.is_punctuation(),
                "{c:?}"
            );
        }
    }

    fn vocab() -> WordPiece {
        WordPiece::new(
            [
                "[PAD]", "[UNK]", "un", "##aff", "##able", "search", "##es", "file", "_", ",",
                "cafe", "中", "!",
            ],
            1,
        )
    }

    #[test]
    fn normalises_as_bert_does() {
        assert_eq!(normalise("Héllo\tWORLD\u{200b}"), "hello world");
        assert_eq!(normalise("Café\u{0}"), "cafe");
        assert_eq!(normalise("ab中cd"), "ab 中 cd");
        // NFD splits the dot from the capital; the dot, a nonspacing mark, goes.
        assert_eq!(normalise("İ"), "i");
    }

    #[test]
    fn splits_on_spaces_and_punctuation() {
        let words: Vec<&str> = pre_tokenise("read_file, now!  ok").collect();
        assert_eq!(words, ["read", "_", "file", ",", "now", "!", "ok"]);
    }

    #[test]
    fn takes_the_longest_pieces_first() {
        let v = vocab();
        assert_eq!(v.encode("unaffable searches"), [2, 3, 4, 5, 6]);
        assert_eq!(v.encode("file_search, Café!"), [7, 8, 5, 9, 10, 12]);
        // A word with a part the vocabulary lacks is one unknown token.
        assert_eq!(v.encode("unaffablex file"), [1, 7]);
        assert_eq!(v.encode(&"a".repeat(101)), [1]);
        assert_eq!(v.encode("中"), [11]);
        // Special tokens are found in the raw text, case and all.
        assert_eq!(v.encode("file[PAD]search [pad]"), [7, 0, 5, 1, 1, 1]);
        assert!(v.encode(" \t\n").is_empty());
    }
}
