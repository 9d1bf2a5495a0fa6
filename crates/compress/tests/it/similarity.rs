//! Spec §5.5: similarity scores and `nearest`.

use chef_compress::similarity::{SUGGESTION_FLOOR, nearest, similarity};

#[test]
fn similarity_matches_the_reference_table() {
    let table: &[(&str, &str, u8)] = &[
        ("q", "query", 85),
        ("pageSize", "per_page", 60),
        ("per_page", "perPage", 100),
        ("per_page", "PerPage", 100),
        ("title", "subtitle", 85),
        ("abc", "xabcx", 60),
        ("ab", "xabx", 28),
        ("wibble", "q", 0),
        ("zz9", "a0", 0),
        ("a01", "a0", 85),
        ("repo", "repository", 85),
        ("", "q", 0),
        ("q", "", 0),
        ("", "", 0),
    ];
    for &(a, b, want) in table {
        assert_eq!(similarity(a, b), want, "similarity({a:?}, {b:?})");
    }
}

#[test]
fn similarity_is_symmetric_on_the_table() {
    for (a, b) in [
        ("q", "query"),
        ("pageSize", "per_page"),
        ("ab", "xabx"),
        ("abc", "xabcx"),
    ] {
        assert_eq!(similarity(a, b), similarity(b, a));
    }
}

#[test]
fn levenshtein_rule_rounds_half_up() {
    // "ab" vs "xabx": distance 2 over length 4 → 55 × 0.5 = 27.5 → 28.
    assert_eq!(similarity("ab", "xabx"), 28);
    // "kitten" vs "sitting": distance 3 over 7 → 55 × 4/7 = 31.43 → 31.
    assert_eq!(similarity("kitten", "sitting"), 31);
    // Long nearly identical strings reach the floor: 1 edit in 20 → 52.25 → 52; 1 in 40 → 53.6 → 54.
    assert_eq!(
        similarity("abcdefghijklmnopqrst", "abcdefghijklmnopqrsx"),
        52
    );
}

#[test]
fn shared_words_score_by_their_share_of_all_words() {
    // {user, name} vs {user, id}: one shared of three → 50 + 10.
    assert_eq!(similarity("userName", "user_id"), 60);
    // {max, results} vs {results, max}: both shared of two → 50 + 30.
    assert_eq!(similarity("maxResults", "results_max"), 80);
    // Words of two characters or fewer never count as shared: {id, to} vs {id, of}.
    assert_ne!(similarity("id_to", "id_of"), 65);
}

#[test]
fn nearest_picks_the_best_candidate_above_the_floor() {
    assert_eq!(
        nearest("pageSize", ["q", "sort", "per_page"], SUGGESTION_FLOOR),
        Some("per_page")
    );
    let codes = ["a0", "a1", "b0", "b1"];
    assert_eq!(nearest("zz9", codes, SUGGESTION_FLOOR), None);
    assert_eq!(nearest("0", ["a0", "a1"], SUGGESTION_FLOOR), Some("a0"));
    assert_eq!(nearest("a0x", codes, SUGGESTION_FLOOR), Some("a0"));
    assert_eq!(
        nearest("Limit", ["limit", "offset"], SUGGESTION_FLOOR),
        Some("limit")
    );
    assert_eq!(nearest("x", Vec::<&str>::new(), SUGGESTION_FLOOR), None);
}

#[test]
fn nearest_breaks_ties_by_first_candidate() {
    // Both end with "0" and score 85; the first wins.
    assert_eq!(nearest("0", ["b0", "a0"], SUGGESTION_FLOOR), Some("b0"));
    assert_eq!(nearest("0", ["a0", "b0"], SUGGESTION_FLOOR), Some("a0"));
}

#[test]
fn nearest_honours_the_floor() {
    assert_eq!(similarity("ab", "xabx"), 28);
    assert_eq!(nearest("ab", ["xabx"], 29), None);
    assert_eq!(nearest("ab", ["xabx"], 28), Some("xabx"));
}

#[test]
fn non_ascii_names_compare_by_character() {
    assert_eq!(similarity("größe", "Größe"), 100);
    assert_eq!(similarity("straße_name", "straßeName"), 100);
    assert_eq!(similarity("名前", "名前の"), 85);
}
