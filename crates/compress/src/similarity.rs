//! Name similarity for "did you mean" suggestions.
//!
//! [`similarity`] scores two names from 0 to 100 and [`nearest`] picks the best-scoring
//! candidate above a floor. The score is built for the mistakes models make with tool and
//! parameter names, in this order of rules (the first that applies decides):
//!
//! 1. either name empty: `0`;
//! 2. equal after lower-casing and removing the separators `_`, `-`, `.`, `:`, `/` and
//!    whitespace: `100` (`per_page` ~ `perPage` ~ `PerPage`, `timezone_convert` ~
//!    `timezone.convert`);
//! 3. the longer normalised name starts or ends with the shorter: `85` (`q`/`query`,
//!    `title`/`subtitle`);
//! 4. the two names share words longer than two characters (words split at camelCase
//!    humps and the separators): `50 + round(30 × shared / |all words|)`
//!    (`pageSize`/`per_page` → 60);
//! 5. the longer contains the shorter and the shorter has at least three characters: `60`;
//! 6. otherwise Levenshtein distance `d` over the normalised names:
//!    `max(0, round(55 × (1 − d / longer length)))`.
//!
//! The reference keeps `.`, `:` and `/` in names (only `_`, `-` and whitespace separate);
//! here they separate too, as they do in the gate's and the map lookup's matching, so the
//! wire spelling of a dotted tool (`timezone_convert` for `timezone.convert`, which
//! OpenAI and Anthropic refuse) is told the name it meant.
//!
//! Rounding is half-up, computed exactly in integers: the reference computes in floating
//! point, where `55 × (1 − 9/10)` comes out a hair below 5.5 and rounds to 5; here it is
//! 6. Only the Levenshtein rule can differ so (the shared-word fractions are exact in
//! binary), and it reaches the suggestion floor only for names of 110 characters or more,
//! so no suggestion on shorter names differs.
//!
//! Lengths are counted in Unicode scalar values (the reference counts UTF-16 units; the two
//! agree on every name in the Basic Multilingual Plane), and case mapping and camelCase
//! splitting use Unicode case, so non-ASCII names score as ASCII ones do.

/// The score a candidate needs for [`nearest`] to suggest it, as the reference uses it.
pub const SUGGESTION_FLOOR: u8 = 55;

/// The longest name, in characters, that [`nearest`], [`nearest_open`] and
/// [`nearest_among`] compare: a longer one (a model's garbled call, no tool's name) gets no
/// suggestion, since comparing costs time in proportion to its length for every candidate
/// (a 100,000-character name took seconds).
pub const SUGGESTIBLE_MAX_CHARS: usize = 1_000;

/// Whether `name` is short enough to compare ([`SUGGESTIBLE_MAX_CHARS`]).
fn suggestible(name: &str) -> bool {
    name.len() <= SUGGESTIBLE_MAX_CHARS || name.chars().count() <= SUGGESTIBLE_MAX_CHARS
}

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

/// The candidate most similar to `name`, if it scores at least `floor` (none for a name
/// over [`SUGGESTIBLE_MAX_CHARS`]).
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
    if !suggestible(name) {
        return None;
    }
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

/// [`nearest`] for a list that holds names the model must not be taught (blocked tools):
/// the open candidate (one `withheld` does not mark) nearest to `name`, if it scores at
/// least `floor` **and is strictly nearer than every withheld candidate**; otherwise
/// `None`.
///
/// "Nearer" is the score, then, between equal scores, the smaller edit distance between
/// the normalised names (the score alone ties every sibling that shares a namespace word:
/// `office_prnt` scores 60 against `office_print` and `office_push` alike). Open
/// candidates still equal on both keep the first.
///
/// When the nearest name is a withheld one, the model most likely meant that tool, and
/// the next-nearest open name is a different tool it did not ask for (a misspelt
/// `office_push` answered "did you mean `office_crash`?"): no suggestion is safer than a
/// redirection, and it teaches nothing about the withheld name either.
///
/// ```
/// use chef_compress::similarity::{nearest_open, SUGGESTION_FLOOR};
///
/// let tools = ["office_crash", "office_print", "office_push"];
/// let blocked = |n: &str| n == "office_push";
/// assert_eq!(nearest_open("office_pussh", tools, SUGGESTION_FLOOR, blocked), None);
/// assert_eq!(nearest_open("office_prnt", tools, SUGGESTION_FLOOR, blocked), Some("office_print"));
/// ```
#[must_use]
pub fn nearest_open<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    floor: u8,
    withheld: impl Fn(&str) -> bool,
) -> Option<&'a str> {
    match nearest_among(name, candidates, floor, withheld) {
        Nearest::Open(candidate) => Some(candidate),
        Nearest::Withheld | Nearest::Nothing => None,
    }
}

