//! The second stage of a search: re-ranking the best candidates so that a tool's sibling
//! does not win on words the request never used.
//!
//! Many wrong first answers are a sibling of the right tool: `order_path_financial` for
//! `order_path`, `Search_Flights_Multi_Stops` for `Search_Flights`, `get_x_details` for
//! `get_x`. BM25F rewards the words a name shares with the request but barely charges a
//! name for the words the request did not ask for, and siblings differ exactly in those.
//! So the best [`Rerank::depth`] candidates are scored again:
//!
//! `score × (1 − name_weight × unasked)`
//!
//! where `unasked` is the share of the tool's name words (stemmed, stop words left out) that
//! the request does not contain. Two siblings that explain the request equally well are
//! then ordered by how much of their names the request asked for; a tool whose name the
//! request does not touch at all is scaled down no more than any other such tool, so
//! orderings between unrelated tools change only when their scores are close. It is cheap
//! (the names of `depth` tools are tokenised per request, nothing is added to the index)
//! and deterministic (ties: name, then catalogue position, as in the first stage).

use chef_ir::ToolName;

use crate::search::{CatalogIndex, stem::is_stop_word, stem::stem, tokenise::for_each_token};

/// The second stage's settings ([`IndexOptions::rerank`](crate::search::IndexOptions::rerank)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rerank {
    /// How much a name word that the request does not contain costs, as a share of the
    /// score when none of the name's words are in the request (`0..=1`; 0 switches the
    /// stage off).
    pub name_weight: f32,
    /// How many of the first stage's best candidates are re-ranked (at least the number
    /// asked for are always considered).
    pub depth: usize,
    /// Which name words count as unasked.
    pub scope: RerankScope,
}

/// Which of a candidate's name words the second stage charges for when the request does
/// not contain them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RerankScope {
    /// Every word of the name.
    #[default]
    Name,
    /// Only the words that set the candidate apart from a sibling in the window (another
    /// candidate sharing a name word with it that lacks this word); a candidate with no
    /// sibling is not charged.
    Siblings,
}

impl Rerank {
    /// No second stage: the BM25F order as it is.
    pub const OFF: Self = Self {
        name_weight: 0.0,
        depth: 0,
        scope: RerankScope::Name,
    };

    /// Whether the stage changes anything.
    pub(crate) fn is_on(&self) -> bool {
        self.name_weight > 0.0 && self.name_weight.is_finite() && self.depth > 0
    }

    /// The multiplier of a candidate whose name has `unasked` (`0..=1`) of its words
    /// missing from the request.
    pub(crate) fn factor(&self, unasked: f32) -> f32 {
        1.0 - self.name_weight.clamp(0.0, 1.0) * unasked.clamp(0.0, 1.0)
    }
}

impl Default for Rerank {
    fn default() -> Self {
        Self::OFF
    }
}

impl CatalogIndex {
    /// The term ids of a request's words (what [`unasked_share`](Self::unasked_share)
    /// compares names with), sorted and deduplicated.
    pub(crate) fn request_ids(&self, query: &str) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .query_terms(query)
            .iter()
            .filter_map(|t| t.id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The unasked share of each of `docs` (a window of candidates, best first) under
    /// `scope`, in order.
    pub(crate) fn unasked(&self, docs: &[usize], request: &[u32], scope: RerankScope) -> Vec<f32> {
        match scope {
            RerankScope::Name => docs
                .iter()
                .map(|&doc| self.unasked_share(doc, request))
                .collect(),
            RerankScope::Siblings => self.sibling_unasked(docs, request),
        }
    }

    /// The name words (term ids, stop words left out, each once) of tool `doc`.
    pub(crate) fn name_ids(&self, doc: usize) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::new();
        let Some(name) = self.names.get(doc).map(ToolName::as_str) else {
            return ids;
        };
        let mut buf = String::new();
        for_each_token(name, &mut buf, |token| {
            if is_stop_word(token) {
                return;
            }
            if let Some(&id) = self.terms.get(stem(token).as_ref())
                && !ids.contains(&id)
            {
                ids.push(id);
            }
        });
        ids
    }

    /// For each of `docs` (a window of candidates), the share of its name words that set it
    /// apart from a sibling without the request asking for them: words not in `request`
    /// that some other candidate sharing a name word with it lacks. A candidate with no
    /// sibling in the window gets 0.
    pub(crate) fn sibling_unasked(&self, docs: &[usize], request: &[u32]) -> Vec<f32> {
        let names: Vec<Vec<u32>> = docs.iter().map(|&d| self.name_ids(d)).collect();
        names
            .iter()
            .enumerate()
            .map(|(i, own)| {
                if own.is_empty() {
                    return 0.0;
                }
                let siblings: Vec<&Vec<u32>> = names
                    .iter()
                    .enumerate()
                    .filter(|&(j, other)| j != i && other.iter().any(|w| own.contains(w)))
                    .map(|(_, other)| other)
                    .collect();
                let apart = own
                    .iter()
                    .filter(|w| request.binary_search(w).is_err())
                    .filter(|w| siblings.iter().any(|s| !s.contains(w)))
                    .count();
                apart as f32 / own.len() as f32
            })
            .collect()
    }

    /// The share of the name words of tool `doc` that are not among `request` (sorted term
    /// ids): 0 when the request contains every word of the name, 1 when it contains none,
    /// and 0 for a name with no word the index keeps.
    pub(crate) fn unasked_share(&self, doc: usize, request: &[u32]) -> f32 {
        let Some(name) = self.names.get(doc).map(ToolName::as_str) else {
            return 0.0;
        };
        let mut seen: Vec<u32> = Vec::new();
        let mut buf = String::new();
        let (mut words, mut unasked) = (0_u32, 0_u32);
        for_each_token(name, &mut buf, |token| {
            if is_stop_word(token) {
                return;
            }
            let Some(&id) = self.terms.get(stem(token).as_ref()) else {
                return;
            };
            if seen.contains(&id) {
                return;
            }
            seen.push(id);
            words += 1;
            unasked += u32::from(request.binary_search(&id).is_err());
        });
        if words == 0 {
            0.0
        } else {
            unasked as f32 / words as f32
        }
    }
}
