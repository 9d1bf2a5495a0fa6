//! Folding a request's notices: one line per cause, not one per message.
//!
//! The provider crates say what they could not express message by message ("message 12:
//! tool result "call_7" is an error, sent without an error flag"). A long loop with many
//! error results would then carry one such line per result in every compile. [`fold`]
//! keeps the first line of each cause and says how many more messages it applies to and
//! which; a cause is the line with its message number and its first quoted string (the id
//! or name it is about) left out.

/// How many of a folded cause's other message numbers are listed.
const LISTED: usize = 8;

/// `notices` with repeats of one cause folded into its first line, in first-seen order
/// (see the module docs). Lines that do not name a message are kept as they are. Pure and
/// deterministic: the same notices always fold to the same lines.
///
/// ```
/// let folded = chef::notices::fold(vec![
///     r#"message 3: tool result "a" is an error, sent without an error flag"#.to_owned(),
///     "tools: 2 renamed".to_owned(),
///     r#"message 7: tool result "b" is an error, sent without an error flag"#.to_owned(),
///     r#"message 9: tool result "c" is an error, sent without an error flag"#.to_owned(),
/// ]);
/// assert_eq!(folded, [
///     r#"message 3: tool result "a" is an error, sent without an error flag (and 2 more like it: messages 7, 9)"#,
///     "tools: 2 renamed",
/// ]);
/// ```
pub fn fold(notices: Vec<String>) -> Vec<String> {
    fold_known(notices, None)
}

/// A notice's message number and cause: the hash of its cause and where the cause's two
/// parts end and start in the notice (see [`cause_parts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    message: u64,
    hash: u64,
    /// Where the text after `message N: ` starts, and the cause's first part ends.
    rest_start: usize,
    before_end: usize,
    /// Where the cause's second part starts.
    after_start: usize,
}

impl Key {
    fn parts<'a>(&self, notice: &'a str) -> (&'a str, &'a str) {
        (
            notice
                .get(self.rest_start..self.before_end)
                .unwrap_or_default(),
            notice.get(self.after_start..).unwrap_or_default(),
        )
    }
}

/// The key of a notice that names a message (`None` for any other line).
pub(crate) fn key_of(notice: &str) -> Option<Key> {
    let (message, rest) = split(notice)?;
    let offset = notice.len() - rest.len();
    let (before, after) = cause_parts(rest);
    Some(Key {
        message,
        hash: hash_parts((before, after)),
        rest_start: offset,
        before_end: offset + before.len(),
        after_start: notice.len() - after.len(),
    })
}

/// [`fold`], with the keys of `notices[at..at + keys.len()]` known already (a history
/// prefix's notices, the same every turn the prefix is reused: their keys are made once).
pub(crate) fn fold_known(
    notices: Vec<String>,
    known: Option<(usize, &[Option<Key>])>,
) -> Vec<String> {
    let known = known.filter(|(at, keys)| at.saturating_add(keys.len()) <= notices.len());
    // Each compile runs this over the whole request's notices (a long session has a
    // hundred or more): no allocation unless a cause repeats.
    let mut groups: Vec<Group> = Vec::new();
    // Per notice: whether it repeats an earlier one's cause (made on the first repeat).
    let mut repeats: Vec<bool> = Vec::new();
    for (i, notice) in notices.iter().enumerate() {
        let key = match known {
            Some((at, keys)) if i >= at && i - at < keys.len() => {
                keys.get(i - at).copied().flatten()
            }
            _ => key_of(notice),
        };
        let Some(key) = key else {
            continue;
        };
        debug_assert_eq!(Some(key), key_of(notice), "a known notice key is stale");
        let parts = key.parts(notice);
        let earlier = groups.iter_mut().find(|g| {
            g.key.hash == key.hash
                && notices
                    .get(g.first)
                    .is_some_and(|first| g.key.parts(first) == parts)
        });
        match earlier {
            Some(group) => {
                group.more.push(key.message);
                if repeats.is_empty() {
                    repeats = vec![false; notices.len()];
                }
                if let Some(slot) = repeats.get_mut(i) {
                    *slot = true;
                }
            }
            None => groups.push(Group {
                first: i,
                key,
                more: Vec::new(),
            }),
        }
    }
    if repeats.is_empty() {
        return notices;
    }
    let mut groups = groups
        .into_iter()
        .filter(|g| !g.more.is_empty())
        .map(|g| (g.first, g.more))
        .peekable();
    let mut notices = notices;
    let mut i = 0;
    notices.retain_mut(|notice| {
        let at = i;
        i += 1;
        if repeats.get(at).copied().unwrap_or(false) {
            return false;
        }
        if let Some((_, more)) = groups.next_if(|(first, _)| *first == at) {
            *notice = folded(std::mem::take(notice), &more);
        }
        true
    });
    notices
}

