//! The static embedding model that ships with chef, so that ranking is hybrid (BM25F +
//! cosine) without fetching a model or building the heavy `dense` feature.
//!
//! The model is the one `chef embed distill` makes from all-MiniLM-L6-v2 (Apache-2.0; its
//! licence and a notice naming the source are in `crates/compress/models/`): a 256-wide
//! vector per token of BERT's uncased vocabulary (30,522 tokens), weighted by estimated
//! frequency. Here each row is stored as 8-bit integers with one scale per row (7.9 MB
//! instead of 31 MB of `f32`), and the tokenizer is [`wordpiece`], written here, so
//! neither `candle` nor `tokenizers` is needed. A text's vector is the mean of its tokens'
//! rows, the unknown token left out, normalised to unit length: what chef-dense's
//! `StaticEmbedder` computes from the `f32` model, which chef-dense's tests compare it with.
//!
//! # The file
//!
//! `models/minilm-static-256.chefstm`, written by
//! `cargo run --release -p chef-devtools --bin bundle_static -- "$CHEF_STATIC_DIR" OUT`:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | `CHEFSTM1` |
//! | 16 | the model id: the first 16 hex digits of the SHA-256 of everything after it |
//! | 5 × 4 | dims, rows, the unknown token's id, characters kept of a text, vocabulary bytes (little-endian `u32`) |
//! | vocabulary bytes | the tokens in id order, one per line |
//! | rows × 4 | each row's scale (`f32`, little-endian) |
//! | rows × dims | the rows, `i8`; a value is `i8 × scale` |

pub(crate) mod wordpiece;

use std::{
    borrow::Cow,
    fmt,
    sync::{Arc, Mutex, PoisonError},
};

use super::{EmbedError, Embedder, ModelKind};

use self::wordpiece::{Scratch, WordPiece};

/// Tokens per text beyond which the rest is cut (as chef-dense's static model).
const MAX_TOKENS: usize = 512;

/// Dimensions of a vector summed together over a text's tokens (see `vector`).
const BLOCK: usize = 32;

const MAGIC: &[u8; 8] = b"CHEFSTM1";
const HEADER: usize = 8 + 16 + 5 * 4;
/// Where the file's id (16 hex digits) lies, and what a model's id puts before it.
const ID_BYTES: std::ops::Range<usize> = 8..24;
const ID_PREFIX: &str = "static-bundled:";

#[cfg(feature = "bundled-model")]
static BYTES: &[u8] = include_bytes!("../../../../models/minilm-static-256.chefstm");

/// The bundled static model (see the module docs).
///
/// ```
/// use chef_compress::search::dense::{BundledStatic, DenseConfig, Embedder, HybridIndex};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let model = BundledStatic::shared()?;
/// let v = model.embed(&["book me a ride"])?;
/// assert_eq!(v[0].len(), 256);
///
/// let tools = [
///     ToolDefinition::new("uber_request", json!({"type": "object"}))
///         .with_description("Request a car to a destination."),
///     ToolDefinition::new("weather_now", json!({"type": "object"}))
///         .with_description("Current weather for a city."),
/// ];
/// let index = DenseConfig::bundled()?.build(&tools)?;
/// assert_eq!(index.search("get me a taxi to the airport", 1)?.hits[0].tool.as_str(), "uber_request");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BundledStatic {
    tokenizer: WordPiece,
    /// `rows × dims` `i8` values, as bytes.
    table: Cow<'static, [u8]>,
    table_at: usize,
    scales: Vec<f32>,
    dims: usize,
    rows: usize,
    max_chars: usize,
    id: String,
    /// The rows made `f32` by calls with many texts, kept for the next such call (taken
    /// out while one runs).
    rows_f32: Mutex<Option<RowsF32>>,
}

