//! Mechanical compaction: clearing old tool results, thinking and reasoning tags without a
//! model. Pinned messages (widened to their whole turn) are never touched.

use std::collections::HashMap;

use chef_ir::{Content, Message, Role};

use super::{split::turns, summarize::collapse_newlines};

/// The placeholder that replaces a cleared tool result's content.
pub const CLEARED_TOOL_RESULT: &str = "[Old tool result content cleared]";

/// What [`compact`] clears.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Clear {
    /// Tool results: their content becomes [`CLEARED_TOOL_RESULT`].
    ToolResults {
        /// Keep the last `n` clearable results as they are (`0`: clear all).
        keep_recent: usize,
        /// Only results of these tools (resolved through the calls' ids); empty: any tool.
        only: Vec<String>,
        /// Never results of these tools.
        exempt: Vec<String>,
    },
    /// Thinking and redacted thinking blocks of assistant messages.
    Thinking,
    /// `<think>…</think>` spans (any letter case) in assistant text.
    ReasoningTags,
}

impl Clear {
    /// Every tool result, of any tool.
    pub fn tool_results() -> Self {
        Self::ToolResults {
            keep_recent: 0,
            only: Vec::new(),
            exempt: Vec::new(),
        }
    }
}

/// Returns `history` with `clear` applied; the input is not modified. Pinned messages, and
/// every message of a turn that holds a pinned one, are left exactly as they are.
///
/// ```
/// use chef::ir::{Content, Message, ToolCall, ToolResult};
/// use chef::overflow::{CLEARED_TOOL_RESULT, Clear, compact};
///
/// let history = vec![
///     Message::assistant_with(vec![Content::ToolCall(ToolCall::new("c1", "read", serde_json::json!({})))]),
///     Message::tool_results(vec![ToolResult::text("c1", "a very long file")]),
/// ];
/// let out = compact(&history, &[Clear::tool_results()]);
/// assert_eq!(out[1].tool_results_iter().next().unwrap().content[0].as_text(), Some(CLEARED_TOOL_RESULT));
/// ```
pub fn compact(history: &[Message], clear: &[Clear]) -> Vec<Message> {
    let mut out = history.to_vec();
    let mut pinned = vec![false; history.len()];
    for turn in turns(history).into_iter().filter(|t| t.pinned) {
        for flag in pinned.iter_mut().take(turn.end).skip(turn.start) {
            *flag = true;
        }
    }
    for rule in clear {
        match rule {
            Clear::ToolResults {
                keep_recent,
                only,
                exempt,
            } => clear_tool_results(&mut out, &pinned, *keep_recent, only, exempt),
            Clear::Thinking => {
                for (message, _) in out
                    .iter_mut()
                    .zip(&pinned)
                    .filter(|(m, p)| !**p && m.role == Role::Assistant)
                {
                    message.content.retain(|c| {
                        !matches!(
                            c,
                            Content::Thinking { .. } | Content::RedactedThinking { .. }
                        )
                    });
                }
            }
            Clear::ReasoningTags => {
                for (message, _) in out
                    .iter_mut()
                    .zip(&pinned)
                    .filter(|(m, p)| !**p && m.role == Role::Assistant)
                {
                    for block in &mut message.content {
                        if let Content::Text { text, .. } = block
                            && let Some(stripped) = strip_think(text)
                        {
                            *text = stripped;
                        }
                    }
                }
            }
        }
    }
    out
}

fn clear_tool_results(
    out: &mut [Message],
    pinned: &[bool],
    keep_recent: usize,
    only: &[String],
    exempt: &[String],
) {
    let names: HashMap<String, String> = out
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| (c.id.as_str().to_owned(), c.name.as_str().to_owned()))
        .collect();
    // (message, block) positions of clearable results, oldest first.
    let mut clearable = Vec::new();
    for (i, message) in out.iter().enumerate() {
        if pinned.get(i).copied().unwrap_or(true) {
            continue;
        }
        for (j, block) in message.content.iter().enumerate() {
            let Content::ToolResult(result) = block else {
                continue;
            };
            let name = result
                .name
                .as_ref()
                .map(|n| n.as_str().to_owned())
                .or_else(|| names.get(result.tool_call_id.as_str()).cloned());
            let wanted = only.is_empty() || name.as_ref().is_some_and(|n| only.contains(n));
            let exempted = name.as_ref().is_some_and(|n| exempt.contains(n));
            if wanted && !exempted {
                clearable.push((i, j));
            }
        }
    }
    let clear_count = clearable.len().saturating_sub(keep_recent);
    for (i, j) in clearable.into_iter().take(clear_count) {
        if let Some(Content::ToolResult(result)) = out.get_mut(i).and_then(|m| m.content.get_mut(j))
        {
            let already = matches!(
                result.content.as_slice(),
                [Content::Text { text, .. }] if text == CLEARED_TOOL_RESULT
            );
            if !already {
                result.content = vec![Content::text(CLEARED_TOOL_RESULT)];
            }
        }
    }
}

