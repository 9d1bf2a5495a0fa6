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
//!
//! A second, independent feature weighs **argument evidence**
//! ([`Rerank::argument_weight`]): whether the request carries what a candidate's required
//! parameters need. Siblings often differ in their arguments rather than their names
//! (`get_order_notes(order_id)` vs `create_order_note(order_id, note)`, a search by name
//! vs a search by id), and a request states values (`order 999U123`, `January 1`,
//! `abc-123`) more often than parameter names. Each required parameter gets a kind from
//! its schema (see [`ArgKind`]); a parameter of a kind whose values can be recognised in
//! text is *evidenced* when the request holds such a value (a number, a date, an
//! identifier, one of its enum words), and a free-text parameter is evidenced when the
//! request uses a word of its name (and is not counted otherwise: free text is always
//! there). With `e` evidenced and `u` not, the candidate's score is multiplied by
//!
//! `1 + argument_weight × (e − u) / (e + u + 1)`
//!
//! so a tool whose required arguments the request supplies gains, one whose specific
//! arguments are missing loses, and a tool without required parameters is left alone. The
//! parameters are read when the index is built, and only when the built options ask for
//! the feature (`argument_weight > 0`), so the default index carries nothing extra.
//!
//! A third, **window distinctiveness** ([`Rerank::distinct_weight`]), reads nothing but the
//! first stage's matches: candidates that are siblings match mostly the same request words,
//! so what tells them apart is the words only some of them match (`add` in "add a note to
//! order …" matches `create_order_note`'s description, not `get_order_notes`'). Each
//! candidate's matched words are weighted by IDF and by how few other candidates in the
//! window match them, `(n − df) / (n − 1)` with `n` candidates of which `df` match the
//! word; their weighted share `d` (`0..=1`) scales the score by `1 + distinct_weight × d`.

use std::collections::HashMap;

use serde_json::Value;

use crate::search::{
    CatalogIndex, QueryTerm, bm25::BuildFxHasher, explained_by_mask, stem::is_stop_word,
    stem::stem, tokenise::for_each_token,
};

