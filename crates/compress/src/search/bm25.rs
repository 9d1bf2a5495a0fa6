//! BM25F postings: interned terms, per-field frequencies, and precomputed impacts.
//!
//! Each distinct text of the catalogue (a description, a parameter description shared by
//! forty tools, a name) is tokenised once into a *bag*: its term ids with counts. A token
//! costs one hash lookup of its lowercase form; the stem of each distinct form is computed
//! once. A tool is then a list of (field, bag) references.
//!
//! [`finish`] lays out the postings as compressed sparse rows in two passes over each
//! builder's tools, once average field lengths are known: the first counts document
//! frequencies, which fix every row's offset; the second sums each tool's field frequencies
//! in a dense scratch row and writes the tool, with its weighted, length-normalised
//! frequency turned into an impact, straight into its terms' rows. A large catalogue is
//! built by several builders, each over a run of consecutive tools on a thread of its own;
//! their term ids are merged into one numbering and each writes its own pieces of the
//! rows, so the postings are the same bit for bit as one builder's. The tools of term `t`
//! are `entries[offsets[t]..offsets[t + 1]]`, ascending, each with its impact beside it.
//! An impact is the term's whole BM25F contribution to that tool
//! (`idf * x * (k1 + 1) / (k1 + x)`, `x` the weighted, length-normalised frequency), so
//! scoring a request is additions only.

use std::collections::HashMap;

use crate::search::{
    stem::{is_stop_word, stem},
    tokenise::for_each_token,
};

/// The hasher of the term tables: fast and seedless. Nothing iterates these maps in a way
/// that reaches a result, so the hash function never affects output.
pub(super) type BuildFxHasher = rustc_hash::FxBuildHasher;

/// The number of fields a tool document has.
pub(super) const FIELDS: usize = 6;
pub(super) const NAME: usize = 0;
pub(super) const TAGS: usize = 1;
pub(super) const DESCRIPTION: usize = 2;
pub(super) const PARAM_NAMES: usize = 3;
pub(super) const PARAM_DESCRIPTIONS: usize = 4;
pub(super) const ENUM_VALUES: usize = 5;

/// BM25 length normalisation per field (`b`): none for tags, most for prose.
const B: [f32; FIELDS] = [0.3, 0.0, 0.75, 0.5, 0.75, 0.5];

/// Marks a lowercase form that is a stop word.
const STOP: u32 = u32::MAX;

/// BM25's inverse document frequency, never negative: `ln(1 + (n - df + 0.5) / (df + 0.5))`.
pub(super) fn idf(docs: usize, df: usize) -> f32 {
    let (n, df) = (docs as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// One entry of a term's postings list: a tool that has the term, and the term's whole
/// BM25F contribution to that tool's score. Tool and impact sit side by side so laying out
/// and reading a list touches one array, not two.
pub(super) type Posting = (u32, f32);

/// The finished postings.
#[derive(Debug, Clone, Default)]
pub(super) struct Postings {
    offsets: Vec<usize>,
    entries: Vec<Posting>,
    idf: Vec<f32>,
}

impl Postings {
    /// The tools that contain term `id`, ascending, each with the term's impact on it.
    pub(super) fn list(&self, id: u32) -> &[Posting] {
        let t = id as usize;
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&start), Some(&end)) => self.entries.get(start..end).unwrap_or_default(),
            _ => &[],
        }
    }

    /// The IDF of term `id`.
    pub(super) fn idf(&self, id: u32) -> f32 {
        self.idf.get(id as usize).copied().unwrap_or(0.0)
    }
}

/// A text as a memo key, with its hash computed when the key is made.
///
/// The hash covers the length, the first and last 16 bytes, and one byte of every 64:
/// equal texts hash equal, and the rare distinct texts that agree on all of these are told
/// apart by the full equality check. Reading one byte per cache line is what makes keys
/// cheap to compare later: keys are made for a whole batch of tools before any is looked
/// up, so the processor fetches the batch's texts from memory in parallel (independent
/// loads), instead of taking one cache miss after another in the comparisons.
#[derive(Debug, Clone, Copy)]
pub(super) struct TextKey<'a> {
    hash: u64,
    text: &'a str,
}

