//! History repair: make a conversation one a provider accepts.
//!
//! Every provider's input adapter (`parse_request`) runs the same three steps, in order:
//!
//! 1. **Orphan results.** A tool result in a non-assistant message whose (non-empty) id
//!    answers no earlier call is removed (a result before its call is an orphan too); a
//!    message left empty by that is removed. If no message other than system messages is
//!    left of a non-empty history, a user message [`PH_CONTINUES`] is appended.
//! 2. **Missing results.** For each assistant turn with calls, results are looked for up to
//!    the next user or assistant message (system and tool messages do not stop the
//!    search). Each unanswered call, in call order and once per id, gets a placeholder
//!    result [`PH_NO_RESULT`] named after its tool (when the call names one), inserted
//!    right after the assistant turn: in one tool message, or one tool message per
//!    placeholder with [`RepairOptions::with_one_result_per_message`]. A result that
//!    arrives later still is kept.
//! 3. **A user turn first.** If the first non-system message is not a user message, a user
//!    message [`PH_CONTINUES`] is inserted before it.
//!
//! An empty history comes back empty, and a valid history comes back unchanged with no
//! repairs. Every change is reported as a [`Repair`].

use std::collections::HashSet;

use crate::{
    message::{Content, Message, Role, ToolResult},
    tool::{ToolCall, ToolCallId},
};

/// The text of a placeholder result for a call that has none.
pub const PH_NO_RESULT: &str = "[No tool result available]";
/// The text of a user turn inserted where the history cannot start or continue otherwise.
pub const PH_CONTINUES: &str = "[Conversation continues]";

/// The placeholder result for a call that has none: [`PH_NO_RESULT`], named after the
/// call's tool when the call names one (what [`repair_history`] inserts, and what a chef
/// session sends for a call the conversation moved on from).
///
/// ```
/// use chef_ir::{PH_NO_RESULT, ToolCall, placeholder_result};
///
/// let result = placeholder_result(&ToolCall::new("c1", "search", serde_json::json!({})));
/// assert_eq!(result.tool_call_id.as_str(), "c1");
/// assert_eq!(result.name.as_ref().map(|n| n.as_str()), Some("search"));
/// assert_eq!(result.content[0].as_text(), Some(PH_NO_RESULT));
/// ```
pub fn placeholder_result(call: &ToolCall) -> ToolResult {
    let result = ToolResult::text(call.id.clone(), PH_NO_RESULT);
    if call.name.as_str().is_empty() {
        result
    } else {
        result.with_name(call.name.clone())
    }
}

/// One change an input adapter made to make a history valid.
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
    /// A `system` entry in the middle of the wire `messages` was skipped (channel output,
    /// not history). Reported by input adapters whose wire allows no system message there
    /// (Anthropic), never by [`repair_history`].
    MidStreamSystemSkipped {
        /// Its index in the wire `messages`.
        index: usize,
    },
}

/// How [`repair_history`] shapes what it inserts; the one thing providers differ in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairOptions {
    /// Insert each placeholder result in a tool message of its own instead of one tool
    /// message for all placeholders of a turn. Adapters whose wire carries one result per
    /// message or item (OpenAI Chat `tool` messages, Responses `function_call_output`
    /// items) parse into one tool message per result and repair in the same shape.
    pub one_result_per_message: bool,
}

impl RepairOptions {
    /// The defaults: all placeholders of a turn in one tool message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`RepairOptions::one_result_per_message`].
    #[must_use]
    pub fn with_one_result_per_message(mut self, on: bool) -> Self {
        self.one_result_per_message = on;
        self
    }
}

/// A repaired history and what was changed to get it.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Repaired {
    /// The history, valid for every provider.
    pub messages: Vec<Message>,
    /// What was changed, in the order it was done (empty for a valid history).
    pub repairs: Vec<Repair>,
}