/// The second stage's settings ([`IndexOptions::rerank`](crate::search::IndexOptions::rerank)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rerank {
    /// How much a name word that the request does not contain costs, as a share of the
    /// score when none of the name's words are in the request (`0..=1`; 0 leaves the name
    /// out).
    pub name_weight: f32,
    /// How many of the first stage's best candidates are re-ranked (at least the number
    /// asked for are always considered, so 0 re-ranks just those).
    pub depth: usize,
    /// Which name words count as unasked.
    pub scope: RerankScope,
    /// How much argument evidence moves a candidate (`0..=0.9`; 0 leaves it out): the
    /// score is multiplied by `1 + argument_weight × (e − u) / (e + u + 1)`, with `e` and
    /// `u` the candidate's required parameters the request does and does not supply (see
    /// the module docs). Read at build time: an index built with 0 here has no parameter
    /// data, and raising it afterwards changes nothing.
    pub argument_weight: f32,
    /// How much window distinctiveness moves a candidate (`0..=1`; 0 leaves it out): the
    /// score is multiplied by `1 + distinct_weight × d`, `d` the IDF-weighted share of the
    /// request words it matches that few other candidates match (see the module docs).
    pub distinct_weight: f32,
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
        argument_weight: 0.0,
        distinct_weight: 0.0,
    };

    /// The window the constructors re-rank, and that calibration used.
    pub const DEFAULT_DEPTH: usize = 10;

    /// The name feature alone at `weight` in `scope`, over the best
    /// [`DEFAULT_DEPTH`](Self::DEFAULT_DEPTH) candidates. Calibration on retrieval-149
    /// picks 0.25 for [`RerankScope::Name`] and 0.05 for [`RerankScope::Siblings`].
    ///
    /// ```
    /// use chef_compress::search::{CatalogIndex, IndexOptions, Rerank, RerankScope};
    /// # let tools: Vec<chef_ir::ToolDefinition> = Vec::new();
    /// let options = IndexOptions {
    ///     rerank: Rerank::names(0.25, RerankScope::Name).with_arguments(0.3),
    ///     ..IndexOptions::default()
    /// };
    /// let index = CatalogIndex::build_with(&tools, &options);
    /// # assert!(index.is_empty());
    /// ```
    pub fn names(weight: f32, scope: RerankScope) -> Self {
        Self {
            name_weight: weight,
            depth: Self::DEFAULT_DEPTH,
            scope,
            ..Self::OFF
        }
    }

    /// Argument evidence alone at `weight`, over the best
    /// [`DEFAULT_DEPTH`](Self::DEFAULT_DEPTH) candidates (calibration on retrieval-149
    /// picks 0.6). Give it in the options the index is *built* with: the parameters are
    /// read then.
    pub fn arguments(weight: f32) -> Self {
        Self {
            argument_weight: weight,
            depth: Self::DEFAULT_DEPTH,
            ..Self::OFF
        }
    }

    /// Window distinctiveness alone at `weight`, over the best
    /// [`DEFAULT_DEPTH`](Self::DEFAULT_DEPTH) candidates.
    pub fn distinct(weight: f32) -> Self {
        Self {
            distinct_weight: weight,
            depth: Self::DEFAULT_DEPTH,
            ..Self::OFF
        }
    }

    /// This setting with argument evidence at `weight` as well (the depth is raised to
    /// [`DEFAULT_DEPTH`](Self::DEFAULT_DEPTH) if it was lower).
    #[must_use]
    pub fn with_arguments(mut self, weight: f32) -> Self {
        self.argument_weight = weight;
        self.depth = self.depth.max(Self::DEFAULT_DEPTH);
        self
    }

    /// The most [`argument_weight`](Self::argument_weight) counts for (a candidate's
    /// score is never scaled to nothing).
    pub const MAX_ARGUMENT_WEIGHT: f32 = 0.9;

    /// Whether the stage changes anything (at any depth: the hits asked for are always
    /// re-ranked).
    pub(crate) fn is_on(&self) -> bool {
        self.names_on() || self.arguments_on() || self.distinct_on()
    }

    fn distinct_on(&self) -> bool {
        self.distinct_weight > 0.0 && self.distinct_weight.is_finite()
    }

    fn names_on(&self) -> bool {
        self.name_weight > 0.0 && self.name_weight.is_finite()
    }

    /// Whether argument evidence is weighed (and so gathered when an index is built).
    pub(crate) fn arguments_on(&self) -> bool {
        self.argument_weight > 0.0 && self.argument_weight.is_finite()
    }

    /// The multiplier of a candidate with argument evidence `evidence` (`-1..=1`).
    fn argument_factor(&self, evidence: f32) -> f32 {
        if !self.arguments_on() {
            return 1.0;
        }
        1.0 + self.argument_weight.clamp(0.0, Self::MAX_ARGUMENT_WEIGHT) * evidence.clamp(-1.0, 1.0)
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

/// What the second stage reads of a request: its words, and the kinds of value it holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct RerankRequest {
    /// The term ids of its words, sorted and deduplicated.
    pub(crate) ids: Vec<u32>,
    /// The kinds of argument value found in its text.
    pub(crate) values: Values,
}

impl RerankRequest {
    /// What the second stage reads of `query`, whose terms (as the first stage found them)
    /// are `terms`; its values are read only when `rerank` weighs argument evidence.
    pub(crate) fn new(terms: &[QueryTerm], query: &str, rerank: &Rerank) -> Self {
        let mut ids: Vec<u32> = terms.iter().filter_map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        let values = if rerank.arguments_on() {
            Values::of(query)
        } else {
            Values::default()
        };
        Self { ids, values }
    }
}

