//! History repair at the input boundary (providers.md §4, `ensureValidHistory`).
//!
//! Three steps, in order, over the non-system history:
//!
//! 1. **Orphan results.** A tool result whose (non-empty) call id was not produced by an
//!    earlier assistant message is removed (a result before its call is an orphan too); a
//!    message left with no block is removed. If that empties a non-empty history, the
//!    history becomes one user message [`PH_CONTINUES`].
//! 2. **Missing results.** For each assistant message with calls, results are looked for
//!    in the following messages up to the next user or assistant message; every call still
//!    unanswered (first occurrence of an id, in call order) gets a [`PH_NO_RESULT`] result
//!    naming its tool, in one tool message inserted right after the assistant message.
//! 3. **User first.** If the first message is not a user message, a user message
//!    [`PH_CONTINUES`] is inserted before it.

use std::collections::HashSet;

use chef_ir::{Content, Message, Role, ToolResult};

/// The placeholder result for a call that has none.
pub const PH_NO_RESULT: &str = "[No tool result available]";
/// The placeholder user turn where history must start with the user.
pub const PH_CONTINUES: &str = "[Conversation continues]";

/// Repairs a history (no system messages expected, but they are tolerated).
pub(crate) fn repair_history(history: Vec<Message>) -> Vec<Message> {
    if history.is_empty() {
        return history;
    }
    let history = drop_orphans(history);
    let history = add_missing(history);
    user_first(history)
}

fn drop_orphans(history: Vec<Message>) -> Vec<Message> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut kept = Vec::with_capacity(history.len());
    for mut message in history {
        if message.role == Role::Assistant {
            seen.extend(message.tool_calls().map(|c| c.id.to_string()));
        }
        let before = message.content.len();
        message.content.retain(|block| match block {
            Content::ToolResult(r) => {
                r.tool_call_id.as_str().is_empty() || seen.contains(r.tool_call_id.as_str())
            }
            _ => true,
        });
        if message.content.is_empty() && before > 0 {
            continue;
        }
        kept.push(message);
    }
    if kept.is_empty() {
        kept.push(Message::user(PH_CONTINUES));
    }
    kept
}

fn add_missing(history: Vec<Message>) -> Vec<Message> {
    let mut placeholders: Vec<Option<Message>> = Vec::with_capacity(history.len());
    for (i, message) in history.iter().enumerate() {
        if message.role != Role::Assistant || message.tool_calls().next().is_none() {
            placeholders.push(None);
            continue;
        }
        let answered: HashSet<&str> = history
            .iter()
            .skip(i + 1)
            .take_while(|m| !matches!(m.role, Role::User | Role::Assistant))
            .flat_map(Message::tool_results_iter)
            .map(|r| r.tool_call_id.as_str())
            .collect();
        let mut done: HashSet<&str> = HashSet::new();
        let missing: Vec<ToolResult> = message
            .tool_calls()
            .filter(|c| !answered.contains(c.id.as_str()) && done.insert(c.id.as_str()))
            .map(|c| {
                let result = ToolResult::text(c.id.clone(), PH_NO_RESULT);
                if c.name.as_str().is_empty() {
                    result
                } else {
                    result.with_name(c.name.clone())
                }
            })
            .collect();
        placeholders.push((!missing.is_empty()).then(|| Message::tool_results(missing)));
    }
    let mut out = Vec::with_capacity(history.len());
    for (message, placeholder) in history.into_iter().zip(placeholders) {
        out.push(message);
        out.extend(placeholder);
    }
    out
}

fn user_first(mut history: Vec<Message>) -> Vec<Message> {
    if let Some(first) = history.iter().position(|m| m.role != Role::System)
        && history.get(first).is_some_and(|m| m.role != Role::User)
    {
        history.insert(first, Message::user(PH_CONTINUES));
    }
    history
}

#[cfg(test)]
mod tests {
    use chef_ir::ToolCall;
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str) -> Content {
        Content::ToolCall(ToolCall::new(id, name, json!({})))
    }

    fn result(id: &str) -> Message {
        Message::tool_results(vec![ToolResult::text(id, "r")])
    }

    #[test]
    fn empty_and_valid_histories_are_unchanged() {
        assert!(repair_history(vec![]).is_empty());
        let valid = vec![
            Message::user("q"),
            Message::assistant_with(vec![call("c1", "f")]),
            result("c1"),
            Message::assistant("done"),
        ];
        assert_eq!(repair_history(valid.clone()), valid);
    }

    #[test]
    fn orphan_results_are_removed() {
        let out = repair_history(vec![
            Message::user("u"),
            result("nope"),
            Message::assistant("a"),
        ]);
        assert_eq!(out, vec![Message::user("u"), Message::assistant("a")]);
        assert_eq!(
            repair_history(vec![result("c1")]),
            vec![Message::user(PH_CONTINUES)]
        );
    }

    #[test]
    fn missing_results_get_placeholders_before_real_ones() {
        let out = repair_history(vec![
            Message::user("u"),
            Message::assistant_with(vec![call("c1", "a"), call("c2", "b"), call("c2", "b")]),
            result("c1"),
        ]);
        assert_eq!(out.len(), 4);
        assert_eq!(
            out[2],
            Message::tool_results(vec![ToolResult::text("c2", PH_NO_RESULT).with_name("b")])
        );
        assert_eq!(out[3], result("c1"));
    }

    #[test]
    fn a_result_after_the_next_user_turn_does_not_count_and_is_kept() {
        let out = repair_history(vec![
            Message::user("u"),
            Message::assistant_with(vec![call("c1", "f")]),
            Message::user("x"),
            result("c1"),
        ]);
        assert_eq!(out.len(), 5);
        assert_eq!(
            out[2].tool_results_iter().next().unwrap().content,
            vec![Content::text(PH_NO_RESULT)]
        );
        assert_eq!(out[4], result("c1"));
    }

    #[test]
    fn a_result_before_its_call_is_an_orphan() {
        let out = repair_history(vec![
            Message::user("u"),
            result("c1"),
            Message::assistant_with(vec![call("c1", "f")]),
        ]);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].role, Role::Assistant);
        assert_eq!(
            out[2]
                .tool_results_iter()
                .next()
                .unwrap()
                .tool_call_id
                .as_str(),
            "c1"
        );
    }

    #[test]
    fn history_starts_with_a_user_turn() {
        let out = repair_history(vec![Message::assistant("hello"), Message::user("hi")]);
        assert_eq!(
            out,
            vec![
                Message::user(PH_CONTINUES),
                Message::assistant("hello"),
                Message::user("hi")
            ]
        );
        let idless = vec![Message::user("u"), result("")];
        assert_eq!(repair_history(idless.clone()), idless);
    }
}