/// Repairs a history (see the module docs).
///
/// ```
/// use chef_ir::{Content, Message, Repair, RepairOptions, ToolCall, repair_history};
/// use serde_json::json;
///
/// let call = ToolCall::new("c1", "search", json!({}));
/// let history = vec![Message::user("go"), Message::assistant_with(vec![Content::ToolCall(call)])];
/// let repaired = repair_history(history, RepairOptions::new());
/// assert_eq!(repaired.messages.len(), 3);
/// assert!(matches!(repaired.repairs[0], Repair::MissingResultInserted { .. }));
/// ```
pub fn repair_history(history: Vec<Message>, options: RepairOptions) -> Repaired {
    let mut repairs = Vec::new();
    if history.is_empty() {
        return Repaired {
            messages: history,
            repairs,
        };
    }
    let history = remove_orphans(history, &mut repairs);
    let history = insert_missing(history, options, &mut repairs);
    let messages = user_first(history, &mut repairs);
    Repaired { messages, repairs }
}

fn remove_orphans(history: Vec<Message>, repairs: &mut Vec<Repair>) -> Vec<Message> {
    let mut seen: HashSet<ToolCallId> = HashSet::new();
    let mut out = Vec::with_capacity(history.len() + 1);
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
    if out.iter().all(|m| m.role == Role::System) {
        repairs.push(Repair::ContinuationInserted);
        out.push(Message::user(PH_CONTINUES));
    }
    out
}

