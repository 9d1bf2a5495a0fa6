//! How a provider crate lays out a compiled body, for a caller that splices bytes into it.
//!
//! A runtime that compiles the same conversation every turn wants to reuse bytes it made
//! before: the serialised tools (most of a request) and the elements of a long history.
//! To do that without parsing provider JSON or knowing where each provider keeps what, it
//! asks the provider crate for a [`Layout`]: the body with its `tools` member left out,
//! where that member goes back, the key of the messages array, and the notices as text,
//! renumbered for a request that left its first messages out. [`elements`] and
//! [`array_start`] then find the messages array by that key.
//!
//! Each provider crate has one `layout` function returning this type; the provider-neutral
//! parts (finding the array, renumbering notices) live here, once.

use std::ops::Range;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::WireNames;

/// A compiled body laid out for splicing (see the [module docs](self)).
///
/// `T` is the provider's wire tool type: the caller serialises `tools` when it needs their
/// bytes, and inserts `"tools":<bytes>` at [`tools_at`](Self::tools_at).
#[derive(Debug)]
#[non_exhaustive]
pub struct Layout<T> {
    /// The compact JSON body without its `tools` member.
    pub body: Vec<u8>,
    /// Where the `tools` member goes when the request has tools: just after the body's
    /// opening `{` or after a leading member (Gemini's `systemInstruction`; a comma follows
    /// it), or just before its closing `}` (a comma precedes it).
    pub tools_at: usize,
    /// The tools the compile converted, in wire order (empty when it skipped them).
    pub tools: Vec<T>,
    /// Whether the tools were converted. `false` only when the caller passed
    /// [`ToolPass::Skip`](crate::ToolPass::Skip) and the provider crate honours it: the
    /// caller then holds the tools' bytes and notices from an earlier compile.
    pub converted: bool,
    /// Real ↔ wire tool names.
    pub names: WireNames,
    /// The notices as text, in the provider crate's order.
    pub notices: Vec<String>,
    /// Which of [`notices`](Self::notices) are about the tools as declared: they name no
    /// message. With the tools skipped the range is empty, at the place they would take.
    pub tool_notices: Range<usize>,
    /// Whether every notice about a message could be renumbered by the offset asked for
    /// (always `true` for offset 0 or no such notice). A notice the provider crate cannot
    /// renumber depends on more than its own message.
    pub notices_shifted: bool,
    /// The key of the body's top-level messages array.
    pub messages_key: &'static str,
}

impl<T> Layout<T> {
    /// A layout of `body` with no tools (`tools_at` 0, none converted) and no notices;
    /// the provider crate sets the rest.
    pub fn new(body: Vec<u8>, messages_key: &'static str, names: WireNames) -> Self {
        Self {
            body,
            tools_at: 0,
            tools: Vec::new(),
            converted: false,
            names,
            notices: Vec::new(),
            tool_notices: 0..0,
            notices_shifted: true,
            messages_key,
        }
    }
}

/// The separators around `"tools":<array>` inserted between `head` and `tail` (a body cut
/// at [`Layout::tools_at`]): just before the closing `}` it follows a comma when members
/// precede it; elsewhere a comma follows it when members come after it.
///
/// ```
/// use chef_ir::layout::tools_separators;
/// assert_eq!(tools_separators(b"{", b"\"a\":1}"), (&b"\"tools\":"[..], &b","[..]));
/// assert_eq!(tools_separators(b"{\"a\":1", b"}"), (&b",\"tools\":"[..], &b""[..]));
/// assert_eq!(tools_separators(b"{", b"}"), (&b"\"tools\":"[..], &b""[..]));
/// ```
pub fn tools_separators(head: &[u8], tail: &[u8]) -> (&'static [u8], &'static [u8]) {
    let at_end = tail == b"}";
    let before: &'static [u8] = if at_end && head.len() > 1 {
        b",\"tools\":"
    } else {
        b"\"tools\":"
    };
    let after: &'static [u8] = if !at_end && tail.len() > 1 { b"," } else { b"" };
    (before, after)
}