/// Up to 8 bytes from the start of `bytes`, little-endian, zero-padded.
fn word(bytes: &[u8]) -> u64 {
    if let Some(&w) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(w);
    }
    bytes.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b))
}

impl<'a> TextKey<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        // The multiplier of FxHash; any odd constant with well-mixed bits would do.
        const K: u64 = 0xf135_7aea_2e62_a9c5;
        let mix = |h: u64, w: u64| (h.rotate_left(26) ^ w).wrapping_mul(K);
        let bytes = text.as_bytes();
        let n = bytes.len();
        let tail = bytes.get(n.saturating_sub(16)..).unwrap_or_default();
        let mut h = mix(n as u64, word(bytes));
        h = mix(h, word(bytes.get(8..).unwrap_or_default()));
        h = mix(h, word(tail));
        h = mix(h, word(tail.get(8..).unwrap_or_default()));
        let sampled = bytes
            .iter()
            .step_by(64)
            .fold(0_u64, |acc, &b| acc.rotate_left(7) ^ u64::from(b));
        Self {
            hash: mix(h, sampled),
            text,
        }
    }
}

/// A remembered text: where its copy sits in the builder's arena, its bag, and the next
/// remembered text with the same hash.
#[derive(Debug, Clone, Copy)]
struct Memo {
    start: usize,
    end: usize,
    bag: (u32, u32, u32),
    next: Option<u32>,
}

/// A tool's reference to one of its texts: the bag's range in `bags`, and the field.
#[derive(Debug, Clone, Copy)]
struct Ref {
    start: u32,
    end: u32,
    field: u8,
}

/// Collects tools one at a time. A text seen before is not tokenised again: each distinct
/// text is copied once into a compact arena, so the comparisons that recognise a repeat
/// read a few hundred kilobytes that stay in cache, not texts scattered over the catalogue.
#[derive(Debug)]
pub(super) struct Builder {
    weights: [f32; FIELDS],
    k1: f32,
    /// Lowercase form -> term id, or [`STOP`].
    forms: HashMap<Box<str>, u32, BuildFxHasher>,
    /// Stem -> term id.
    terms: HashMap<Box<str>, u32, BuildFxHasher>,
    /// Text -> its bag (range in `bags`) and its length in tokens.
    texts: HashMap<u64, u32, BuildFxHasher>,
    /// The remembered texts (`texts` points at the latest of each hash).
    memo: Vec<Memo>,
    /// The remembered texts' copies, one after another.
    arena: String,
    /// (term, count) bags of the texts seen, each sorted by term.
    bags: Vec<(u32, u16)>,
    /// Scratch: the term ids of the text being tokenised.
    ids: Vec<u32>,
    /// Scratch: the current lowercase piece.
    buf: String,
    /// Every tool's text references, tool after tool.
    refs: Vec<Ref>,
    /// Where each tool's references start in `refs`.
    doc_starts: Vec<usize>,
    /// Tokens per field, per tool.
    lengths: Vec<[u32; FIELDS]>,
}

impl Builder {
    /// A builder scoring with these field weights and saturation. A weight that is not a
    /// positive finite number switches its field off; `k1` below 0 (or NaN) counts as 0.
    pub(super) fn new(weights: [f32; FIELDS], k1: f32) -> Self {
        Self {
            weights: weights.map(|w| if w.is_finite() && w > 0.0 { w } else { 0.0 }),
            k1: if k1.is_finite() { k1.max(0.0) } else { 0.0 },
            forms: HashMap::default(),
            terms: HashMap::default(),
            texts: HashMap::default(),
            memo: Vec::new(),
            arena: String::new(),
            bags: Vec::new(),
            ids: Vec::new(),
            buf: String::new(),
            refs: Vec::new(),
            doc_starts: Vec::new(),
            lengths: Vec::new(),
        }
    }

    /// Makes room for `tools` more tools.
    pub(super) fn reserve(&mut self, tools: usize) {
        self.doc_starts.reserve(tools);
        self.lengths.reserve(tools);
        // The real corpus averages seven texts per tool (name, description, parameter
        // names and descriptions, enum values).
        self.refs.reserve(tools.saturating_mul(8));
    }

