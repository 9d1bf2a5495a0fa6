//! Finding a tool from what the model wrote: exact codes, separator-insensitive names,
//! did-you-mean for near-miss codes, and the ranked `q(s=…)` search.
//!
//! The exact-code path (the canonical `t(f="a0")`) parses the code arithmetically and
//! allocates nothing. The other indexes are built once, on first need, so that compressing
//! a large catalogue stays linear and cheap while repeated lookups stay fast.

use std::collections::HashMap;

use super::{Compressed, Entry};
use crate::{
    search::{CatalogIndex, IndexOptions, dense::DenseConfig},
    similarity::similarity,
};

/// The score a did-you-mean suggestion must reach.
pub(crate) const SUGGESTION_FLOOR: u8 = 55;

/// `lower-case, then keep only a–z and 0–9`: the separator- and case-insensitive key.
pub(crate) fn norm_key(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .collect()
}

/// The normalisation [`similarity`] compares under: lower-case, without `_`, `-` and
/// whitespace (dots kept).
fn norm_similarity(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .filter(|c| !matches!(c, '_' | '-') && !c.is_whitespace())
        .collect()
}

/// Parses a level-3 code (`[a-z]+` then a decimal number without leading zeros) into
/// (namespace index, position in the namespace).
pub(crate) fn parse_code(code: &str) -> Option<(usize, usize)> {
    let bytes = code.as_bytes();
    let letters = bytes.iter().take_while(|b| b.is_ascii_lowercase()).count();
    let digits = bytes.get(letters..)?;
    if letters == 0 || letters > 6 || digits.is_empty() || digits.len() > 9 {
        return None;
    }
    if digits.len() > 1 && digits.first() == Some(&b'0') {
        return None;
    }
    let mut n: usize = 0;
    for &b in bytes.get(..letters)? {
        n = n * 26 + usize::from(b - b'a') + 1;
    }
    let mut oi: usize = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        oi = oi * 10 + usize::from(b - b'0');
    }
    Some((n - 1, oi))
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    One(u32),
    Ambiguous,
}

/// `norm_key` → tool, over every real name and then every code; a key claimed by two
/// different tools resolves to nothing.
#[derive(Debug, Default)]
pub(crate) struct NormIndex {
    map: HashMap<String, Slot>,
}

impl NormIndex {
    fn build(c: &Compressed) -> Self {
        let mut map: HashMap<String, Slot> = HashMap::with_capacity(c.entries.len() * 2);
        let keys = c
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, e.name.as_str()))
            .chain(
                c.entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (i, e.code.as_str())),
            );
        for (i, key) in keys {
            let key = norm_key(key);
            if key.is_empty() {
                continue;
            }
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            map.entry(key)
                .and_modify(|slot| {
                    if let Slot::One(j) = *slot
                        && j != i
                    {
                        *slot = Slot::Ambiguous;
                    }
                })
                .or_insert(Slot::One(i));
        }
        Self { map }
    }
}

/// Did-you-mean over codes without scanning them all.
///
/// A code can only score ≥ 55 against what the model wrote (`n`, normalised) when one of
/// the two contains the other: equal, prefix/suffix (85), a shared word (a code is one
/// word, so it is then a substring of `n`), or a substring of ≥ 3 characters (60); the
/// Levenshtein rule reaches 55 only for strings over 100 characters, which codes are not.
/// So the candidates are every substring of `n` that is a code, the first code with `n` as
/// a prefix or suffix, and the first code containing `n`. Each candidate is then scored
/// with the real [`similarity`] and the best (first in code order on ties) wins: the same
/// answer as scoring every code, in microseconds at any catalogue size.
#[derive(Debug, Default)]
pub(crate) struct CodeSuggestions {
    /// Entry index of each code-order position.
    order: Vec<u32>,
    /// Position of each entry in code order.
    position: Vec<u32>,
    /// Every non-empty prefix and suffix of a code → first code-order position, and how
    /// many codes have it (when more than one, a hidden code may share the first one's
    /// score unseen: [`Compressed::suggest_code`] then scores the hidden codes).
    affix_first: HashMap<Box<str>, (u32, u32)>,
    /// Every substring of ≥ 3 characters of a code → first code-order position, and how
    /// many codes hold it.
    infix_first: HashMap<Box<str>, (u32, u32)>,
    longest: usize,
}