/// Whether `written` reads as a slip of `name`: the same name up to case and separators,
/// or within a few edits of it (at most one edit per six characters of the longer, and at
/// least one) — a typo, not another tool that shares a word (`get_order_details` is no
/// slip of `get_fifo_report`, though [`similarity`] gives them 56 for the shared `get`).
///
/// ```
/// use chef_compress::similarity::is_slip_of;
///
/// assert!(is_slip_of("Send_Markdown_Email", "send_markdown_email"));
/// assert!(is_slip_of("send_markdown_emial", "send_markdown_email"));
/// assert!(is_slip_of("list_reportss", "list_reports"));
/// assert!(!is_slip_of("get_order_details", "get_fifo_report"));
/// assert!(!is_slip_of("deep_research", "deep_consultation"));
/// ```
#[must_use]
pub fn is_slip_of(written: &str, name: &str) -> bool {
    if !suggestible(written) {
        return false;
    }
    let (a, b) = (norm(written), norm(name));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    let longer = a.len().max(b.len());
    let allowed = (longer / 6).max(1);
    // The distance is at least the difference in length.
    a.len().abs_diff(b.len()) <= allowed && strsim::generic_levenshtein(&a, &b) <= allowed
}

/// Adds `Did you mean "near"?` to `reply`, an answer to a call of the unknown tool `name`:
/// right after its `No tool named "name".` sentence (before the hint that follows it), or
/// at its end. `Chef::route` and `chef resolve` word the suggestion this one way.
///
/// ```
/// use chef_compress::similarity::add_did_you_mean;
///
/// let mut reply = String::from("No tool named \"raed_file\". Call a listed tool.");
/// add_did_you_mean(&mut reply, "raed_file", "read_file");
/// assert_eq!(reply, "No tool named \"raed_file\". Did you mean \"read_file\"? Call a listed tool.");
/// ```
pub fn add_did_you_mean(reply: &mut String, name: &str, near: &str) {
    let sentence = format!("No tool named \"{}\".", shown_name(name));
    let suggestion = format!(" Did you mean \"{near}\"?");
    match reply.find(&sentence) {
        Some(at) => reply.insert_str(at + sentence.len(), &suggestion),
        None => reply.push_str(&suggestion),
    }
}

/// The longest name (in characters) an error quotes whole; a longer one is cut, with `…`.
const SHOWN_NAME_MAX: usize = 200;

/// A name the model wrote, as an error quotes it back: control characters (a newline, a
/// NUL) written as Rust escapes them (`\n`, `\0`), invisible ones (a line separator, a
/// zero-width space, a bidirectional override) as their code points (`\u{200b}`), and a
/// name over 200 characters cut with `…`, so a garbled call does not put raw control bytes,
/// hidden characters or a page of text into the reply.
///
/// ```
/// use chef_compress::similarity::shown_name;
///
/// assert_eq!(shown_name("read_file"), "read_file");
/// assert_eq!(shown_name("read\nfile\u{0}"), "read\\nfile\\0");
/// assert_eq!(shown_name(&"x".repeat(300)).chars().count(), 201);
/// assert_eq!(shown_name("a\u{2028}b\u{200b}"), "a\\u{2028}b\\u{200b}");
/// ```
pub fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    let long = name.chars().count() > SHOWN_NAME_MAX;
    if !long && !name.chars().any(unshowable) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut shown = String::with_capacity(name.len());
    for c in name.chars().take(SHOWN_NAME_MAX) {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else if unshowable(c) {
            // Invisible: written as its code point, `\u{200b}`.
            shown.extend(c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    if long {
        shown.push('…');
    }
    std::borrow::Cow::Owned(shown)
}

/// What [`nearest_among`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nearest<'a> {
    /// An open candidate, strictly nearer than every withheld one: [`nearest_open`]'s answer.
    Open(&'a str),
    /// A withheld candidate reaches the floor and is at least as near as every open one:
    /// the model most likely meant it, so nothing is suggested.
    Withheld,
    /// No candidate reaches the floor.
    Nothing,
}

/// [`nearest_open`], telling apart why nothing is suggested: a withheld candidate is the
/// nearest ([`Nearest::Withheld`]), or no candidate is near enough ([`Nearest::Nothing`]),
/// where a caller may look elsewhere (level 4 falls back to codes).
///
/// ```
/// use chef_compress::similarity::{nearest_among, Nearest, SUGGESTION_FLOOR};
///
/// let tools = ["office_crash", "office_print", "office_push"];
/// let blocked = |n: &str| n == "office_push";
/// assert_eq!(nearest_among("office_pussh", tools, SUGGESTION_FLOOR, blocked), Nearest::Withheld);
/// assert_eq!(nearest_among("zz9", tools, SUGGESTION_FLOOR, blocked), Nearest::Nothing);
/// ```
#[must_use]
pub fn nearest_among<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    floor: u8,
    withheld: impl Fn(&str) -> bool,
) -> Nearest<'a> {
    if !suggestible(name) {
        return Nearest::Nothing;
    }
    let prepared = Prepared::new(name);
    // (score, negated distance): greater is nearer.
    let mut best: Option<(&'a str, (u8, isize))> = None;
    let mut best_withheld: Option<(u8, isize)> = None;
    for candidate in candidates {
        let score = prepared.score(candidate);
        if score < floor {
            continue;
        }
        let key = (score, -prepared.distance(candidate));
        if withheld(candidate) {
            best_withheld = best_withheld.max(Some(key));
        } else if best.is_none_or(|(_, top)| key > top) {
            best = Some((candidate, key));
        }
    }
    match (best, best_withheld) {
        (Some((candidate, key)), withheld) if withheld.is_none_or(|w| key > w) => {
            Nearest::Open(candidate)
        }
        (_, Some(_)) => Nearest::Withheld,
        _ => Nearest::Nothing,
    }
}

/// One side of a comparison, normalised once (`nearest` compares one name with many).
struct Prepared<'a> {
    raw: &'a str,
    norm: Vec<char>,
    words: Vec<String>,
    /// Whether any word is long enough to be shared (rule 4 can apply at all).
    has_long_word: bool,
}