/// Notices of one cause: its first notice and that notice's key, and the other messages it
/// applies to.
struct Group {
    first: usize,
    key: Key,
    more: Vec<u64>,
}

/// `first`, with how many more messages share its cause and which. (Numbers are written
/// by hand: `write!` costs more than the rest of the fold.)
fn folded(mut first: String, more: &[u64]) -> String {
    if more.is_empty() {
        return first;
    }
    first.push_str(" (and ");
    push_number(&mut first, more.len() as u64);
    first.push_str(if more.len() > 1 {
        " more like it: messages "
    } else {
        " more like it: message "
    });
    for (i, &n) in more.iter().take(LISTED).enumerate() {
        if i > 0 {
            first.push_str(", ");
        }
        push_number(&mut first, n);
    }
    if more.len() > LISTED {
        let others = more.len() - LISTED;
        first.push_str(", … and ");
        push_number(&mut first, others as u64);
        first.push_str(if others > 1 { " others" } else { " other" });
    }
    first.push(')');
    first
}

/// Appends `n` in decimal.
fn push_number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        if let Some(d) = digits.get_mut(at) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            break;
        }
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// `message N: REST` → `(N, REST)`.
fn split(notice: &str) -> Option<(u64, &str)> {
    let rest = notice.strip_prefix("message ")?;
    let mut number: u64 = 0;
    let mut digits = 0;
    for &b in rest.as_bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        number = number.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        digits += 1;
    }
    if digits == 0 {
        return None;
    }
    let rest = rest.get(digits..)?.strip_prefix(": ")?;
    Some((number, rest))
}

/// `rest` without the text of its first quoted string (an id, a name): the parts before
/// and after it, quotes kept. Notices that differ only there share a cause. Quotes are
/// those of Rust's `{:?}`: an escaped `\"` inside does not end one.
fn cause_parts(rest: &str) -> (&str, &str) {
    let bytes = rest.as_bytes();
    let Some(open) = bytes.iter().position(|&b| b == b'"') else {
        return (rest, "");
    };
    let mut at = open + 1;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'\\' => at += 2,
            b'"' => {
                // Both cuts are at ASCII quotes: character boundaries.
                return (
                    rest.get(..=open).unwrap_or_default(),
                    rest.get(at..).unwrap_or_default(),
                );
            }
            _ => at += 1,
        }
    }
    (rest, "")
}

/// A hash of a cause's two parts, eight bytes at a time (equal parts, equal hashes).
fn hash_parts((before, after): (&str, &str)) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = 0u64;
    for part in [before, after] {
        let bytes = part.as_bytes();
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in words.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        h = (h.rotate_left(5) ^ 0xff).wrapping_mul(K);
    }
    h
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn error_result(message: u64, id: &str) -> String {
        format!("message {message}: tool result {id:?} is an error, sent without an error flag")
    }

    #[test]
    fn one_line_per_cause_in_first_seen_order_with_the_other_messages() {
        let mut notices = vec!["tools: renamed".to_owned()];
        for (i, m) in [4, 8, 15, 16, 23, 42, 50, 51, 60, 61, 70]
            .iter()
            .enumerate()
        {
            notices.push(error_result(*m, &format!("call_{i}")));
        }
        notices.push("message 5: content of tool result \"x\" moved to a user message after the tool results".to_owned());
        let folded = fold(notices);
        assert_eq!(folded.len(), 3);
        assert_eq!(folded[0], "tools: renamed");
        assert_eq!(
            folded[1],
            "message 4: tool result \"call_0\" is an error, sent without an error flag (and 10 more like it: messages 8, 15, 16, 23, 42, 50, 51, 60, … and 2 others)"
        );
        assert!(folded[2].starts_with("message 5: content of tool result"));
    }

    #[test]
    fn distinct_causes_and_unnumbered_lines_are_kept_and_a_single_line_is_unchanged() {
        let notices = vec![
            error_result(1, "a"),
            "message 2: a block in gemini format left out".to_owned(),
            "message 3: a block in anthropic format left out".to_owned(),
            "message x: not a number".to_owned(),
            "plain".to_owned(),
            "plain".to_owned(),
        ];
        assert_eq!(fold(notices.clone()), notices);
        assert_eq!(fold(Vec::new()), Vec::<String>::new());
    }

    #[test]
    fn ids_with_escaped_quotes_share_a_cause() {
        let folded = fold(vec![error_result(1, "a\"b"), error_result(2, "c")]);
        assert_eq!(folded.len(), 1);
        assert!(
            folded[0].ends_with("(and 1 more like it: message 2)"),
            "{}",
            folded[0]
        );
    }
}