impl CodeSuggestions {
    fn build(c: &Compressed) -> Self {
        let order: Vec<u32> = c
            .namespaces
            .iter()
            .flat_map(|ns| ns.members.iter().copied())
            .filter(|&m| m != super::HOLE)
            .collect();
        let mut position = vec![0u32; c.entries.len()];
        let mut affix_first = HashMap::new();
        let mut infix_first = HashMap::new();
        let mut longest = 0;
        for (pos, &entry) in order.iter().enumerate() {
            let pos = u32::try_from(pos).unwrap_or(u32::MAX);
            if let Some(slot) = position.get_mut(entry as usize) {
                *slot = pos;
            }
            let Some(code) = c.entries.get(entry as usize).map(|e| e.code.as_str()) else {
                continue;
            };
            longest = longest.max(code.len());
            // Codes are ASCII, so every byte offset is a char boundary. The first code with
            // a part keeps its position; each code counts once for a part it holds twice.
            let count = |map: &mut HashMap<Box<str>, (u32, u32)>, part: &str| {
                let slot = map.entry(part.into()).or_insert((pos, 0));
                slot.1 = slot.1.saturating_add(1);
            };
            let mut seen_affix: Vec<&str> = Vec::new();
            let mut seen_infix: Vec<&str> = Vec::new();
            for end in 1..=code.len() {
                for start in 0..end {
                    let Some(part) = code.get(start..end) else {
                        continue;
                    };
                    if (start == 0 || end == code.len()) && !seen_affix.contains(&part) {
                        seen_affix.push(part);
                        count(&mut affix_first, part);
                    }
                    if end - start >= 3 && !seen_infix.contains(&part) {
                        seen_infix.push(part);
                        count(&mut infix_first, part);
                    }
                }
            }
        }
        Self {
            order,
            position,
            affix_first,
            infix_first,
            longest,
        }
    }
}

impl Compressed {
    /// The tool a code names exactly.
    pub(crate) fn entry_by_code(&self, code: &str) -> Option<&Entry> {
        self.code_index(code)
            .and_then(|i| self.entries.get(i as usize))
    }

    /// The entry index of the tool a code names exactly.
    fn code_index(&self, code: &str) -> Option<u32> {
        let (ni, oi) = parse_code(code)?;
        let member = *self.namespaces.get(ni)?.members.get(oi)?;
        self.entries
            .get(member as usize)
            .filter(|e| e.code == code)
            .map(|_| member)
    }

    /// A map key (code or real name, with separator and case drift) → tool. A name written
    /// exactly as the catalogue has it finds its tool even when another tool's name differs
    /// from it only in separators or case (`a.b` and `a_b`).
    pub(crate) fn lookup(&self, key: &str) -> Option<&Entry> {
        if let Some(e) = self.entry_by_code(key).or_else(|| self.entry_by_name(key)) {
            return Some(e);
        }
        let index = self.norm_index.get_or_init(|| NormIndex::build(self));
        match index.map.get(&norm_key(key))? {
            Slot::One(i) => self.entries.get(*i as usize),
            Slot::Ambiguous => None,
        }
    }

