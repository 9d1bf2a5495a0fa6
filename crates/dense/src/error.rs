//! The crate's error type.

use std::path::PathBuf;

/// Why a model could not be loaded or distilled, or the cache could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The crate was built without its `dense` feature, so it has no model code.
    #[error("chef was built without the `dense` feature, so it cannot load {}; rebuild with `--features dense`", path.display())]
    NotBuilt {
        /// The model directory asked for.
        path: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A model directory lacks a file it needs.
    #[error("{}: missing {file} (expected a MiniLM directory with config.json, model.safetensors and tokenizer.json, or a model2vec directory)", dir.display())]
    MissingFile {
        /// The model directory.
        dir: PathBuf,
        /// The missing file's name.
        file: &'static str,
    },
    /// A model file is unusable.
    #[error("{}: {message}", path.display())]
    BadModel {
        /// The file (or directory).
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The model failed while running.
    #[error(transparent)]
    Embed(#[from] chef_compress::search::dense::EmbedError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
