//! A ranked catalogue index: find the tool a free-text request is about, or say that none
//! fits.
//!
//! Built once per catalogue with [`CatalogIndex::build`] (or tool by tool, as a file is
//! read, with [`CatalogBuilder`]), queried by text with [`CatalogIndex::search`]. The level-3/4 lookup tool `q(s=…)`, the runtime's task pruner
//! and `chef search` share it.
//!
//! ```
//! use chef_compress::search::CatalogIndex;
//! use chef_ir::ToolDefinition;
//! use serde_json::json;
//!
//! let tools = [
//!     ToolDefinition::new("gdrive_sheets_append_rows", json!({"type": "object"}))
//!         .with_description("Append new rows to a sheet or table range."),
//!     ToolDefinition::new("reverse_geocode", json!({"type": "object"}))
//!         .with_description("Convert geographic coordinates into a human-readable address."),
//! ];
//! let index = CatalogIndex::build(&tools);
//!
//! let found = index.search("append rows to my sheet", 5);
//! assert_eq!(found.hits[0].tool.as_str(), "gdrive_sheets_append_rows");
//! assert!(found.hits[0].matched_terms.contains(&"rows".to_owned()));
//!
//! let nothing = index.search("bake a chocolate cake", 5);
//! assert!(nothing.abstained && nothing.hits.is_empty());
//! ```
//!
//! # What is indexed
//!
//! Each tool is one document with six fields, each with its own weight
//! ([`FieldWeights`]): the name, the tags, the description (and the annotation title),
//! the parameter names, the parameter descriptions, and the enum and `const` values, all
//! found by walking the input schema (nested objects, array items, `anyOf`/`oneOf`/`allOf`,
//! `$defs`). Text is split by rules that understand `snake_case`,
//! `camelCase`, dots and digits, lowercased, stripped of stop words and stemmed by a small
//! deterministic English stemmer.
//!
//! # Scoring
//!
//! BM25F: per tool and term, the field frequencies are length-normalised per field, weighted
//! and summed, then saturated once (`k1`) and multiplied by the term's IDF. These impacts
//! are computed at build time, so a query only adds up a few postings lists. Ties are
//! broken by tool name, then by catalogue position, so results never depend on hashing or
//! on the order the catalogue was given in.
//!
//! # Abstention
//!
//! A wrong tool forced into a small tool list is worse than none, so the index can answer
//! "nothing fits" ([`SearchResults::abstained`], with no hits). It weighs each request word
//! by its IDF; a word the catalogue never uses weighs
//! [`unknown_weight`](Abstention::unknown_weight) times the rarest known word (a word with
//! a digit that the catalogue never uses, such as an id or a zip code, is an argument value
//! and weighs nothing). These weights are read as in a catalogue of at least
//! [`WEIGHT_CATALOGUE_FLOOR`] tools, the size the rule was calibrated on: IDF squeezes
//! together in a small catalogue (a word in one of three tools weighs under half a word in
//! none), where one place name would otherwise outweigh the word that finds the tool
//! ("weather Oslo" over a three-tool catalogue with a weather tool). Scores and ranking
//! use the catalogue's own IDF. Two signals come out of the best hit(s):
//!
//! - **confidence**: the share of the request's weight they explain, `0..=1`, comparable
//!   across requests and catalogues, unlike a raw BM25 score;
//! - **evidence**: the weight they explain in absolute terms, so that a long request which
//!   clearly names things the catalogue knows is not rejected for its chatter.
//!
//! The index abstains when confidence is below [`min_coverage`](Abstention::min_coverage)
//! *and* evidence is below [`sure_evidence`](Abstention::sure_evidence) (or the best score
//! is below [`min_score`](Abstention::min_score)). Every knob is a field of [`Abstention`],
//! set per index ([`IndexOptions::abstention`]) or per call
//! ([`CatalogIndex::search_with`]). [`Abstention::CALIBRATED`], the default, is what
//! [`eval::calibrate`] picks on the `calibrate` half of `tests/fixtures/retrieval-149.jsonl`
//! (a test pins this); `docs/PERFORMANCE.md` ("Retrieval") reports the held-out half and the
//! command that recomputes both.

mod bm25;
pub mod dense;
pub mod eval;
mod rerank;
mod stem;
mod tokenise;

use std::{cell::RefCell, collections::HashMap};

use chef_ir::{ToolDefinition, ToolName};
use serde_json::Value;

pub use self::rerank::{Rerank, RerankScope};
use crate::search::{bm25::Postings, stem::stem, tokenise::for_each_token};

/// How much each field of a tool counts towards its score (BM25F field weights). A weight
/// that is not a positive finite number switches its field off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// The tool's name, split into words.
    pub name: f32,
    /// The tool's tags.
    pub tags: f32,
    /// The description and the annotation title.
    pub description: f32,
    /// Parameter names, at any depth of the input schema.
    pub param_names: f32,
    /// Parameter descriptions, at any depth of the input schema.
    pub param_descriptions: f32,
    /// Enum and `const` values in the input schema.
    pub enum_values: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: 3.0,
            tags: 2.0,
            description: 1.0,
            param_names: 0.5,
            param_descriptions: 0.25,
            enum_values: 0.5,
        }
    }
}

impl FieldWeights {
    fn as_array(&self) -> [f32; bm25::FIELDS] {
        [
            self.name,
            self.tags,
            self.description,
            self.param_names,
            self.param_descriptions,
            self.enum_values,
        ]
    }
}

/// When the index answers "nothing fits" instead of its least bad tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Abstention {
    /// Abstain when the confidence (IDF-weighted share of the request's terms that the best
    /// hits match, `0..=1`; see [`explained_by`](Self::explained_by)) is below this.
    pub min_coverage: f32,
    /// Abstain when the best hit's BM25F score is below this.
    pub min_score: f32,
    /// How much a request word that the catalogue never uses counts against coverage, as a
    /// share (`0..=1`) of the weight of the catalogue's rarest word. Words with digits that
    /// the catalogue never uses (ids, zip codes, coordinates) are argument values and never
    /// count.
    pub unknown_weight: f32,
    /// Confidence is the coverage of the terms matched by any of the best `explained_by`
    /// hits (at least 1), so that a request needing several tools is not judged by one.
    pub explained_by: usize,
    /// Never abstain when the request words that the best hits explain weigh at least this
    /// much in total (sum of IDF, see [`SearchResults::evidence`]): a long request that
    /// names several things the catalogue knows is answered even if most of its words are
    /// argument values or chatter. `f32::INFINITY` turns this off.
    pub sure_evidence: f32,
}