impl<'a> Prepared<'a> {
    fn new(raw: &'a str) -> Self {
        let words = words(raw);
        Self {
            raw,
            norm: norm(raw),
            has_long_word: words.iter().any(|w| w.chars().count() > 2),
            words,
        }
    }

    /// The Levenshtein distance between the normalised names (for [`nearest_open`]'s
    /// tie-break), as a signed number to negate.
    fn distance(&self, other: &str) -> isize {
        let d = strsim::generic_levenshtein(&self.norm, &norm(other));
        isize::try_from(d).unwrap_or(isize::MAX)
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
        // Candidate words are compared as written, lower-cased on the fly.
        let other_words: Vec<&str> = if self.has_long_word {
            word_slices(other).collect()
        } else {
            Vec::new()
        };
        let shared = self
            .words
            .iter()
            .filter(|w| w.chars().count() > 2 && other_words.iter().any(|o| lower_eq(o, w)))
            .count();
        if shared > 0 {
            let mut union = self.words.len();
            for (i, word) in other_words.iter().enumerate() {
                let known = self.words.iter().any(|w| lower_eq(word, w));
                let repeated = other_words
                    .iter()
                    .take(i)
                    .any(|earlier| lower_eq(earlier, word));
                if !known && !repeated {
                    union += 1;
                }
            }
            // 50 + round_half_up(30 * shared / union), in integers.
            let bonus = (60 * shared + union) / (2 * union);
            return u8::try_from(50 + bonus).unwrap_or(100);
        }
        if short.len() >= 3 && long.windows(short.len()).any(|w| w == short.as_slice()) {
            return 60;
        }
        let max = long.len();
        // The distance is at least the difference in length, so the score is at most
        // round_half_up(55 * short / long): when that is 0, so is the score, and a long
        // name (a garbled call) costs no short × long table per candidate.
        if (110 * short.len() + max) / (2 * max) == 0 {
            return 0;
        }
        let distance = strsim::generic_levenshtein(short, long);
        if distance >= max {
            return 0;
        }
        // round_half_up(55 * (max - d) / max), in integers.
        let score = (110 * (max - distance) + max) / (2 * max);
        u8::try_from(score).unwrap_or(55)
    }
}

/// Lower-cased, with the separators (`_`, `-`, `.`, `:`, `/`, whitespace) removed.
fn norm(s: &str) -> Vec<char> {
    if s.is_ascii() {
        // Most names are ASCII; Unicode case mapping costs several times more.
        let mut out = Vec::with_capacity(s.len());
        out.extend(
            s.bytes()
                .filter(|b| {
                    !matches!(b, b'_' | b'-' | b'.' | b':' | b'/')
                        && !b.is_ascii_whitespace()
                        && *b != 0x0b
                })
                .map(|b| char::from(b.to_ascii_lowercase())),
        );
        return out;
    }
    s.chars()
        .filter(|c| !is_separator(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The distinct lower-cased words of a name (see [`word_slices`]).
fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Seen words, so a name of many words costs no quadratic scan.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for slice in word_slices(s) {
        let word: String = if slice.is_ascii() {
            slice.to_ascii_lowercase()
        } else {
            slice.chars().flat_map(char::to_lowercase).collect()
        };
        if seen.insert(word.clone()) {
            out.push(word);
        }
    }
    out
}

/// The words of a name as written: split between a lower-case letter or digit and a
/// following upper-case letter, then on the separators (`_`, `-`, `.`, `:`, `/`,
/// whitespace); empty words dropped. What rule 4 compares.
///
/// ```
/// use chef_compress::similarity::word_slices;
///
/// let words: Vec<&str> = word_slices("sendMarkdown_email.v2").collect();
/// assert_eq!(words, ["send", "Markdown", "email", "v2"]);
/// ```
pub fn word_slices(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        // Skip separators.
        let start = rest.find(|c: char| !is_separator(c))?;
        rest = rest.get(start..)?;
        let mut previous: Option<char> = None;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            if is_separator(c)
                || (c.is_uppercase()
                    && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()))
            {
                end = i;
                break;
            }
            previous = Some(c);
        }
        let word = rest.get(..end)?;
        rest = rest.get(end..)?;
        Some(word)
    })
}