/// Notices as text, renumbered by `offset` where `renumber` can (it returns whether it
/// did), and whether all of them hold at that offset. The notices in `tool_notices` name no
/// message and hold at any offset.
///
/// For a provider crate's `layout`: `offset` is how many history messages the request left
/// out in front of the ones it holds.
pub fn shift_notices<N: Clone + std::fmt::Display>(
    notices: &[N],
    tool_notices: &Range<usize>,
    offset: usize,
    renumber: impl Fn(&mut N, usize) -> bool,
) -> (Vec<String>, bool) {
    let mut all = true;
    let text = notices
        .iter()
        .enumerate()
        .map(|(i, n)| {
            // Nothing moves at offset 0, and tool notices name no message.
            if offset == 0 || tool_notices.contains(&i) {
                return n.to_string();
            }
            let mut n = n.clone();
            all &= renumber(&mut n, offset);
            n.to_string()
        })
        .collect();
    (text, all)
}

/// The byte spans of the elements of the array under the top-level key `key` of `body`,
/// and the offset just after its `[`. `None` when `body` is not a JSON object with such an
/// array, or when a key needs unescaping (no provider crate writes one).
pub fn elements(body: &[u8], key: &str) -> Option<(usize, Vec<(usize, usize)>)> {
    let array = member(body, key)?;
    let items: Vec<&RawValue> = serde_json::from_str(array.get()).ok()?;
    let base = body.as_ptr() as usize;
    let offset = |raw: &str| (raw.as_ptr() as usize).checked_sub(base);
    let open = offset(array.get())? + 1;
    let spans = items
        .iter()
        .map(|raw| offset(raw.get()).map(|start| (start, start + raw.get().len())))
        .collect::<Option<Vec<_>>>()?;
    Some((open, spans))
}

/// The offset just after the `[` of the array under the top-level key `key` of `body`,
/// without reading its elements. `None` as for [`elements`].
pub fn array_start(body: &[u8], key: &str) -> Option<usize> {
    let array = member(body, key)?;
    if !array.get().starts_with('[') {
        return None;
    }
    (array.get().as_ptr() as usize)
        .checked_sub(body.as_ptr() as usize)
        .map(|at| at + 1)
}

/// The value of the top-level member `key` of `body`, found without building a map of the
/// other members.
fn member<'b>(body: &'b [u8], key: &str) -> Option<&'b RawValue> {
    struct Member<'k>(&'k str);
    impl<'de> Visitor<'de> for Member<'_> {
        type Value = Option<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(key) = map.next_key::<&'de str>()? {
                if found.is_none() && key == self.0 {
                    found = Some(map.next_value::<&'de RawValue>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    impl<'de> DeserializeSeed<'de> for Member<'_> {
        type Value = Option<&'de RawValue>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    let mut de = serde_json::Deserializer::from_slice(body);
    let value = Member(key).deserialize(&mut de).ok()??;
    de.end().ok()?;
    Some(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

    use super::{array_start, elements, shift_notices};

    #[test]
    fn elements_are_found_by_key_whatever_comes_before() {
        let body = br#"{"tools":[{"a":[1,2]}],"messages":[{"x":"]"},[3],"s"],"z":1}"#;
        let (open, spans) = elements(body, "messages").unwrap();
        assert_eq!(body[open - 1], b'[');
        let texts: Vec<&[u8]> = spans.iter().map(|&(s, e)| &body[s..e]).collect();
        assert_eq!(texts, [&br#"{"x":"]"}"#[..], b"[3]", br#""s""#]);
        assert_eq!(array_start(body, "messages"), Some(open));
        assert_eq!(elements(body, "input"), None);
    }

    #[test]
    fn bad_bodies_give_none() {
        for body in [
            &b"[]"[..],
            b"{",
            b"{\"messages\":1}",
            b"{\"messages\":[]} x",
            b"",
        ] {
            assert_eq!(array_start(body, "messages"), None, "{body:?}");
        }
        assert_eq!(
            elements(b"{\"messages\":[]}", "messages"),
            Some((13, vec![]))
        );
    }

    #[test]
    fn only_message_notices_need_renumbering() {
        let notices = ["tool", "moved 2", "other"];
        let renumber = |n: &mut &str, offset: usize| {
            if *n == "moved 2" && offset == 3 {
                *n = "moved 5";
                true
            } else {
                false
            }
        };
        let (text, all) = shift_notices(&notices, &(0..1), 0, renumber);
        assert_eq!(
            (text, all),
            (vec!["tool".into(), "moved 2".into(), "other".into()], true)
        );
        let (text, all) = shift_notices(&notices, &(0..1), 3, renumber);
        assert_eq!(text[1], "moved 5");
        // "other" could not be renumbered.
        assert!(!all);
        let (_, all) = shift_notices(&notices[..2], &(0..1), 3, renumber);
        assert!(all);
    }
}