    /// Starts the next tool.
    pub(super) fn start_doc(&mut self) {
        self.doc_starts.push(self.refs.len());
        self.lengths.push([0; FIELDS]);
    }

    /// Adds the text of `key` to `field` of the current tool; a text seen before is not
    /// tokenised again.
    pub(super) fn add_text(&mut self, field: usize, key: TextKey<'_>) {
        let bag = match self.remembered(key) {
            Some(bag) => bag,
            None => {
                let bag = self.bag_of(key.text);
                if let Ok(index) = u32::try_from(self.memo.len()) {
                    let start = self.arena.len();
                    self.arena.push_str(key.text);
                    let next = self.texts.insert(key.hash, index);
                    self.memo.push(Memo {
                        start,
                        end: self.arena.len(),
                        bag,
                        next,
                    });
                }
                bag
            }
        };
        self.add_bag(field, bag);
    }

    /// The bag of `key`'s text if it was seen before.
    fn remembered(&self, key: TextKey<'_>) -> Option<(u32, u32, u32)> {
        let mut at = self.texts.get(&key.hash).copied();
        while let Some(memo) = at.and_then(|i| self.memo.get(i as usize)) {
            if self.arena.get(memo.start..memo.end) == Some(key.text) {
                return Some(memo.bag);
            }
            at = memo.next;
        }
        None
    }

    /// Like [`add_text`](Self::add_text) for a short-lived text, which is not remembered.
    pub(super) fn add_owned_text(&mut self, field: usize, text: &str) {
        let bag = self.bag_of(text);
        self.add_bag(field, bag);
    }

    fn add_bag(&mut self, field: usize, (start, end, len): (u32, u32, u32)) {
        let weighted = self.weights.get(field).is_some_and(|&w| w > 0.0);
        let (Ok(field_id), true) = (u8::try_from(field), weighted) else {
            return;
        };
        if start == end {
            return;
        }
        self.refs.push(Ref {
            start,
            end,
            field: field_id,
        });
        if let Some(total) = self.lengths.last_mut().and_then(|l| l.get_mut(field)) {
            *total = total.saturating_add(len);
        }
    }

    /// Tokenises `text` into a new bag; returns its range in `bags` and its length.
    fn bag_of(&mut self, text: &str) -> (u32, u32, u32) {
        let mut ids = std::mem::take(&mut self.ids);
        let mut buf = std::mem::take(&mut self.buf);
        ids.clear();
        for_each_token(text, &mut buf, |token| {
            let id = match self.forms.get(token) {
                Some(&id) => id,
                None => {
                    let id = self.intern(token);
                    self.forms.insert(token.into(), id);
                    id
                }
            };
            if id != STOP {
                ids.push(id);
            }
        });
        ids.sort_unstable();
        let start = self.bags.len();
        for &id in &ids {
            let fresh = self.bags.len() == start;
            match self.bags.last_mut() {
                Some((last, count)) if !fresh && *last == id => {
                    *count = count.saturating_add(1);
                }
                _ => self.bags.push((id, 1)),
            }
        }
        let len = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        self.ids = ids;
        self.buf = buf;
        let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        (index(start), index(self.bags.len()), len)
    }

    fn intern(&mut self, form: &str) -> u32 {
        if is_stop_word(form) {
            return STOP;
        }
        let stemmed = stem(form);
        if let Some(&id) = self.terms.get(stemmed.as_ref()) {
            return id;
        }
        let Ok(id) = u32::try_from(self.terms.len()) else {
            return STOP;
        };
        if id == STOP {
            return STOP;
        }
        self.terms.insert(stemmed.into(), id);
        id
    }
}