/// Removes `<think>…</think>` spans (ASCII case-insensitive; an unclosed one runs to the
/// end), collapses three or more newlines to two and trims. `None` when there is none.
fn strip_think(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    lower.find("<think>")?;
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(rel) = lower.get(at..).and_then(|l| l.find("<think>")) {
        let start = at + rel;
        out.push_str(text.get(at..start).unwrap_or_default());
        match lower.get(start..).and_then(|l| l.find("</think>")) {
            Some(end) => at = start + end + "</think>".len(),
            None => {
                at = text.len();
                break;
            }
        }
    }
    out.push_str(text.get(at..).unwrap_or_default());
    Some(collapse_newlines(&out, false))
}

#[cfg(test)]
mod tests {
    use chef_ir::{ToolCall, ToolResult};
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str) -> Message {
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(id, name, json!({})))])
    }

    fn result(id: &str, text: &str) -> Message {
        Message::tool_results(vec![ToolResult::text(id, text)])
    }

    fn result_text(m: &Message) -> String {
        m.tool_results_iter()
            .flat_map(|r| r.content.iter().filter_map(Content::as_text))
            .collect()
    }

    #[test]
    fn tool_results_keep_recent_filter_and_exempt() {
        let history = vec![
            call("1", "read"),
            result("1", "r1"),
            call("2", "grep"),
            result("2", "r2"),
            call("3", "read"),
            result("3", "r3"),
        ];
        let all = compact(&history, &[Clear::tool_results()]);
        assert!(
            all.iter()
                .skip(1)
                .step_by(2)
                .all(|m| result_text(m) == CLEARED_TOOL_RESULT)
        );
        assert_eq!(result_text(&history[1]), "r1", "the input is not modified");
        // Each setting, with what it leaves at some positions of the history.
        type Left = &'static [(usize, &'static str)];
        let cases: [(&str, Clear, Left); 3] = [
            (
                "keep_recent 1",
                Clear::ToolResults {
                    keep_recent: 1,
                    only: vec![],
                    exempt: vec![],
                },
                &[(5, "r3"), (3, CLEARED_TOOL_RESULT)],
            ),
            (
                "only read",
                Clear::ToolResults {
                    keep_recent: 0,
                    only: vec!["read".into()],
                    exempt: vec![],
                },
                &[(3, "r2"), (5, CLEARED_TOOL_RESULT)],
            ),
            (
                "exempt grep",
                Clear::ToolResults {
                    keep_recent: 0,
                    only: vec![],
                    exempt: vec!["grep".into()],
                },
                &[(3, "r2")],
            ),
        ];
        for (case, clear, want) in cases {
            let out = compact(&history, &[clear]);
            for &(at, text) in want {
                assert_eq!(result_text(&out[at]), text, "{case}: message {at}");
            }
        }
    }

    #[test]
    fn pinned_turns_are_untouched() {
        let mut history = vec![call("1", "read"), result("1", "r1")];
        if let Some(m) = history.get_mut(0) {
            m.pinned = true;
        }
        let out = compact(&history, &[Clear::tool_results()]);
        assert_eq!(result_text(&out[1]), "r1");
    }

    #[test]
    fn thinking_and_reasoning_tags_are_removed_from_assistant_messages() {
        let history = vec![
            Message::assistant_with(vec![
                Content::Thinking {
                    thinking: "hmm".into(),
                    signature: None,
                },
                Content::text("<THINK>plan</think>\n\n\n\nAnswer <think>unclosed"),
            ]),
            Message::user("<think>users keep theirs</think>"),
        ];
        let out = compact(&history, &[Clear::Thinking, Clear::ReasoningTags]);
        assert_eq!(out[0].content.len(), 1);
        assert_eq!(out[0].text(), "Answer");
        assert_eq!(out[1], history[1]);
    }
}
