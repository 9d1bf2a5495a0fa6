//! The final upstream reply, rewritten for the client: every tool call under its real name
//! with validated arguments, calls the gateway answered itself left out, and usage summed
//! over every round. Where those live in each API's JSON is the provider crate's
//! [`Relay`](chef_ir::relay::Relay); this module decides what becomes of each call.

use std::collections::HashMap;

use chef_ir::{ToolCallId, relay::CallFate};
use serde_json::{Map, Value};

use crate::{api::Api, session::Decision};

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
pub fn accumulate_usage(api: Api, total: &mut Option<Map<String, Value>>, raw: &Value) {
    if let Some(round_usage) = api.relay().usage(raw) {
        match total.as_mut() {
            Some(total) => add_usage(total, round_usage),
            None => *total = Some(round_usage.clone()),
        }
    }
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
    let fate = |id: &str| {
        by_id.get(id).map(|decision| match decision {
            Decision::Client { name, arguments } => CallFate::Client {
                name: name.clone(),
                arguments: arguments.clone(),
            },
            Decision::Internal { .. } | Decision::Owned(_) => CallFate::Answered,
        })
    };
    api.relay().finish_reply(raw, &fate, usage);
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