impl fmt::Debug for BundledStatic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BundledStatic")
            .field("id", &self.id)
            .field("dims", &self.dims)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl BundledStatic {
    /// The model compiled into this build, read once per process and shared.
    ///
    /// # Errors
    ///
    /// The crate was built without its `bundled-model` feature, or the bundled file does
    /// not read (a broken build).
    pub fn shared() -> Result<Arc<Self>, EmbedError> {
        #[cfg(feature = "bundled-model")]
        {
            static MODEL: std::sync::OnceLock<Result<Arc<BundledStatic>, String>> =
                std::sync::OnceLock::new();
            MODEL
                .get_or_init(|| {
                    Self::from_bytes(Cow::Borrowed(BYTES))
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .clone()
                .map_err(EmbedError::new)
        }
        #[cfg(not(feature = "bundled-model"))]
        {
            Err(EmbedError::new(
                "chef-compress was built without its `bundled-model` feature",
            ))
        }
    }

    /// Whether `model_id` is the id of the model compiled into this build
    /// ([`Embedder::model_id`] of [`shared`](Self::shared)); false without the
    /// `bundled-model` feature. Reads the id from the compiled bytes, not the model.
    pub fn is_bundled_id(model_id: &str) -> bool {
        #[cfg(feature = "bundled-model")]
        {
            model_id
                .strip_prefix(ID_PREFIX)
                .is_some_and(|hex| BYTES.get(ID_BYTES) == Some(hex.as_bytes()))
        }
        #[cfg(not(feature = "bundled-model"))]
        {
            let _ = model_id;
            false
        }
    }

    /// Reads a model in the bundled format (see the module docs).
    ///
    /// # Errors
    ///
    /// Not that format, or cut short.
    pub fn from_bytes(bytes: Cow<'static, [u8]>) -> Result<Self, EmbedError> {
        let bad = |what: &str| EmbedError::new(format!("bundled static model: {what}"));
        if bytes.get(..8) != Some(MAGIC.as_slice()) {
            return Err(bad("not a CHEFSTM1 file"));
        }
        let id = std::str::from_utf8(bytes.get(ID_BYTES).ok_or_else(|| bad("no id"))?)
            .map_err(|_| bad("the id is not text"))?;
        let id = format!("{ID_PREFIX}{id}");
        let word = |i: usize| -> Result<usize, EmbedError> {
            let at = 24 + 4 * i;
            let b: [u8; 4] = bytes
                .get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| bad("header cut short"))?;
            usize::try_from(u32::from_le_bytes(b)).map_err(|_| bad("header field too large"))
        };
        let (dims, rows, unknown, max_chars, vocab_len) =
            (word(0)?, word(1)?, word(2)?, word(3)?, word(4)?);
        let vocab_end = HEADER
            .checked_add(vocab_len)
            .ok_or_else(|| bad("sizes overflow"))?;
        let scales_end = rows
            .checked_mul(4)
            .and_then(|n| n.checked_add(vocab_end))
            .ok_or_else(|| bad("sizes overflow"))?;
        let table_end = rows
            .checked_mul(dims)
            .and_then(|n| n.checked_add(scales_end))
            .ok_or_else(|| bad("sizes overflow"))?;
        if bytes.len() != table_end || dims == 0 {
            return Err(bad(&format!(
                "{} bytes where the header makes {table_end}",
                bytes.len()
            )));
        }
        let vocab = std::str::from_utf8(bytes.get(HEADER..vocab_end).unwrap_or_default())
            .map_err(|_| bad("the vocabulary is not UTF-8"))?;
        let tokens: Vec<&str> = vocab.split('\n').collect();
        if tokens.len() != rows || unknown >= rows {
            return Err(bad("the vocabulary does not match the rows"));
        }
        let unknown = u32::try_from(unknown).map_err(|_| bad("unknown id too large"))?;
        let tokenizer = WordPiece::new(tokens, unknown);
        let scales = bytes
            .get(vocab_end..scales_end)
            .unwrap_or_default()
            .chunks_exact(4)
            .filter_map(|b| <[u8; 4]>::try_from(b).ok().map(f32::from_le_bytes))
            .collect();
        Ok(Self {
            tokenizer,
            table: bytes,
            table_at: scales_end,
            scales,
            dims,
            rows,
            max_chars,
            id,
            rows_f32: Mutex::new(None),
        })
    }

    /// The vector of one text, with `buffers` reused from the text before.
    fn vector(&self, text: &str, buffers: &mut Buffers) -> Vec<f32> {
        buffers.rows.clear();
        self.push_rows(text, buffers);
        let mut sum = vec![0.0_f32; self.dims];
        for at in (0..self.dims).step_by(BLOCK) {
            let block = sum.get_mut(at..).unwrap_or_default();
            match &buffers.rows_f32 {
                Some(made) => add_f32_rows(block, &made.values, &buffers.rows, at),
                None => add_i8_rows(block, &self.table, &buffers.rows, at),
            }
        }
        mean_to_unit(&mut sum, buffers.rows.len());
        sum
    }

    /// Appends to `buffers.rows` where the row of each counted token of `text` starts (in
    /// the table, with its scale, or among the rows made `f32`).
    fn push_rows(&self, text: &str, buffers: &mut Buffers) {
        // At most as many characters as bytes: only a long text needs counting.
        let text = if text.len() <= self.max_chars {
            text
        } else {
            text.char_indices()
                .nth(self.max_chars)
                .map_or(text, |(at, _)| text.get(..at).unwrap_or(text))
        };
        let Buffers {
            scratch,
            ids,
            rows,
            rows_f32,
            ..
        } = buffers;
        ids.clear();
        self.tokenizer.encode_into(text, scratch, ids);
        let unknown = self.tokenizer.unknown();
        for &id in ids.iter().filter(|&&id| id != unknown).take(MAX_TOKENS) {
            let row = id as usize;
            let start = self.table_at + row * self.dims;
            let (Some(&scale), Some(values)) = (
                self.scales.get(row),
                self.table.get(start..start + self.dims),
            ) else {
                continue;
            };
            rows.push(match rows_f32 {
                Some(made) => (made.start(row, self.rows, values, scale), 1.0),
                None => (start, scale),
            });
        }
    }

    /// The token ids of `text` (the unknown token included), for comparing the tokenizer
    /// with others.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }

    /// Width of a vector.
    pub fn dims(&self) -> usize {
        self.dims
    }
}

impl Embedder for BundledStatic {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        ModelKind::Static
    }

    fn embeds_texts_alone(&self) -> bool {
        true
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut buffers = Buffers::for_texts(texts.len());
        let kept = || self.rows_f32.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(made) = &mut buffers.rows_f32 {
            // The rows an earlier call made (another thread may hold them: then this
            // call makes its own).
            *made = kept().take().unwrap_or_default();
        }
        let vectors = texts
            .iter()
            .map(|text| self.vector(text, &mut buffers))
            .collect();
        if let Some(made) = buffers.rows_f32.take() {
            *kept() = Some(made);
        }
        Ok(vectors)
    }
}