impl Abstention {
    /// True when a result with this confidence, evidence and best score is withheld.
    pub(crate) fn abstains(&self, confidence: f32, evidence: f32, best_score: f32) -> bool {
        (confidence < self.min_coverage && evidence < self.sure_evidence)
            || best_score < self.min_score
    }
}

impl Abstention {
    /// Never abstain while at least one tool matches at least one term.
    pub const NEVER: Self = Self {
        min_coverage: 0.0,
        min_score: 0.0,
        unknown_weight: 1.0,
        explained_by: 1,
        sure_evidence: f32::INFINITY,
    };

    /// The calibrated default (see the module docs): answer when the best hit explains at
    /// least 46% of the request, or request words weighing at least 8 (IDF), with unknown
    /// words at 0.75 of the rarest word's weight; no score floor.
    pub const CALIBRATED: Self = Self {
        min_coverage: 0.46,
        min_score: 0.0,
        unknown_weight: 0.75,
        explained_by: 1,
        sure_evidence: 8.0,
    };
}

impl Default for Abstention {
    fn default() -> Self {
        Self::CALIBRATED
    }
}

/// Settings for building and querying an index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexOptions {
    /// Field weights.
    pub weights: FieldWeights,
    /// BM25 saturation (`k1`, default 1.2): larger lets repeated terms count for longer;
    /// 0 counts presence only. Negative or non-finite values count as 0.
    pub k1: f32,
    /// The abstention threshold used by [`CatalogIndex::search`].
    pub abstention: Abstention,
    /// The most threads building the index may use: 0 (the default) for one per available
    /// core, at most 4, 1 to stay on the calling thread. Threads are only used for catalogues of at
    /// least 2,048 tools per thread, and never change the index: it is the same bit for
    /// bit however many threads built it.
    pub threads: usize,
    /// The second stage over the best candidates ([`Rerank`]; off by default).
    pub rerank: Rerank,
}

impl Default for IndexOptions {
    fn default() -> Self {
        Self {
            weights: FieldWeights::default(),
            k1: 1.2,
            abstention: Abstention::default(),
            threads: 0,
            rerank: Rerank::default(),
        }
    }
}

/// One tool found for a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub tool: ToolName,
    /// The tool's position in the catalogue the index was built from.
    pub index: usize,
    /// BM25F score; higher is better. Only comparable within one index.
    pub score: f32,
    /// IDF-weighted share of the request's terms this tool matches, `0..=1`.
    pub coverage: f32,
    /// The request's words (lowercased, as typed) that this tool matched, in request order.
    pub matched_terms: Vec<String>,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchResults {
    /// Best first; empty when the index abstained.
    pub hits: Vec<Hit>,
    /// True when nothing fits well enough, nothing matched at all, or `k` was 0.
    pub abstained: bool,
    /// The share of the request the best hits explain (see [`Abstention::explained_by`]),
    /// also when abstaining; 0 when nothing matched.
    pub confidence: f32,
    /// The total weight (sum of IDF) of the request words the best hits explain, also when
    /// abstaining; 0 when nothing matched.
    pub evidence: f32,
}

/// A search index over one tool catalogue. Cheap to query from many threads at once.
///
/// Build it once per catalogue; it keeps the tool names, the term dictionary and the
/// postings (about 8 bytes per distinct (tool, term) pair). A query borrows per-thread
/// scratch arrays of 20 bytes per tool, sized by the largest catalogue that thread has
/// searched, and allocates only for the request's terms and the hits it returns.
#[derive(Debug, Clone)]
pub struct CatalogIndex {
    names: Vec<ToolName>,
    /// Stem -> term id.
    terms: HashMap<Box<str>, u32, bm25::BuildFxHasher>,
    postings: Postings,
    /// The weight of a query word the catalogue never uses (IDF at document frequency 0,
    /// over at least [`WEIGHT_CATALOGUE_FLOOR`] tools).
    unknown_idf: f32,
    options: IndexOptions,
    /// Each tool's required parameters, for the second stage's argument evidence; empty
    /// unless the options asked for it when the index was built.
    args: Vec<Box<[rerank::Arg]>>,
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<CatalogIndex>();
    assert_send_sync::<SearchResults>();
};

/// One tool as the index reads it, borrowed.
pub(crate) struct Doc<'a> {
    pub(crate) name: &'a str,
    pub(crate) tags: &'a [String],
    pub(crate) description: &'a str,
    pub(crate) title: Option<&'a str>,
    pub(crate) schema: &'a Value,
}

/// The smallest catalogue size the abstention rule weighs request words at: a catalogue
/// with fewer tools weighs them as if the rest were tools that use none of its words (see
/// the module docs, "Abstention"). 149, the size of the catalogue [`Abstention::CALIBRATED`]
/// was calibrated on; a catalogue at least this large is weighed by its own size.
pub const WEIGHT_CATALOGUE_FLOOR: usize = 149;

/// At most this many distinct terms of a request are used (the rest are ignored).
pub const MAX_QUERY_TERMS: usize = 64;

/// A tool's running score and the terms it matched (bits into the term list).
#[derive(Debug, Clone, Copy, Default)]
struct Acc {
    score: f32,
    mask: u64,
}

pub(crate) struct QueryTerm {
    /// The word as typed (lowercased); two words joined by a space for a compound.
    surface: String,
    id: Option<u32>,
    /// The word's weight when known: its IDF over at least [`WEIGHT_CATALOGUE_FLOOR`]
    /// tools (the catalogue's own IDF, which scores, when the catalogue is that large).
    idf: f32,
    /// An unknown word with a digit: an argument value (an id, a zip code), not a need.
    has_digit: bool,
    /// Two adjacent words that the catalogue writes as one ("zip code" -> `zipcode`): it
    /// scores, and explains its two words, but adds no weight of its own.
    compound: bool,
    /// The request words this term explains when matched (bits into the term list).
    explains: u64,
}

impl QueryTerm {
    fn weight(&self, unknown_idf: f32, abstention: &Abstention) -> f32 {
        match self.id {
            _ if self.compound => 0.0,
            Some(_) => self.idf,
            None if self.has_digit => 0.0,
            None => unknown_idf * abstention.unknown_weight.clamp(0.0, 1.0),
        }
    }
}

impl CatalogIndex {
    /// Builds the index with default options.
    pub fn build(tools: &[ToolDefinition]) -> Self {
        Self::build_with(tools, &IndexOptions::default())
    }

    /// Builds the index with the given options.
    ///
    /// A large catalogue (at least 2,048 tools per thread) on a machine with more than one
    /// core is indexed in parts, one per core (at most 4, and at most
    /// [`IndexOptions::threads`]), on scoped threads; the index is the same bit for bit as
    /// a single-threaded build.
    pub fn build_with(tools: &[ToolDefinition], options: &IndexOptions) -> Self {
        Self::build_slice(tools, doc_of, options)
    }