    /// The code nearest to `written` scoring at least 55, if any, of a tool that is not
    /// `hidden` (asked with the tool's real name) — and only when no hidden tool's code
    /// scores as high: a near miss of a blocked tool's code is answered with no
    /// suggestion, never with the next-nearest tool (see
    /// [`nearest_open`](crate::similarity::nearest_open)).
    ///
    /// The candidates are found through [`CodeSuggestions`]; a hidden code among them that
    /// is as near stops the suggestion. A hidden code with the written text as an affix or
    /// infix may be unseen behind the first such code (the maps keep the first); only when
    /// the maps say several codes share it are the hidden tools' codes scored (one
    /// predicate call a tool, on an error path that is rare: a truncated code).
    pub(crate) fn suggest_code(
        &self,
        written: &str,
        hidden: &dyn Fn(&str) -> bool,
    ) -> Option<&str> {
        if written.is_empty() {
            return None;
        }
        let index = self
            .suggestions
            .get_or_init(|| CodeSuggestions::build(self));
        let n = norm_similarity(written);
        let mut candidates: Vec<u32> = Vec::new();
        if n.is_empty() {
            candidates.extend(index.order.first().copied());
        }
        for start in 0..n.len() {
            for end in start + 1..=(start + index.longest).min(n.len()) {
                if let Some(entry) = n.get(start..end).and_then(|part| self.code_index(part)) {
                    candidates.push(entry);
                }
            }
        }
        // Whether another code shares the written text as an affix or infix with the first
        // one found: it scores the same, and if it is hidden it must be seen.
        let mut shared = false;
        if n.len() <= index.longest {
            for map in [&index.affix_first, &index.infix_first] {
                if let Some(&(pos, count)) = map.get(n.as_str())
                    && let Some(&entry) = index.order.get(pos as usize)
                {
                    candidates.push(entry);
                    shared |= count > 1;
                }
            }
        }
        let mut best: Option<(u8, u32, &str)> = None;
        let mut best_hidden: Option<u8> = None;
        for entry in candidates {
            let Some(e) = self.entries.get(entry as usize) else {
                continue;
            };
            let score = similarity(written, &e.code);
            if hidden(&e.name) {
                best_hidden = best_hidden.max(Some(score));
                continue;
            }
            let pos = index
                .position
                .get(entry as usize)
                .copied()
                .unwrap_or(u32::MAX);
            let better = match best {
                None => true,
                Some((s, p, _)) => score > s || (score == s && pos < p),
            };
            if better {
                best = Some((score, pos, &e.code));
            }
        }
        let (score, _, code) = best.filter(|(score, _, _)| *score >= SUGGESTION_FLOOR)?;
        if best_hidden.is_some_and(|h| h >= score) {
            return None;
        }
        // Only when codes share the written affix or infix can a hidden one be as near
        // and unseen: then (rarely: a truncated code, say) the hidden tools' codes are
        // scored. Otherwise the candidates held every code that can reach the floor.
        let hidden_as_near = shared
            && self
                .entries
                .iter()
                .any(|e| hidden(&e.name) && similarity(written, &e.code) >= score);
        (!hidden_as_near).then_some(code)
    }

    /// Tools answering a `q(s=…)` search, at most `search_limit`.
    ///
    /// A non-blank request is ranked by the catalogue index ([`CatalogIndex`], BM25F over
    /// names, descriptions, tags, parameter names and descriptions and enum values, built
    /// on the first search): best first, and nothing when the index abstains (no tool fits
    /// well enough). A blank request lists the first tools in code order.
    ///
    /// With an embedding model ([`Compressed::with_embedder`]) the hybrid index ranks
    /// instead (BM25F mixed with cosine, abstaining on the highest cosine); if the model
    /// fails, the lexical index answers.
    pub(crate) fn search_hits(&self, request: &str) -> Vec<&Entry> {
        self.search_hits_k(request, self.search_limit)
    }

    /// [`search_hits`](Self::search_hits) among the tools that are not `hidden` (blocked):
    /// a hidden tool costs no place, and when one ranked, the others are listed only if a
    /// search of them alone (as if the hidden tools were not registered) does not abstain.
    /// When only a hidden tool fits, nothing does: the model is not handed the next-ranked
    /// tools, and cannot tell a hidden tool matched.
    pub(crate) fn search_hits_open(
        &self,
        request: &str,
        hidden: &dyn Fn(&str) -> bool,
    ) -> Vec<&Entry> {
        let open: Vec<bool> = self.entries.iter().map(|e| !hidden(&e.name)).collect();
        let hidden_count = open.iter().filter(|o| !**o).count();
        if hidden_count == 0 {
            return self.search_hits(request);
        }
        if request.trim().is_empty() {
            return self
                .code_order()
                .filter(|e| !hidden(&e.name))
                .take(self.search_limit)
                .collect();
        }
        let hits = self.search_hits_k(request, self.search_limit.saturating_add(hidden_count));
        let ranked_hidden = hits.iter().any(|e| hidden(&e.name));
        let kept: Vec<&Entry> = hits
            .into_iter()
            .filter(|e| !hidden(&e.name))
            .take(self.search_limit)
            .collect();
        if !ranked_hidden || kept.is_empty() || !self.open_search_abstains(request, open) {
            kept
        } else {
            Vec::new()
        }
    }

    /// Whether a search of the `open` entries alone abstains on `request` (the index of
    /// them is built once per set of open entries and kept).
    fn open_search_abstains(&self, request: &str, open: Vec<bool>) -> bool {
        let index = {
            let mut cache = self
                .open_index
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match cache.as_ref() {
                Some((mask, index)) if *mask == open => std::sync::Arc::clone(index),
                _ => {
                    let index = std::sync::Arc::new(self.build_open_index(&open));
                    *cache = Some((open, std::sync::Arc::clone(&index)));
                    index
                }
            }
        };
        index.abstains(request, self.search_limit)
    }