impl CatalogIndex {
    /// The multiplier of each of `docs` (a window of candidates, best first, which matched
    /// the request's `terms` in `masks`) under `rerank`, in order.
    pub(crate) fn rerank_factors(
        &self,
        docs: &[usize],
        masks: &[u64],
        terms: &[QueryTerm],
        request: &RerankRequest,
        rerank: &Rerank,
    ) -> Vec<f32> {
        let mut factors: Vec<f32> = if rerank.names_on() {
            self.unasked(docs, &request.ids, rerank.scope)
                .into_iter()
                .map(|unasked| rerank.factor(unasked))
                .collect()
        } else {
            vec![1.0; docs.len()]
        };
        if rerank.arguments_on() && !self.args.is_empty() {
            for (factor, &doc) in factors.iter_mut().zip(docs) {
                let args = self.args.get(doc).map_or(&[][..], |a| &a[..]);
                *factor *= rerank.argument_factor(argument_evidence(args, request));
            }
        }
        if rerank.distinct_on() {
            let weight = rerank.distinct_weight.clamp(0.0, 1.0);
            for (factor, d) in factors.iter_mut().zip(distinct_shares(terms, masks)) {
                *factor *= 1.0 + weight * d;
            }
        }
        factors
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
        if let Some(name) = self.names.get(doc) {
            term_ids(&self.terms, name.as_str(), &mut ids);
        }
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
        let words = self.name_ids(doc);
        if words.is_empty() {
            return 0.0;
        }
        let unasked = words
            .iter()
            .filter(|w| request.binary_search(w).is_err())
            .count();
        unasked as f32 / words.len() as f32
    }
}

/// What kind of value a required parameter takes, as far as a request's text can show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArgKind {
    /// `integer` or `number`.
    Number,
    /// A date or time: `format` `date`, `date-time` or `time`, a name ending in `date`,
    /// `time`, `day` or `timestamp`, or a description that spells a `YYYY` pattern.
    Date,
    /// An identifier: `format` `uuid`, or a name ending in `id`, `ids`, `uuid` or `slug`.
    Id,
    /// One of a list of `enum` values.
    Choice,
    /// Any other string: free text, always present in some form, so counted only when the
    /// request uses a word of the parameter's name.
    Text,
    /// Booleans, objects, arrays: nothing a request's text shows; not counted.
    Other,
}

/// A required parameter as the second stage reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Arg {
    /// The term ids of its name's words (stop words out).
    words: Box<[u32]>,
    kind: ArgKind,
    /// The term ids of its enum values' words.
    choices: Box<[u32]>,
}

/// A required parameter as read from a schema, before the index's term ids are final.
#[derive(Debug, Clone)]
pub(crate) struct RawArg {
    name: String,
    kind: ArgKind,
    choices: Vec<String>,
}

/// The required top-level parameters of an input schema, in `required` order (names
/// without a `properties` entry, and repeats, are skipped).
pub(crate) fn required_args(schema: &Value) -> Vec<RawArg> {
    let Some(required) = schema.get("required").and_then(Value::as_array) else {
        return Vec::new();
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut args: Vec<RawArg> = Vec::new();
    for name in required.iter().filter_map(Value::as_str) {
        if args.iter().any(|a| a.name == name) {
            continue;
        }
        let Some(property) = properties.and_then(|p| p.get(name)) else {
            continue;
        };
        let choices: Vec<String> = property
            .get("enum")
            .and_then(Value::as_array)
            .map(|values| {
                values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        args.push(RawArg {
            kind: kind_of(name, property, !choices.is_empty()),
            name: name.to_owned(),
            choices,
        });
    }
    args
}

/// Whether `schema`'s `type` is, or includes, `wanted`.
fn has_type(schema: &Value, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(wanted)),
        _ => false,
    }
}

fn kind_of(name: &str, schema: &Value, has_choices: bool) -> ArgKind {
    if has_choices {
        return ArgKind::Choice;
    }
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    let mut last = String::new();
    let mut buf = String::new();
    for_each_token(name, &mut buf, |token| {
        last.clear();
        last.push_str(token);
    });
    let spells_pattern = schema
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| d.contains("YYYY") || d.contains("yyyy"));
    if matches!(format, "date" | "date-time" | "time")
        || matches!(
            last.as_str(),
            "date" | "time" | "day" | "timestamp" | "datetime"
        )
        || (spells_pattern && has_type(schema, "string"))
    {
        ArgKind::Date
    } else if format == "uuid" || matches!(last.as_str(), "id" | "ids" | "uuid" | "slug") {
        ArgKind::Id
    } else if has_type(schema, "integer") || has_type(schema, "number") {
        ArgKind::Number
    } else if has_type(schema, "string") {
        ArgKind::Text
    } else {
        ArgKind::Other
    }
}