impl super::DenseConfig {
    /// The bundled static model ([`BundledStatic::shared`]) with the static defaults.
    ///
    /// # Errors
    ///
    /// As [`BundledStatic::shared`].
    pub fn bundled() -> Result<Self, EmbedError> {
        Ok(Self::new(BundledStatic::shared()?))
    }
}

/// What embedding a text needs besides the model, kept from one text to the next.
#[derive(Debug, Default)]
struct Buffers {
    scratch: Scratch,
    /// The text's token ids.
    ids: Vec<u32>,
    /// Where each counted token's row starts (in the table, or in `rows_f32`), and its
    /// scale (1 for a row made `f32`: its scale is in it).
    rows: Vec<(usize, f32)>,
    /// The rows met so far as `f32` (over many texts).
    rows_f32: Option<RowsF32>,
}

impl Buffers {
    /// The buffers for embedding `texts` texts: over many, the word pieces and the rows
    /// met are kept (a catalogue's words repeat).
    fn for_texts(texts: usize) -> Self {
        Self {
            scratch: if texts > 1 {
                Scratch::caching()
            } else {
                Scratch::default()
            },
            rows_f32: (texts >= ROWS_F32_TEXTS).then(RowsF32::default),
            ..Self::default()
        }
    }
}

/// From this many texts in one call, each row is made `f32` once, when first met, and
/// summed from there: two instructions per four values instead of seven. Below, the
/// rows it would make cost more than they save. The rows made are kept with the model
/// for the next such call (at most the whole table, 31 MB; a catalogue uses a third).
const ROWS_F32_TEXTS: usize = 256;

/// Rows of the table as `f32` (`i8 × scale`, the very products the sums would add), made
/// when first needed.
#[derive(Debug, Default)]
struct RowsF32 {
    /// Per row of the table, where it starts in `values`, or `usize::MAX` until made.
    start: Vec<usize>,
    values: Vec<f32>,
}