/// The term ids of a later part's builder, rewritten into the id space of the first:
/// every stem the first part knows keeps its id, and the stems it does not know are
/// numbered after its own, in the order the later part first met them. That is the order
/// one builder over the whole catalogue would have met them in, so ids (and so the layout)
/// do not depend on how many parts built the index.
fn merge_terms(terms: &mut HashMap<Box<str>, u32, BuildFxHasher>, part: &mut Builder) {
    let mut local: Vec<(u32, Box<str>)> = std::mem::take(&mut part.terms)
        .into_iter()
        .map(|(stem, id)| (id, stem))
        .collect();
    local.sort_unstable_by_key(|&(id, _)| id);
    let mut map = vec![STOP; local.len()];
    for (id, stem) in local {
        let global = match terms.get(&stem) {
            Some(&global) => global,
            None => {
                let Ok(global) = u32::try_from(terms.len()) else {
                    continue;
                };
                terms.insert(stem, global);
                global
            }
        };
        if let Some(slot) = map.get_mut(id as usize) {
            *slot = global;
        }
    }
    for (term, _) in &mut part.bags {
        *term = map.get(*term as usize).copied().unwrap_or(STOP);
    }
}

/// Runs `work` on each input, the first on the calling thread and each other on a scoped
/// thread of its own, and returns the outputs in input order. An input whose thread cannot
/// be started is worked on by the calling thread; a panic in a thread is passed on.
pub(super) fn in_parallel<I: Send, O: Send>(
    inputs: Vec<I>,
    work: impl Fn(I) -> O + Sync,
) -> Vec<O> {
    if inputs.len() <= 1 {
        return inputs.into_iter().map(work).collect();
    }
    let work = &work;
    let count = inputs.len();
    std::thread::scope(|scope| {
        let mut inputs = inputs.into_iter();
        let first = inputs.next();
        // Each later input is sent to its thread once the thread has started, so an input
        // is never lost with a thread that failed to start.
        let later: Vec<Result<_, I>> = inputs
            .map(|input| {
                let (send, receive) = std::sync::mpsc::channel::<I>();
                let thread = std::thread::Builder::new()
                    .spawn_scoped(scope, move || receive.recv().ok().map(work));
                match thread {
                    Ok(handle) => send.send(input).map(|()| handle).map_err(|e| e.0),
                    Err(_) => Err(input),
                }
            })
            .collect();
        let mut out = Vec::with_capacity(count);
        out.extend(first.map(work));
        for thread in later {
            match thread {
                // `recv` cannot fail: the input was sent before the sender was dropped.
                Ok(handle) => match handle.join() {
                    Ok(output) => out.extend(output),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(input) => out.push(work(input)),
            }
        }
        out
    })
}

/// Lays out the postings with BM25F impacts from builders that each indexed a run of
/// consecutive tools, in catalogue order (one builder, or one per thread). The result is
/// the same bit for bit whatever the number of parts.
///
/// Two passes over each part's tools, once average field lengths are known: the first
/// counts each term's document frequency, which fixes every row's offset and every part's
/// share of it; the second sums each tool's field frequencies in a dense scratch row and
/// writes the tool, with its impact, straight into its terms' rows. Rows list tools in
/// ascending order because parts are consecutive and each writes its tools in order. With
/// more than one part, each pass runs the parts on threads of their own.
pub(super) fn finish(mut parts: Vec<Builder>) -> (HashMap<Box<str>, u32, BuildFxHasher>, Postings) {
    let Some(first) = parts.first_mut() else {
        return (HashMap::default(), Postings::default());
    };
    let mut terms = std::mem::take(&mut first.terms);
    let (weights, k1) = (first.weights, first.k1);
    for part in parts.iter_mut().skip(1) {
        merge_terms(&mut terms, part);
    }
    let term_count = terms.len();
    let n: usize = parts.iter().map(|p| p.lengths.len()).sum();
    let mut avg = [0.0_f64; FIELDS];
    for lengths in parts.iter().flat_map(|p| &p.lengths) {
        for (sum, &len) in avg.iter_mut().zip(lengths) {
            // Integer sums are exact in f64, so the average does not depend on order.
            *sum += f64::from(len);
        }
    }
    for sum in &mut avg {
        *sum /= n.max(1) as f64;
    }

    let part_df = in_parallel(parts.iter().collect(), |part| part.count_df(term_count));
    let mut df = vec![0_u32; term_count];
    for counts in &part_df {
        for (total, &d) in df.iter_mut().zip(counts) {
            *total += d;
        }
    }
    let idf: Vec<f32> = df.iter().map(|&d| idf(n, d as usize)).collect();
    let mut offsets = Vec::with_capacity(term_count + 1);
    let mut total = 0;
    offsets.push(0);
    for &d in &df {
        total += d as usize;
        offsets.push(total);
    }

    // Zeroed pairs come from the allocator already zeroed: no pass to clear them.
    let mut entries = vec![(0_u32, 0.0_f32); total];
    // Each term's row, cut into one piece per part, in part order.
    let mut rows: Vec<Vec<&mut [Posting]>> = parts
        .iter()
        .map(|_| Vec::with_capacity(term_count))
        .collect();
    let mut rest: &mut [Posting] = &mut entries;
    for t in 0..term_count {
        for (pieces, counts) in rows.iter_mut().zip(&part_df) {
            let len = counts.get(t).copied().unwrap_or(0) as usize;
            let Some((piece, tail)) = std::mem::take(&mut rest).split_at_mut_checked(len) else {
                break;
            };
            pieces.push(piece);
            rest = tail;
        }
    }
    let mut base = 0_usize;
    // Each part is moved to its thread and dropped there once written: freeing its tables
    // is part of the parallel work, not left to the calling thread.
    let jobs: Vec<_> = parts
        .into_iter()
        .zip(rows)
        .map(|(part, pieces)| {
            let start = base;
            base += part.lengths.len();
            (part, pieces, start)
        })
        .collect();
    let layout = Layout {
        weights,
        k1,
        avg,
        idf: &idf,
    };
    in_parallel(jobs, |(part, pieces, base)| {
        part.write_postings(&layout, pieces, base);
    });

    (
        terms,
        Postings {
            offsets,
            entries,
            idf,
        },
    )
}

/// What every part needs to compute its impacts.
struct Layout<'a> {
    weights: [f32; FIELDS],
    k1: f32,
    avg: [f64; FIELDS],
    idf: &'a [f32],
}

