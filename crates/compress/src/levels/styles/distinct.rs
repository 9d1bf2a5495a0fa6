//! The `distinct` map style: the fewest words that tell lookalike tools apart.
//!
//! At level 3 the map is all the model chooses from, and under `name+required` every tool
//! whose required parameters equal another's renders the same line body (all tools
//! without required parameters share the empty body). This module picks, for each member
//! of such a lookalike group, words from *that tool's own* description and schema that no
//! single other member shares all of, so that every line body becomes unique while the
//! map grows as little as possible. No model, no hashes, no invented words.
//!
//! # Candidates
//!
//! For each tool, in this fixed source order (the rank breaks ties):
//! 1. words of the description: runs of letters, digits and `_`, lowercased, at least three
//!    characters, not all digits, not a stop word;
//! 2. names of its optional top-level parameters (required ones are on the line already,
//!    and are the same for the whole group);
//! 3. enum values of its top-level parameters (and of their array items) that are one word
//!    of letters, digits, `_`, `-` or `.` (at most 32 characters);
//! 4. parameter shapes: the JSON Schema `type` names of its top-level parameters.
//!
//! # Choice (a greedy set cover)
//!
//! For tool `t` in group `G`, a candidate word `w` *covers* a member `u ≠ t` when `w` is
//! not among `u`'s candidates: once `w` is on `t`'s line, `u`'s line (made of `u`'s own
//! candidates) can no longer be the same. Words are picked one at a time by, in order:
//! most still-uncovered members covered; a word that is not already part of the tool's
//! name (the name is on the line, so such a word tells the model nothing new); fewest
//! group members having the word (the within-group document frequency, i.e. highest
//! IDF); source rank; first position; the word itself. Picking stops when every other
//! member is covered, or when no word covers any more (two tools with the same
//! description and schema cannot be told apart by their own words, and are left so).
//! The picked words are written in source order.
//!
//! Everything depends only on the tools' contents, never on input order, so shuffled
//! input renders the same bytes.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use super::{LineStyle, RenderInput};
use crate::render::required_names;

/// Function words that never distinguish a tool (compared lowercased).
const STOP_WORDS: [&str; 62] = [
    "about",
    "after",
    "all",
    "also",
    "and",
    "any",
    "are",
    "based",
    "been",
    "before",
    "being",
    "both",
    "but",
    "can",
    "does",
    "each",
    "either",
    "for",
    "from",
    "given",
    "has",
    "have",
    "how",
    "into",
    "its",
    "may",
    "more",
    "most",
    "must",
    "not",
    "of",
    "one",
    "only",
    "optional",
    "optionally",
    "or",
    "other",
    "over",
    "should",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "those",
    "through",
    "use",
    "used",
    "using",
    "via",
    "was",
    "when",
    "which",
    "will",
    "with",
    "you",
];

/// `distinct`: as `name+required` (the trait's default body), plus
/// [`distinguishing_words`] on the lines of lookalikes.
pub(super) struct Distinct;

impl LineStyle for Distinct {
    fn legend(&self) -> &'static str {
        "Each line: code, tool name, required args; after ~, words from the tool's own description or parameters that set it apart from similar tools. "
    }

    fn extra_words(&self, input: &RenderInput<'_>) -> Vec<Vec<String>> {
        distinguishing_words(
            &input
                .entries
                .iter()
                .zip(input.views)
                .map(|(e, &schema)| Subject {
                    name: &e.name,
                    description: &e.description,
                    schema,
                })
                .collect::<Vec<_>>(),
        )
    }
}

/// One tool's view for the style: what it is called, what it says, what it takes.
struct Subject<'a> {
    name: &'a str,
    description: &'a str,
    schema: &'a Value,
}

/// A candidate word with where it came from: `(word, source rank, position)`.
type Candidate = (String, u8, usize);

/// How a candidate ranks among those covering as many members (smaller is better):
/// `(already on the line, group document frequency, source rank, position)`.
type Preference = (bool, usize, u8, usize);