    /// Builds the index from borrowed tool parts (for callers that keep no
    /// [`ToolDefinition`]s, such as a compressed set), on one thread.
    pub(crate) fn build_from<'a>(
        docs: impl IntoIterator<Item = Doc<'a>>,
        options: &IndexOptions,
    ) -> Self {
        let docs = docs.into_iter();
        let mut part = IndexPart::new(options, docs.size_hint().0);
        part.add(docs);
        Self::finish(vec![part], options)
    }

    /// Builds the index from a slice of anything a [`Doc`] can be read from, in as many
    /// parts as [`parts_for`] says (on threads when more than one).
    pub(crate) fn build_slice<'a, T: Sync>(
        items: &'a [T],
        doc: impl Fn(&'a T) -> Doc<'a> + Sync,
        options: &IndexOptions,
    ) -> Self {
        Self::build_in_parts(items, doc, options, parts_for(items.len(), options.threads))
    }

    /// [`build_slice`](Self::build_slice) in exactly `parts` parts (at least one).
    fn build_in_parts<'a, T: Sync>(
        items: &'a [T],
        doc: impl Fn(&'a T) -> Doc<'a> + Sync,
        options: &IndexOptions,
        parts: usize,
    ) -> Self {
        let size = items.len().div_ceil(parts.max(1)).max(1);
        let built = bm25::in_parallel(items.chunks(size).collect(), |chunk: &'a [T]| {
            let mut part = IndexPart::new(options, chunk.len());
            part.add(chunk.iter().map(&doc));
            part
        });
        Self::finish(built, options)
    }

    fn finish(parts: Vec<IndexPart>, options: &IndexOptions) -> Self {
        let mut names = Vec::with_capacity(parts.iter().map(|p| p.names.len()).sum());
        let mut builders = Vec::with_capacity(parts.len());
        let mut raw_args = Vec::new();
        for part in parts {
            names.extend(part.names);
            builders.push(part.builder);
            raw_args.extend(part.args);
        }
        let (terms, postings) = bm25::finish(builders);
        let args = rerank::resolve_args(&terms, raw_args);
        Self {
            unknown_idf: bm25::idf(names.len().max(WEIGHT_CATALOGUE_FLOOR), 0),
            names,
            terms,
            postings,
            options: *options,
            args,
        }
    }

    /// The number of tools indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the catalogue was empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The options the index was built with.
    pub fn options(&self) -> &IndexOptions {
        &self.options
    }

    /// The number of distinct terms (stems) in the index.
    pub fn vocabulary_len(&self) -> usize {
        self.terms.len()
    }

    /// The best `k` tools for `query`, or none when the best is below the index's
    /// [`Abstention`] threshold.
    pub fn search(&self, query: &str, k: usize) -> SearchResults {
        self.search_with(query, k, &self.options.abstention)
    }

    /// Like [`search`](Self::search) with a threshold given per call; pass
    /// [`Abstention::NEVER`] for a plain ranking.
    pub fn search_with(&self, query: &str, k: usize, abstention: &Abstention) -> SearchResults {
        self.search_staged(query, k, abstention, self.options.rerank)
    }

    /// [`search_with`](Self::search_with) with the second stage given (the hybrid index
    /// re-ranks its own mixed list, so it asks for the first stage alone).
    pub(crate) fn search_staged(
        &self,
        query: &str,
        k: usize,
        abstention: &Abstention,
        rerank: Rerank,
    ) -> SearchResults {
        let terms = self.query_terms(query);
        let weights: Vec<f32> = terms
            .iter()
            .map(|t| t.weight(self.unknown_idf, abstention))
            .collect();
        let total_weight: f32 = weights.iter().sum();
        if k == 0 || total_weight <= 0.0 || self.names.is_empty() {
            return SearchResults {
                hits: Vec::new(),
                abstained: true,
                confidence: 0.0,
                evidence: 0.0,
            };
        }

        let mut best = if rerank.is_on() {
            self.best_docs(&terms, k.max(rerank.depth))
        } else {
            self.best_docs(&terms, k)
        };
        if rerank.is_on() {
            let request = rerank::RerankRequest::new(&terms, query, &rerank);
            let docs: Vec<usize> = best.iter().map(|b| b.0 as usize).collect();
            let masks: Vec<u64> = best.iter().map(|b| b.2).collect();
            let factors = self.rerank_factors(&docs, &masks, &terms, &request, &rerank);
            for ((_, score, _), factor) in best.iter_mut().zip(factors) {
                *score *= factor;
            }
            let name_of = |doc: u32| self.names.get(doc as usize).map_or("", ToolName::as_str);
            best.sort_by(|a, b| {
                b.1.total_cmp(&a.1)
                    .then_with(|| name_of(a.0).cmp(name_of(b.0)))
                    .then(a.0.cmp(&b.0))
            });
            best.truncate(k);
        }
        let weight = |explained: u64| masked_sum(&weights, explained);
        let share = |explained: u64| (weight(explained) / total_weight).min(1.0);
        let hits: Vec<Hit> = best
            .iter()
            .map(|&(doc, score, mask)| {
                let explained = explained_by_mask(&terms, mask);
                Hit {
                    tool: self
                        .names
                        .get(doc as usize)
                        .cloned()
                        .unwrap_or_else(|| ToolName::new("")),
                    index: doc as usize,
                    score,
                    coverage: share(explained),
                    matched_terms: matched_words(&terms, mask),
                }
            })
            .collect();

        // Confidence: the share of the request explained by the best few hits together, so
        // a request that needs two tools is not judged by one of them alone.
        let explained = best
            .iter()
            .take(abstention.explained_by.max(1))
            .fold(0, |explained, &(_, _, mask)| {
                explained | explained_by_mask(&terms, mask)
            });
        let (confidence, evidence) = if hits.is_empty() {
            (0.0, 0.0)
        } else {
            (share(explained), weight(explained))
        };
        let best_score = hits.first().map_or(0.0, |h| h.score);
        if hits.is_empty() || abstention.abstains(confidence, evidence, best_score) {
            return SearchResults {
                hits: Vec::new(),
                abstained: true,
                confidence,
                evidence,
            };
        }
        SearchResults {
            hits,
            abstained: false,
            confidence,
            evidence,
        }
    }

    /// Every tool's BM25F score for `query` (no ranking, no abstention), with what the
    /// hybrid needs of the lexical side: the request's terms to describe any tool's match,
    /// the evidence of the best tool, and whether the index's own rule would abstain.
    ///
    /// This is what [`search_staged`](Self::search_staged) with `k` = the whole catalogue
    /// and [`Abstention::NEVER`] computes, without sorting every matched tool or building
    /// a [`Hit`] for each: the hybrid ranks the mix itself and describes only the tools it
    /// returns.
    pub(crate) fn score_all(&self, query: &str) -> LexicalScores {
        let terms = self.query_terms(query);
        let weights_at = |abstention: &Abstention| -> Vec<f32> {
            terms
                .iter()
                .map(|t| t.weight(self.unknown_idf, abstention))
                .collect()
        };
        let weights = weights_at(&Abstention::NEVER);
        let total_weight: f32 = weights.iter().sum();
        let own = self.options.abstention;
        let own_weights = weights_at(&own);
        let own_total: f32 = own_weights.iter().sum();
        let mut scores = LexicalScores {
            scores: vec![0.0; self.names.len()],
            masks: vec![0; self.names.len()],
            terms,
            weights,
            total_weight,
            evidence: 0.0,
            own_abstains: true,
        };
        if total_weight <= 0.0 || self.names.is_empty() {
            return scores;
        }
        // Every touched tool's score and terms go to their slots, and the best few by the
        // lexical order (score, then name, then position), as `search_staged` would rank
        // them, are kept for the verdict.
        let name_of = |doc: u32| self.names.get(doc as usize).map_or("", ToolName::as_str);
        let better = |a: &Candidate, b: &Candidate| {
            b.0.total_cmp(&a.0)
                .then_with(|| name_of(a.1).cmp(name_of(b.1)))
                .then(a.1.cmp(&b.1))
        };
        let few = own.explained_by.max(1);
        let mut best: Vec<Candidate> = Vec::with_capacity(few + 1);
        self.accumulate(&scores.terms, |acc, touched| {
            for &doc in touched {
                let a = acc
                    .get_mut(doc as usize)
                    .map(std::mem::take)
                    .unwrap_or_default();
                if let (Some(s), Some(m)) = (
                    scores.scores.get_mut(doc as usize),
                    scores.masks.get_mut(doc as usize),
                ) {
                    *s = a.score;
                    *m = a.mask;
                }
                let candidate = (a.score, doc, a.mask);
                let at = best.partition_point(|kept| better(kept, &candidate).is_lt());
                if at < few {
                    best.insert(at, candidate);
                    best.truncate(few);
                }
            }
        });
        let Some(&(best_score, _, best_mask)) = best.first() else {
            return scores;
        };
        let explained = explained_by_mask(&scores.terms, best_mask);
        scores.evidence = masked_sum(&scores.weights, explained);
        if own_total > 0.0 {
            let explained = best.iter().fold(0, |explained, &(_, _, mask)| {
                explained | explained_by_mask(&scores.terms, mask)
            });
            let evidence = masked_sum(&own_weights, explained);
            let confidence = (evidence / own_total).min(1.0);
            scores.own_abstains = own.abstains(confidence, evidence, best_score);
        }
        scores
    }

    /// The best `k` tools for `terms`, best first: (tool, score, bits of the terms matched).
    fn best_docs(&self, terms: &[QueryTerm], k: usize) -> Vec<(u32, f32, u64)> {
        let name_of = |doc: u32| self.names.get(doc as usize).map_or("", ToolName::as_str);
        self.accumulate(terms, |acc, touched| top_k(acc, touched, k, name_of))
    }

    /// Sums the scores of `terms` per tool and hands them to `finish` with the tools
    /// touched, in order of first touch; `finish` must read and reset every touched slot.
    ///
    /// Scores accumulate in a per-thread scratch array as long as the catalogue, kept zeroed
    /// between calls (only the touched entries are reset, in the same pass that reads
    /// them), so a query allocates no catalogue-sized memory.
    fn accumulate<R>(
        &self,
        terms: &[QueryTerm],
        finish: impl FnOnce(&mut [Acc], &[u32]) -> R,
    ) -> R {
        thread_local! {
            static SCRATCH: RefCell<Scratch> = const {
                RefCell::new(Scratch { acc: Vec::new(), touched: Vec::new() })
            };
        }
        SCRATCH.with(|cell| {
            let mut owned = Scratch {
                acc: Vec::new(),
                touched: Vec::new(),
            };
            let mut borrowed = cell.try_borrow_mut();
            let Scratch { acc, touched } = match borrowed.as_deref_mut() {
                Ok(scratch) => scratch,
                Err(_) => &mut owned,
            };
            let tools = self.names.len();
            if acc.len() < tools {
                acc.resize(tools, Acc::default());
            }
            if touched.len() < tools {
                touched.resize(tools, 0);
            }
            // Each tool's first touch appends it to `touched`: the store is unconditional
            // (a later one overwrites it) and only the count depends on the test, so the
            // loop has no branch on the data.
            let (acc, touched) = (acc.as_mut_slice(), touched.as_mut_slice());
            let mut count = 0;
            for (qi, term) in terms.iter().enumerate() {
                let Some(id) = term.id else { continue };
                let bit = 1_u64 << qi;
                for &(doc, impact) in self.postings.list(id) {
                    let Some(a) = acc.get_mut(doc as usize) else {
                        continue;
                    };
                    if let Some(slot) = touched.get_mut(count) {
                        *slot = doc;
                    }
                    count += usize::from(a.mask == 0);
                    a.score += impact;
                    a.mask |= bit;
                }
            }
            let touched: &[u32] = touched.get(..count).unwrap_or_default();
            finish(acc, touched)
        })
    }
    /// The request's distinct terms, in order of first appearance, then any compound of
    /// two adjacent words that the catalogue knows as one word, right after its second word.
    fn query_terms(&self, query: &str) -> Vec<QueryTerm> {
        let mut terms: Vec<QueryTerm> = Vec::new();
        let mut stems = Stems::default();
        let mut buf = String::new();
        let mut joined = String::new();
        // The previous word, if it was not a stop word, and its term's position.
        let mut before = String::new();
        let mut before_at: Option<usize> = None;
        for_each_token(query, &mut buf, |token| {
            if terms.len() + 2 > MAX_QUERY_TERMS || stem::is_stop_word(token) {
                before_at = None;
                return;
            }
            let position = self.push_term(&mut terms, &mut stems, token, || token.to_owned(), None);
            if let (Some(first), Some(at)) = (before_at.take(), position) {
                joined.clear();
                joined.push_str(&before);
                joined.push_str(token);
                let explains = (1_u64 << first) | (1_u64 << at);
                let surface = || format!("{before} {token}");
                self.push_term(&mut terms, &mut stems, &joined, surface, Some(explains));
            }
            if let Some(at) = position {
                before.clear();
                before.push_str(token);
                before_at = Some(at);
            }
        });
        terms
    }

    /// The words of `query` that this catalogue uses (its own or as one half of a compound
    /// it writes as one word, such as "zip code"), in order, joined by spaces; stop words
    /// and every word no tool mentions are left out.
    ///
    /// A search tool the model calls with a sentence ([`Compressed`](crate::Compressed)'s
    /// `q`) searches this when the whole request abstains: the words a request adds that
    /// no tool mentions ("with Bob next Tuesday") then cannot turn a clear match into
    /// "nothing fits", while a request whose catalogue words fit nothing still abstains.
    ///
    /// ```
    /// use chef_compress::search::CatalogIndex;
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let tools = [ToolDefinition::new("create_event", json!({"type": "object"}))
    ///     .with_description("Schedule a meeting in the calendar.")];
    /// let index = CatalogIndex::build(&tools);
    /// assert_eq!(
    ///     index.known_words("schedule a meeting with Bob next Tuesday at 10am"),
    ///     "schedule meeting"
    /// );
    /// ```
    pub fn known_words(&self, query: &str) -> String {
        let mut tokens: Vec<String> = Vec::new();
        let mut buf = String::new();
        for_each_token(query, &mut buf, |token| {
            if !stem::is_stop_word(token) {
                tokens.push(token.to_owned());
            }
        });
        let known = |word: &str| self.terms.contains_key(stem(word).as_ref());
        // A word is kept when the catalogue knows it, or it makes a known compound with
        // the word before or after it.
        let compound: Vec<bool> = tokens
            .windows(2)
            .map(|pair| known(&pair.concat()))
            .collect();
        let keep = tokens.iter().enumerate().map(|(i, token)| {
            known(token)
                || compound.get(i).copied().unwrap_or(false)
                || i.checked_sub(1)
                    .and_then(|before| compound.get(before))
                    .copied()
                    .unwrap_or(false)
        });
        let mut out = String::new();
        for (token, keep) in tokens.iter().zip(keep) {
            if keep {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(token);
            }
        }
        out
    }

    /// For a search tool the model calls with a sentence: when `query` as a whole abstains,
    /// the request's words that this catalogue uses ([`known_words`](Self::known_words)),
    /// if they alone find a tool by this index's rule *and* the words the best hit matches
    /// weigh at least as much as one word of a single tool (the IDF of the rarest word).
    /// `None` when the whole request is answered, or its catalogue words fit nothing.
    ///
    /// The words a request adds that no tool mentions ("with Bob next Tuesday at 10am")
    /// then cannot turn a clear match into "nothing fits"; the weight floor keeps a request
    /// that shares only common words with the catalogue abstaining. On retrieval-149 (the
    /// floor was chosen on the calibrate half: half and three quarters of the rarest weight
    /// let through 14 and 5 of its 30 unanswerable requests, the whole weight 1): held out,
    /// 7 of 75 answerable requests find nothing (12 without the retry) and 27 of 30
    /// unanswerable ones still do (27 without it); a test in `q_sentences.rs` pins these.
    pub fn sentence_fallback(&self, query: &str) -> Option<String> {
        if !self.search(query, 1).abstained {
            return None;
        }
        let known = self.known_words(query);
        if known.is_empty() {
            return None;
        }
        let found = self.search(&known, 1);
        (!found.abstained && found.evidence >= self.unknown_idf).then_some(known)
    }

    /// The weight of known term `id`: its IDF, over [`WEIGHT_CATALOGUE_FLOOR`] tools when
    /// the catalogue has fewer (the same tools use it; the others are counted as not).
    fn weight_idf(&self, id: u32) -> f32 {
        if self.names.len() >= WEIGHT_CATALOGUE_FLOOR {
            self.postings.idf(id)
        } else {
            bm25::idf(WEIGHT_CATALOGUE_FLOOR, self.postings.list(id).len())
        }
    }

    /// Adds `word` unless its stem is already a term; returns the position of its term.
    /// A compound (`explains` given) is added only when the catalogue knows it.
    fn push_term(
        &self,
        terms: &mut Vec<QueryTerm>,
        stems: &mut Stems,
        word: &str,
        surface: impl FnOnce() -> String,
        explains: Option<u64>,
    ) -> Option<usize> {
        let stemmed = stem(word);
        if let Some(at) = stems.position(&stemmed) {
            return Some(at);
        }
        let id = self.terms.get(stemmed.as_ref()).copied();
        if explains.is_some() && id.is_none() {
            return None;
        }
        let at = terms.len();
        stems.push(&stemmed);
        terms.push(QueryTerm {
            surface: surface(),
            id,
            idf: id.map_or(0.0, |id| self.weight_idf(id)),
            has_digit: word.chars().any(char::is_numeric),
            compound: explains.is_some(),
            explains: explains.unwrap_or(1 << at),
        });
        Some(at)
    }
}

