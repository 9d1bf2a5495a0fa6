//! Light English normalisation: stop words and a small suffix-stripping stemmer.
//!
//! The stemmer is deliberately light and written here rather than taken from a Snowball
//! port: it only folds the inflections that separate a request from a tool description
//! ("orders" / "order", "scheduling" / "schedule", "optimised" / "optimize",
//! "validation" / "validate", "weekly" / "week") and leaves everything else alone. It works
//! on ASCII words; a word with any other character is returned unchanged, so no locale or
//! Unicode table version can change a result. The same word always gives the same stem, on
//! every machine.

use std::borrow::Cow;

/// Words too common to tell tools apart, plus the filler of a typed request ("please",
/// "I need", "can you"). Sorted, so membership is a binary search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i",
    "if", "im", "in", "into", "is", "it", "its", "itself", "just", "let", "lets", "like", "me",
    "might", "mine", "my", "myself", "need", "needs", "of", "off", "on", "once", "onto", "or",
    "our", "ours", "please", "really", "shall", "she", "should", "so", "some", "than", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "thus",
    "to", "too", "us", "via", "wanna", "want", "was", "we", "were", "what", "whats", "when",
    "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you",
    "your", "yours",
];

/// True when `word` (lowercase) carries no meaning for retrieval.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Irregular forms folded by table before the suffix rules.
const IRREGULAR: &[(&str, &str)] = &[
    ("analyses", "analysis"),
    ("children", "child"),
    ("daily", "day"),
    ("data", "data"),
    ("indices", "index"),
    ("people", "person"),
];

/// The stem of a lowercase word.
///
/// ```text
/// orders -> order      queries -> query       matches -> match
/// scheduling -> schedul   schedule -> schedul   scheduled -> schedul
/// optimise -> optimiz  optimization -> optimiz   weekly -> week   daily -> day
/// connection -> connect   location -> locat
/// ```
pub(crate) fn stem(word: &str) -> Cow<'_, str> {
    if word.len() <= 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Cow::Borrowed(word);
    }
    if let Ok(i) = IRREGULAR.binary_search_by(|(from, _)| from.cmp(&word))
        && let Some((_, to)) = IRREGULAR.get(i)
    {
        return Cow::Borrowed(to);
    }
    let mut w = word.to_owned();
    british(&mut w);
    plural(&mut w);
    verb_form(&mut w);
    derivational(&mut w);
    finish(&mut w);
    if w == word {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(w)
    }
}

fn has_vowel(s: &str) -> bool {
    s.bytes()
        .any(|b| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y'))
}

fn strip(w: &mut String, suffix: &str, replacement: &str) {
    w.truncate(w.len() - suffix.len());
    w.push_str(replacement);
}

/// British -ise spellings to -ize: optimise, optimising, optimisation -> optimize...
fn british(w: &mut String) {
    for (from, to) in [
        ("isations", "izations"),
        ("isation", "ization"),
        ("ising", "izing"),
        ("ised", "ized"),
        ("ises", "izes"),
        ("ise", "ize"),
    ] {
        if w.ends_with(from) && w.len() >= from.len() + 4 {
            strip(w, from, to);
            return;
        }
    }
}

/// queries -> query, boxes -> box, classes -> class, orders -> order; keeps status, analysis.
fn plural(w: &mut String) {
    if w.ends_with("ies") && w.len() > 4 {
        strip(w, "ies", "y");
    } else if w.ends_with("sses") {
        strip(w, "sses", "ss");
    } else if ["xes", "ches", "shes", "zzes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        strip(w, "es", "");
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        strip(w, "s", "");
    }
}

/// scheduling -> schedul(e), listed -> list, copied -> copy, validated -> validate;
/// keeps string, speed, need.
fn verb_form(w: &mut String) {
    let suffix = if w.ends_with("ied") && w.len() > 4 {
        strip(w, "ied", "y");
        return;
    } else if w.ends_with("ed") && !w.ends_with("eed") && w.len() > 4 {
        "ed"
    } else if w.ends_with("ing") && w.len() > 5 {
        "ing"
    } else {
        if w.ends_with("ly") && w.len() > 5 {
            strip(w, "ly", "");
        }
        return;
    };
    if !has_vowel(&w[..w.len() - suffix.len()]) {
        return;
    }
    strip(w, suffix, "");
    if !undouble(w) && (w.ends_with("at") || w.ends_with("iz") || w.ends_with("bl")) {
        w.push('e');
    }
}

/// mapp -> map, runn -> run; keeps fill, pass, buzz. True when a letter was dropped.
fn undouble(w: &mut String) -> bool {
    let b = w.as_bytes();
    if let [.., x, y] = b
        && x == y
        && !matches!(x, b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u')
    {
        w.pop();
        return true;
    }
    false
}

/// The -ization/-ize and -ation/-ate/-ator families to one stem each.
fn derivational(w: &mut String) {
    for suffix in ["ization", "izer", "ize"] {
        if w.ends_with(suffix) && w.len() >= suffix.len() + 4 {
            strip(w, suffix, "iz");
            return;
        }
    }
    for suffix in ["ation", "ator", "ate"] {
        if w.ends_with(suffix) && w.len() >= suffix.len() + 4 {
            strip(w, suffix, "");
            return;
        }
    }
    if w.ends_with("tion") && w.len() >= 8 {
        strip(w, "tion", "t");
    }
}

/// Drops a final silent e (schedule -> schedul) so it meets the -ing/-ed forms.
fn finish(w: &mut String) {
    if w.ends_with('e') && w.len() > 4 && !w.ends_with("ee") {
        w.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(IRREGULAR.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(is_stop_word("the") && is_stop_word("please") && !is_stop_word("order"));
    }

    #[test]
    fn inflections_meet_at_one_stem() {
        let groups: &[&[&str]] = &[
            &["order", "orders", "ordered", "ordering"],
            &["schedule", "scheduled", "scheduling", "schedules"],
            &["query", "queries", "queried"],
            &[
                "optimize",
                "optimise",
                "optimized",
                "optimising",
                "optimization",
            ],
            &["validate", "validation", "validated", "validating"],
            &["calculate", "calculated", "calculation", "calculating"],
            &["map", "maps", "mapped", "mapping"],
            &["match", "matches", "matched"],
            &["week", "weeks", "weekly"],
            &["day", "days", "daily"],
            &["file", "files"],
            &["rate", "rates"],
            &["search", "searches", "searched", "searching"],
            &["summarize", "summarise", "summarized"],
            &["connect", "connected", "connection", "connecting"],
            &["locate", "location", "located"],
            &["complete", "completion", "completed"],
        ];
        for group in groups {
            let stems: Vec<_> = group.iter().map(|w| stem(w).into_owned()).collect();
            assert!(
                stems.windows(2).all(|w| w[0] == w[1]),
                "{group:?} -> {stems:?}"
            );
        }
    }

    #[test]
    fn words_that_only_look_inflected_stay_apart() {
        for (word, expected) in [
            ("status", "status"),
            ("analysis", "analysis"),
            ("string", "string"),
            ("speed", "speed"),
            ("need", "need"),
            ("address", "address"),
            ("bus", "bus"),
            ("ups", "ups"),
            ("café", "café"),
            ("a1b2", "a1b2"),
        ] {
            assert_eq!(stem(word), expected, "{word}");
        }
        assert_ne!(stem("create"), stem("cr"));
        assert_ne!(stem("rate"), stem("route"));
    }
}
