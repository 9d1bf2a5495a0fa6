//! Picking the right model for a directory.

use std::{path::Path, sync::Arc};

use chef_compress::search::dense::Embedder;

use crate::error::{Error, Result};

/// Which implementation a model directory needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFormat {
    /// A BERT sentence-transformer (`config.json` says `"model_type": "bert"`): MiniLM.
    Bert,
    /// A static model2vec model (any other `config.json`, such as `chef embed distill`'s).
    Static,
}

/// Reads `dir/config.json` to tell a BERT model from a static one.
pub fn detect(dir: &Path) -> Result<ModelFormat> {
    let path = dir.join("config.json");
    let bytes = std::fs::read(&path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => Error::MissingFile {
            dir: dir.to_owned(),
            file: "config.json",
        },
        _ => Error::Io {
            path: path.clone(),
            source,
        },
    })?;
    let config: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| Error::BadModel {
            path: path.clone(),
            message: e.to_string(),
        })?;
    let is_bert = config.get("model_type").and_then(serde_json::Value::as_str) == Some("bert");
    Ok(if is_bert {
        ModelFormat::Bert
    } else {
        ModelFormat::Static
    })
}

/// Loads the model in `dir` (MiniLM or static, see [`detect`]). Nothing is downloaded.
/// Without the `dense` feature this is always [`Error::NotBuilt`].
pub fn load(dir: &Path) -> Result<Arc<dyn Embedder>> {
    #[cfg(feature = "dense")]
    {
        Ok(match detect(dir)? {
            ModelFormat::Bert => Arc::new(crate::MiniLm::load(dir)?),
            ModelFormat::Static => Arc::new(crate::StaticEmbedder::load(dir)?),
        })
    }
    #[cfg(not(feature = "dense"))]
    {
        Err(Error::NotBuilt {
            path: dir.to_owned(),
        })
    }
}
