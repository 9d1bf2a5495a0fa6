//! A static (model2vec) model through model2vec-rs, from a local directory holding
//! `config.json`, `model.safetensors` (an `embeddings` matrix, one row per token) and
//! `tokenizer.json`: a text's vector is the mean of its tokens' rows.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use chef_compress::search::dense::{EmbedError, Embedder, ModelKind};
use model2vec_rs::model::StaticModel;
use sha2::{Digest, Sha256};

use crate::{
    cache::hex,
    error::Result,
    minilm::{bad, read, required},
};

/// Tokens per text beyond which the rest is cut.
pub(crate) const MAX_TOKENS: usize = 512;

/// A static embedding model.
pub struct StaticEmbedder {
    model: StaticModel,
    id: String,
    dir: PathBuf,
}

impl fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    /// Loads the model from `dir`. Nothing is downloaded.
    pub fn load(dir: &Path) -> Result<Self> {
        let mut fingerprint = Sha256::new();
        for file in ["config.json", "model.safetensors", "tokenizer.json"] {
            fingerprint.update(read(&required(dir, file)?)?);
        }
        let digest = fingerprint.finalize();
        let id = format!("static:{}", hex(digest.get(..8).unwrap_or_default()));
        let model = StaticModel::from_pretrained(dir, None, None, None).map_err(|e| bad(dir, e))?;
        Ok(Self {
            model,
            id,
            dir: dir.to_owned(),
        })
    }
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        ModelKind::Static
    }

    fn embed(&self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let owned: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        Ok(self.model.encode_with_args(&owned, Some(MAX_TOKENS), 1024))
    }
}