impl RowsF32 {
    /// Where row `row` (of `rows`; its `values` and `scale` in the table) starts in
    /// `values`, made now if it was not.
    fn start(&mut self, row: usize, rows: usize, values: &[u8], scale: f32) -> usize {
        if self.start.is_empty() {
            self.start = vec![usize::MAX; rows];
            // Room for every row, so that making one never moves the others; only the
            // pages written are ever touched.
            self.values.reserve_exact(rows * values.len());
        }
        match self.start.get_mut(row) {
            Some(start) if *start != usize::MAX => *start,
            slot => {
                let start = self.values.len();
                self.values.extend(
                    values
                        .iter()
                        .map(|&q| f32::from(i8::from_le_bytes([q])) * scale),
                );
                if let Some(slot) = slot {
                    *slot = start;
                }
                start
            }
        }
    }
}

/// Adds `rows` (each where it starts in `table`, and its scale) at dimensions `at..` into
/// `out`, a block of [`BLOCK`] dimensions (fewer at the end) whose running sums stay in
/// registers over all the rows: each dimension still adds its rows' values in order, so
/// the sums are the ones row after row would give, bit for bit.
fn add_i8_rows(out: &mut [f32], table: &[u8], rows: &[(usize, f32)], at: usize) {
    add_rows(out, table, rows, at, |q, scale| {
        f32::from(i8::from_le_bytes([*q])) * scale
    });
}

/// [`add_i8_rows`] over rows already made `f32` (each where it starts in `values`).
fn add_f32_rows(out: &mut [f32], values: &[f32], rows: &[(usize, f32)], at: usize) {
    add_rows(out, values, rows, at, |x, _| *x);
}

/// The loop of [`add_i8_rows`] and [`add_f32_rows`]: `value` turns one stored element and
/// its row's scale into the `f32` added (monomorphised per caller, so each keeps its own
/// tight loop).
#[inline]
fn add_rows<T>(
    out: &mut [f32],
    table: &[T],
    rows: &[(usize, f32)],
    at: usize,
    value: impl Fn(&T, f32) -> f32,
) {
    if let Some(out) = out.first_chunk_mut::<BLOCK>() {
        let mut acc = *out;
        for &(start, scale) in rows {
            let Some(row) = table
                .get(start + at..)
                .and_then(<[T]>::first_chunk::<BLOCK>)
            else {
                continue;
            };
            for (acc, x) in acc.iter_mut().zip(row) {
                *acc += value(x, scale);
            }
        }
        *out = acc;
        return;
    }
    for &(start, scale) in rows {
        let row = table
            .get(start + at..start + at + out.len())
            .unwrap_or_default();
        for (acc, x) in out.iter_mut().zip(row) {
            *acc += value(x, scale);
        }
    }
}