fn insert_missing(
    history: Vec<Message>,
    options: RepairOptions,
    repairs: &mut Vec<Repair>,
) -> Vec<Message> {
    // The placeholders each assistant turn needs, by its index; the messages are moved,
    // not copied, and a history with nothing missing comes back as it is.
    let mut inserts: Vec<(usize, Vec<ToolResult>)> = Vec::new();
    for (i, message) in history.iter().enumerate() {
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
            placeholders.push(placeholder_result(call));
        }
        if !placeholders.is_empty() {
            inserts.push((i, placeholders));
        }
    }
    if inserts.is_empty() {
        return history;
    }
    let added: usize = inserts.iter().map(|(_, p)| p.len()).sum();
    let mut out = Vec::with_capacity(history.len() + added);
    let mut inserts = inserts.into_iter().peekable();
    for (i, message) in history.into_iter().enumerate() {
        out.push(message);
        let Some((_, placeholders)) = inserts.next_if(|(at, _)| *at == i) else {
            continue;
        };
        if options.one_result_per_message {
            out.extend(
                placeholders
                    .into_iter()
                    .map(|r| Message::tool_results(vec![r])),
            );
        } else {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolCall;

    fn calls(calls: &[(&str, &str)]) -> Message {
        Message::assistant_with(
            calls
                .iter()
                .map(|(id, name)| Content::ToolCall(ToolCall::new(*id, *name, json!({}))))
                .collect(),
        )
    }

    fn result(id: &str) -> Message {
        Message::tool_results(vec![ToolResult::text(id, "r")])
    }

    fn placeholder(id: &str, name: &str) -> ToolResult {
        ToolResult::text(id, PH_NO_RESULT).with_name(name)
    }

    fn repair(history: Vec<Message>) -> Repaired {
        repair_history(history, RepairOptions::new())
    }

    fn per_message(history: Vec<Message>) -> Repaired {
        repair_history(
            history,
            RepairOptions::new().with_one_result_per_message(true),
        )
    }

    #[test]
    fn an_empty_history_stays_empty() {
        assert_eq!(repair(vec![]), Repaired::default());
        assert_eq!(per_message(vec![]), Repaired::default());
    }

    #[test]
    fn a_valid_history_comes_back_unchanged() {
        let valid = vec![
            Message::system("s"),
            Message::user("q"),
            calls(&[("c1", "a"), ("c2", "b")]),
            result("c2"),
            Message::system("between"),
            result("c1"),
            Message::assistant("done"),
            Message::user("idless"),
            Message::tool_results(vec![ToolResult::text("", "kept")]),
        ];
        for repaired in [repair(valid.clone()), per_message(valid.clone())] {
            assert_eq!(repaired.messages, valid);
            assert!(repaired.repairs.is_empty());
        }
    }

    #[test]
    fn orphan_results_are_removed_and_reported() {
        let mixed = Message::tool_results(vec![
            ToolResult::text("nope", "x"),
            ToolResult::text("c1", "r"),
        ]);
        let repaired = repair(vec![
            Message::user("u"),
            result("early"),
            calls(&[("c1", "f")]),
            mixed,
        ]);
        assert_eq!(
            repaired.messages,
            vec![Message::user("u"), calls(&[("c1", "f")]), result("c1")]
        );
        assert_eq!(
            repaired.repairs,
            vec![
                Repair::OrphanResultRemoved {
                    tool_call_id: "early".into()
                },
                Repair::OrphanResultRemoved {
                    tool_call_id: "nope".into()
                },
            ]
        );
    }

    #[test]
    fn nothing_but_orphans_becomes_a_continuation() {
        let repaired = repair(vec![result("c1")]);
        assert_eq!(repaired.messages, vec![Message::user(PH_CONTINUES)]);
        assert_eq!(
            repaired.repairs,
            vec![
                Repair::OrphanResultRemoved {
                    tool_call_id: "c1".into()
                },
                Repair::ContinuationInserted,
            ]
        );
        // System messages alone are no conversation either.
        let repaired = repair(vec![Message::system("s")]);
        assert_eq!(
            repaired.messages,
            vec![Message::system("s"), Message::user(PH_CONTINUES)]
        );
        assert_eq!(repaired.repairs, vec![Repair::ContinuationInserted]);
    }

    #[test]
    fn unanswered_calls_get_placeholders_right_after_the_turn() {
        let history = vec![
            Message::user("u"),
            calls(&[("c1", "a"), ("c2", "b"), ("c3", ""), ("c2", "b")]),
            result("c1"),
        ];
        let grouped = repair(history.clone());
        assert_eq!(
            grouped.messages,
            vec![
                Message::user("u"),
                calls(&[("c1", "a"), ("c2", "b"), ("c3", ""), ("c2", "b")]),
                Message::tool_results(vec![
                    placeholder("c2", "b"),
                    ToolResult::text("c3", PH_NO_RESULT),
                ]),
                result("c1"),
            ]
        );
        let reported = vec![
            Repair::MissingResultInserted {
                tool_call_id: "c2".into(),
            },
            Repair::MissingResultInserted {
                tool_call_id: "c3".into(),
            },
        ];
        assert_eq!(grouped.repairs, reported);

        let split = per_message(history);
        assert_eq!(
            split.messages.get(2..4),
            Some(
                &[
                    Message::tool_results(vec![placeholder("c2", "b")]),
                    Message::tool_results(vec![ToolResult::text("c3", PH_NO_RESULT)]),
                ][..]
            )
        );
        assert_eq!(split.messages.len(), 5);
        assert_eq!(split.repairs, reported);
    }

    #[test]
    fn a_result_after_the_next_user_turn_does_not_answer_and_is_kept() {
        let repaired = repair(vec![
            Message::user("u"),
            calls(&[("c1", "f")]),
            Message::user("x"),
            result("c1"),
        ]);
        assert_eq!(
            repaired.messages,
            vec![
                Message::user("u"),
                calls(&[("c1", "f")]),
                Message::tool_results(vec![placeholder("c1", "f")]),
                Message::user("x"),
                result("c1"),
            ]
        );
    }

    #[test]
    fn a_leading_assistant_turn_gets_a_user_turn_before_it() {
        let repaired = repair(vec![
            Message::system("s"),
            Message::assistant("hello"),
            Message::user("hi"),
        ]);
        assert_eq!(
            repaired.messages,
            vec![
                Message::system("s"),
                Message::user(PH_CONTINUES),
                Message::assistant("hello"),
                Message::user("hi"),
            ]
        );
        assert_eq!(repaired.repairs, vec![Repair::ContinuationInserted]);
    }

    #[test]
    fn every_kind_of_repair_in_one_history() {
        let repaired = repair(vec![
            result("orphan"),
            calls(&[("c1", "f")]),
            Message::user("u"),
        ]);
        assert_eq!(
            repaired.messages,
            vec![
                Message::user(PH_CONTINUES),
                calls(&[("c1", "f")]),
                Message::tool_results(vec![placeholder("c1", "f")]),
                Message::user("u"),
            ]
        );
        assert_eq!(
            repaired.repairs,
            vec![
                Repair::OrphanResultRemoved {
                    tool_call_id: "orphan".into()
                },
                Repair::MissingResultInserted {
                    tool_call_id: "c1".into()
                },
                Repair::ContinuationInserted,
            ]
        );
    }
}
