//! Sentence-embedding models for chef's hybrid catalogue search, and an on-disk cache of
//! tool vectors.
//!
//! [`chef_compress::search::dense`] mixes BM25F with any [`Embedder`]; this crate supplies
//! the real ones, loaded from a local directory the user names (nothing is ever
//! downloaded):
//!
//! - [`MiniLm`] runs all-MiniLM-L6-v2 (or another BERT sentence-transformer with mean pooling)
//!   through candle, from `config.json`, `model.safetensors` and `tokenizer.json`;
//! - [`StaticEmbedder`] runs a static model in model2vec's format (a token embedding matrix;
//!   a text is the mean of its tokens' rows), such as one made by [`distill`]
//!   (`chef embed distill`) from MiniLM;
//! - [`CachedEmbedder`] wraps either of them, with tool vectors kept in a [`VectorCache`], keyed
//!   by model fingerprint and tool text, so a catalogue is embedded once.
//!
//! ```no_run
//! use std::{path::Path, sync::Arc};
//! use chef_compress::search::dense::{HybridIndex, HybridOptions};
//! use chef_dense::{CachedEmbedder, VectorCache};
//! # let tools: Vec<chef_ir::ToolDefinition> = Vec::new();
//!
//! let model = chef_dense::load(Path::new("/models/all-MiniLM-L6-v2"))?;
//! let options = HybridOptions::for_kind(model.kind());
//! let cached = Arc::new(CachedEmbedder::new(model, VectorCache::new("/tmp/chef-vectors")));
//! let index = HybridIndex::build(&tools, cached, options)?;
//! let found = index.search("book me a ride to the airport", 5)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `dense`: the models ([`MiniLm`], [`StaticEmbedder`], [`load`] and [`distill`]), with
//!   candle-core, candle-nn and tokenizers. Without it only the cache is built and [`load`]
//!   answers [`Error::NotBuilt`], so a default build of chef carries none of them.
//!
//! # Which model
//!
//! Measured with chef-devtools' `dense_eval` on the held-out half of our labelled set for
//! the 149-tool corpus (`docs/PERFORMANCE.md`, "Dense + hybrid retrieval"), at the
//! calibrated defaults: MiniLM (weight 0.6) recall@5 0.913 with 8% false and 83% true
//! abstention at about 16 ms per request; the static model (weight 0.4) recall@5 0.893, 9%
//! and 93%, at 0.06 ms; BM25F alone 0.820, 16% and 90%. Without abstention BM25F's recall@1
//! (0.893) is not beaten on that set (MiniLM 0.880, static 0.853). On the 1,729-tool
//! benchmark the issue cites (Python prototype figures): BM25 recall@1 0.65, MiniLM mixed
//! at 0.7 0.75, a static model mixed at 0.5 0.69.
//!
// The models exist only with the `dense` feature; without it their names link to the
// feature list above instead of to nothing.
#![cfg_attr(
    feature = "dense",
    doc = "[`MiniLm`]: crate::MiniLm\n[`StaticEmbedder`]: crate::StaticEmbedder\n[`distill`]: crate::distill()"
)]
#![cfg_attr(
    not(feature = "dense"),
    doc = "[`MiniLm`]: #features\n[`StaticEmbedder`]: #features\n[`distill`]: #features"
)]

#[cfg(feature = "dense")]
mod bert;
mod cache;
#[cfg(feature = "dense")]
mod distill;
mod error;
mod load;
#[cfg(feature = "dense")]
mod minilm;
#[cfg(feature = "dense")]
mod static_model;

pub use chef_compress::search::dense::Embedder;

pub use crate::{
    cache::{CachedEmbedder, Key, VectorCache, key},
    error::{Error, Result},
    load::{ModelFormat, detect, load},
};

#[cfg(feature = "dense")]
#[cfg_attr(docsrs, doc(cfg(feature = "dense")))]
pub use crate::{
    distill::{DistillOptions, DistillReport, distill},
    minilm::MiniLm,
    static_model::StaticEmbedder,
};

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<CachedEmbedder>();
    assert_send_sync::<Error>();
};
