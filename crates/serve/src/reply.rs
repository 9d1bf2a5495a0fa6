//! The final upstream reply, rewritten for the client: every tool call under its real name
//! with validated arguments, calls the gateway answered itself left out, and usage summed
//! over every round.

use std::collections::HashMap;

use chef_ir::ToolCallId;
use serde::ser::{Serialize, SerializeMap as _, Serializer};
use serde_json::{Map, Value, value::RawValue};

use crate::{api::Api, session::Decision};

/// A Responses request's own `tools` and `instructions`, as the client sent them (their
/// JSON text). A Responses reply describes the request it answers; the one upstream saw
/// had `t`, `q` and the map in its instructions, so the reply the client gets carries the
/// client's instead ([`Echo::response`]).
#[derive(Debug, Clone, Default)]
pub struct Echo {
    /// `tools` as sent (`None`: absent, which a reply shows as `[]`).
    pub(crate) tools: Option<Box<RawValue>>,
    /// `instructions` as sent (`None`: absent, which a reply shows as `null`).
    pub(crate) instructions: Option<Box<RawValue>>,
}

impl Echo {
    /// `response` (a Responses response object) to serialise with the client's `tools`
    /// and `instructions` in place of upstream's, where upstream's reply has them (a
    /// member the reply lacks is not added).
    pub fn response<'a>(&'a self, response: &'a Value) -> impl Serialize + 'a {
        Echoed {
            value: response,
            echo: self,
            nested: false,
        }
    }

    /// A streamed event (`{"type", "sequence_number", "response"}`) to serialise with its
    /// response object as [`Echo::response`] makes it.
    pub fn event<'a>(&'a self, event: &'a Value) -> impl Serialize + 'a {
        Echoed {
            value: event,
            echo: self,
            nested: true,
        }
    }
}

/// A response object (or an event holding one under `response`, when `nested`) with the
/// client's `tools` and `instructions`.
struct Echoed<'a> {
    value: &'a Value,
    echo: &'a Echo,
    nested: bool,
}

