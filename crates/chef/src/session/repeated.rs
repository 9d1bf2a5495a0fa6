//! The loop guard: a model that sends again a call it already made, and already has the
//! result of, is told so at the next compile.
//!
//! Small models in particular finish the last step of a task and then call the same tool
//! with the same arguments again, turn after turn, instead of answering. Nothing is
//! refused (a repeated call may be a deliberate poll, and the caller dispatches it as
//! usual); the next request carries a per-compile notice after the history, in the tail
//! where every announcement goes, so the cached prefix never moves for it.

use chef_ir::{Content, Message, Role, ToolCall};

use super::Chef;
use crate::announce::{Announcement, Channel};

/// The id of the notice (it is never a standing announcement: it is derived from the
/// history at each compile).
pub const REPEATED_CALL_ID: &str = "calls:repeated";

impl Chef {
    /// The loop guard's finding: the tools of the latest reply, as the model wrote their
    /// names (each once, in order), when every call of that reply repeats a call it made
    /// earlier for the same request — the same name, equal arguments — whose result was
    /// not an error; `None` when the latest reply with calls made a new one. The request
    /// starts at the latest user message with text. An agent loop may act on it (stop, or
    /// ask the user), whether or not the notice is on.
    ///
    /// ```
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Content, Message, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.push(Message::user("What is the weather in Paris?"));
    /// let call = |id: &str| ToolCall::new(id, "get_weather", json!({"city": "Paris"}));
    /// chef.push(Message::assistant_with(vec![Content::ToolCall(call("1"))]));
    /// chef.push(Message::tool_results(vec![ToolResult::text("1", "12 °C")]));
    /// assert_eq!(chef.repeated_calls(), None);
    /// chef.push(Message::assistant_with(vec![Content::ToolCall(call("2"))]));
    /// assert_eq!(chef.repeated_calls(), Some(vec!["get_weather".to_owned()]));
    /// ```
    #[must_use]
    pub fn repeated_calls(&self) -> Option<Vec<String>> {
        repeated_calls(&self.conversation.history)
    }

    /// The notice for this compile when the model's latest calls all repeat calls it made
    /// earlier for the same request (same name as written, equal arguments) whose results
    /// were not errors; `None` otherwise, or when the guard is off
    /// ([`ChefConfig::with_repeat_notice`](crate::ChefConfig::with_repeat_notice)).
    pub(super) fn repeat_notice(&self) -> Option<Announcement> {
        if !self.config.repeat_notice {
            return None;
        }
        let repeated = repeated_calls(&self.conversation.history)?;
        let names: Vec<String> = repeated.iter().map(|n| format!("`{n}`")).collect();
        let (named, them) = match names.as_slice() {
            [one] => (one.clone(), "its result is"),
            [init @ .., last] => (
                format!("{} and {last}", init.join(", ")),
                "their results are",
            ),
            [] => return None,
        };
        Some(Announcement {
            id: REPEATED_CALL_ID.to_owned(),
            content: format!(
                "You called {named} again with the same arguments as before; {them} already \
                 above. If the results so far answer the request, reply with the answer now \
                 instead of calling a tool. Otherwise make the next call the request still \
                 needs."
            ),
            channel: Channel::Auto,
        })
    }
}

