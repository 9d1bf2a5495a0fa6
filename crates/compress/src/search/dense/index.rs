//! [`HybridIndex`]: the lexical index and one unit vector per tool, mixed per request.

use std::{
    sync::{Arc, mpsc},
    thread,
};

use chef_ir::{ToolDefinition, ToolName};
use serde_json::Value;

use super::{DenseError, Embedder, HybridOptions};
use crate::search::{
    CatalogBuilder, CatalogIndex, Doc, Hit, LexicalScores, SearchResults, doc_of,
    rerank::RerankRequest,
};

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
pub(super) const MAX_TOOL_TEXT: usize = 2_000;

fn doc_text(doc: &Doc<'_>) -> String {
    let mut text = String::new();
    push_doc_text(doc, &mut text);
    text
}

/// Appends [`doc_text`] to `out`.
fn push_doc_text(doc: &Doc<'_>, out: &mut String) {
    let start = out.len();
    let mut previous_lower = false;
    for c in doc.name.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c == ' ' {
            if !out.ends_with(' ') && out.len() > start {
                out.push(' ');
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    let name_len = out.get(start..).map_or(0, |name| name.trim_end().len());
    out.truncate(start + name_len);
    if let Some(title) = doc.title.filter(|t| !t.trim().is_empty()) {
        out.push_str(" (");
        out.push_str(title.trim());
        out.push(')');
    }
    let description = doc.description.trim();
    if !description.is_empty() {
        out.push_str(": ");
        out.push_str(description);
    }
    if let Some(Value::Object(properties)) = doc.schema.get("properties") {
        let mut first = true;
        for name in properties.keys() {
            out.push_str(if first { ". Parameters: " } else { ", " });
            out.push_str(name);
            first = false;
        }
    }
    if out.len() - start > MAX_TOOL_TEXT {
        let mut end = start + MAX_TOOL_TEXT;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
}

/// A catalogue index that mixes BM25F with a sentence-embedding model. Cheap to query from
/// many threads at once (each query embeds the request once).
#[derive(Debug, Clone)]
pub struct HybridIndex {
    pub(super) lexical: CatalogIndex,
    /// Unit vectors, `dim` floats per tool, in catalogue order: one piece, or one per
    /// call of a [`HybridBuilder`] to the model.
    pub(super) vectors: Vec<Vec<f32>>,
    dim: usize,
    embedder: Arc<dyn Embedder>,
    pub(super) options: HybridOptions,
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
            vectors: vec![vectors],
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

    /// The same index with the second stage's re-ordering of the best ten on or off
    /// ([`HybridOptions::second_stage`]); nothing is embedded again.
    #[must_use]
    pub fn with_second_stage(mut self, second_stage: bool) -> Self {
        self.options.second_stage = second_stage;
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
    /// below [`HybridOptions::min_cosine`] (and, with [`HybridOptions::joint`], the
    /// lexical index's own rule abstains too).
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
        if k == 0 || scored.abstains(min_cosine) {
            return Ok(abstain(scored.best_cosine, scored.lexical.evidence));
        }
        let hits = self.ranked(&scored, k);
        Ok(SearchResults {
            hits,
            abstained: false,
            confidence: scored.best_cosine,
            evidence: scored.lexical.evidence,
        })
    }

    /// Both scores of every tool for `query`, before mixing; `None` for a blank request
    /// or an empty catalogue.
    pub(super) fn score(&self, query: &str) -> Result<Option<Scored>, DenseError> {
        let n = self.len();
        if query.trim().is_empty() || n == 0 {
            return Ok(None);
        }
        let cosines = self.cosines(query)?;
        let best_cosine = cosines.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lexical = self.lexical.score_all(query);
        let rerank = &self.lexical.options().rerank;
        let request = if rerank.is_on() {
            RerankRequest::new(lexical.terms(), query, rerank)
        } else {
            RerankRequest::default()
        };
        let lexical_abstains = !self.options.joint || lexical.own_abstains;
        let shares_no_word =
            self.options.joint && self.options.needs_shared_word && shares_no_word(&lexical);
        Ok(Some(Scored {
            cosines,
            lexical,
            best_cosine,
            request,
            lexical_abstains,
            shares_no_word,
        }))
    }

    /// The best `k` tools as [`search`](Self::search) orders them: [`rank`](Self::rank) at
    /// the index's weight, then, with [`HybridOptions::second_stage`], the best ten
    /// re-ordered in their two blocks ([`reorder_blocks`](Self::reorder_blocks)). Whole
    /// blocks are ranked and re-ordered before the list is cut to `k`, so a shorter list is
    /// a prefix of a longer one.
    pub(super) fn ranked(&self, scored: &Scored, k: usize) -> Vec<Hit> {
        let weight = self.options.weight();
        if !self.options.second_stage {
            return self.rank(scored, k, weight);
        }
        let whole_blocks = super::relevance::REORDERED_BLOCKS
            .iter()
            .map(|block| block.end)
            .find(|&end| k <= end)
            .unwrap_or(k);
        let mut hits = self.rank(scored, whole_blocks, weight);
        self.reorder_blocks(scored, &mut hits);
        hits.truncate(k);
        hits
    }

    /// The best `k` tools by `w × cosine' + (1 − w) × bm25'` (see the module docs).
    pub(super) fn rank(&self, scored: &Scored, k: usize, w: f32) -> Vec<Hit> {
        let n = self.len();
        let dense = min_max(&scored.cosines);
        let sparse = min_max(&scored.lexical.scores);
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
        // The second stage (`search::Rerank`) re-orders the best `depth` (at least `k`).
        let rerank = self.lexical.options().rerank;
        let window = if rerank.is_on() {
            k.max(rerank.depth).min(n)
        } else {
            k
        };
        if window < n {
            mixed.select_nth_unstable_by(window - 1, better);
            mixed.truncate(window);
        }
        if rerank.is_on() {
            let docs: Vec<usize> = mixed.iter().map(|m| m.1).collect();
            let masks = scored.lexical.masks(&docs);
            let terms = scored.lexical.terms();
            let factors =
                self.lexical
                    .rerank_factors(&docs, &masks, terms, &scored.request, &rerank);
            for ((score, _), factor) in mixed.iter_mut().zip(factors) {
                *score *= factor;
            }
        }
        mixed.sort_unstable_by(better);
        mixed.truncate(k);

        mixed
            .into_iter()
            .map(|(score, index)| {
                let (coverage, matched_terms) = scored.lexical.describe(index);
                Hit {
                    tool: names
                        .get(index)
                        .cloned()
                        .unwrap_or_else(|| ToolName::new("")),
                    index,
                    score,
                    coverage,
                    matched_terms,
                }
            })
            .collect()
    }

    /// Whether the lexical index's own rule ([`IndexOptions::abstention`]) abstains on
    /// `query`: with joint abstention ([`HybridOptions::joint`]) the hybrid abstains only
    /// when this is true and [`best_cosine`](Self::best_cosine) is below the threshold.
    ///
    /// [`IndexOptions::abstention`]: crate::search::IndexOptions::abstention
    pub fn lexical_abstains(&self, query: &str) -> bool {
        query.trim().is_empty() || self.lexical.score_all(query).own_abstains
    }

    /// Whether no word of `query` is one any tool uses (no tool matches any of its words):
    /// with joint abstention and [`HybridOptions::needs_shared_word`] the hybrid abstains
    /// on it whatever the cosine.
    pub fn shares_no_word(&self, query: &str) -> bool {
        query.trim().is_empty() || shares_no_word(&self.lexical.score_all(query))
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
        let mut cosines = Vec::with_capacity(self.len());
        for piece in &self.vectors {
            cosines.extend(piece.chunks_exact(self.dim.max(1)).map(|v| dot(v, &q)));
        }
        Ok(cosines)
    }
}

/// Builds a [`HybridIndex`] from tools handed over one at a time, keeping none of them: a
/// large catalogue read from a file (`chef_ir::for_each_tool`) is indexed without every
/// schema held at once.
///
/// With a model whose vectors depend on each text alone ([`Embedder::embeds_texts_alone`],
/// the bundled one) the tools are embedded a piece of 4,096 at a time as they come: from
/// the first full piece on, on a thread of its own while the calling thread reads and
/// indexes the next tools (unless [`IndexOptions::threads`] is 1, or one core is all
/// there is). With another model their texts are kept and embedded in one call at the
/// end, as [`HybridIndex::build`] does.
///
/// The index is the one [`HybridIndex::build`] makes of the same tools in the same order,
/// bit for bit, and the errors are its errors.
///
/// ```
/// use chef_compress::search::dense::{BundledStatic, HybridBuilder, HybridOptions, ModelKind};
///
/// let mut builder = HybridBuilder::new(BundledStatic::shared()?, HybridOptions::for_kind(ModelKind::Static));
/// chef_ir::for_each_tool(
///     r#"[{"name": "uber_request", "description": "Request a car to a destination."},
///         {"name": "weather_now", "description": "Current weather for a city."}]"#,
///     |tool, _| builder.push(tool),
/// )?;
/// let index = builder.finish()?;
/// assert_eq!(index.search("get me a taxi to the airport", 1)?.hits[0].tool.as_str(), "uber_request");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`IndexOptions::threads`]: crate::search::IndexOptions::threads
#[derive(Debug)]
pub struct HybridBuilder {
    lexical: CatalogBuilder,
    /// The texts of the tools not embedded yet.
    texts: Texts,
    /// Texts embedded per call when the model embeds each text alone.
    piece: usize,
    embedding: Embedding,
    embedder: Arc<dyn Embedder>,
    options: HybridOptions,
}

/// Tool texts embedded per call by a [`HybridBuilder`] whose model embeds each text alone.
const PIECE: usize = 4_096;

/// Pieces a [`HybridBuilder`] lets its embedding thread fall behind by before it waits.
const IN_FLIGHT: usize = 2;

/// Tool texts, one after another in one string.
#[derive(Debug, Default)]
struct Texts {
    text: String,
    /// Where each text ends in `text`.
    ends: Vec<usize>,
}

impl Texts {
    fn push(&mut self, tool: &ToolDefinition) {
        push_doc_text(&doc_of(tool), &mut self.text);
        self.ends.push(self.text.len());
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn refs(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let text = self.text.get(start..end).unwrap_or_default();
                start = end;
                text
            })
            .collect()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }
}

/// Where a [`HybridBuilder`]'s pieces are embedded.
#[derive(Debug)]
enum Embedding {
    /// On the calling thread (always before the first full piece).
    Here(Embedded),
    /// On a thread of its own, in the order they are sent; each piece's buffer comes back
    /// emptied, to be filled again.
    Thread {
        send: mpsc::Sender<Texts>,
        back: mpsc::Receiver<Texts>,
        /// Pieces sent whose buffer has not come back.
        in_flight: usize,
        done: thread::JoinHandle<Embedded>,
    },
}

/// The vectors of the pieces embedded so far.
#[derive(Debug, Default)]
struct Embedded {
    /// One flat piece per call to the model.
    vectors: Vec<Vec<f32>>,
    /// Their length, once known.
    dim: Option<usize>,
    /// The first error, after which nothing more is embedded.
    failed: Option<DenseError>,
}

impl Embedded {
    /// Embeds `texts` (if any), appending their vectors.
    fn add(&mut self, embedder: &dyn Embedder, texts: &Texts) {
        if self.failed.is_some() || texts.len() == 0 {
            return;
        }
        let refs = texts.refs();
        let model = embedder.model_id();
        let flat = embedder
            .embed_tools(&refs)
            .map_err(|source| DenseError::Embed {
                model: model.to_owned(),
                source,
            })
            .and_then(|raw| flatten(model, refs.len(), raw, self.dim));
        match flat {
            Ok((flat, dim)) => {
                self.dim = Some(dim);
                self.vectors.push(flat);
            }
            Err(e) => self.failed = Some(e),
        }
    }
}

/// The result of a thread, its panic passed on.
fn joined<T>(done: thread::JoinHandle<T>) -> T {
    done.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

impl HybridBuilder {
    /// A builder of an index with this model and these options.
    pub fn new(embedder: Arc<dyn Embedder>, options: HybridOptions) -> Self {
        let piece = if embedder.embeds_texts_alone() {
            PIECE
        } else {
            usize::MAX
        };
        Self {
            lexical: CatalogBuilder::new(&options.lexical),
            texts: Texts::default(),
            piece,
            embedding: Embedding::Here(Embedded::default()),
            embedder,
            options,
        }
    }

    /// The same with `piece` texts embedded per call (tests).
    #[cfg(test)]
    pub(super) fn with_piece(mut self, piece: usize) -> Self {
        self.piece = piece.max(1);
        self
    }

    /// Adds the next tool.
    pub fn push(&mut self, tool: ToolDefinition) {
        self.texts.push(&tool);
        self.lexical.push(tool);
        if self.texts.len() >= self.piece {
            self.embed_piece();
        }
    }

    /// The index of every tool pushed.
    ///
    /// # Errors
    ///
    /// As [`HybridIndex::build`]: the model failed, or returned vectors of the wrong number,
    /// length or value.
    pub fn finish(self) -> Result<HybridIndex, DenseError> {
        let Self {
            lexical,
            texts,
            embedding,
            embedder,
            options,
            ..
        } = self;
        let (lexical, embedded) = match embedding {
            Embedding::Here(mut embedded) => {
                embedded.add(&*embedder, &texts);
                (lexical.finish(), embedded)
            }
            Embedding::Thread { send, done, .. } => {
                // The thread stops only by panicking, which `joined` passes on.
                let _ = send.send(texts);
                drop(send);
                let lexical = lexical.finish();
                (lexical, joined(done))
            }
        };
        if let Some(e) = embedded.failed {
            return Err(e);
        }
        Ok(HybridIndex {
            lexical,
            vectors: embedded.vectors,
            dim: embedded.dim.unwrap_or(0),
            embedder,
            options,
        })
    }

    /// Embeds the full piece of texts: here, or on the embedding thread (started with the
    /// first piece when threads are allowed and there is more than one core).
    fn embed_piece(&mut self) {
        if let Embedding::Here(embedded) = &mut self.embedding {
            let first = embedded.vectors.is_empty() && embedded.failed.is_none();
            let cores = thread::available_parallelism().map_or(1, std::num::NonZero::get);
            let thread = first && self.options.lexical.threads != 1 && cores > 1;
            match thread.then(|| Self::start(Arc::clone(&self.embedder))) {
                Some(Ok(started)) => self.embedding = started,
                _ => {
                    embedded.add(&*self.embedder, &self.texts);
                    self.texts.clear();
                    return;
                }
            }
        }
        if let Embedding::Thread {
            send,
            back,
            in_flight,
            ..
        } = &mut self.embedding
        {
            // A buffer back from the thread, waiting for one when it is behind by
            // IN_FLIGHT pieces (so that no more buffers are made than that).
            let emptied = if *in_flight >= IN_FLIGHT {
                back.recv().ok()
            } else {
                back.try_recv().ok()
            };
            if emptied.is_some() {
                *in_flight -= 1;
            }
            let full = std::mem::replace(&mut self.texts, emptied.unwrap_or_default());
            if send.send(full).is_ok() {
                *in_flight += 1;
                return;
            }
            // The thread stopped, by panicking: pass it on.
            let Embedding::Thread { done, .. } =
                std::mem::replace(&mut self.embedding, Embedding::Here(Embedded::default()))
            else {
                return;
            };
            self.embedding = Embedding::Here(joined(done));
        }
    }

    /// The embedding thread: it embeds each piece sent, in order, and sends its buffer
    /// back.
    fn start(embedder: Arc<dyn Embedder>) -> std::io::Result<Embedding> {
        let (send, pieces) = mpsc::channel::<Texts>();
        let (give_back, back) = mpsc::channel::<Texts>();
        let done = thread::Builder::new()
            .name("chef-embed".to_owned())
            .spawn(move || {
                let mut embedded = Embedded::default();
                for mut texts in pieces {
                    embedded.add(&*embedder, &texts);
                    texts.clear();
                    // The builder may have finished: then the buffer is dropped here.
                    let _ = give_back.send(texts);
                }
                embedded
            })?;
        Ok(Embedding::Thread {
            send,
            back,
            in_flight: 0,
            done,
        })
    }
}

/// Lanes of [`dot`]: independent partial sums the compiler keeps in vector registers.
const LANES: usize = 8;

/// The dot product of two vectors of one length, summed in [`LANES`] interleaved partial
/// sums that are then added in a fixed order: the same bits on every run and machine
/// (no reordering is left to the compiler or to threads), and vectorised, where one
/// running sum would wait on each addition.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lanes;
    ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)) + tail
}