/// The stems of a request's terms, in term order, in one buffer.
#[derive(Default)]
struct Stems {
    text: String,
    ends: Vec<usize>,
}

impl Stems {
    fn position(&self, stem: &str) -> Option<usize> {
        let mut start = 0;
        self.ends.iter().position(|&end| {
            let found = self.text.get(start..end) == Some(stem);
            start = end;
            found
        })
    }

    fn push(&mut self, stem: &str) {
        self.text.push_str(stem);
        self.ends.push(self.text.len());
    }
}

/// Per-thread query scratch: a score slot per tool, and the tools touched so far.
struct Scratch {
    acc: Vec<Acc>,
    touched: Vec<u32>,
}

/// A candidate: score, tool, bits of the terms it matched.
type Candidate = (f32, u32, u64);

/// Every tool's lexical score for one request ([`CatalogIndex::score_all`]).
pub(crate) struct LexicalScores {
    /// BM25F score per tool, in catalogue order (0 when it matched no word).
    pub(crate) scores: Vec<f32>,
    /// Bits of the request's terms each tool matched, in catalogue order.
    masks: Vec<u64>,
    terms: Vec<QueryTerm>,
    /// Each term's weight with [`Abstention::NEVER`] (unknown words at full weight), and
    /// their sum: what a hit's coverage is a share of.
    weights: Vec<f32>,
    total_weight: f32,
    /// The weight of the request words the best tool explains (0 when none matched):
    /// [`SearchResults::evidence`] of a search that never abstains.
    pub(crate) evidence: f32,
    /// Whether the index's own rule ([`IndexOptions::abstention`]) abstains on the request.
    pub(crate) own_abstains: bool,
}