impl Builder {
    /// Each tool's references, in order.
    fn docs(&self) -> impl Iterator<Item = (&[u32; FIELDS], &[Ref])> {
        let refs_len = self.refs.len();
        let ends = self.doc_starts.iter().skip(1).copied().chain([refs_len]);
        self.lengths
            .iter()
            .zip(&self.doc_starts)
            .zip(ends)
            .map(|((lengths, &start), end)| {
                (lengths, self.refs.get(start..end).unwrap_or_default())
            })
    }

    /// A reference's bag.
    fn bag(&self, r: &Ref) -> &[(u32, u16)] {
        self.bags
            .get(r.start as usize..r.end as usize)
            .unwrap_or_default()
    }

    /// Per term: the number of this part's tools that have it.
    fn count_df(&self, term_count: usize) -> Vec<u32> {
        let mut df = vec![0_u32; term_count];
        // The last tool (plus one) each term was counted for.
        let mut last = vec![0_u32; term_count];
        for (doc, (_, refs)) in (1_u32..).zip(self.docs()) {
            for r in refs {
                for &(term, _) in self.bag(r) {
                    let t = term as usize;
                    if let (Some(seen), Some(count)) = (last.get_mut(t), df.get_mut(t))
                        && *seen != doc
                    {
                        *seen = doc;
                        *count += 1;
                    }
                }
            }
        }
        df
    }