/// Divides a sum of `count` rows by the count (at least 1), then scales it to unit length.
fn mean_to_unit(sum: &mut [f32], count: usize) {
    #[allow(
        clippy::cast_precision_loss,
        reason = "a count of at most MAX_TOKENS tokens"
    )]
    let count = count.max(1) as f32;
    sum.iter_mut().for_each(|x| *x /= count);
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    sum.iter_mut().for_each(|x| *x /= norm);
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::BundledStatic;
    use crate::search::dense::Embedder;

    /// A two-token, two-wide model in the file format.
    fn tiny() -> Vec<u8> {
        let vocab = b"[UNK]\nride";
        let mut bytes = b"CHEFSTM1".to_vec();
        bytes.extend_from_slice(b"0123456789abcdef");
        for n in [2_u32, 2, 0, 1000, 10] {
            bytes.extend_from_slice(&n.to_le_bytes());
        }
        bytes.extend_from_slice(vocab);
        for s in [0.5_f32, 0.01] {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        bytes.extend_from_slice(&[1, 1, 100_u8, 0]);
        bytes
    }

    #[test]
    fn reads_its_format_and_means_the_rows() {
        let model = BundledStatic::from_bytes(Cow::Owned(tiny())).expect("reads");
        assert_eq!(model.model_id(), "static-bundled:0123456789abcdef");
        let v = model
            .embed(&["Ride", "ride ride nope", "nope"])
            .expect("embeds");
        assert_eq!(v[0], [1.0, 0.0]);
        assert_eq!(v[1], [1.0, 0.0]);
        assert_eq!(v[2], [0.0, 0.0]);
    }

    #[test]
    fn refuses_what_is_not_its_format() {
        let mut cut = tiny();
        cut.pop();
        for bytes in [Vec::new(), b"CHEFSTM2".to_vec(), cut] {
            assert!(BundledStatic::from_bytes(Cow::Owned(bytes)).is_err());
        }
    }

    /// The vector as first written: token after token, each over every dimension.
    fn reference_vector(model: &BundledStatic, text: &str) -> Vec<f32> {
        let text = text
            .char_indices()
            .nth(model.max_chars)
            .map_or(text, |(at, _)| &text[..at]);
        let mut sum = vec![0.0_f32; model.dims];
        let mut count = 0_usize;
        let unknown = model.tokenizer.unknown();
        for id in model
            .tokenizer
            .encode(text)
            .into_iter()
            .filter(|&id| id != unknown)
            .take(super::MAX_TOKENS)
        {
            let row = id as usize;
            let at = model.table_at + row * model.dims;
            let (scale, values) = (model.scales[row], &model.table[at..at + model.dims]);
            for (acc, &q) in sum.iter_mut().zip(values) {
                *acc += f32::from(i8::from_le_bytes([q])) * scale;
            }
            count += 1;
        }
        let count = count.max(1) as f32;
        sum.iter_mut().for_each(|x| *x /= count);
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        sum.iter_mut().for_each(|x| *x /= norm);
        sum
    }

    /// Summing a block of dimensions at a time, over one text or many (the word pieces
    /// remembered), gives the token-by-token vectors bit for bit: every tool text of the
    /// real corpus, and texts that are empty, all unknown, past the character limit or
    /// past the token limit.
    #[cfg(feature = "bundled-model")]
    #[test]
    fn vectors_are_the_token_by_token_sums_bit_for_bit() {
        let model = BundledStatic::shared().expect("the bundled model reads");
        let corpus = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real-mcp-tools.json"
        ))
        .expect("the corpus reads");
        let mut texts: Vec<String> = chef_ir::load_tools_from_str(&corpus)
            .expect("the corpus loads")
            .tools
            .iter()
            .map(crate::search::dense::tool_text)
            .collect();
        texts.extend([
            String::new(),
            "\u{e000}\u{e001} 😀".to_owned(),
            "Café — naïve façade × 中文 [SEP] [PAD]x".to_owned(),
            "word ".repeat(2_000),
            "tokens, ".repeat(600),
        ]);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let expected: Vec<Vec<u32>> = texts
            .iter()
            .map(|text| bits(&reference_vector(&model, text)))
            .collect();
        // One text at a time; many, the word pieces remembered; many, the rows made `f32`.
        for n in [1, 2, super::ROWS_F32_TEXTS] {
            let mut buffers = super::Buffers::for_texts(n);
            for (text, expected) in texts.iter().zip(&expected) {
                let vector = model.vector(text, &mut buffers);
                assert_eq!(&bits(&vector), expected, "{n}: {text:?}");
            }
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch = model.embed(&refs).expect("embeds");
        assert_eq!(batch.iter().map(|v| bits(v)).collect::<Vec<_>>(), expected);
        // Many texts in one call: the rows made `f32` and kept with the model.
        let many: Vec<&str> = refs
            .iter()
            .cycle()
            .take(super::ROWS_F32_TEXTS + 100)
            .copied()
            .collect();
        // Twice: the second call takes the rows the first made.
        for _ in 0..2 {
            let batch = model.embed(&many).expect("embeds");
            for (vector, expected) in batch.iter().zip(expected.iter().cycle()) {
                assert_eq!(&bits(vector), expected);
            }
            assert_eq!(batch.len(), many.len());
        }
    }

    #[cfg(feature = "bundled-model")]
    #[test]
    fn the_bundled_model_reads() {
        let model = BundledStatic::shared().expect("the bundled model reads");
        assert_eq!(model.dims(), 256);
        assert_eq!(
            model.token_ids("Search GitHub issues"),
            model.token_ids("search github issues")
        );
    }
}