impl LexicalScores {
    /// The request's terms, as the index read them.
    pub(crate) fn terms(&self) -> &[QueryTerm] {
        &self.terms
    }

    /// The bits of [`terms`](Self::terms) each of `docs` matched.
    pub(crate) fn masks(&self, docs: &[usize]) -> Vec<u64> {
        docs.iter()
            .map(|&d| self.masks.get(d).copied().unwrap_or(0))
            .collect()
    }

    /// What tool `doc` matched: its coverage of the request (`0..=1`) and the request
    /// words it matched, as a [`Hit`] reports them; 0 and none when it matched nothing.
    pub(crate) fn describe(&self, doc: usize) -> (f32, Vec<String>) {
        let mask = self.masks.get(doc).copied().unwrap_or(0);
        if mask == 0 || self.total_weight <= 0.0 {
            return (0.0, Vec::new());
        }
        let explained = explained_by_mask(&self.terms, mask);
        let coverage = (masked_sum(&self.weights, explained) / self.total_weight).min(1.0);
        (coverage, matched_words(&self.terms, mask))
    }
}

/// The request words (bits into `terms`) that matching the terms in `mask` explains: a
/// compound explains its two words.
fn explained_by_mask(terms: &[QueryTerm], mask: u64) -> u64 {
    terms
        .iter()
        .enumerate()
        .filter(|(qi, _)| mask & (1 << qi) != 0)
        .fold(0, |explained, (_, term)| explained | term.explains)
}

