//! Splitting names and prose into lowercase word pieces.
//!
//! Tool names are written in every convention at once (`gdrive_sheets_append_rows`,
//! `getOrderDetails`, `HTMLParser`, `aws.s3.list`, `t25_Scorecard`), so one splitter serves
//! names and prose alike: a piece ends at any character that is not a letter or digit, at a
//! lower-to-upper step (`trackingNumber`), before the last capital of a capital run that
//! starts a word (`HTMLParser` -> `html`, `parser`), and where letters meet digits (`t25` ->
//! `t`, `25`). Case folding uses Rust's own Unicode tables (`char::to_lowercase`), never
//! the process locale.

/// What a character is, for splitting.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    /// Lowercase letters and letters without case.
    Lower,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        match c {
            'a'..='z' => Class::Lower,
            'A'..='Z' => Class::Upper,
            '0'..='9' => Class::Digit,
            _ => Class::Other,
        }
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() {
        Class::Lower
    } else if c.is_numeric() {
        Class::Digit
    } else {
        Class::Other
    }
}

/// Calls `emit` with each lowercase piece of `text`, in order. `buf` is scratch space reused
/// across calls so tokenising allocates nothing once it has grown.
///
/// Single letters are dropped (they carry nothing a request can match: the `s` of
/// `what's`, the `t` of `t25`); numbers of any length are kept.
pub(crate) fn for_each_token(text: &str, buf: &mut String, mut emit: impl FnMut(&str)) {
    if text.is_ascii() {
        ascii_tokens(text, buf, &mut emit);
    } else {
        unicode_tokens(text, buf, &mut emit);
    }
}

/// The splitting rule shared by both paths: does a piece end between `prev` and `k`
/// (`next` is the class after `k`)?
fn boundary(prev: Class, k: Class, next: Class) -> bool {
    match (prev, k) {
        (Class::Lower, Class::Upper)
        | (Class::Upper | Class::Lower, Class::Digit)
        | (Class::Digit, Class::Upper | Class::Lower) => true,
        (Class::Upper, Class::Upper) => next == Class::Lower,
        _ => false,
    }
}

/// The class of each ASCII byte.
#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time: an index out of range fails the build"
)]
const ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = match b as u8 {
            b'a'..=b'z' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
            b'0'..=b'9' => Class::Digit,
            _ => Class::Other,
        };
        b += 1;
    }
    table
};

/// The fast path: byte by byte, for the (common) all-ASCII text. Each byte's class is
/// looked up once, and carried from "next" to "current" to "previous".
fn ascii_tokens(text: &str, buf: &mut String, emit: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let class_at = |i: usize| {
        bytes
            .get(i)
            .and_then(|&b| ASCII_CLASS.get(usize::from(b)))
            .copied()
            .unwrap_or(Class::Other)
    };
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && class_at(i) == Class::Other {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        let mut prev = class_at(i);
        i += 1;
        let mut k = class_at(i);
        while i < bytes.len() {
            let next = class_at(i + 1);
            if k == Class::Other || boundary(prev, k, next) {
                break;
            }
            prev = k;
            k = next;
            i += 1;
        }
        flush_ascii(text, start, i, buf, emit);
    }
}

/// [`flush`] for a piece known to be ASCII.
fn flush_ascii(
    text: &str,
    start: usize,
    end: usize,
    buf: &mut String,
    emit: &mut impl FnMut(&str),
) {
    let Some(piece) = text.get(start..end) else {
        return;
    };
    if let [b] = piece.as_bytes()
        && !b.is_ascii_digit()
    {
        return;
    }
    buf.clear();
    buf.push_str(piece);
    buf.make_ascii_lowercase();
    emit(buf);
}

/// The general path, by `char`.
fn unicode_tokens(text: &str, buf: &mut String, emit: &mut impl FnMut(&str)) {
    let mut start: Option<usize> = None;
    let mut prev = Class::Other;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let k = class(c);
        if k == Class::Other {
            if let Some(s) = start.take() {
                flush(text, s, i, buf, emit);
            }
            prev = k;
            continue;
        }
        let next = chars.peek().map_or(Class::Other, |&(_, n)| class(n));
        match start {
            Some(s) if boundary(prev, k, next) => {
                flush(text, s, i, buf, emit);
                start = Some(i);
            }
            Some(_) => {}
            None => start = Some(i),
        }
        prev = k;
    }
    if let Some(s) = start {
        flush(text, s, text.len(), buf, emit);
    }
}

fn flush(text: &str, start: usize, end: usize, buf: &mut String, emit: &mut impl FnMut(&str)) {
    let Some(piece) = text.get(start..end) else {
        return;
    };
    let mut chars = piece.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && !c.is_numeric()
    {
        return;
    }
    buf.clear();
    if piece.is_ascii() {
        buf.push_str(piece);
        buf.make_ascii_lowercase();
    } else {
        buf.extend(piece.chars().flat_map(char::to_lowercase));
    }
    emit(buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_token(text, &mut String::new(), |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn ascii_and_unicode_paths_agree_on_ascii_text() {
        for text in [
            "getHTTPResponseCode v2",
            "a.b_c-d e",
            "x1Y2z3",
            "ABCdef GHI",
            "  ",
        ] {
            let mut fast = Vec::new();
            ascii_tokens(text, &mut String::new(), &mut |t: &str| {
                fast.push(t.to_owned())
            });
            let mut slow = Vec::new();
            unicode_tokens(text, &mut String::new(), &mut |t: &str| {
                slow.push(t.to_owned())
            });
            assert_eq!(fast, slow, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn ascii_fast_path_matches_the_general_path(text in "[ -~\\t\\n]{0,40}") {
            let mut fast = Vec::new();
            ascii_tokens(&text, &mut String::new(), &mut |t: &str| fast.push(t.to_owned()));
            let mut slow = Vec::new();
            unicode_tokens(&text, &mut String::new(), &mut |t: &str| slow.push(t.to_owned()));
            proptest::prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn names_split_in_every_convention() {
        let cases: &[(&str, &[&str])] = &[
            (
                "gdrive_sheets_append_rows",
                &["gdrive", "sheets", "append", "rows"],
            ),
            ("getOrderDetails", &["get", "order", "details"]),
            ("HTMLParser", &["html", "parser"]),
            ("parseHTML", &["parse", "html"]),
            ("aws.s3.list_buckets", &["aws", "3", "list", "buckets"]),
            (
                "t25_Scorecard_LF_Daily",
                &["25", "scorecard", "lf", "daily"],
            ),
            ("o200k_base", &["200", "base"]),
            ("kebab-case-name", &["kebab", "case", "name"]),
            ("What's the ETA?", &["what", "the", "eta"]),
            ("Größe ÜBER Straße", &["größe", "über", "straße"]),
            ("", &[]),
            ("naïveCafé façade", &["naïve", "café", "façade"]),
            ("ÉTÉ2024x", &["été", "2024"]),
            ("  __ ..", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(pieces(text), *expected, "{text}");
        }
    }
}