/// The term ids (stop words out, each once) of the words of `text`.
fn term_ids(terms: &HashMap<Box<str>, u32, BuildFxHasher>, text: &str, out: &mut Vec<u32>) {
    let mut buf = String::new();
    for_each_token(text, &mut buf, |token| {
        if is_stop_word(token) {
            return;
        }
        if let Some(&id) = terms.get(stem(token).as_ref())
            && !out.contains(&id)
        {
            out.push(id);
        }
    });
}

/// The parameters of every tool with the index's final term ids (words the index does not
/// know are dropped: no request can match them).
pub(crate) fn resolve_args(
    terms: &HashMap<Box<str>, u32, BuildFxHasher>,
    raw: Vec<Vec<RawArg>>,
) -> Vec<Box<[Arg]>> {
    raw.into_iter()
        .map(|args| {
            args.into_iter()
                .map(|arg| {
                    let mut words = Vec::new();
                    term_ids(terms, &arg.name, &mut words);
                    let mut choices = Vec::new();
                    for choice in &arg.choices {
                        term_ids(terms, choice, &mut choices);
                    }
                    Arg {
                        words: words.into(),
                        kind: arg.kind,
                        choices: choices.into(),
                    }
                })
                .collect()
        })
        .collect()
}

/// The kinds of argument value a request's text holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Values {
    /// A number (a piece with a digit that is not part of a date).
    pub(crate) number: bool,
    /// A date or time: a month or weekday name, `today` / `tomorrow` / `yesterday` /
    /// `tonight`, or digits with `-`, `/` or `:`, a year (1900–2099), an ordinal (`5th`)
    /// or a time of day (`7pm`).
    pub(crate) date: bool,
    /// An identifier: a piece with a digit that is not part of a date, an e-mail address,
    /// a URL, a `#tag`, or anything in double quotes or backticks.
    pub(crate) id: bool,
}

/// Weekday names and relative days, sorted (month names are [`MONTHS`]).
const DAY_WORDS: &[&str] = &[
    "friday",
    "monday",
    "saturday",
    "sunday",
    "thursday",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "wednesday",
    "yesterday",
];

impl Values {
    /// The values found in `query`'s whitespace-separated pieces. A day or year next to a
    /// month name (`January 1`, `September 29, 2024`, `1st of May`) is part of a date, not
    /// a number or an identifier.
    pub(crate) fn of(query: &str) -> Self {
        let mut values = Self {
            id: query.contains(['"', '`', '\u{201c}', '\u{201d}']),
            ..Self::default()
        };
        let pieces: Vec<String> = query
            .split_whitespace()
            .map(|piece| {
                piece
                    .trim_matches(|c: char| {
                        matches!(
                            c,
                            ',' | '.' | '?' | '!' | ';' | '(' | ')' | '\'' | '[' | ']'
                        )
                    })
                    .to_lowercase()
            })
            .filter(|piece| !piece.is_empty())
            .collect();
        let is_month = |i: Option<usize>| {
            i.and_then(|i| pieces.get(i))
                .is_some_and(|p| MONTHS.binary_search(&p.as_str()).is_ok())
        };
        for (i, piece) in pieces.iter().enumerate() {
            if !piece.bytes().any(|b| b.is_ascii_digit()) {
                // `may` alone is mostly a verb; next to a day number it is the month (below).
                let month = piece != "may" && MONTHS.binary_search(&piece.as_str()).is_ok();
                if month || DAY_WORDS.binary_search(&piece.as_str()).is_ok() {
                    values.date = true;
                } else if piece.contains('@') || piece.contains("://") || piece.starts_with('#') {
                    values.id = true;
                }
                continue;
            }
            let near_month = is_month(i.checked_sub(1))
                || is_month(i.checked_add(1))
                || (is_month(i.checked_sub(2)) && pieces.get(i - 1).is_some_and(|p| is_day(p)));
            if looks_like_date(piece) || (near_month && (is_day(piece) || is_year(piece))) {
                values.date = true;
                continue;
            }
            values.number = true;
            values.id = true;
        }
        values
    }
}

