//! A static (model2vec-format) model from a local directory holding `config.json`,
//! `model.safetensors` and `tokenizer.json`: a text's vector is the mean of its tokens'
//! rows, normalised to unit length unless `config.json` says `"normalize": false`.
//!
//! The format is model2vec's: an `embeddings` matrix (f32 or f16, one row per token; also
//! found under `0` or `embedding.weight`), and optionally per-token `weights` and a token →
//! row `mapping`. A text is cut to [`MAX_TOKENS`] times the vocabulary's median token
//! length in characters, tokenized without special tokens, the unknown token left out, the
//! first [`MAX_TOKENS`] tokens kept. `chef embed distill` writes this format.

use std::{
    collections::HashMap,
    fmt,
    path::{Path, PathBuf},
};

use candle_core::{DType, Device, Tensor};
use chef_compress::search::dense::{EmbedError, Embedder, ModelKind};
use tokenizers::Tokenizer;

use crate::{
    error::Result,
    minilm::{ModelFiles, bad, fingerprint},
};

/// Tokens per text beyond which the rest is cut.
pub(crate) const MAX_TOKENS: usize = 512;

/// A static embedding model.
pub struct StaticEmbedder {
    tokenizer: Tokenizer,
    /// Row-major, `dims` columns.
    table: Vec<f32>,
    dims: usize,
    /// Per-token scale (`weights`), by token id.
    weights: Option<Vec<f32>>,
    /// Token id → row (`mapping`).
    mapping: Option<Vec<usize>>,
    unknown: Option<u32>,
    /// Characters kept of a text: `MAX_TOKENS` × the median token length.
    max_chars: usize,
    normalize: bool,
    id: String,
    dir: PathBuf,
}

impl fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    /// Loads the model from `dir`. Nothing is downloaded.
    pub fn load(dir: &Path) -> Result<Self> {
        let files = ModelFiles::read(dir)?;
        let id = format!(
            "static:{}",
            fingerprint(&[
                &files.config.bytes,
                &files.weights.bytes,
                &files.tokenizer.bytes
            ])
        );

        let config: serde_json::Value =
            serde_json::from_slice(&files.config.bytes).map_err(|e| bad(&files.config.path, e))?;
        let normalize = config
            .get("normalize")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true);

        let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer.bytes)
            .map_err(|e| bad(&files.tokenizer.path, e))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| bad(&files.tokenizer.path, e))?;
        let unknown =
            unknown_token(&files.tokenizer.bytes).and_then(|token| tokenizer.token_to_id(&token));
        let mut lengths: Vec<usize> = tokenizer.get_vocab(false).keys().map(String::len).collect();
        lengths.sort_unstable();
        let median = lengths.get(lengths.len() / 2).copied().unwrap_or(1);

        let tensors = candle_core::safetensors::load_buffer(&files.weights.bytes, &Device::Cpu)
            .map_err(|e| bad(&files.weights.path, e))?;
        let (table, dims) = embeddings(&tensors).map_err(|e| bad(&files.weights.path, e))?;
        let rows = table.len() / dims.max(1);
        let token_weights = tensor_values::<f32>(&tensors, "weights", DType::F32)
            .map_err(|e| bad(&files.weights.path, e))?;
        let mapping = tensor_values::<i64>(&tensors, "mapping", DType::I64)
            .map_err(|e| bad(&files.weights.path, e))?
            .map(|m| {
                m.into_iter()
                    .map(|row| usize::try_from(row).ok().filter(|&r| r < rows))
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| bad(&files.weights.path, "mapping names a row the table lacks"))
            })
            .transpose()?;
        if mapping.is_none() && tokenizer.get_vocab_size(true) > rows {
            return Err(bad(
                &files.weights.path,
                format!(
                    "{rows} embedding rows for a vocabulary of {} tokens",
                    tokenizer.get_vocab_size(true)
                ),
            ));
        }
        Ok(Self {
            tokenizer,
            table,
            dims,
            weights: token_weights,
            mapping,
            unknown,
            max_chars: MAX_TOKENS.saturating_mul(median),
            normalize,
            id,
            dir: dir.to_owned(),
        })
    }

    /// The vector of one text.
    fn vector(&self, text: &str) -> std::result::Result<Vec<f32>, EmbedError> {
        let text = text
            .char_indices()
            .nth(self.max_chars)
            .map_or(text, |(at, _)| text.get(..at).unwrap_or(text));
        let encoding = self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| EmbedError::new(format!("tokenizer: {e}")))?;
        let mut sum = vec![0.0_f32; self.dims];
        let mut count = 0_usize;
        let tokens = encoding
            .get_ids()
            .iter()
            .filter(|&&id| Some(id) != self.unknown)
            .take(MAX_TOKENS);
        for &id in tokens {
            let token = id as usize;
            let row = self
                .mapping
                .as_ref()
                .map_or(Some(token), |m| m.get(token).copied());
            let start = row.and_then(|r| r.checked_mul(self.dims));
            let Some(values) = start.and_then(|s| self.table.get(s..s + self.dims)) else {
                continue;
            };
            let scale = self
                .weights
                .as_ref()
                .and_then(|w| w.get(token))
                .copied()
                .unwrap_or(1.0);
            for (acc, x) in sum.iter_mut().zip(values) {
                *acc += x * scale;
            }
            count += 1;
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "a count of at most MAX_TOKENS tokens"
        )]
        let count = count.max(1) as f32;
        sum.iter_mut().for_each(|x| *x /= count);
        if self.normalize {
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(sum)
    }
}

/// The embedding matrix, as f32 rows, and its width.
fn embeddings(tensors: &HashMap<String, Tensor>) -> candle_core::Result<(Vec<f32>, usize)> {
    let Some(matrix) = ["embeddings", "0", "embedding.weight"]
        .iter()
        .find_map(|name| tensors.get(*name))
    else {
        candle_core::bail!("no embeddings tensor (embeddings, 0 or embedding.weight)");
    };
    let (_, dims) = matrix.dims2()?;
    if !matches!(matrix.dtype(), DType::F32 | DType::F16 | DType::BF16) {
        candle_core::bail!("embeddings are {:?}; f32 or f16 expected", matrix.dtype());
    }
    Ok((matrix.to_dtype(DType::F32)?.flatten_all()?.to_vec1()?, dims))
}

/// The tensor `name` flattened to values of `T` (converted to `dtype`); `None` when the file
/// has no such tensor.
fn tensor_values<T: candle_core::WithDType>(
    tensors: &HashMap<String, Tensor>,
    name: &str,
    dtype: DType,
) -> candle_core::Result<Option<Vec<T>>> {
    tensors
        .get(name)
        .map(|t| t.to_dtype(dtype)?.flatten_all()?.to_vec1::<T>())
        .transpose()
}

/// The unknown token of a `tokenizer.json`'s model (`model.unk_token`, or a Unigram
/// model's `unk_id` into its vocabulary).
fn unknown_token(tokenizer_json: &[u8]) -> Option<String> {
    let json: serde_json::Value = serde_json::from_slice(tokenizer_json).ok()?;
    let model = json.get("model")?;
    if let Some(token) = model.get("unk_token").and_then(serde_json::Value::as_str) {
        return Some(token.to_owned());
    }
    let id = usize::try_from(model.get("unk_id")?.as_u64()?).ok()?;
    model
        .get("vocab")?
        .get(id)?
        .get(0)?
        .as_str()
        .map(str::to_owned)
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        ModelKind::Static
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|text| self.vector(text)).collect()
    }
}