/// The request's words (as typed) of the terms in `mask`, in request order: a hit's
/// [`Hit::matched_terms`].
fn matched_words(terms: &[QueryTerm], mask: u64) -> Vec<String> {
    terms
        .iter()
        .enumerate()
        .filter(|(qi, _)| mask & (1 << qi) != 0)
        .map(|(_, t)| t.surface.clone())
        .collect()
}

/// The sum of the `weights` whose bits are set in `bits`.
fn masked_sum(weights: &[f32], bits: u64) -> f32 {
    weights
        .iter()
        .enumerate()
        .filter(|(qi, _)| bits & (1 << qi) != 0)
        .map(|(_, w)| w)
        .sum()
}

/// The best `k` of the `touched` tools, best first: higher score, then the tool's name,
/// then its catalogue position. Every touched slot of `acc` is read and reset to zero.
///
/// Small `k` (the usual case) keeps a sorted buffer of `k` and rejects most candidates by
/// one float comparison against the worst kept; large `k` partitions once, then sorts.
fn top_k<'n>(
    acc: &mut [Acc],
    touched: &[u32],
    k: usize,
    name_of: impl Fn(u32) -> &'n str,
) -> Vec<(u32, f32, u64)> {
    use std::cmp::Ordering;
    let better = |a: &Candidate, b: &Candidate| -> Ordering {
        b.0.total_cmp(&a.0)
            .then_with(|| name_of(a.1).cmp(name_of(b.1)))
            .then(a.1.cmp(&b.1))
    };
    let mut take = |doc: u32| -> Candidate {
        let a = acc
            .get_mut(doc as usize)
            .map(std::mem::take)
            .unwrap_or_default();
        (a.score, doc, a.mask)
    };
    let mut top: Vec<Candidate> = if k > 64 || touched.len() <= k.max(64) {
        let mut all: Vec<Candidate> = touched.iter().map(|&doc| take(doc)).collect();
        if all.len() > k && k > 0 {
            all.select_nth_unstable_by(k - 1, better);
        }
        all.truncate(k);
        all.sort_unstable_by(better);
        all
    } else {
        let mut top: Vec<Candidate> = Vec::with_capacity(k + 1);
        let mut worst = f32::NEG_INFINITY;
        for &doc in touched {
            let candidate = take(doc);
            if top.len() == k
                && (candidate.0 < worst
                    || top
                        .last()
                        .is_none_or(|w| better(&candidate, w) != Ordering::Less))
            {
                continue;
            }
            let at = top.partition_point(|kept| better(kept, &candidate) == Ordering::Less);
            top.insert(at, candidate);
            top.truncate(k);
            if top.len() == k {
                worst = top.last().map_or(f32::NEG_INFINITY, |w| w.0);
            }
        }
        top
    };
    top.drain(..)
        .map(|(score, doc, mask)| (doc, score, mask))
        .collect()
}

/// Deepest schema nesting walked; deeper parts of pathological schemas are ignored.
const MAX_SCHEMA_DEPTH: usize = 32;

/// How many tools' texts are collected before any of them is looked up.
const BATCH: usize = 16;

/// The fewest tools per part for which indexing on several threads pays for starting them.
const PARALLEL_MIN_TOOLS: usize = 2_048;

/// The most parts (threads) a catalogue is indexed in.
const MAX_PARTS: usize = 4;

/// Builds a [`CatalogIndex`] from tools handed over one at a time, keeping none of them: a
/// large catalogue read from a file (`chef_ir::for_each_tool`) is indexed without every
/// schema held at once.
///
/// The index is the one [`CatalogIndex::build_with`] makes of the same tools in the same
/// order, bit for bit; it is built on the calling thread.
///
/// ```
/// use chef_compress::search::{CatalogBuilder, IndexOptions};
///
/// let mut builder = CatalogBuilder::new(&IndexOptions::default());
/// chef_ir::for_each_tool(
///     r#"[{"name": "gdrive_sheets_append_rows", "description": "Append new rows to a sheet."},
///         {"name": "reverse_geocode", "description": "Convert coordinates into an address."}]"#,
///     |tool, _| builder.push(tool),
/// )?;
/// let index = builder.finish();
/// let found = index.search("append rows to my sheet", 1);
/// assert_eq!(found.hits[0].tool.as_str(), "gdrive_sheets_append_rows");
/// # Ok::<(), chef_ir::LoadError>(())
/// ```
#[derive(Debug)]
pub struct CatalogBuilder {
    part: IndexPart,
    /// Tools not indexed yet, at most [`BATCH`].
    pending: Vec<ToolDefinition>,
    options: IndexOptions,
}

impl CatalogBuilder {
    /// A builder of an index with these options.
    pub fn new(options: &IndexOptions) -> Self {
        Self {
            part: IndexPart::new(options, 0),
            pending: Vec::with_capacity(BATCH),
            options: *options,
        }
    }

    /// Adds the next tool.
    pub fn push(&mut self, tool: ToolDefinition) {
        self.pending.push(tool);
        if self.pending.len() >= BATCH {
            self.flush();
        }
    }

    /// The number of tools pushed so far.
    pub fn len(&self) -> usize {
        self.part.names.len() + self.pending.len()
    }

    /// True before the first tool.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of every tool pushed.
    pub fn finish(mut self) -> CatalogIndex {
        self.flush();
        CatalogIndex::finish(vec![self.part], &self.options)
    }