/// One request's scores against every tool, before they are mixed.
pub(super) struct Scored {
    /// Cosine with each tool, in catalogue order.
    pub(super) cosines: Vec<f32>,
    /// Every tool's lexical score and what it matched.
    pub(super) lexical: LexicalScores,
    /// The highest cosine (what abstention looks at).
    pub(super) best_cosine: f32,
    /// What the second stage reads of the request (empty when it is off).
    request: RerankRequest,
    /// With joint abstention ([`HybridOptions::joint`]), whether the lexical index alone
    /// would abstain (its own rule); `true` without it, so the cosine alone decides.
    pub(super) lexical_abstains: bool,
    /// With joint abstention and [`HybridOptions::needs_shared_word`], whether no word of
    /// the request is one any tool uses: the hybrid then abstains whatever the cosine
    /// (`false` otherwise).
    pub(super) shares_no_word: bool,
}

impl Scored {
    /// Whether the hybrid abstains at `min_cosine`: the cosine is below it and, with joint
    /// abstention, the lexical rule abstains too.
    pub(super) fn abstains(&self, min_cosine: f32) -> bool {
        abstains(
            self.best_cosine,
            min_cosine,
            self.lexical_abstains,
            self.shares_no_word,
        )
    }
}

/// The hybrid's abstention rule, in one place: the best cosine is below `min_cosine` and
/// (see [`Scored::lexical_abstains`]) the lexical rule abstains too, or is not consulted;
/// or the request shares no word with the catalogue and the options ask for one
/// ([`Scored::shares_no_word`], [`HybridOptions::needs_shared_word`]).
pub(super) fn abstains(
    best_cosine: f32,
    min_cosine: f32,
    lexical_abstains: bool,
    shares_no_word: bool,
) -> bool {
    // A threshold of -1 or below never abstains on the words alone (a blank request, whose
    // cosine is -inf, still abstains, as it always did).
    (shares_no_word && min_cosine > -1.0) || (best_cosine < min_cosine && lexical_abstains)
}

/// Whether no tool matched any word of the request (its lexical scores).
pub(super) fn shares_no_word(lexical: &crate::search::LexicalScores) -> bool {
    lexical.evidence <= 0.0
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
