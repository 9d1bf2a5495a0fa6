//! chef serve against a scripted upstream: every API, whole and streamed, routed calls,
//! internal rounds, the gate, byte identity with `Chef::compile`, and hostile input.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    unreachable_pub
)]

mod bytes;
mod chat;
mod choice;
mod discovery;
mod harness;
mod hostile;
mod issue47;
mod load;
mod memory;
mod messages;
mod policy;
mod responses;
mod ungated;

use serde_json::{Value, json};

/// A whole Chat Completions reply.
pub fn chat_reply(text: Option<&str>, calls: &[(&str, &chef_ir::ToolCall)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, call)| {
            json!({"id": id, "type": "function", "function": {
                "name": call.name.as_str(),
                "arguments": serde_json::to_string(&call.arguments).unwrap()}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "message": message,
            "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
}

/// A whole reply of each API that only says `text`, as the scripted upstream sends it.
pub fn chat_says(text: &str) -> harness::Reply {
    harness::Reply::Json(chat_reply(Some(text), &[]))
}

/// See [`chat_says`].
pub fn messages_says(text: &str) -> harness::Reply {
    harness::Reply::Json(messages_reply(Some(text), &[]))
}

/// See [`chat_says`].
pub fn responses_says(text: &str) -> harness::Reply {
    harness::Reply::Json(responses_reply(Some(text), &[]))
}

/// A whole reply of each API that only calls `call`, with call id `id`.
pub fn chat_calling(id: &str, call: &chef_ir::ToolCall) -> harness::Reply {
    harness::Reply::Json(chat_reply(None, &[(id, call)]))
}

/// See [`chat_calling`].
pub fn messages_calling(id: &str, call: &chef_ir::ToolCall) -> harness::Reply {
    harness::Reply::Json(messages_reply(None, &[(id, call)]))
}

/// See [`chat_calling`].
pub fn responses_calling(id: &str, call: &chef_ir::ToolCall) -> harness::Reply {
    harness::Reply::Json(responses_reply(None, &[(id, call)]))
}

/// A whole Messages reply.
pub fn messages_reply(text: Option<&str>, calls: &[(&str, &chef_ir::ToolCall)]) -> Value {
    let mut content = Vec::new();
    if let Some(text) = text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, call) in calls {
        content.push(
            json!({"type": "tool_use", "id": id, "name": call.name.as_str(),
            "input": call.arguments}),
        );
    }
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content,
        "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}})
}

/// A whole Responses reply.
pub fn responses_reply(text: Option<&str>, calls: &[(&str, &chef_ir::ToolCall)]) -> Value {
    let mut output = Vec::new();
    if let Some(text) = text {
        output.push(
            json!({"type": "message", "id": "msg_1", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
    }
    for (i, (id, call)) in calls.iter().enumerate() {
        output.push(
            json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": id,
            "name": call.name.as_str(),
            "arguments": serde_json::to_string(&call.arguments).unwrap(),
            "status": "completed"}),
        );
    }
    json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
        "model": "gpt-test", "output": output,
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}})
}