    /// The search index of the entries `open` marks: hybrid when a model is configured
    /// and embeds them, else lexical.
    fn build_open_index(&self, open: &[bool]) -> OpenIndex {
        let docs = || {
            self.entries
                .iter()
                .zip(open)
                .filter(|(_, o)| **o)
                .map(|(e, _)| e.doc())
        };
        if let Some(config) = &self.dense
            && let Ok(index) = crate::search::dense::HybridIndex::build_from(
                docs(),
                config.embedder.clone(),
                config.options,
            )
        {
            return OpenIndex::Hybrid(Box::new(index));
        }
        OpenIndex::Lexical(Box::new(CatalogIndex::build_from(
            docs(),
            &IndexOptions::default(),
        )))
    }

    /// The `k` best tools for `request` (see [`search_hits`](Self::search_hits)).
    fn search_hits_k(&self, request: &str, k: usize) -> Vec<&Entry> {
        if request.trim().is_empty() {
            return self.code_order().take(k).collect();
        }
        if k == 0 {
            return Vec::new();
        }
        if let Some(config) = &self.dense {
            let hybrid = self.hybrid_index.get_or_init(|| {
                crate::search::dense::HybridIndex::build_from(
                    self.entries.iter().map(|e| e.doc()),
                    config.embedder.clone(),
                    config.options,
                )
                .ok()
            });
            if let Some(index) = hybrid.as_ref()
                && let Ok(found) =
                    known_words_again(|text| index.search(text, k), index.lexical(), request)
            {
                return found
                    .hits
                    .iter()
                    .filter_map(|hit| self.entries.get(hit.index))
                    .collect();
            }
        }
        let index = self.search_index.get_or_init(|| {
            CatalogIndex::build_slice(&self.entries, |e| e.doc(), &IndexOptions::default())
        });
        let found = known_words_again(
            |text| Ok::<_, std::convert::Infallible>(index.search(text, k)),
            index,
            request,
        );
        found
            .map(|found| {
                found
                    .hits
                    .iter()
                    .filter_map(|hit| self.entries.get(hit.index))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A search index over some of the entries ([`Compressed::search_hits_open`]).
pub(crate) enum OpenIndex {
    /// BM25F mixed with the configured model.
    Hybrid(Box<crate::search::dense::HybridIndex>),
    /// BM25F alone.
    Lexical(Box<CatalogIndex>),
}

impl OpenIndex {
    /// Whether the index abstains on `request`, its catalogue words tried again as
    /// [`search_hits`](Compressed::search_hits) tries them.
    fn abstains(&self, request: &str, k: usize) -> bool {
        match self {
            Self::Hybrid(index) => known_words_again(
                |text| index.search(text, k.max(1)),
                index.lexical(),
                request,
            )
            .map_or(true, |found| found.abstained),
            Self::Lexical(index) => known_words_again(
                |text| Ok::<_, std::convert::Infallible>(index.search(text, k.max(1))),
                index,
                request,
            )
            .map_or(true, |found| found.abstained),
        }
    }
}

/// `search(request)`, or when that abstains and the request's catalogue words find a tool
/// ([`CatalogIndex::sentence_fallback`]), `search` of those words: a sentence's words that
/// no tool mentions never turn a clear match into "No matches".
fn known_words_again<E>(
    search: impl Fn(&str) -> Result<crate::search::SearchResults, E>,
    lexical: &CatalogIndex,
    request: &str,
) -> Result<crate::search::SearchResults, E> {
    let found = search(request)?;
    if !found.abstained {
        return Ok(found);
    }
    match lexical.sentence_fallback(request) {
        Some(known) => search(&known),
        None => Ok(found),
    }
}

impl Compressed {
    /// Ranks `q(s=…)` searches with the hybrid of BM25F and `config`'s model instead of
    /// BM25F alone. The tools are embedded on the first search; if embedding the tools
    /// fails, that search and every later one use the lexical index (the model is not
    /// tried again); if only a request fails to embed, that search does.
    #[must_use]
    pub fn with_embedder(mut self, config: DenseConfig) -> Self {
        self.dense = Some(config);
        self.hybrid_index = std::sync::OnceLock::new();
        self.open_index = std::sync::Mutex::new(None);
        self
    }
}