/// Month names, sorted (`may` included: next to a day number it is the month).
const MONTHS: &[&str] = &[
    "apr",
    "april",
    "aug",
    "august",
    "dec",
    "december",
    "feb",
    "february",
    "jan",
    "january",
    "jul",
    "july",
    "jun",
    "june",
    "mar",
    "march",
    "may",
    "nov",
    "november",
    "oct",
    "october",
    "sep",
    "sept",
    "september",
];

/// `1` to `31`, bare or as an ordinal (`1st`, `29th`).
fn is_day(piece: &str) -> bool {
    let digits = piece.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = piece.split_at(digits);
    (1..=2).contains(&digits)
        && matches!(suffix, "" | "st" | "nd" | "rd" | "th")
        && number.parse::<u8>().is_ok_and(|d| (1..=31).contains(&d))
}

/// A four-digit year from 1900 to 2099.
fn is_year(piece: &str) -> bool {
    piece.len() == 4
        && piece.bytes().all(|b| b.is_ascii_digit())
        && (piece.starts_with("19") || piece.starts_with("20"))
}

/// Whether a piece with a digit is a date or time.
fn looks_like_date(piece: &str) -> bool {
    let digits = piece.bytes().filter(u8::is_ascii_digit).count();
    if piece.contains(['-', '/', ':']) {
        // `2024-05-01`, `5/1`, `10:30`, but not `abc-123` (letters make it an id).
        return piece
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'/' | b':' | b't' | b'z'));
    }
    if digits == piece.len() {
        return is_year(piece);
    }
    let (number, suffix) = piece.split_at(piece.find(|c: char| !c.is_ascii_digit()).unwrap_or(0));
    !number.is_empty()
        && number.len() == digits
        && matches!(suffix, "st" | "nd" | "rd" | "th" | "am" | "pm")
}

/// The argument evidence of a tool with required parameters `args` for `request`:
/// `(e − u) / (e + u + 1)` over the parameters that count (see [`ArgKind`]), 0 when none
/// does.
pub(crate) fn argument_evidence(args: &[Arg], request: &RerankRequest) -> f32 {
    let (mut evidenced, mut missing) = (0_u32, 0_u32);
    let asked = |ids: &[u32]| ids.iter().any(|w| request.ids.binary_search(w).is_ok());
    for arg in args {
        let found = match arg.kind {
            ArgKind::Number => request.values.number,
            ArgKind::Date => request.values.date,
            ArgKind::Id => request.values.id,
            ArgKind::Choice => asked(&arg.choices),
            ArgKind::Text => {
                if asked(&arg.words) {
                    evidenced += 1;
                }
                continue;
            }
            ArgKind::Other => continue,
        };
        if found {
            evidenced += 1;
        } else {
            missing += 1;
        }
    }
    if evidenced + missing == 0 {
        return 0.0;
    }
    (evidenced as f32 - missing as f32) / (evidenced + missing + 1) as f32
}

