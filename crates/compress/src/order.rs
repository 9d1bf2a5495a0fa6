//! The fixed, locale-free order in which tools are sorted by name.
//!
//! Every code, map line and wire position derives from this order, so it must be the same
//! on every machine and in every process. The reference sorted with the host's locale
//! collator; we implement its root-locale result for ASCII as an explicit two-pass rule
//! and make a deliberate, documented choice for everything else.
//!
//! **Primary pass**: compare character by character, case-insensitively, by rank:
//! ASCII control characters (by code point), then
//! `space _ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % ` ^ + < = > | ~ $`, then digits,
//! then letters `a`–`z`; then every non-ASCII character, ranked by the code point of its
//! lower-case form. A proper prefix sorts first. Digits compare one at a time (`a10` < `a9`).
//!
//! **Tertiary pass** (only when the primary pass finds the names equal, i.e. they differ
//! only in case): at the first position whose characters differ, lower case sorts before
//! upper case; if that still does not decide (two different non-ASCII characters with the
//! same lower-case form), the code points decide. Distinct names therefore never compare
//! equal, and the sort is total.
//!
//! Non-ASCII characters deliberately sort after all ASCII and are not folded with their
//! base letters (`é` does not sort beside `e`): a full UCA collator would add a large
//! data dependency for names that are rare in tool catalogues, and this rule is stable
//! across Unicode versions except for new case mappings. Tests pin it.

use std::cmp::Ordering;

/// ASCII punctuation and symbols in rank order, after the control characters.
const PUNCTUATION: &[u8] = b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

#[expect(
    clippy::indexing_slicing,
    reason = "const evaluation: an out-of-range index fails the build, not a run"
)]
const fn ascii_ranks() -> [u16; 128] {
    let mut ranks = [0u16; 128];
    // Control characters first, in code-point order (DEL after US).
    let mut c = 0;
    while c < 32 {
        ranks[c] = c as u16;
        c += 1;
    }
    ranks[127] = 32;
    let mut next = 33u16;
    let mut i = 0;
    while i < PUNCTUATION.len() {
        ranks[PUNCTUATION[i] as usize] = next;
        next += 1;
        i += 1;
    }
    let mut d = b'0';
    while d <= b'9' {
        ranks[d as usize] = next;
        next += 1;
        d += 1;
    }
    let mut l = b'a';
    while l <= b'z' {
        ranks[l as usize] = next;
        ranks[(l - b'a' + b'A') as usize] = next;
        next += 1;
        l += 1;
    }
    ranks
}

static ASCII_RANKS: [u16; 128] = ascii_ranks();

/// Primary weight of one character.
fn primary(c: char) -> u32 {
    if c.is_ascii() {
        u32::from(ASCII_RANKS.get(c as usize).copied().unwrap_or(0))
    } else {
        let lower = c.to_lowercase().next().unwrap_or(c);
        0x100 + u32::from(lower)
    }
}

/// Compares two tool names in the fixed order described in the module docs.
pub(crate) fn compare_names(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return compare_ascii(a.as_bytes(), b.as_bytes());
    }
    let mut left = a.chars();
    let mut right = b.chars();
    loop {
        match (left.next(), right.next()) {
            (None, None) => break,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match primary(x).cmp(&primary(y)) {
                Ordering::Equal => {}
                other => return other,
            },
        }
    }
    for (x, y) in a.chars().zip(b.chars()) {
        if x != y {
            return x
                .is_uppercase()
                .cmp(&y.is_uppercase())
                .then_with(|| x.cmp(&y));
        }
    }
    Ordering::Equal
}

fn compare_ascii(a: &[u8], b: &[u8]) -> Ordering {
    let rank = |c: u8| ASCII_RANKS.get(usize::from(c)).copied().unwrap_or(0);
    for (&x, &y) in a.iter().zip(b) {
        if x != y {
            match rank(x).cmp(&rank(y)) {
                Ordering::Equal => {}
                other => return other,
            }
        }
    }
    match a.len().cmp(&b.len()) {
        Ordering::Equal => {}
        other => return other,
    }
    for (&x, &y) in a.iter().zip(b) {
        if x != y {
            // Equal rank and different bytes: the same letter in two cases.
            return x.is_ascii_uppercase().cmp(&y.is_ascii_uppercase());
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        v.sort_by(|a, b| compare_names(a, b));
        v
    }

    #[test]
    fn ascii_rule_matches_the_spec_examples() {
        let pairs = [
            ("a_b", "a-b"),
            ("a-b", "a.b"),
            ("a.b", "a1"),
            ("a1", "ab"),
            ("a10", "a9"),
            ("alpha", "Alpha"),
            ("Alpha", "b"),
            ("aB", "Ab"),
            ("a_x", "a_Z"),
            ("a_Z", "A_z"),
            ("scorecard_lf", "scorecard_lf_daily"),
            ("gdrive_search", "gdrive_search_by_name"),
            (" ", "_"),
            ("~", "$"),
            ("$", "0"),
        ];
        for (lo, hi) in pairs {
            assert_eq!(compare_names(lo, hi), Ordering::Less, "{lo} < {hi}");
            assert_eq!(compare_names(hi, lo), Ordering::Greater, "{hi} > {lo}");
        }
        assert_eq!(compare_names("same", "same"), Ordering::Equal);
    }

    #[test]
    fn spec_name_list_sorts_as_pinned() {
        assert_eq!(
            sorted(&[
                "b_tool", "B_other", "a.x", "a_x", "a-x", "a1", "A_z", "alpha", "a_Z"
            ]),
            [
                "a_x", "a_Z", "A_z", "a-x", "a.x", "a1", "alpha", "B_other", "b_tool"
            ]
        );
    }

    #[test]
    fn non_ascii_sorts_after_ascii_by_lower_case_code_point() {
        assert_eq!(
            sorted(&["é_x", "z_x", "e_x", "É_x", "ß", "日本", "a"]),
            ["a", "e_x", "z_x", "ß", "é_x", "É_x", "日本"]
        );
        // Non-ASCII inside an otherwise ASCII name.
        assert_eq!(compare_names("caféa", "cafez"), Ordering::Greater);
        assert_eq!(compare_names("café", "cafÉ"), Ordering::Less);
    }

    #[test]
    fn order_is_total_and_antisymmetric_on_a_mixed_set() {
        let names = [
            "a", "A", "a_", "a-", "é", "É", "e", "E", "ǅ", "ǆ", "Ǆ", "a\u{7f}", "a\t",
        ];
        for x in names {
            for y in names {
                let xy = compare_names(x, y);
                assert_eq!(xy, compare_names(y, x).reverse(), "{x:?} {y:?}");
                assert_eq!(xy == Ordering::Equal, x == y, "{x:?} {y:?}");
            }
        }
    }
}
