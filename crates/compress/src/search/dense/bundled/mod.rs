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

use std::{borrow::Cow, fmt, sync::Arc};

use super::{EmbedError, Embedder, ModelKind};

use self::wordpiece::WordPiece;

/// Tokens per text beyond which the rest is cut (as chef-dense's static model).
const MAX_TOKENS: usize = 512;

const MAGIC: &[u8; 8] = b"CHEFSTM1";
const HEADER: usize = 8 + 16 + 5 * 4;

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
        let id = std::str::from_utf8(bytes.get(8..24).ok_or_else(|| bad("no id"))?)
            .map_err(|_| bad("the id is not text"))?;
        let id = format!("static-bundled:{id}");
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
        })
    }

    /// The vector of one text.
    fn vector(&self, text: &str) -> Vec<f32> {
        let text = text
            .char_indices()
            .nth(self.max_chars)
            .map_or(text, |(at, _)| text.get(..at).unwrap_or(text));
        let mut sum = vec![0.0_f32; self.dims];
        let mut count = 0_usize;
        let unknown = self.tokenizer.unknown();
        for id in self
            .tokenizer
            .encode(text)
            .into_iter()
            .filter(|&id| id != unknown)
            .take(MAX_TOKENS)
        {
            let row = id as usize;
            let (Some(&scale), Some(values)) = (
                self.scales.get(row),
                self.table
                    .get(self.table_at + row * self.dims..self.table_at + (row + 1) * self.dims),
            ) else {
                continue;
            };
            for (acc, &q) in sum.iter_mut().zip(values) {
                *acc += f32::from(i8::from_le_bytes([q])) * scale;
            }
            count += 1;
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "a count of at most MAX_TOKENS tokens"
        )]
        let count = count.max(1) as f32;
        sum.iter_mut().for_each(|x| *x /= count);
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        sum.iter_mut().for_each(|x| *x /= norm);
        sum
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

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|text| self.vector(text)).collect())
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