/// For each candidate of a window (the request terms it matched, as `masks`), the
/// IDF-weighted share of the request words it explains, each counted `(n − df) / (n − 1)`
/// where `df` of the `n` candidates explain it: 1 when no other candidate matches any of its
/// words, 0 when every candidate matches all of them (or it matched nothing, or the window
/// has one candidate).
pub(crate) fn distinct_shares(terms: &[QueryTerm], masks: &[u64]) -> Vec<f32> {
    let n = masks.len();
    if n < 2 {
        return vec![0.0; n];
    }
    let explained: Vec<u64> = masks.iter().map(|&m| explained_by_mask(terms, m)).collect();
    let df = |bit: usize| explained.iter().filter(|&&e| e & (1 << bit) != 0).count();
    let spread: Vec<f32> = (0..terms.len().min(64))
        .map(|bit| (n - df(bit).min(n)) as f32 / (n - 1) as f32)
        .collect();
    explained
        .iter()
        .map(|&e| {
            let (mut share, mut total) = (0.0_f32, 0.0_f32);
            for (bit, term) in terms.iter().enumerate().take(64) {
                if e & (1 << bit) == 0 || term.compound || term.id.is_none() {
                    continue;
                }
                total += term.idf;
                share += term.idf * spread.get(bit).copied().unwrap_or(0.0);
            }
            if total > 0.0 { share / total } else { 0.0 }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn values(query: &str) -> (bool, bool, bool) {
        let v = Values::of(query);
        (v.number, v.date, v.id)
    }

    #[test]
    fn a_requests_values_are_told_apart_by_shape() {
        // (number, date, id)
        assert_eq!(values("list my reports"), (false, false, false));
        assert_eq!(values("run report 512 from January 1"), (true, true, true));
        assert_eq!(
            values("flights on September 29, 2024"),
            (false, true, false)
        );
        assert_eq!(values("on the 1st of May"), (false, true, false));
        assert_eq!(values("due 2024-05-01 at 10:30"), (false, true, false));
        assert_eq!(
            values("water the plants at 7pm tomorrow"),
            (false, true, false)
        );
        assert_eq!(values("status of job abc-123"), (true, false, true));
        assert_eq!(values("order FP7781, please"), (true, false, true));
        assert_eq!(values("a 120 lb sofa"), (true, false, true));
        assert_eq!(values("mail bob@example.com"), (false, false, true));
        assert_eq!(values("open https://example.com"), (false, false, true));
        assert_eq!(values("find the sheet \"Q3 plan\""), (true, false, true));
        assert_eq!(values("you may go"), (false, false, false));
        // A number that is no day of a month next to a month name is still a number.
        assert_eq!(values("May 512"), (true, false, true));
    }

    #[test]
    fn a_required_parameters_kind_comes_from_its_schema_and_name() {
        let schema = json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "startDate": {"type": "string"},
                "when": {"type": "string", "format": "date-time"},
                "checkin": {"type": "string", "description": "Check-in day, YYYY-MM-DD"},
                "limit": {"type": "integer"},
                "cabin": {"type": "string", "enum": ["ECONOMY", "BUSINESS"]},
                "note": {"type": "string"},
                "urgent": {"type": "boolean"},
                "optional": {"type": "string"}
            },
            "required": ["order_id", "startDate", "when", "checkin", "limit", "cabin", "note",
                         "urgent", "missing", "note"]
        });
        let kinds: Vec<(String, ArgKind)> = required_args(&schema)
            .into_iter()
            .map(|a| (a.name, a.kind))
            .collect();
        let expected = [
            ("order_id", ArgKind::Id),
            ("startDate", ArgKind::Date),
            ("when", ArgKind::Date),
            ("checkin", ArgKind::Date),
            ("limit", ArgKind::Number),
            ("cabin", ArgKind::Choice),
            ("note", ArgKind::Text),
            ("urgent", ArgKind::Other),
        ];
        let expected: Vec<(String, ArgKind)> = expected
            .iter()
            .map(|(n, k)| ((*n).to_owned(), *k))
            .collect();
        assert_eq!(kinds, expected);
        // No `required`, or not an object: nothing.
        assert!(required_args(&json!({"type": "object", "properties": {"a": {}}})).is_empty());
        assert!(required_args(&json!("garbage")).is_empty());
        assert!(required_args(&json!({"required": "order_id"})).is_empty());
    }

    #[test]
    fn argument_evidence_counts_what_the_request_supplies() {
        let arg = |kind, words: &[u32], choices: &[u32]| Arg {
            words: words.into(),
            kind,
            choices: choices.into(),
        };
        let request = |ids: Vec<u32>, query: &str| RerankRequest {
            ids,
            values: Values::of(query),
        };
        let with_id = request(vec![7], "order 999U123");
        // No parameter that counts: 0.
        assert_eq!(argument_evidence(&[], &with_id), 0.0);
        assert_eq!(
            argument_evidence(&[arg(ArgKind::Other, &[], &[])], &with_id),
            0.0
        );
        // Free text counts only when its name is asked for.
        assert_eq!(
            argument_evidence(&[arg(ArgKind::Text, &[8], &[])], &with_id),
            0.0
        );
        assert_eq!(
            argument_evidence(&[arg(ArgKind::Text, &[7], &[])], &with_id),
            0.5
        );
        // An id supplied: (1 − 0) / 2; a date missing as well: 0.
        let id = arg(ArgKind::Id, &[], &[]);
        let date = arg(ArgKind::Date, &[], &[]);
        assert_eq!(argument_evidence(std::slice::from_ref(&id), &with_id), 0.5);
        assert_eq!(
            argument_evidence(&[id.clone(), date.clone()], &with_id),
            0.0
        );
        assert!(argument_evidence(&[date], &with_id) < 0.0);
        // A choice is supplied by one of its words.
        let choice = arg(ArgKind::Choice, &[], &[3, 9]);
        assert_eq!(
            argument_evidence(std::slice::from_ref(&choice), &request(vec![9], "x")),
            0.5
        );
        assert_eq!(argument_evidence(&[choice], &request(vec![4], "x")), -0.5);
    }

    /// A known word at position `at` of the request, with this IDF.
    fn word(at: usize, idf: f32) -> QueryTerm {
        QueryTerm {
            surface: format!("w{at}"),
            id: Some(u32::try_from(at).unwrap_or(0)),
            idf,
            has_digit: false,
            compound: false,
            explains: 1 << at,
        }
    }

    #[test]
    fn distinctiveness_weighs_the_words_few_candidates_in_the_window_match() {
        // Three request words: 0 (idf 1), 1 (idf 1), 2 (idf 2).
        let terms = [word(0, 1.0), word(1, 1.0), word(2, 2.0)];
        // Candidate A matches 0 and 2, B matches 0 and 1, C matches 0 only.
        let shares = distinct_shares(&terms, &[0b101, 0b011, 0b001]);
        // Word 0: all three match it, spread 0; words 1 and 2: one each, spread 1.
        assert_eq!(shares, [2.0 / 3.0, 0.5, 0.0]);
        // One candidate, or nothing matched: 0.
        assert_eq!(distinct_shares(&terms, &[0b111]), [0.0]);
        assert_eq!(distinct_shares(&terms, &[0, 0b001]), [0.0, 1.0]);
        // A compound explains its words and adds no weight of its own; unknown words none.
        let mut compound = word(3, 5.0);
        compound.compound = true;
        compound.explains = 0b011;
        let mut unknown = word(4, 9.0);
        unknown.id = None;
        let terms = [word(0, 1.0), word(1, 1.0), word(2, 2.0), compound, unknown];
        assert_eq!(distinct_shares(&terms, &[0b01000, 0b00001]), [0.5, 0.0]);
    }

    #[test]
    fn the_argument_factor_is_bounded_and_off_at_zero() {
        let rerank = |argument_weight| Rerank {
            argument_weight,
            depth: 10,
            ..Rerank::OFF
        };
        assert!(!rerank(0.0).is_on());
        assert!(!rerank(f32::NAN).is_on());
        assert!(!Rerank::OFF.is_on());
        // Depth 0 still re-ranks the hits asked for.
        assert!(
            Rerank {
                depth: 0,
                ..rerank(0.5)
            }
            .is_on()
        );
        assert_eq!(Rerank::arguments(0.5), rerank(0.5));
        assert_eq!(
            Rerank::names(0.25, RerankScope::Siblings).with_arguments(0.5),
            Rerank {
                name_weight: 0.25,
                scope: RerankScope::Siblings,
                ..rerank(0.5)
            }
        );
        assert_eq!(rerank(0.0).argument_factor(-1.0), 1.0);
        assert_eq!(rerank(0.5).argument_factor(-1.0), 0.5);
        assert_eq!(rerank(0.5).argument_factor(1.0), 1.5);
        // Clamped: never scaled to nothing, evidence outside -1..=1 counts as its bound.
        assert!((rerank(5.0).argument_factor(-1.0) - 0.1).abs() < 1e-6);
        assert_eq!(rerank(0.5).argument_factor(-7.0), 0.5);
    }
}
