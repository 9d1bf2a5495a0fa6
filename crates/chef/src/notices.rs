//! Folding a request's notices: one line per cause, not one per message.
//!
//! The provider crates say what they could not express message by message ("message 12:
//! tool result "call_7" is an error, sent without an error flag"). A long loop with many
//! error results would then carry one such line per result in every compile. [`fold`]
//! keeps the first line of each cause and says how many more messages it applies to and
//! which; a cause is the line with its message number and quoted ids left out.

use std::fmt::Write as _;

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
    // Most compiles have no repeated cause: keep them untouched.
    let mut groups: Vec<(String, String, Vec<u64>)> = Vec::new();
    let mut order: Vec<Result<usize, String>> = Vec::with_capacity(notices.len());
    for notice in notices {
        match split(&notice) {
            Some((message, rest)) => {
                let cause = cause_of(rest);
                match groups.iter_mut().find(|(c, _, _)| *c == cause) {
                    Some((_, _, more)) => more.push(message),
                    None => {
                        order.push(Ok(groups.len()));
                        groups.push((cause, notice, Vec::new()));
                    }
                }
            }
            None => order.push(Err(notice)),
        }
    }
    let mut groups: Vec<Option<(String, Vec<u64>)>> = groups
        .into_iter()
        .map(|(_, first, more)| Some((first, more)))
        .collect();
    order
        .into_iter()
        .filter_map(|slot| match slot {
            Err(line) => Some(line),
            Ok(i) => groups
                .get_mut(i)
                .and_then(Option::take)
                .map(|(first, more)| folded(first, &more)),
        })
        .collect()
}

/// `first`, with how many more messages share its cause and which.
fn folded(mut first: String, more: &[u64]) -> String {
    if more.is_empty() {
        return first;
    }
    let _ = write!(first, " (and {} more like it: message", more.len());
    if more.len() > 1 {
        first.push('s');
    }
    for (i, n) in more.iter().take(LISTED).enumerate() {
        first.push_str(if i == 0 { " " } else { ", " });
        let _ = write!(first, "{n}");
    }
    if more.len() > LISTED {
        let others = more.len() - LISTED;
        let _ = write!(first, ", … and {others} other");
        if others > 1 {
            first.push('s');
        }
    }
    first.push(')');
    first
}

/// `message N: REST` → `(N, REST)`.
fn split(notice: &str) -> Option<(u64, &str)> {
    let rest = notice.strip_prefix("message ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest.get(..digits)?.parse().ok()?;
    let rest = rest.get(digits..)?.strip_prefix(": ")?;
    Some((number, rest))
}

/// `rest` with the text of each quoted string (an id, a name) left out, so notices that
/// differ only there share a cause. Quotes are those of Rust's `{:?}`: `\"` inside does not
/// end one.
fn cause_of(rest: &str) -> String {
    let mut cause = String::with_capacity(rest.len());
    let mut quoted = false;
    let mut escaped = false;
    for c in rest.chars() {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    quoted = false;
                    cause.push('"');
                }
                _ => {}
            }
        } else {
            if c == '"' {
                quoted = true;
            }
            cause.push(c);
        }
    }
    cause
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