    fn flush(&mut self) {
        self.part.add(self.pending.iter().map(doc_of));
        self.pending.clear();
    }
}

/// How many parts to index `tools` tools in: one per available core, each of at least
/// [`PARALLEL_MIN_TOOLS`] tools, at most [`MAX_PARTS`] and at most `threads` unless that
/// is 0.
fn parts_for(tools: usize, threads: usize) -> usize {
    let mut most = (tools / PARALLEL_MIN_TOOLS).min(MAX_PARTS);
    if threads > 0 {
        most = most.min(threads);
    }
    if most < 2 {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |cores| cores.get().min(most))
}

pub(crate) fn doc_of(tool: &ToolDefinition) -> Doc<'_> {
    Doc {
        name: tool.name.as_str(),
        tags: &tool.tags,
        description: &tool.description,
        title: tool.annotations.title.as_deref(),
        schema: &tool.input_schema,
    }
}

/// The texts of a run of consecutive tools, tokenised.
#[derive(Debug)]
struct IndexPart {
    builder: bm25::Builder,
    names: Vec<ToolName>,
    /// Each tool's required parameters, when the second stage weighs argument evidence.
    args: Vec<Vec<rerank::RawArg>>,
    gather_args: bool,
}

impl IndexPart {
    fn new(options: &IndexOptions, tools: usize) -> Self {
        let mut builder = bm25::Builder::new(options.weights.as_array(), options.k1);
        builder.reserve(tools);
        let gather_args = options.rerank.arguments_on();
        Self {
            builder,
            names: Vec::with_capacity(tools),
            args: Vec::with_capacity(if gather_args { tools } else { 0 }),
            gather_args,
        }
    }

    /// Adds `docs`, a batch at a time: first every text of the batch is found and keyed
    /// (its hash reads its first and last bytes), then each is looked up and indexed; see
    /// `bm25::TextKey`.
    fn add<'a>(&mut self, mut docs: impl Iterator<Item = Doc<'a>>) {
        let mut stack = Vec::new();
        let mut batch: Vec<Doc<'a>> = Vec::with_capacity(BATCH);
        let mut parts: Vec<Part<'a>> = Vec::new();
        let mut ends: Vec<usize> = Vec::with_capacity(BATCH);
        let builder = &mut self.builder;
        loop {
            batch.clear();
            batch.extend(docs.by_ref().take(BATCH));
            if batch.is_empty() {
                break;
            }
            parts.clear();
            ends.clear();
            for doc in &batch {
                parts.push(Part::Name(doc.name));
                for tag in doc.tags {
                    parts.push(Part::Text(bm25::TAGS, bm25::TextKey::new(tag)));
                }
                parts.push(Part::Text(
                    bm25::DESCRIPTION,
                    bm25::TextKey::new(doc.description),
                ));
                if let Some(title) = doc.title {
                    parts.push(Part::Text(bm25::DESCRIPTION, bm25::TextKey::new(title)));
                }
                collect_schema(&mut parts, &mut stack, doc.schema);
                ends.push(parts.len());
            }
            let mut start = 0;
            for (doc, &end) in batch.iter().zip(&ends) {
                builder.start_doc();
                for part in parts.get(start..end).unwrap_or_default() {
                    match *part {
                        // Names are unique within a catalogue: remembering them would only
                        // fill the memo.
                        Part::Name(name) => builder.add_owned_text(bm25::NAME, name),
                        Part::Text(field, key) => builder.add_text(field, key),
                        Part::Number(n) => {
                            builder.add_owned_text(bm25::ENUM_VALUES, &n.to_string());
                        }
                    }
                }
                start = end;
                self.names.push(ToolName::from(doc.name));
                if self.gather_args {
                    self.args.push(rerank::required_args(doc.schema));
                }
            }
        }
    }
}

