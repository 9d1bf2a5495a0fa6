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

/// Buffers reused from one text to the next, and (when encoding many texts) the pieces of
/// the words met so far that the vocabulary does not hold whole.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The normalised text.
    normal: String,
    /// Non-ASCII characters waiting for NFD (see [`normalise_into`]).
    pending: String,
    /// The current `##` piece.
    piece: String,
    /// Word → its range in `cached`, when [`Scratch::caching`] made one.
    words: Option<FxHashMap<Box<str>, (u32, u32)>>,
    /// The ids of the cached words, one after another.
    cached: Vec<u32>,
}

impl Scratch {
    /// Buffers that also remember the pieces of each word split into several (or unknown),
    /// worth it over many texts: a catalogue's words repeat.
    pub(crate) fn caching() -> Self {
        Self {
            words: Some(FxHashMap::default()),
            ..Self::default()
        }
    }
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
        self.encode_into(text, &mut Scratch::default(), &mut ids);
        ids
    }

    /// Appends the ids of `text` to `ids` (as [`encode`](Self::encode)), with `scratch`'s
    /// buffers.
    pub(crate) fn encode_into(&self, text: &str, scratch: &mut Scratch, ids: &mut Vec<u32>) {
        let mut rest = text;
        loop {
            let next = self.next_special(rest);
            let plain = next.map_or(rest, |(at, _, _)| rest.get(..at).unwrap_or_default());
            let mut normal = std::mem::take(&mut scratch.normal);
            if plain.is_ascii() {
                self.ascii_words(plain, &mut normal, scratch, ids);
            } else {
                normalise_into(plain, &mut normal, &mut scratch.pending);
                for word in pre_tokenise(&normal) {
                    self.word(word, scratch, ids);
                }
            }
            scratch.normal = normal;
            let Some((at, token, id)) = next else {
                return;
            };
            ids.push(id);
            rest = rest.get(at + token.len()..).unwrap_or_default();
        }
    }

    /// [`normalise`] and [`pre_tokenise`] of an ASCII text in one pass over its bytes, each
    /// word (lowercased into `word`) tokenised as it ends: controls dropped (so the
    /// characters around one join), whitespace ending a word, punctuation a word of its
    /// own.
    fn ascii_words(
        &self,
        text: &str,
        word: &mut String,
        scratch: &mut Scratch,
        ids: &mut Vec<u32>,
    ) {
        word.clear();
        for &b in text.as_bytes() {
            match ASCII_CLASS.get(usize::from(b)).copied().unwrap_or(DROP) {
                LETTER => word.push(char::from(b.to_ascii_lowercase())),
                DROP => {}
                class => {
                    if !word.is_empty() {
                        self.word(word, scratch, ids);
                        word.clear();
                    }
                    if class == PUNCTUATION {
                        let mut one = [0; 4];
                        self.word(char::from(b).encode_utf8(&mut one), scratch, ids);
                    }
                }
            }
        }
        if !word.is_empty() {
            self.word(word, scratch, ids);
        }
    }

    /// The leftmost special token in `text` (the longest at a tie): where it starts, the
    /// token and its id. Every special token starts with `[`, so only a `[` can start one.
    fn next_special(&self, text: &str) -> Option<(usize, &'static str, u32)> {
        text.match_indices('[').find_map(|(at, _)| {
            let here = text.get(at..).unwrap_or_default();
            self.specials
                .iter()
                .filter(|(token, _)| here.starts_with(token))
                .max_by_key(|(token, _)| token.len())
                .map(|&(token, id)| (at, token, id))
        })
    }

    /// Greedy longest-match-first pieces of one word, or the unknown token when some part
    /// of it matches nothing (or it is too long).
    fn word(&self, word: &str, scratch: &mut Scratch, ids: &mut Vec<u32>) {
        // At most as many characters as bytes: only a long word needs counting.
        if word.len() > MAX_WORD_CHARS && word.chars().count() > MAX_WORD_CHARS {
            ids.push(self.unknown);
            return;
        }
        // The first greedy step: the whole word (most words).
        if let Some(&id) = self.vocab.get(word) {
            ids.push(id);
            return;
        }
        if let Some((start, end)) = scratch.words.as_ref().and_then(|w| w.get(word)) {
            ids.extend_from_slice(
                scratch
                    .cached
                    .get(*start as usize..*end as usize)
                    .unwrap_or_default(),
            );
            return;
        }
        let first = ids.len();
        self.pieces(word, &mut scratch.piece, ids);
        if let (Some(words), Some(new)) = (&mut scratch.words, ids.get(first..)) {
            let start = scratch.cached.len();
            scratch.cached.extend_from_slice(new);
            let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
            words.insert(word.into(), (index(start), index(scratch.cached.len())));
        }
    }

    /// The greedy longest-match-first loop of [`word`](Self::word).
    fn pieces(&self, word: &str, piece: &mut String, ids: &mut Vec<u32>) {
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                let Some(part) = word.get(start..end) else {
                    break;
                };
                let candidate = if start > 0 {
                    piece.clear();
                    piece.push_str("##");
                    piece.push_str(part);
                    piece.as_str()
                } else {
                    part
                };
                if let Some(&id) = self.vocab.get(candidate) {
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
#[cfg(test)]
pub(crate) fn normalise(text: &str) -> String {
    let mut out = String::new();
    normalise_into(text, &mut out, &mut String::new());
    out
}

/// [`normalise`] into `out` (cleared first), `pending` a scratch buffer.
///
/// ASCII characters are cleaned and lowercased one at a time. Runs of other characters
/// go through NFD, the nonspacing marks filter and lowercasing together: NFD reorders
/// only runs of combining characters, and an ASCII character is never one (it is a
/// starter and decomposes to itself), so the text taken run by run is the text taken
/// whole.
pub(crate) fn normalise_into(text: &str, out: &mut String, pending: &mut String) {
    out.clear();
    pending.clear();
    let flush = |out: &mut String, pending: &mut String| {
        if !pending.is_empty() {
            out.extend(
                pending
                    .nfd()
                    .filter(|c| !c.is_mark_nonspacing())
                    .flat_map(char::to_lowercase),
            );
            pending.clear();
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            if c == '\0' || is_control(c) {
                continue;
            }
            flush(out, pending);
            out.push(if is_whitespace(c) {
                ' '
            } else {
                c.to_ascii_lowercase()
            });
            continue;
        }
        if c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            flush(out, pending);
            out.push(' ');
        } else if is_chinese(c) {
            flush(out, pending);
            out.push(' ');
            pending.push(c);
            flush(out, pending);
            out.push(' ');
        } else {
            pending.push(c);
        }
    }
    flush(out, pending);
}

/// BERT's pre-tokeniser: split on whitespace (dropped) and around punctuation (kept, one
/// character per word).
pub(crate) fn pre_tokenise(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches(char::is_whitespace);
        let mut chars = rest.char_indices();
        let (_, c) = chars.next()?;
        let end = if is_punctuation(c) {
            c.len_utf8()
        } else {
            chars
                .find(|&(_, c)| c.is_whitespace() || is_punctuation(c))
                .map_or(rest.len(), |(at, _)| at)
        };
        let (word, after) = rest.split_at(end);
        rest = after;
        Some(word)
    })
}