fn is_separator(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | ':' | '/') || c.is_whitespace()
}

/// Whether `a` and `b` are equal once both are lower-cased.
fn lower_eq(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// A character a name may not hold: a control character (a line break, a tab, a NUL), a
/// Unicode line or paragraph separator (U+2028, U+2029), or an invisible formatting
/// character (a zero-width space or joiner, a bidirectional override, a byte-order mark),
/// which would make a name read as another or write lines of its own. Names holding one are
/// refused ([`check_names`](crate::check_names)); [`shown_name`] escapes them.
#[must_use]
pub fn unshowable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
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
        // Deliberately unlike the reference, which keeps dots: see the module docs.
        assert_eq!(norm("a.b:c/d").iter().collect::<String>(), "abcd");
        assert_eq!(similarity("timezone_convert", "timezone.convert"), 100);
        assert_eq!(words("timezone.convert"), ["timezone", "convert"]);
    }

    /// The spec's rules written as plainly as possible, as an oracle for the optimised code.
    fn oracle(a: &str, b: &str) -> u8 {
        if a.is_empty() || b.is_empty() {
            return 0;
        }
        let (na, nb): (String, String) = (norm(a).iter().collect(), norm(b).iter().collect());
        if na == nb {
            return 100;
        }
        let (short, long) = if na.chars().count() <= nb.chars().count() {
            (&na, &nb)
        } else {
            (&nb, &na)
        };
        if long.starts_with(short.as_str()) || long.ends_with(short.as_str()) {
            return 85;
        }
        let (wa, wb) = (words(a), words(b));
        let shared = wa
            .iter()
            .filter(|w| w.chars().count() > 2 && wb.contains(w))
            .count();
        if shared > 0 {
            let union = wa.len() + wb.iter().filter(|w| !wa.contains(w)).count();
            // Exact half-up rounding (the reference's floats can land a hair below .5).
            return (50 + (60 * shared + union) / (2 * union)) as u8;
        }
        if short.chars().count() >= 3 && long.contains(short.as_str()) {
            return 60;
        }
        let d = strsim::levenshtein(&na, &nb);
        let max = long.chars().count();
        if d >= max {
            0
        } else {
            ((110 * (max - d) + max) / (2 * max)) as u8
        }
    }

    proptest::proptest! {
        #[test]
        fn optimised_similarity_agrees_with_the_plain_rules(
            a in "[aAbBpP_ -]{0,10}(page|Page|size|Size|id|ID){0,2}",
            b in "[aAbBpP_ -]{0,10}(page|Page|size|Size|id|ID){0,2}",
        ) {
            proptest::prop_assert_eq!(similarity(&a, &b), oracle(&a, &b), "{:?} {:?}", a, b);
        }

        /// A short name against one over 110 times longer: the shortcut that skips the
        /// distance table scores as the table does.
        #[test]
        fn the_length_bound_agrees_with_the_plain_rules(
            a in "[ab_]{1,3}",
            b in "[abc_]{100,400}",
        ) {
            proptest::prop_assert_eq!(similarity(&a, &b), oracle(&a, &b), "{:?} {:?}", a, b);
            proptest::prop_assert_eq!(similarity(&b, &a), oracle(&b, &a), "{:?} {:?}", b, a);
        }
    }

    #[test]
    fn a_name_too_long_to_compare_gets_no_suggestion() {
        let long = format!("read_file{}", "x".repeat(SUGGESTIBLE_MAX_CHARS));
        assert_eq!(nearest(&long, ["read_file"], SUGGESTION_FLOOR), None);
        assert_eq!(
            nearest_among(&long, ["read_file"], SUGGESTION_FLOOR, |_| false),
            Nearest::Nothing
        );
        // At the limit it is still compared (it starts with the tool's name).
        let at = format!("read_file{}", "x".repeat(SUGGESTIBLE_MAX_CHARS - 9));
        assert_eq!(
            nearest(&at, ["read_file"], SUGGESTION_FLOOR),
            Some("read_file")
        );
    }
}
