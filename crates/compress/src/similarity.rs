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
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    let na = norm(a);
    let nb = norm(b);
    if na == nb {
        return 100;
    }
    let (la, lb) = (na.chars().count(), nb.chars().count());
    let (short, long, short_len, long_len) = if la <= lb {
        (&na, &nb, la, lb)
    } else {
        (&nb, &na, lb, la)
    };
    if long.starts_with(short.as_str()) || long.ends_with(short.as_str()) {
        return 85;
    }
    let wa = words(a);
    let wb = words(b);
    let shared = wa
        .iter()
        .filter(|w| w.chars().count() > 2 && wb.contains(w))
        .count();
    if shared > 0 {
        let union = wa.len() + wb.iter().filter(|w| !wa.contains(w)).count();
        // 50 + round_half_up(30 * shared / union), in integers.
        let bonus = (60 * shared + union) / (2 * union);
        return u8::try_from(50 + bonus).unwrap_or(100);
    }
    if short_len >= 3 && long.contains(short.as_str()) {
        return 60;
    }
    let distance = strsim::levenshtein(&na, &nb);
    let max = long_len.max(short_len);
    if distance >= max {
        return 0;
    }
    // round_half_up(55 * (max - d) / max), in integers.
    let score = (110 * (max - distance) + max) / (2 * max);
    u8::try_from(score).unwrap_or(55)
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
    let mut best: Option<(&'a str, u8)> = None;
    for candidate in candidates {
        let score = similarity(name, candidate);
        if best.is_none_or(|(_, top)| score > top) {
            best = Some((candidate, score));
        }
    }
    best.filter(|&(_, score)| score >= floor)
        .map(|(candidate, _)| candidate)
}

/// Lower-cased, with `_`, `-` and whitespace removed.
fn norm(s: &str) -> String {
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
        assert_eq!(norm("Per_Page - X"), "perpagex");
        assert_eq!(norm("a.b"), "a.b");
    }
}