/// What [`normalise`] and [`pre_tokenise`] make of each ASCII byte (see `ascii_words`).
const LETTER: u8 = 0;
const DROP: u8 = 1;
const SPACE: u8 = 2;
const PUNCTUATION: u8 = 3;
#[allow(clippy::indexing_slicing, reason = "`b` runs below the array's length")]
const ASCII_CLASS: [u8; 128] = {
    let mut class = [LETTER; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        class[b] = if matches!(c, b'\t' | b'\n' | b'\r' | b' ') {
            SPACE
        } else if c.is_ascii_control() {
            DROP
        } else if c.is_ascii_punctuation() {
            PUNCTUATION
        } else {
            LETTER
        };
        b += 1;
    }
    class
};

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

    use super::{Scratch, WordPiece, is_control, is_punctuation, normalise, pre_tokenise};

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

    /// The tokenizer as first written: one pass per step, each into a new string.
    mod reference {
        use unicode_categories::UnicodeCategories;
        use unicode_normalization::UnicodeNormalization;

        use super::super::{MAX_WORD_CHARS, WordPiece, is_chinese, is_control, is_punctuation};

        fn normalise(text: &str) -> String {
            let mut cleaned = String::with_capacity(text.len());
            for c in text.chars() {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if matches!(c, '\t' | '\n' | '\r') || c.is_whitespace() {
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

        fn pre_tokenise(text: &str) -> Vec<String> {
            let mut words = Vec::new();
            for chunk in text.split(char::is_whitespace) {
                let mut start = 0;
                for (at, c) in chunk.char_indices() {
                    if is_punctuation(c) {
                        if start < at {
                            words.push(chunk[start..at].to_owned());
                        }
                        words.push(c.to_string());
                        start = at + c.len_utf8();
                    }
                }
                if start < chunk.len() {
                    words.push(chunk[start..].to_owned());
                }
            }
            words
        }

        fn word(v: &WordPiece, word: &str, ids: &mut Vec<u32>) {
            if word.chars().count() > MAX_WORD_CHARS {
                ids.push(v.unknown);
                return;
            }
            let first = ids.len();
            let mut start = 0;
            while start < word.len() {
                let mut end = word.len();
                let mut found = None;
                while start < end {
                    let part = &word[start..end];
                    let piece = if start > 0 {
                        format!("##{part}")
                    } else {
                        part.to_owned()
                    };
                    if let Some(&id) = v.vocab.get(piece.as_str()) {
                        found = Some(id);
                        break;
                    }
                    end -= part.chars().next_back().map_or(1, char::len_utf8);
                }
                let Some(id) = found else {
                    ids.truncate(first);
                    ids.push(v.unknown);
                    return;
                };
                ids.push(id);
                start = end;
            }
        }

        pub(super) fn encode(v: &WordPiece, text: &str) -> Vec<u32> {
            let mut ids = Vec::new();
            let mut rest = text;
            loop {
                let next = v
                    .specials
                    .iter()
                    .filter_map(|&(token, id)| rest.find(token).map(|at| (at, token, id)))
                    .min_by(|a, b| a.0.cmp(&b.0).then(b.1.len().cmp(&a.1.len())));
                let plain = next.map_or(rest, |(at, _, _)| &rest[..at]);
                for w in pre_tokenise(&normalise(plain)) {
                    word(v, &w, &mut ids);
                }
                let Some((at, token, id)) = next else {
                    return ids;
                };
                ids.push(id);
                rest = &rest[at + token.len()..];
            }
        }

        pub(super) fn normalised(text: &str) -> String {
            normalise(text)
        }

        pub(super) fn words(text: &str) -> Vec<String> {
            pre_tokenise(text)
        }
    }

    /// Texts of characters the tokenizer treats each in its own way: ASCII letters, digits,
    /// punctuation and controls, accents and combining marks (in and out of canonical
    /// order), CJK (and a compatibility ideograph, which NFD maps), non-ASCII spaces and
    /// punctuation, the replacement character, case mappings that grow, and the pieces of
    /// special tokens.
    fn texts() -> impl proptest::strategy::Strategy<Value = String> {
        let pieces = proptest::sample::select(vec![
            "a",
            "B",
            "z",
            "Q",
            "7",
            "_",
            ",",
            "!",
            "-",
            "[",
            "]",
            "[PAD]",
            "[UNK]",
            "[pad]",
            "PAD",
            "un",
            "aff",
            "able",
            "search",
            "es",
            "file",
            "cafe",
            "Café",
            " ",
            "  ",
            "\t",
            "\n",
            "\r",
            "\u{0}",
            "\u{1}",
            "\u{7f}",
            "\u{b}",
            "é",
            "e\u{301}",
            "\u{301}",
            "\u{323}\u{301}",
            "\u{301}\u{323}",
            "ñ",
            "İ",
            "ß",
            "ﬁ",
            "Σ",
            "中",
            "\u{f900}",
            "\u{3000}",
            "\u{a0}",
            "\u{200b}",
            "—",
            "×",
            "→",
            "«",
            "\u{fffd}",
            "\u{e000}",
            "😀",
            "Å",
            "\u{212b}",
        ]);
        proptest::collection::vec(pieces, 0..24).prop_map(|parts| parts.concat())
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// The one-pass normaliser, pre-tokeniser and cached words give the ids the
        /// step-by-step tokenizer gives, on the test vocabulary and the bundled one.
        #[test]
        fn the_fast_tokenizer_is_the_reference_one(batch in proptest::collection::vec(texts(), 1..6)) {
            let small = vocab();
            #[cfg(feature = "bundled-model")]
            let bundled = crate::search::dense::BundledStatic::shared().expect("reads");
            #[allow(unused_mut, reason = "without the bundled model, one vocabulary")]
            let mut models = vec![&small];
            #[cfg(feature = "bundled-model")]
            models.push(&bundled.tokenizer);
            for v in models {
                let mut scratch = Scratch::caching();
                for text in &batch {
                    let expected = reference::encode(v, text);
                    proptest::prop_assert_eq!(&v.encode(text), &expected, "{:?}", text);
                    let mut ids = vec![7];
                    v.encode_into(text, &mut scratch, &mut ids);
                    proptest::prop_assert_eq!(ids.get(1..), Some(expected.as_slice()), "{:?}", text);
                }
            }
            for text in &batch {
                let normal = normalise(text);
                proptest::prop_assert_eq!(&normal, &reference::normalised(text));
                let words: Vec<&str> = pre_tokenise(&normal).collect();
                proptest::prop_assert_eq!(words, reference::words(&normal));
            }
        }
    }
}