/// For each subject, the words to append after [`SEPARATOR`](super::SEPARATOR) (empty when its
/// `name+required` body is already unique).
fn distinguishing_words(subjects: &[Subject<'_>]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); subjects.len()];
    // Group by the `name+required` body: the required names, comma-joined.
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, s) in subjects.iter().enumerate() {
        groups
            .entry(required_names(s.schema).join(","))
            .or_default()
            .push(i);
    }
    for members in groups.values().filter(|m| m.len() >= 2) {
        let candidates: Vec<Vec<Candidate>> = members
            .iter()
            .map(|&i| subjects.get(i).map(candidates).unwrap_or_default())
            .collect();
        let sets: Vec<FxHashSet<&str>> = candidates
            .iter()
            .map(|c| c.iter().map(|(w, _, _)| w.as_str()).collect())
            .collect();
        let mut df: FxHashMap<&str, usize> = FxHashMap::default();
        for set in &sets {
            for &w in set {
                *df.entry(w).or_default() += 1;
            }
        }
        for (k, &i) in members.iter().enumerate() {
            let (Some(own), Some(subject)) = (candidates.get(k), subjects.get(i)) else {
                continue;
            };
            let mut on_line = name_words(subject.name);
            on_line.extend(
                required_names(subject.schema)
                    .iter()
                    .map(|r| r.to_lowercase()),
            );
            let picked = cover(k, own, &sets, &df, &on_line);
            if let Some(slot) = out.get_mut(i) {
                *slot = picked;
            }
        }
    }
    out
}

/// The greedy set cover for member `k` of a group whose candidate sets are `sets`;
/// `on_line` holds the lowercased words already on the line (name words, required names).
fn cover(
    k: usize,
    own: &[Candidate],
    sets: &[FxHashSet<&str>],
    df: &FxHashMap<&str, usize>,
    on_line: &FxHashSet<String>,
) -> Vec<String> {
    let mut uncovered: Vec<usize> = (0..sets.len()).filter(|&u| u != k).collect();
    let mut chosen: Vec<&Candidate> = Vec::new();
    while !uncovered.is_empty() {
        let mut best: Option<(usize, &Candidate, Preference)> = None;
        for c in own {
            if chosen.iter().any(|p| p.0 == c.0) {
                continue;
            }
            let covers = uncovered
                .iter()
                .filter(|&&u| sets.get(u).is_some_and(|s| !s.contains(c.0.as_str())))
                .count();
            if covers == 0 {
                continue;
            }
            let key = (
                on_line.contains(&c.0.to_lowercase()),
                df.get(c.0.as_str()).copied().unwrap_or(0),
                c.1,
                c.2,
            );
            let better = match &best {
                None => true,
                Some((bc, bw, bk)) => covers > *bc || (covers == *bc && (key, &c.0) < (*bk, &bw.0)),
            };
            if better {
                best = Some((covers, c, key));
            }
        }
        let Some((_, word, _)) = best else {
            break;
        };
        uncovered.retain(|&u| sets.get(u).is_some_and(|s| s.contains(word.0.as_str())));
        chosen.push(word);
    }
    chosen.sort_by_key(|c| (c.1, c.2));
    chosen.into_iter().map(|c| c.0.clone()).collect()
}