/// The names (as written, in order, each once) of the latest assistant message's calls
/// when every one of them repeats an earlier call of the same request that was answered
/// without an error; `None` when the latest message with calls has a new call, or none,
/// or a call whose own result this time is an error (refused, blocked since, or failed).
///
/// The request starts at the latest user message with text: tool results travelling in
/// user messages (Anthropic's) do not start one.
fn repeated_calls(history: &[Message]) -> Option<Vec<String>> {
    let start = history
        .iter()
        .rposition(|m| m.role == Role::User && !m.text().trim().is_empty())
        .map_or(0, |i| i + 1);
    let request = history.get(start..)?;
    let latest = request
        .iter()
        .rposition(|m| m.role == Role::Assistant && m.tool_calls().next().is_some())?;
    let (earlier, rest) = request.split_at(latest);
    let latest_calls: Vec<&ToolCall> = rest.first()?.tool_calls().collect();
    // Answered without an error, and run: a call of a tool that was not offered is
    // answered with a search under discovery ("… nothing was run."), and calling the tool
    // it found is the first real call, not a repeat.
    let answered = |before: &ToolCall| {
        let not_run = super::discover::not_run(before.name.as_str().trim());
        request
            .iter()
            .filter(|m| m.role != Role::Assistant)
            .flat_map(Message::tool_results_iter)
            .any(|r| {
                r.tool_call_id == before.id
                    && !r.is_error
                    && !r.content.iter().any(|c| match c {
                        Content::Text { text, .. } => text.starts_with(&not_run),
                        _ => false,
                    })
            })
    };
    let made_before = |call: &ToolCall| {
        earlier
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .flat_map(|m| &m.content)
            .any(|c| match c {
                Content::ToolCall(before) => {
                    before.name.as_str().trim() == call.name.as_str().trim()
                        && before.arguments == call.arguments
                        && answered(before)
                }
                _ => false,
            })
    };
    // A repeat that was refused or failed this time (its own result, after the latest
    // message, is an error) is not "already answered": the error tells the model what to
    // do, and the notice would contradict it (a tool blocked since its first call).
    let refused_now = |call: &ToolCall| {
        rest.iter()
            .skip(1)
            .filter(|m| m.role != Role::Assistant)
            .flat_map(Message::tool_results_iter)
            .any(|r| r.tool_call_id == call.id && r.is_error)
    };
    let mut names: Vec<String> = Vec::new();
    for call in latest_calls {
        if !made_before(call) || refused_now(call) {
            return None;
        }
        let name = call.name.as_str().trim();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    (!names.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use chef_ir::{Content, Message, ToolCall, ToolResult};
    use serde_json::json;

    use super::repeated_calls;

    fn call(id: &str, name: &str, args: serde_json::Value) -> Message {
        Message::assistant_with(vec![Content::ToolCall(ToolCall::new(id, name, args))])
    }

    fn result(id: &str, error: bool) -> Message {
        Message::tool_results(vec![if error {
            ToolResult::error(id, "no such city")
        } else {
            ToolResult::text(id, "12 degrees")
        }])
    }

    /// Under discovery a call of a tool that was not offered is answered with a search
    /// ("… nothing was run."): calling the tool it found is its first real call.
    #[test]
    fn a_call_answered_with_nothing_run_is_not_a_call_made() {
        let not_run = crate::session::discover::not_run("geocode_address");
        let history = vec![
            Message::user("where is the Eiffel tower?"),
            call("1", "geocode_address", json!({"address": "Eiffel tower"})),
            Message::tool_results(vec![ToolResult::text(
                "1",
                format!("{not_run} Tools for \"geocode address\", best first: …"),
            )]),
            call("2", "geocode_address", json!({"address": "Eiffel tower"})),
            result("2", false),
        ];
        assert_eq!(repeated_calls(&history), None);
        // Called a third time, after the real call was answered: a repeat.
        let mut again = history;
        again.push(call(
            "3",
            "geocode_address",
            json!({"address": "Eiffel tower"}),
        ));
        assert_eq!(
            repeated_calls(&again),
            Some(vec!["geocode_address".to_owned()])
        );
    }

    #[test]
    fn the_identical_answered_call_again_is_named() {
        let history = vec![
            Message::user("weather in Paris?"),
            call("1", "get_weather", json!({"city": "Paris", "unit": "c"})),
            result("1", false),
            // Key order does not make a call new.
            call("2", "get_weather", json!({"unit": "c", "city": "Paris"})),
            result("2", false),
        ];
        assert_eq!(
            repeated_calls(&history),
            Some(vec!["get_weather".to_owned()])
        );
    }

    #[test]
    fn new_arguments_an_error_before_or_a_new_request_are_not_repeats() {
        // Each case follows a first call for Paris's weather, answered (or failed).
        let paris = json!({"city": "Paris"});
        let cases = [
            (
                "other arguments",
                false,
                vec![call("2", "get_weather", json!({"city": "Rome"}))],
            ),
            (
                "failed before",
                true,
                vec![call("2", "get_weather", paris.clone())],
            ),
            (
                "a new request",
                false,
                vec![
                    Message::assistant("12 degrees."),
                    Message::user("and now?"),
                    call("2", "get_weather", paris.clone()),
                    result("2", false),
                ],
            ),
            // The repeat refused this time (blocked since its first call): the refusal
            // speaks, not the notice.
            (
                "refused now",
                false,
                vec![
                    call("2", "get_weather", paris.clone()),
                    Message::tool_results(vec![ToolResult::error("2", "get_weather is blocked")]),
                ],
            ),
            // One new call among repeats: the model is still working.
            (
                "mixed",
                false,
                vec![Message::assistant_with(vec![
                    Content::ToolCall(ToolCall::new("2", "get_weather", paris.clone())),
                    Content::ToolCall(ToolCall::new("3", "get_time", paris.clone())),
                ])],
            ),
        ];
        for (case, failed, then) in cases {
            let mut history = vec![
                Message::user("weather?"),
                call("1", "get_weather", paris.clone()),
                result("1", failed),
            ];
            history.extend(then);
            assert_eq!(repeated_calls(&history), None, "{case}");
        }
        assert_eq!(repeated_calls(&[]), None);
        assert_eq!(repeated_calls(&[Message::user("hi")]), None);
    }
}