    /// Writes each of this part's tools, numbered from `base`, with its impact into the
    /// next free slot of each of its terms' pieces of row.
    fn write_postings(&self, layout: &Layout<'_>, mut pieces: Vec<&mut [Posting]>, base: usize) {
        let mut tf = vec![[0_u16; FIELDS]; pieces.len()];
        let mut touched: Vec<u32> = Vec::new();
        let k1 = layout.k1;
        for (doc, (lengths, refs)) in (base..).zip(self.docs()) {
            let Ok(doc_id) = u32::try_from(doc) else {
                break;
            };
            let mut norm = [0.0_f32; FIELDS];
            for (f, slot) in norm.iter_mut().enumerate() {
                let (Some(&w), Some(&b), Some(&len), Some(&avg)) = (
                    layout.weights.get(f),
                    B.get(f),
                    lengths.get(f),
                    layout.avg.get(f),
                ) else {
                    continue;
                };
                let ratio = if avg > 0.0 { f64::from(len) / avg } else { 1.0 };
                *slot = w / (1.0 - b + b * ratio as f32);
            }
            for r in refs {
                let field = usize::from(r.field);
                for &(term, count) in self.bag(r) {
                    let Some(row) = tf.get_mut(term as usize) else {
                        continue;
                    };
                    if *row == [0; FIELDS] {
                        touched.push(term);
                    }
                    if let Some(slot) = row.get_mut(field) {
                        *slot = slot.saturating_add(count);
                    }
                }
            }
            let [m0, m1, m2, m3, m4, m5] = norm;
            for &term in &touched {
                let t = term as usize;
                let (Some(row), Some(piece), Some(&term_idf)) =
                    (tf.get_mut(t), pieces.get_mut(t), layout.idf.get(t))
                else {
                    continue;
                };
                let [c0, c1, c2, c3, c4, c5] = std::mem::take(row);
                // Field by field, in order, as a sum from the left (bit for bit what
                // `Iterator::sum` of the six products gives).
                let x = f32::from(c0) * m0
                    + f32::from(c1) * m1
                    + f32::from(c2) * m2
                    + f32::from(c3) * m3
                    + f32::from(c4) * m4
                    + f32::from(c5) * m5;
                if let Some((slot, rest)) = std::mem::take(piece).split_first_mut() {
                    *slot = (doc_id, term_idf * x * (k1 + 1.0) / (k1 + x));
                    *piece = rest;
                }
            }
            touched.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two texts of one length that agree on the first and last 16 bytes and on every
    /// 64th byte, but not in between.
    fn colliding() -> (String, String) {
        let frame = |middle: &str| format!("open the record {middle:<68} close the record");
        let (a, b) = (
            frame("then archive every invoice"),
            frame("then summarise every ticket"),
        );
        assert_eq!(a.len(), b.len());
        assert_ne!(a, b);
        (a, b)
    }

    #[test]
    fn texts_that_share_a_hash_keep_their_own_bags() {
        let (a, b) = colliding();
        assert_eq!(TextKey::new(&a).hash, TextKey::new(&b).hash);
        let mut builder = Builder::new([1.0; FIELDS], 1.2);
        builder.start_doc();
        builder.add_text(DESCRIPTION, TextKey::new(&a));
        builder.add_text(DESCRIPTION, TextKey::new(&b));
        // A copy of `a` in another allocation is recognised as a repeat.
        let again = a.clone();
        builder.add_text(DESCRIPTION, TextKey::new(&again));
        let bags: Vec<(u32, u32)> = builder.refs.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(bags.len(), 3);
        assert_ne!(bags[0], bags[1], "a collision must not share a bag");
        assert_eq!(bags[0], bags[2], "a repeated text reuses its bag");
        for (word, expected) in [("invoic", true), ("ticket", true), ("nothing", false)] {
            assert_eq!(builder.terms.contains_key(word), expected, "{word}");
        }
    }

    #[test]
    fn parallel_work_comes_back_in_input_order() {
        let inputs: Vec<u64> = (1..=5).collect();
        let out = in_parallel(inputs, |x| {
            // Later inputs finish first.
            std::thread::sleep(std::time::Duration::from_millis(10 * (5 - x)));
            (x, std::thread::current().id())
        });
        assert_eq!(
            out.iter().map(|&(x, _)| x).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(out[0].1, std::thread::current().id(), "the first runs here");
        assert!(out[1..].iter().all(|&(_, id)| id != out[0].1));
        assert!(in_parallel(Vec::<u8>::new(), |x| x).is_empty());
    }

    #[test]
    fn short_and_empty_texts_hash_by_their_bytes() {
        for (x, y) in [
            ("", "a"),
            ("ab", "ba"),
            ("abcdefgh", "abcdefgi"),
            ("x", "x "),
        ] {
            assert_ne!(TextKey::new(x).hash, TextKey::new(y).hash, "{x:?} {y:?}");
        }
        let copy = String::from("same");
        assert_eq!(TextKey::new("same").hash, TextKey::new(&copy).hash);
    }
}
