//! What a JSON reader takes without a word but a proxy must not pass on: an object with a
//! key twice (serde keeps the last one; a typed reader may refuse it) and an integer
//! literal wider than 64 bits (serde_json holds it as a rounded float, so it would be
//! sent on rounded). [`oddity`] finds the first, in one pass over the bytes, without
//! recursion.

use std::collections::HashSet;

/// What [`oddity`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Oddity {
    /// A key given twice in one object (the key, unescaped).
    DuplicateKey(String),
    /// An integer literal outside both `i64` and `u64`, as written.
    WideInteger(String),
}

/// The first [`Oddity`] of `json`, which must already have parsed as JSON (on bytes that
/// are not JSON the answer means nothing); `None` when there is none. Keys are compared
/// unescaped (`"k\u0031"` and `"k1"` are one key); keys in different objects never clash.
///
/// ```
/// use chef_ir::json_scan::{Oddity, oddity};
///
/// assert_eq!(oddity(br#"{"a":1,"b":{"a":2}}"#), None);
/// assert_eq!(oddity(br#"{"a":1,"a":2}"#), Some(Oddity::DuplicateKey("a".into())));
/// assert_eq!(
///     oddity(br#"{"n":[18446744073709551616]}"#),
///     Some(Oddity::WideInteger("18446744073709551616".into()))
/// );
/// assert_eq!(oddity(br#"{"f":1e300,"u":18446744073709551615,"s":"99999999999999999999"}"#), None);
/// ```
pub fn oddity(json: &[u8]) -> Option<Oddity> {
    // One entry per open container: the keys seen, for an object; `None` for an array.
    let mut open: Vec<Option<HashSet<String>>> = Vec::new();
    let mut i = 0;
    while let Some(&byte) = json.get(i) {
        match byte {
            b'"' => {
                let end = string_end(json, i)?;
                let rest = json.get(end + 1..)?;
                let is_key = rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':');
                if is_key && let Some(Some(keys)) = open.last_mut() {
                    let key: String = serde_json::from_slice(json.get(i..=end)?).ok()?;
                    if keys.contains(&key) {
                        return Some(Oddity::DuplicateKey(key));
                    }
                    keys.insert(key);
                }
                i = end + 1;
                continue;
            }
            b'{' => open.push(Some(HashSet::new())),
            b'[' => open.push(None),
            b'}' | b']' => {
                open.pop();
            }
            b'-' | b'0'..=b'9' => {
                let token = json.get(i..)?;
                let len = token
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                let token = std::str::from_utf8(token.get(..len)?).ok()?;
                let integer = !token.contains(['.', 'e', 'E']);
                if integer && token.parse::<i64>().is_err() && token.parse::<u64>().is_err() {
                    return Some(Oddity::WideInteger(token.to_owned()));
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// How deep `json`'s containers nest (`0` for a scalar, `1` for `[]` or `{}`), in one pass
/// without recursion; strings are skipped. On bytes that are not JSON the answer means
/// nothing (an unclosed string ends the count).
///
/// ```
/// use chef_ir::json_scan::depth;
///
/// assert_eq!(depth(b"1"), 0);
/// assert_eq!(depth(br#"{"a":[1,{"b":"[[["}]}"#), 3);
/// ```
pub fn depth(json: &[u8]) -> usize {
    let mut deepest = 0;
    brackets(json, |_, open| {
        deepest = deepest.max(open);
        None::<()>
    });
    deepest
}

/// The byte offset just past the `{…}` or `[…]` that `json` starts with (strings
/// skipped); `None` when it does not start with one or never closes.
///
/// ```
/// use chef_ir::json_scan::container_end;
///
/// assert_eq!(container_end(br#"{"a": "}", "b": [1]} tail"#), Some(20));
/// assert_eq!(container_end(br#"{"a": 1"#), None);
/// ```
pub fn container_end(json: &[u8]) -> Option<usize> {
    if !matches!(json.first(), Some(b'{' | b'[')) {
        return None;
    }
    brackets(json, |at, open| (open == 0).then_some(at + 1))
}

/// Calls `at` with the index of each container bracket outside strings and the depth
/// after it, until `at` returns something (returned) or the text ends (or a string never
/// closes: `None`).
fn brackets<T>(json: &[u8], mut at: impl FnMut(usize, usize) -> Option<T>) -> Option<T> {
    let mut open = 0usize;
    let mut i = 0;
    while let Some(&byte) = json.get(i) {
        match byte {
            b'"' => i = string_end(json, i)?,
            b'{' | b'[' => {
                open += 1;
                if let Some(found) = at(i, open) {
                    return Some(found);
                }
            }
            b'}' | b']' => {
                open = open.saturating_sub(1);
                if let Some(found) = at(i, open) {
                    return Some(found);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the JSON string whose opening quote is at `start`
/// (escapes skipped); `None` when it is not closed.
///
/// ```
/// assert_eq!(chef_ir::json_scan::string_end(br#"{"a\"b":1}"#, 1), Some(6));
/// ```
pub fn string_end(json: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        // The next quote or backslash; an escape skips the byte after its backslash.
        let found = at + memchr::memchr2(b'"', b'\\', json.get(at..)?)?;
        match json.get(found)? {
            b'"' => return Some(found),
            _ => at = found + 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_compared_unescaped_and_per_object() {
        assert_eq!(
            oddity(br#"{"k\u0031":1,"k1":2}"#),
            Some(Oddity::DuplicateKey("k1".into()))
        );
        assert_eq!(oddity(br#"[{"k":1},{"k":2}]"#), None);
        assert_eq!(oddity(br#"{"s":"\"k\":1,\"k\":2"}"#), None);
        assert_eq!(
            oddity(br#"{"n":-99999999999999999999}"#),
            Some(Oddity::WideInteger("-99999999999999999999".into()))
        );
        assert_eq!(oddity(br#"{"n":-9223372036854775808}"#), None);
    }

    #[test]
    fn escapes_and_brackets_in_strings_do_not_count() {
        assert_eq!(depth(br#"["a\\", ["b\"]]"]]"#), 2);
        assert_eq!(depth(br#"{"k\\\\":{"\\\"":[[]]}}"#), 4);
        assert_eq!(depth(br#"[[["#), 3);
        assert_eq!(depth(br#""unclosed [["#), 0);
        assert_eq!(string_end(br#""a\\""#, 0), Some(4));
        assert_eq!(string_end(br#""a\"b""#, 0), Some(5));
        assert_eq!(string_end(br#""a\"#, 0), None);
        let deep = "[".repeat(300) + &"]".repeat(300);
        assert_eq!(depth(deep.as_bytes()), 300);
    }
}
