//! Tool calls the conversation moved on from.
//!
//! Every provider refuses a request in which a tool call has no result before the next
//! turn: Anthropic wants each `tool_use` answered in the next user turn, Chat Completions a
//! `tool` message per call, Responses a `function_call_output` per `function_call`, Gemini a
//! `functionResponse` per `functionCall`. A loop that pushes a user message while calls are
//! unanswered (the user interrupted, a call was cancelled, a loop pushed one result of two)
//! would have every later request refused. So a compile closes each such call with the
//! placeholder result [`PH_NO_RESULT`](chef_ir::PH_NO_RESULT), in a tool message just before
//! the user or assistant message that moved on, and says so in a notice. The history is not
//! changed; a call still waiting at the end of the history (the loop is between a reply and
//! its results) is left as it is.

use std::collections::HashSet;

use chef_ir::{Content, Message, PH_NO_RESULT, Role, ToolCall, placeholder_result};

impl super::Chef {
    /// One notice for each call the conversation moved on from since the last compile
    /// (each is said once; the history is scanned from where the last compile stopped).
    pub(super) fn interrupted_call_notices(&mut self) -> Vec<String> {
        let history = &self.conversation.history;
        let generation = history.generation();
        let from = match self.conversation.interrupted_scan {
            (g, at) if g == generation && at <= history.len() => at,
            _ => 0,
        };
        let (calls, next) = interrupted_calls(history, from);
        let notices = calls
            .iter()
            .map(|call| {
                format!(
                    "tool call {:?} ({}) got no result before the conversation went on; it \
                     is sent with the result {PH_NO_RESULT:?}",
                    call.id.as_str(),
                    chef_compress::similarity::shown_name(call.name.as_str())
                )
            })
            .collect();
        self.conversation.interrupted_scan = (generation, next);
        notices
    }
}

/// `history` appended to `messages`, with a tool message of placeholder results just before
/// each user or assistant message that follows calls still unanswered (see the module docs).
pub(crate) fn extend_closing_interrupted(messages: &mut Vec<Message>, history: &[Message]) {
    let mut open: Vec<&ToolCall> = Vec::new();
    for message in history {
        let interrupted = close(&mut open, message);
        if !interrupted.is_empty() {
            messages.push(placeholders(&interrupted));
        }
        messages.push(message.clone());
        follow(&mut open, message);
    }
}

/// The calls interrupted in `history[from..]`, where `from` is a place no call is open at
/// (0, or what the last call returned); and the place to start from next time (the last
/// assistant turn whose calls are still open, else the end).
pub(crate) fn interrupted_calls(history: &[Message], from: usize) -> (Vec<&ToolCall>, usize) {
    let mut open: Vec<&ToolCall> = Vec::new();
    let mut window = None;
    let mut interrupted = Vec::new();
    for (i, message) in history.iter().enumerate().skip(from) {
        interrupted.extend(close(&mut open, message));
        follow(&mut open, message);
        if message.role == Role::Assistant && !open.is_empty() {
            window = Some(i);
        }
        if open.is_empty() {
            window = None;
        }
    }
    (interrupted, window.unwrap_or(history.len()))
}

/// The calls in `open` that `message` moves on from (it is a user or assistant message;
/// a result it holds itself answers its call); `open` is left empty by such a message.
fn close<'a>(open: &mut Vec<&'a ToolCall>, message: &Message) -> Vec<&'a ToolCall> {
    if open.is_empty() || !matches!(message.role, Role::User | Role::Assistant) {
        return Vec::new();
    }
    let answered: HashSet<&str> = message
        .tool_results_iter()
        .map(|r| r.tool_call_id.as_str())
        .collect();
    let mut interrupted = std::mem::take(open);
    interrupted.retain(|call| !answered.contains(call.id.as_str()));
    interrupted
}

/// The tool message of placeholder results for `calls`.
fn placeholders(calls: &[&ToolCall]) -> Message {
    Message::tool_results(calls.iter().map(|call| placeholder_result(call)).collect())
}

/// `open` after `message`: an assistant turn's calls (once per id) replace what was open
/// (already closed by [`close`]); a result answers its call.
fn follow<'a>(open: &mut Vec<&'a ToolCall>, message: &'a Message) {
    let assistant = message.role == Role::Assistant;
    if assistant {
        open.clear();
    }
    // One pass over the blocks (this runs on every message a compile sends).
    for content in &message.content {
        match content {
            Content::ToolCall(call) if assistant && !open.iter().any(|c| c.id == call.id) => {
                open.push(call);
            }
            Content::ToolResult(result) if !open.is_empty() => {
                open.retain(|call| call.id != result.tool_call_id);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use chef_ir::{Content, Message, ToolCall, ToolResult};
    use serde_json::json;

    use super::*;

    fn calls(ids: &[&str]) -> Message {
        Message::assistant_with(
            ids.iter()
                .map(|id| Content::ToolCall(ToolCall::new(*id, "get_weather", json!({}))))
                .collect(),
        )
    }

    fn closed(history: &[Message]) -> Vec<Message> {
        let mut out = Vec::new();
        extend_closing_interrupted(&mut out, history);
        out
    }

    #[test]
    fn a_call_the_conversation_moved_on_from_gets_a_placeholder_before_the_next_turn() {
        let history = vec![
            Message::user("weather in Oslo and Rome?"),
            calls(&["c1", "c2"]),
            Message::tool_results(vec![ToolResult::text("c1", "5C")]),
            Message::user("never mind"),
        ];
        let out = closed(&history);
        assert_eq!(out.len(), 5);
        let placeholder = out[3].tool_results_iter().collect::<Vec<_>>();
        assert_eq!(placeholder.len(), 1);
        assert_eq!(placeholder[0].tool_call_id.as_str(), "c2");
        assert_eq!(
            placeholder[0].name.as_ref().map(|n| n.as_str()),
            Some("get_weather")
        );
        assert_eq!(out[3].text(), "");
        assert_eq!(out[4], history[3]);
        let (interrupted, next) = interrupted_calls(&history, 0);
        assert_eq!(
            interrupted
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>(),
            ["c2"]
        );
        assert_eq!(next, 4);
    }

    #[test]
    fn answered_and_still_waiting_calls_are_left_as_they_are() {
        let answered = vec![
            Message::user("q"),
            calls(&["c1"]),
            Message::tool_results(vec![ToolResult::text("c1", "ok")]),
            Message::assistant("done"),
        ];
        assert_eq!(closed(&answered), answered);
        assert!(interrupted_calls(&answered, 0).0.is_empty());
        // Between a reply and its results: nothing to close yet; the next scan starts at
        // the waiting turn.
        let waiting = vec![Message::user("q"), calls(&["c1"])];
        assert_eq!(closed(&waiting), waiting);
        assert_eq!(interrupted_calls(&waiting, 0), (Vec::new(), 1));
        let mut later = waiting.clone();
        later.push(Message::user("hello?"));
        let (interrupted, next) = interrupted_calls(&later, 1);
        assert_eq!(interrupted.len(), 1);
        assert_eq!(next, 3);
    }

    #[test]
    fn an_assistant_turn_moving_on_closes_the_calls_before_its_own() {
        let history = vec![
            Message::user("q"),
            calls(&["c1"]),
            calls(&["c2"]),
            Message::tool_results(vec![ToolResult::text("c2", "ok")]),
        ];
        let out = closed(&history);
        assert_eq!(out.len(), 5);
        assert_eq!(
            out[2]
                .tool_results_iter()
                .next()
                .map(|r| r.tool_call_id.as_str()),
            Some("c1")
        );
        assert_eq!(out[3], history[2]);
    }
}