/// One text of a tool, collected before the batch is indexed.
#[derive(Clone, Copy)]
enum Part<'a> {
    /// A text that may repeat across tools (description, tag, parameter, enum value).
    Text(usize, bm25::TextKey<'a>),
    /// The tool's name.
    Name(&'a str),
    /// A number among the enum or `const` values, indexed by its decimal text.
    Number(&'a serde_json::Number),
}

/// Collects parameter names, descriptions and enum values found anywhere in `schema`: under
/// `properties`, `items`, `prefixItems`, `additionalProperties`, `not`, `anyOf`, `oneOf`,
/// `allOf`, `$defs` and `definitions`. One pass over each object's keys.
fn collect_schema<'a>(
    parts: &mut Vec<Part<'a>>,
    stack: &mut Vec<(&'a Value, usize)>,
    schema: &'a Value,
) {
    stack.clear();
    stack.push((schema, 0));
    while let Some((node, depth)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let deeper = depth < MAX_SCHEMA_DEPTH;
        // The value's kind is tested before its key: the kind sits in the map's entry, the
        // key's bytes behind a pointer, and a key whose length differs from every name
        // wanted for its kind (`type`, `default`, `format`) is rejected without reading them.
        for (key, value) in map {
            let key = key.as_str();
            match value {
                Value::String(text) if depth > 0 && key == "description" => {
                    parts.push(Part::Text(
                        bm25::PARAM_DESCRIPTIONS,
                        bm25::TextKey::new(text),
                    ));
                }
                Value::Array(values) => match key {
                    "enum" => {
                        for value in values {
                            collect_value(parts, value);
                        }
                    }
                    "anyOf" | "oneOf" | "allOf" | "prefixItems" | "items" if deeper => {
                        stack.extend(values.iter().map(|s| (s, depth + 1)));
                    }
                    "const" => collect_value(parts, value),
                    _ => {}
                },
                Value::Object(properties) => match key {
                    "properties" if deeper => {
                        for (name, sub) in properties {
                            parts.push(Part::Text(bm25::PARAM_NAMES, bm25::TextKey::new(name)));
                            stack.push((sub, depth + 1));
                        }
                    }
                    "items" | "additionalProperties" | "not" if deeper => {
                        stack.push((value, depth + 1));
                    }
                    "$defs" | "definitions" if deeper => {
                        stack.extend(properties.values().map(|s| (s, depth + 1)));
                    }
                    "const" => collect_value(parts, value),
                    _ => {}
                },
                _ if key == "const" => collect_value(parts, value),
                _ => {}
            }
        }
    }
}

fn collect_value<'a>(parts: &mut Vec<Part<'a>>, value: &'a Value) {
    match value {
        Value::String(s) => parts.push(Part::Text(bm25::ENUM_VALUES, bm25::TextKey::new(s))),
        // Numbers are rare in enums; their text is made when indexed, and not remembered.
        Value::Number(n) => parts.push(Part::Number(n)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real corpus, replicated under new names to `tools` tools, some with a suffix on
    /// their description so that not every text repeats.
    fn catalogue(tools: usize) -> Vec<ToolDefinition> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/real-mcp-tools.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let real = chef_ir::load_tools_from_str(&text).unwrap().tools;
        real.iter()
            .cycle()
            .take(tools)
            .enumerate()
            .map(|(i, tool)| {
                let mut tool = tool.clone();
                tool.name = ToolName::new(format!("s{}_{}", i / real.len(), tool.name));
                if i % 7 == 3 {
                    tool.description
                        .push_str(&format!(" variant{i} unseen{}", i % 5));
                }
                tool
            })
            .collect()
    }

    /// `score_all` (what the hybrid reads) is the full ranking it replaced, bit for bit:
    /// every tool's score, coverage and matched words as `search_with(k = all, NEVER)`
    /// reports them, its evidence, and the index's own verdict as `search` gives it; on
    /// every labelled request of retrieval-149 and a few edge cases.
    #[test]
    fn scoring_every_tool_is_the_full_ranking_without_sorting_it() {
        let tools = catalogue(149);
        let index = CatalogIndex::build(&tools);
        let labels = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/retrieval-149.jsonl"
        ))
        .unwrap();
        let mut queries: Vec<String> = labels
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["query"].as_str().map(str::to_owned))
            .collect();
        assert!(queries.len() > 200);
        queries.extend(
            [
                "",
                "   ",
                "the a of",
                "zip code 94110",
                "zzqx unknownword",
                "ÄÖÜ 東京",
            ]
            .map(str::to_owned),
        );
        for query in &queries {
            let all = index.score_all(query);
            let full = index.search_with(query, tools.len(), &Abstention::NEVER);
            assert_eq!(all.evidence.to_bits(), full.evidence.to_bits(), "{query}");
            assert_eq!(
                all.own_abstains,
                index.search(query, 1).abstained,
                "{query}"
            );
            let mut expected = vec![(0_u32, 0.0_f32, Vec::<String>::new()); tools.len()];
            for hit in &full.hits {
                expected[hit.index] =
                    (hit.score.to_bits(), hit.coverage, hit.matched_terms.clone());
            }
            for (doc, (score, coverage, matched)) in expected.iter().enumerate() {
                let (c, m) = all.describe(doc);
                assert_eq!(all.scores[doc].to_bits(), *score, "{query} {doc}");
                assert_eq!(
                    (c.to_bits(), &m),
                    (coverage.to_bits(), matched),
                    "{query} {doc}"
                );
            }
        }
    }

    /// Everything an index holds, with floats as bits: names, terms, postings, IDFs.
    type Fingerprint = (
        Vec<ToolName>,
        Vec<(String, u32)>,
        Vec<Vec<(u32, u32)>>,
        Vec<u32>,
    );

    fn fingerprint(index: &CatalogIndex) -> Fingerprint {
        let mut terms: Vec<(String, u32)> = index
            .terms
            .iter()
            .map(|(s, &id)| (s.to_string(), id))
            .collect();
        terms.sort();
        let count = u32::try_from(index.terms.len()).unwrap();
        let lists = (0..count)
            .map(|id| {
                index
                    .postings
                    .list(id)
                    .iter()
                    .map(|&(tool, impact)| (tool, impact.to_bits()))
                    .collect()
            })
            .collect();
        let idf = (0..count)
            .map(|id| index.postings.idf(id).to_bits())
            .collect();
        (index.names.clone(), terms, lists, idf)
    }

    #[test]
    fn an_index_built_in_parts_is_the_single_threaded_index_bit_for_bit() {
        let tools = catalogue(1_000);
        let options = IndexOptions::default();
        let whole = CatalogIndex::build_in_parts(&tools, doc_of, &options, 1);
        let expected = fingerprint(&whole);
        assert_eq!(expected.0.len(), 1_000);
        assert!(expected.2.iter().map(Vec::len).sum::<usize>() > 10_000);
        // Parts of unequal sizes too (1,000 in 3 and 7 parts), and more parts than tools
        // would need.
        for parts in [2, 3, 7] {
            let split = CatalogIndex::build_in_parts(&tools, doc_of, &options, parts);
            assert!(fingerprint(&split) == expected, "{parts} parts");
            let request = "add three new rows to the bottom of the tracker spreadsheet";
            assert_eq!(split.search(request, 10), whole.search(request, 10));
        }
        // The sequential path that other callers use builds the same index.
        let from = CatalogIndex::build_from(tools.iter().map(doc_of), &options);
        assert!(fingerprint(&from) == expected);
    }

    /// Tools pushed one at a time give the index built from the slice, bit for bit: at the
    /// batch boundaries and past them, and with the second stage's required parameters
    /// gathered.
    #[test]
    fn a_catalogue_pushed_tool_by_tool_is_the_built_index_bit_for_bit() {
        let tools = catalogue(2_000);
        let gathering = IndexOptions {
            rerank: Rerank {
                argument_weight: 0.5,
                ..Rerank::default()
            },
            ..IndexOptions::default()
        };
        for options in [IndexOptions::default(), gathering] {
            for n in [0, 1, BATCH - 1, BATCH, BATCH + 1, 149, 2_000] {
                let expected = CatalogIndex::build_with(&tools[..n], &options);
                let mut builder = CatalogBuilder::new(&options);
                for tool in &tools[..n] {
                    builder.push(tool.clone());
                }
                assert_eq!(builder.len(), n);
                let built = builder.finish();
                assert!(fingerprint(&built) == fingerprint(&expected), "{n} tools");
                assert_eq!(built.args, expected.args, "{n} tools");
                assert_eq!(built.unknown_idf.to_bits(), expected.unknown_idf.to_bits());
            }
        }
    }

    #[test]
    fn small_catalogues_and_one_thread_stay_on_the_calling_thread() {
        assert_eq!(parts_for(0, 0), 1);
        assert_eq!(parts_for(PARALLEL_MIN_TOOLS * 2 - 1, 0), 1);
        assert_eq!(parts_for(100_000, 1), 1);
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        assert_eq!(parts_for(100_000, 0), cores.clamp(1, MAX_PARTS));
        assert_eq!(parts_for(PARALLEL_MIN_TOOLS * 2, 0), cores.clamp(1, 2));
    }

    #[test]
    fn an_empty_catalogue_in_parts_is_an_empty_index() {
        let index = CatalogIndex::build_in_parts(&[], doc_of, &IndexOptions::default(), 3);
        assert!(index.is_empty());
        assert!(index.search("anything", 5).hits.is_empty());
    }
}
