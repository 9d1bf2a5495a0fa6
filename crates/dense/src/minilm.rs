//! all-MiniLM-L6-v2 (or any BERT sentence-transformer with mean pooling) through candle,
//! from a local directory holding `config.json`, `model.safetensors` and `tokenizer.json`.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use chef_compress::search::dense::{EmbedError, Embedder, ModelKind};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::{
    bert::{Bert, Config},
    cache::hex,
    error::{Error, Result},
};

/// Tokens per text beyond which the rest is cut (sentence-transformers' `max_seq_length`
/// for all-MiniLM-L6-v2).
pub(crate) const MAX_TOKENS: usize = 256;

/// Texts per forward pass.
const BATCH: usize = 16;

/// A BERT sentence-embedding model run on the CPU: mean of the last hidden states over
/// the real (unpadded) tokens.
pub struct MiniLm {
    model: Bert,
    tokenizer: Tokenizer,
    id: String,
    dir: PathBuf,
}

impl fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MiniLm")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

pub(crate) fn required(dir: &Path, file: &'static str) -> Result<PathBuf> {
    let path = dir.join(file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(Error::MissingFile {
            dir: dir.to_owned(),
            file,
        })
    }
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

pub(crate) fn bad(path: &Path, e: impl fmt::Display) -> Error {
    Error::BadModel {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// One file of a model directory: its path, for errors naming it, and its bytes.
pub(crate) struct ModelFile {
    pub(crate) path: PathBuf,
    pub(crate) bytes: Vec<u8>,
}

impl ModelFile {
    fn read(path: PathBuf) -> Result<Self> {
        let bytes = read(&path)?;
        Ok(Self { path, bytes })
    }
}

/// A model directory's three files, read after all three are found there.
pub(crate) struct ModelFiles {
    /// `config.json`.
    pub(crate) config: ModelFile,
    /// `model.safetensors`.
    pub(crate) weights: ModelFile,
    /// `tokenizer.json`.
    pub(crate) tokenizer: ModelFile,
}

impl ModelFiles {
    /// Finds the three files in `dir`, then reads them.
    pub(crate) fn read(dir: &Path) -> Result<Self> {
        let config = required(dir, "config.json")?;
        let weights = required(dir, "model.safetensors")?;
        let tokenizer = required(dir, "tokenizer.json")?;
        Ok(Self {
            config: ModelFile::read(config)?,
            weights: ModelFile::read(weights)?,
            tokenizer: ModelFile::read(tokenizer)?,
        })
    }
}

/// The first 8 bytes of the SHA-256 of `parts`, in hex: the fingerprint in a model's id.
pub(crate) fn fingerprint(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hex(hasher.finalize().get(..8).unwrap_or_default())
}

impl MiniLm {
    /// Loads the model from `dir`. Nothing is downloaded.
    pub fn load(dir: &Path) -> Result<Self> {
        let files = ModelFiles::read(dir)?;
        let config: Config =
            serde_json::from_slice(&files.config.bytes).map_err(|e| bad(&files.config.path, e))?;
        let id = format!(
            "minilm-mean-{MAX_TOKENS}:{}",
            fingerprint(&[&files.weights.bytes, &files.tokenizer.bytes])
        );

        let vb =
            VarBuilder::from_buffered_safetensors(files.weights.bytes, DType::F32, &Device::Cpu)
                .map_err(|e| bad(&files.weights.path, e))?;
        let model = Bert::load(vb, &config).map_err(|e| bad(&files.weights.path, e))?;
        let mut tokenizer = Tokenizer::from_bytes(&files.tokenizer.bytes)
            .map_err(|e| bad(&files.tokenizer.path, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(&files.tokenizer.path, e))?;
        Ok(Self {
            model,
            tokenizer,
            id,
            dir: dir.to_owned(),
        })
    }

    /// The tokenizer (with padding and truncation set).
    pub(crate) fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Mean-pooled last hidden states of a batch of token-id rows of equal length (`mask`
    /// marks real tokens with 1).
    pub(crate) fn pool(
        &self,
        ids: Vec<u32>,
        mask: Vec<u32>,
        rows: usize,
    ) -> candle_core::Result<Vec<Vec<f32>>> {
        let cols = ids.len() / rows.max(1);
        let ids = Tensor::from_vec(ids, (rows, cols), &Device::Cpu)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &Device::Cpu)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, &mask)?;
        let weights = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&weights)?.sum(1)?;
        let counts = weights.sum(1)?.clamp(1e-9, f64::MAX)?;
        summed.broadcast_div(&counts)?.to_vec2::<f32>()
    }

    fn embed_chunk(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::new(format!("tokenizer: {e}")))?;
        let rows = encodings.len();
        let mut ids = Vec::new();
        let mut mask = Vec::new();
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        self.pool(ids, mask, rows)
            .map_err(|e| EmbedError::with_source("candle", e))
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        ModelKind::Contextual
    }

    /// Texts are run in batches of similar length (less padding), results in input order.
    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts.get(i).map_or(0, |t| t.len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk
                .iter()
                .filter_map(|&i| texts.get(i).copied())
                .collect();
            for (&i, v) in chunk.iter().zip(self.embed_chunk(&batch)?) {
                if let Some(slot) = out.get_mut(i) {
                    *slot = v;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn a_fingerprint_hashes_its_parts_as_one_stream() {
        // The first 8 bytes of SHA-256("ab"): model ids stay what they were when each
        // loader hashed its files itself.
        assert_eq!(fingerprint(&[b"a", b"b"]), "fb8e20fc2e4c3f24");
        assert_eq!(fingerprint(&[b"ab"]), "fb8e20fc2e4c3f24");
    }
}