/// The lowercased words of a tool name.
fn name_words(name: &str) -> FxHashSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A subject's candidate words, deduplicated (first source wins), in source order.
fn candidates(s: &Subject<'_>) -> Vec<Candidate> {
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |word: String, rank: u8, out: &mut Vec<Candidate>| {
        if seen.insert(word.clone()) {
            let pos = out.len();
            out.push((word, rank, pos));
        }
    };
    for word in description_words(s.description) {
        push(word, 0, &mut out);
    }
    let Some(properties) = s.schema.get("properties").and_then(Value::as_object) else {
        return out;
    };
    let required = required_names(s.schema);
    for key in properties.keys() {
        if !required.contains(&key.as_str()) && is_word(key) {
            push(key.clone(), 1, &mut out);
        }
    }
    for spec in properties.values() {
        for values in [
            spec.get("enum"),
            spec.get("items").and_then(|i| i.get("enum")),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        {
            for v in values
                .iter()
                .filter_map(Value::as_str)
                .filter(|v| is_word(v))
            {
                push(v.to_owned(), 2, &mut out);
            }
        }
    }
    for spec in properties.values() {
        match spec.get("type") {
            Some(Value::String(t)) if is_word(t) => push(t.clone(), 3, &mut out),
            Some(Value::Array(types)) => {
                for t in types
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|t| is_word(t))
                {
                    push(t.to_owned(), 3, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

/// One word the map can carry verbatim: 1–32 characters of letters, digits, `_`, `-`, `.`,
/// not starting with `~`-like punctuation (so [`SEPARATOR`](super::SEPARATOR) stays unambiguous).
fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= 32
        && s.chars().next().is_some_and(char::is_alphanumeric)
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The description's content words, lowercased, in order (repeats kept; the caller dedups).
fn description_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn words(tools: &[(&str, &str, Value)]) -> Vec<Vec<String>> {
        let subjects: Vec<_> = tools
            .iter()
            .map(|(name, description, schema)| Subject {
                name,
                description,
                schema,
            })
            .collect();
        distinguishing_words(&subjects)
    }

    #[test]
    fn unique_lines_get_no_words() {
        let got = words(&[
            (
                "a",
                "Alpha tool.",
                json!({"properties": {"x": {}}, "required": ["x"]}),
            ),
            (
                "b",
                "Beta tool.",
                json!({"properties": {"y": {}}, "required": ["y"]}),
            ),
        ]);
        assert_eq!(got, [Vec::<String>::new(), Vec::new()]);
    }

    #[test]
    fn one_rare_word_is_enough_against_each_member() {
        let got = words(&[
            ("x_list", "List open issues in the tracker.", json!({})),
            (
                "x_get",
                "Get one issue in the tracker by number.",
                json!({}),
            ),
            ("x_close", "Close issues in the tracker.", json!({})),
        ]);
        // "list" is in the name, so "open" (also unique) is preferred; words are not
        // stemmed, so "issue" (singular only in x_get) is unique and comes first.
        assert_eq!(got, [vec!["open"], vec!["issue"], vec!["close"]]);
    }

    #[test]
    fn parameters_enums_and_shapes_are_candidates() {
        let got = words(&[
            (
                "t_a",
                "",
                json!({"properties": {"mode": {"enum": ["fast", "slow"]}}}),
            ),
            (
                "t_b",
                "",
                json!({"properties": {"mode": {"enum": ["slow"]}}}),
            ),
            (
                "t_c",
                "",
                json!({"properties": {"mode": {"type": "integer"}}}),
            ),
        ]);
        assert_eq!(got, [vec!["fast"], vec!["slow"], vec!["integer"]]);
    }

    #[test]
    fn identical_tools_stay_identical_rather_than_gaining_invented_words() {
        let got = words(&[
            ("one_x", "Same text.", json!({})),
            ("two_x", "Same text.", json!({})),
        ]);
        assert_eq!(got, [Vec::<String>::new(), Vec::new()]);
    }

    #[test]
    fn a_subset_needs_two_words_and_greedy_covers_it() {
        let got = words(&[
            ("p", "alpha", json!({})),
            ("q", "alpha beta", json!({})),
            ("r", "beta gamma", json!({})),
        ]);
        // q shares alpha with p and beta with r: it needs both, in source order.
        assert_eq!(got, [vec!["alpha"], vec!["alpha", "beta"], vec!["gamma"]]);
    }

    #[test]
    fn description_words_skip_short_numeric_and_stop_words() {
        let got: Vec<_> =
            description_words("Use the API to get 2 items; the v2 of page_size!").collect();
        assert_eq!(got, ["api", "get", "items", "page_size"]);
    }
}