impl Serialize for Echoed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(members) = self.value else {
            return self.value.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(members.len()))?;
        for (key, value) in members {
            match key.as_str() {
                "response" if self.nested => map.serialize_entry(
                    key,
                    &Echoed {
                        value,
                        echo: self.echo,
                        nested: false,
                    },
                )?,
                "tools" if !self.nested => match &self.echo.tools {
                    Some(raw) => map.serialize_entry(key, raw)?,
                    None => map.serialize_entry(key, &[(); 0])?,
                },
                "instructions" if !self.nested => match &self.echo.instructions {
                    Some(raw) => map.serialize_entry(key, raw)?,
                    None => map.serialize_entry(key, &Value::Null)?,
                },
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// Adds every number in `round`'s usage object into `total` (nested objects too).
pub fn add_usage(total: &mut Map<String, Value>, round: &Map<String, Value>) {
    for (key, value) in round {
        match (total.get_mut(key), value) {
            (Some(Value::Object(t)), Value::Object(r)) => add_usage(t, r),
            (Some(t @ Value::Number(_)), Value::Number(r)) => {
                if let (Some(a), Some(b)) = (t.as_u64(), r.as_u64()) {
                    *t = Value::from(a.saturating_add(b));
                } else if let (Some(a), Some(b)) = (t.as_f64(), r.as_f64()) {
                    *t = Value::from(a + b);
                }
            }
            (Some(_), _) => {}
            (None, value) => {
                total.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Adds the usage of `raw` (one round's reply) into `total`, the first round's as it is.
pub fn accumulate_usage(total: &mut Option<Map<String, Value>>, raw: &Value) {
    if let Some(round_usage) = usage_of(raw) {
        match total.as_mut() {
            Some(total) => add_usage(total, round_usage),
            None => *total = Some(round_usage.clone()),
        }
    }
}

/// The usage object of a reply (`usage`; Responses' `response.usage` is the same place in
/// the response object).
pub fn usage_of(raw: &Value) -> Option<&Map<String, Value>> {
    raw.get("usage").and_then(Value::as_object)
}

/// Rewrites `raw` (the final round's reply) for the client.
pub fn rewrite(
    api: Api,
    raw: &mut Value,
    decisions: &[(ToolCallId, Decision)],
    usage: Option<&Map<String, Value>>,
) {
    let by_id: HashMap<&str, &Decision> =
        decisions.iter().map(|(id, d)| (id.as_str(), d)).collect();
    match api {
        Api::Chat => rewrite_chat(raw, &by_id),
        Api::Messages => rewrite_messages(raw, &by_id),
        Api::Responses => rewrite_responses(raw, &by_id),
    }
    if let (Some(usage), Some(object)) = (usage, raw.as_object_mut()) {
        object.insert("usage".to_owned(), Value::Object(usage.clone()));
    }
}

/// The compact JSON text of arguments (OpenAI sends arguments as text).
pub fn arguments_text(arguments: &Value) -> String {
    match arguments {
        // A string is argument text the model wrote that was not JSON; chef's resolver
        // never validates one, but keep it as it came.
        Value::String(text) => text.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| "{}".to_owned()),
    }
}

fn rewrite_chat(raw: &mut Value, by_id: &HashMap<&str, &Decision>) {
    let Some(choice) = raw.pointer_mut("/choices/0") else {
        return;
    };
    let mut emptied = false;
    if let Some(Value::Array(calls)) = choice.pointer_mut("/message/tool_calls") {
        calls.retain_mut(|call| {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            let decision = by_id.get(id).copied();
            restore_openai_call(
                call.get_mut("function").and_then(Value::as_object_mut),
                decision,
            )
        });
        emptied = calls.is_empty();
    }
    if emptied {
        if let Some(message) = choice.get_mut("message").and_then(Value::as_object_mut) {
            message.remove("tool_calls");
        }
        if choice.get("finish_reason").and_then(Value::as_str) == Some("tool_calls")
            && let Some(choice) = choice.as_object_mut()
        {
            choice.insert("finish_reason".to_owned(), Value::from("stop"));
        }
    }
}

fn rewrite_messages(raw: &mut Value, by_id: &HashMap<&str, &Decision>) {
    let mut any_call = false;
    if let Some(Value::Array(blocks)) = raw.get_mut("content") {
        blocks.retain_mut(|block| {
            if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                return true;
            }
            let id = block.get("id").and_then(Value::as_str).unwrap_or("");
            match by_id.get(id) {
                Some(Decision::Client { name, arguments }) => {
                    if let Some(block) = block.as_object_mut() {
                        block.insert("name".to_owned(), Value::String(name.clone()));
                        block.insert("input".to_owned(), arguments.clone());
                    }
                    any_call = true;
                    true
                }
                Some(Decision::Internal { .. } | Decision::Owned(_)) => false,
                None => {
                    any_call = true;
                    true
                }
            }
        });
    }
    if !any_call
        && raw.get("stop_reason").and_then(Value::as_str) == Some("tool_use")
        && let Some(object) = raw.as_object_mut()
    {
        object.insert("stop_reason".to_owned(), Value::from("end_turn"));
    }
}

fn rewrite_responses(raw: &mut Value, by_id: &HashMap<&str, &Decision>) {
    if let Some(Value::Array(items)) = raw.get_mut("output") {
        items.retain_mut(|item| {
            if item.get("type").and_then(Value::as_str) != Some("function_call") {
                return true;
            }
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
            let decision = by_id.get(id).copied();
            restore_openai_call(item.as_object_mut(), decision)
        });
    }
}

/// Whether an OpenAI call (a Chat `function`, a Responses `function_call` item) stays in
/// the reply: a client's call does, with its real name and argument text put back in
/// `fields`; one chef answered itself does not; a call chef did not see stays as it is.
fn restore_openai_call(
    fields: Option<&mut Map<String, Value>>,
    decision: Option<&Decision>,
) -> bool {
    match decision {
        Some(Decision::Client { name, arguments }) => {
            if let Some(fields) = fields {
                fields.insert("name".to_owned(), Value::String(name.clone()));
                fields.insert(
                    "arguments".to_owned(),
                    Value::String(arguments_text(arguments)),
                );
            }
            true
        }
        Some(Decision::Internal { .. } | Decision::Owned(_)) => false,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn usage_adds_nested_numbers() {
        let mut total = json!({"prompt_tokens": 3, "details": {"cached": 1}})
            .as_object()
            .unwrap()
            .clone();
        let round = json!({"prompt_tokens": 4, "details": {"cached": 2}, "total_tokens": 9});
        add_usage(&mut total, round.as_object().unwrap());
        assert_eq!(
            Value::Object(total),
            json!({"prompt_tokens": 7, "details": {"cached": 3}, "total_tokens": 9})
        );
    }

    #[test]
    fn chat_calls_get_real_names_and_internal_ones_go() {
        let mut raw = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "t", "arguments": "{\"f\":\"x\"}"}},
            {"id": "b", "type": "function", "function": {"name": "q", "arguments": "{}"}}
        ]}}]});
        let decisions = vec![
            (
                ToolCallId::new("a"),
                Decision::Client {
                    name: "files_read".to_owned(),
                    arguments: json!({"path": "a"}),
                },
            ),
            (
                ToolCallId::new("b"),
                Decision::Internal {
                    reply: String::new(),
                    is_error: false,
                    outcome: "lookup",
                },
            ),
        ];
        rewrite(Api::Chat, &mut raw, &decisions, None);
        assert_eq!(
            raw.pointer("/choices/0/message/tool_calls").unwrap(),
            &json!([{"id": "a", "type": "function", "function": {"name": "files_read", "arguments": "{\"path\":\"a\"}"}}])
        );
    }
}
