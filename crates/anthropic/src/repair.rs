//! History repair at the input boundary: make a conversation the provider accepts.
//!
//! Three steps, in order:
//!
//! 1. **Orphan results.** A tool result whose (non-empty) id answers no earlier call is
//!    removed (a result before its call is an orphan too); a message left empty by that is
//!    removed. If nothing is left, the history becomes one user message
//!    [`PH_CONTINUES`].
//! 2. **Missing results.** For each assistant turn with calls, results are looked for up to
//!    the next user or assistant message (system messages do not stop the search). Each
//!    unanswered call, in call order and once per id, gets a placeholder result
//!    [`PH_NO_RESULT`] named after its tool, in one `tool` message inserted right after the
//!    assistant turn. A result that arrives later still is kept.
//! 3. **A user turn first.** If the first non-system message is not a user message, a user
//!    message [`PH_CONTINUES`] is inserted before it.
//!
//! Every change is reported as a [`Repair`].

use std::collections::HashSet;

use chef_ir::{Content, Message, Role, ToolCallId, ToolResult};

/// The text of a placeholder result for a call that has none.
pub const PH_NO_RESULT: &str = "[No tool result available]";
/// The text of a user turn inserted where the history cannot start or continue otherwise.
pub const PH_CONTINUES: &str = "[Conversation continues]";

/// One change history repair made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repair {
    /// A result answering no earlier call was removed.
    OrphanResultRemoved {
        /// Its id.
        tool_call_id: ToolCallId,
    },
    /// A placeholder result was inserted for an unanswered call.
    MissingResultInserted {
        /// The call's id.
        tool_call_id: ToolCallId,
    },
    /// A `[Conversation continues]` user turn was inserted.
    ContinuationInserted,
    /// A `system` entry in the middle of `messages` was skipped (channel output, not
    /// history).
    MidStreamSystemSkipped {
        /// Its index in the wire `messages`.
        index: usize,
    },
}

/// Repairs a history (see the module docs); a valid history comes back unchanged with no
/// repairs.
///
/// ```
/// use chef_anthropic::{Repair, repair_history};
/// use chef_ir::{Content, Message, ToolCall};
/// use serde_json::json;
///
/// let call = ToolCall::new("c1", "search", json!({}));
/// let history = vec![Message::user("go"), Message::assistant_with(vec![Content::ToolCall(call)])];
/// let (repaired, repairs) = repair_history(history);
/// assert_eq!(repaired.len(), 3);
/// assert!(matches!(repairs[0], Repair::MissingResultInserted { .. }));
/// ```
pub fn repair_history(history: Vec<Message>) -> (Vec<Message>, Vec<Repair>) {
    let mut repairs = Vec::new();
    if history.is_empty() {
        return (history, repairs);
    }
    let history = remove_orphans(history, &mut repairs);
    let history = insert_missing(history, &mut repairs);
    let history = user_first(history, &mut repairs);
    (history, repairs)
}

fn remove_orphans(history: Vec<Message>, repairs: &mut Vec<Repair>) -> Vec<Message> {
    let mut seen: HashSet<ToolCallId> = HashSet::new();
    let mut out = Vec::with_capacity(history.len());
    for mut message in history {
        if message.role == Role::Assistant {
            seen.extend(message.tool_calls().map(|c| c.id.clone()));
            out.push(message);
            continue;
        }
        let before = message.content.len();
        message.content.retain(|content| match content {
            Content::ToolResult(result)
                if !result.tool_call_id.as_str().is_empty()
                    && !seen.contains(&result.tool_call_id) =>
            {
                repairs.push(Repair::OrphanResultRemoved {
                    tool_call_id: result.tool_call_id.clone(),
                });
                false
            }
            _ => true,
        });
        if before == 0 || !message.content.is_empty() {
            out.push(message);
        }
    }
    if out.is_empty() {
        repairs.push(Repair::ContinuationInserted);
        out.push(Message::user(PH_CONTINUES));
    }
    out
}

fn insert_missing(history: Vec<Message>, repairs: &mut Vec<Repair>) -> Vec<Message> {
    let mut out = Vec::with_capacity(history.len());
    for (i, message) in history.iter().enumerate() {
        out.push(message.clone());
        if message.role != Role::Assistant || message.tool_calls().next().is_none() {
            continue;
        }
        let answered: HashSet<&ToolCallId> = history
            .get(i + 1..)
            .unwrap_or_default()
            .iter()
            .take_while(|m| !matches!(m.role, Role::User | Role::Assistant))
            .flat_map(Message::tool_results_iter)
            .map(|r| &r.tool_call_id)
            .collect();
        let mut placed: HashSet<&ToolCallId> = HashSet::new();
        let mut placeholders = Vec::new();
        for call in message.tool_calls() {
            if answered.contains(&call.id) || !placed.insert(&call.id) {
                continue;
            }
            repairs.push(Repair::MissingResultInserted {
                tool_call_id: call.id.clone(),
            });
            let mut result = ToolResult::text(call.id.clone(), PH_NO_RESULT);
            if !call.name.as_str().is_empty() {
                result = result.with_name(call.name.clone());
            }
            placeholders.push(result);
        }
        if !placeholders.is_empty() {
            out.push(Message::tool_results(placeholders));
        }
    }
    out
}

fn user_first(mut history: Vec<Message>, repairs: &mut Vec<Repair>) -> Vec<Message> {
    if let Some(first) = history.iter().position(|m| m.role != Role::System)
        && history.get(first).is_some_and(|m| m.role != Role::User)
    {
        repairs.push(Repair::ContinuationInserted);
        history.insert(first, Message::user(PH_CONTINUES));
    }
    history
}
