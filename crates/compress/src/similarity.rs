//! Name similarity for "did you mean" suggestions.
//!
//! [`similarity`] scores two names from 0 to 100 and [`nearest`] picks the best-scoring
//! candidate above a floor. The score is built for the mistakes models make with tool and
//! parameter names, in this order of rules (the first that applies decides):
//!
//! 1. either name empty: `0`;
//! 2. equal after lower-casing and removing `_`, `-` and whitespace: `100`
//!    (`per_page` ~ `perPage` ~ `PerPage`);
//! 3. the longer normalised name starts or ends with the shorter: `85` (`q`/`query`,
//!    `title`/`subtitle`);
//! 4. the two names share words longer than two characters (words split at camelCase
//!    humps, `_`, `-` and whitespace): `50 + round(30 × shared / |all words|)`
//!    (`pageSize`/`per_page` → 60);
//! 5. the longer contains the shorter and the shorter has at least three characters: `60`;
//! 6. otherwise Levenshtein distance `d` over the normalised names:
//!    `max(0, round(55 × (1 − d / longer length)))`.
//!
//! Rounding is half-up, computed in integers so that no floating-point edge decides a
//! suggestion. Lengths are counted in Unicode scalar values (the reference counts UTF-16
//! units; the two agree on every name in the Basic Multilingual Plane), and case mapping
//! and camelCase splitting use Unicode case, so non-ASCII names score as ASCII ones do.

/// The score a candidate needs for [`nearest`] to suggest it, as the reference uses it.
pub const SUGGESTION_FLOOR: u8 = 55;

/// Scores how alike two names are, from 0 (unrelated) to 100 (the same name up to case and
/// separators). See the [module docs](self) for the rules.
///
/// ```
/// use chef_compress::similarity::similarity;
///
/// assert_eq!(similarity("per_page", "perPage"), 100);
/// assert_eq!(similarity("q", "query"), 85);
/// assert_eq!(similarity("pageSize", "per_page"), 60);
/// assert_eq!(similarity("wibble", "q"), 0);
/// ```
#[must_use]
pub fn similarity(a: &str, b: &str) -> u8 {
    Prepared::new(a).score(b)
}

/// The candidate most similar to `name`, if it scores at least `floor`.
///
/// Ties go to the candidate that comes first. Use [`SUGGESTION_FLOOR`] for the reference
/// behaviour.
///
/// ```
/// use chef_compress::similarity::{nearest, SUGGESTION_FLOOR};
///
/// let known = ["q", "sort", "per_page"];
/// assert_eq!(nearest("pageSize", known, SUGGESTION_FLOOR), Some("per_page"));
/// assert_eq!(nearest("zz9", ["a0", "a1"], SUGGESTION_FLOOR), None);
/// ```
#[must_use]
pub fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    floor: u8,
) -> Option<&'a str> {
    let prepared = Prepared::new(name);
    let mut best: Option<(&'a str, u8)> = None;
    for candidate in candidates {
        let score = prepared.score(candidate);
        if best.is_none_or(|(_, top)| score > top) {
            best = Some((candidate, score));
            if score == 100 {
                break;
            }
        }
    }
    best.filter(|&(_, score)| score >= floor)
        .map(|(candidate, _)| candidate)
}

/// One side of a comparison, normalised once (`nearest` compares one name with many).
struct Prepared<'a> {
    raw: &'a str,
    norm: Vec<char>,
    words: Vec<String>,
}

impl<'a> Prepared<'a> {
    fn new(raw: &'a str) -> Self {
        Self {
            raw,
            norm: norm(raw),
            words: words(raw),
        }
    }

    /// `similarity(self.raw, other)`, keeping the argument order of the reference.
    fn score(&self, other: &str) -> u8 {
        if self.raw.is_empty() || other.is_empty() {
            return 0;
        }
        let other_norm = norm(other);
        if self.norm == other_norm {
            return 100;
        }
        // The shorter is the first argument on ties.
        let (short, long) = if self.norm.len() <= other_norm.len() {
            (&self.norm, &other_norm)
        } else {
            (&other_norm, &self.norm)
        };
        if long.starts_with(short) || long.ends_with(short) {
            return 85;
        }
        let other_words = words(other);
        let shared = self
            .words
            .iter()
            .filter(|w| w.chars().count() > 2 && other_words.contains(w))
            .count();
        if shared > 0 {
            let union = self.words.len()
                + other_words
                    .iter()
                    .filter(|w| !self.words.contains(w))
                    .count();
            // 50 + round_half_up(30 * shared / union), in integers.
            let bonus = (60 * shared + union) / (2 * union);
            return u8::try_from(50 + bonus).unwrap_or(100);
        }
        if short.len() >= 3 && long.windows(short.len()).any(|w| w == short.as_slice()) {
            return 60;
        }
        let distance = strsim::generic_levenshtein(short, long);
        let max = long.len();
        if distance >= max {
            return 0;
        }
        // round_half_up(55 * (max - d) / max), in integers.
        let score = (110 * (max - distance) + max) / (2 * max);
        u8::try_from(score).unwrap_or(55)
    }
}

/// Lower-cased, with `_`, `-` and whitespace removed.
fn norm(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| *c != '_' && *c != '-' && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The distinct lower-cased words of a name: split between a lower-case letter or digit and
/// a following upper-case letter, then on `_`, `-` and whitespace.
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    let mut flush = |current: &mut String| {
        if !current.is_empty() {
            let word: String = current.chars().flat_map(char::to_lowercase).collect();
            if !out.contains(&word) {
                out.push(word);
            }
            current.clear();
        }
    };
    for c in s.chars() {
        if c == '_' || c == '-' || c.is_whitespace() {
            flush(&mut current);
            previous = None;
            continue;
        }
        if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
            flush(&mut current);
        }
        current.push(c);
        previous = Some(c);
    }
    flush(&mut current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_humps_and_separators() {
        assert_eq!(words("pageSize"), ["page", "size"]);
        assert_eq!(words("per_page"), ["per", "page"]);
        assert_eq!(words("HTTPServer2Go"), ["httpserver2", "go"]);
        assert_eq!(words("a  b--c"), ["a", "b", "c"]);
        assert_eq!(words("page_Page"), ["page"]);
    }

    #[test]
    fn norm_drops_separators_and_case() {
        assert_eq!(norm("Per_Page - X").iter().collect::<String>(), "perpagex");
        assert_eq!(norm("a.b").iter().collect::<String>(), "a.b");
    }
}
