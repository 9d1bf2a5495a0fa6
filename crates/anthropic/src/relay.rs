//! [`Anthropic`] as a [`Relay`]: a Messages reply relayed to a Messages client, whole or
//! streamed.
//!
//! A streamed round is applied to an [`Assembler`]; every block but `tool_use` is passed
//! to the client at once, renumbered so the client sees one reply across rounds. The final
//! round's calls are written whole (`content_block_start` with an empty `input`, one
//! `input_json_delta` with all of it, `content_block_stop`), then `message_delta` with
//! the stop reason and the usage of every round, and `message_stop`.

use std::collections::HashMap;

use chef_ir::{
    Message, Request, WireNames,
    relay::{CallFate, Echo, ErrorKind, Relay, RelayError, RelayStream},
    sse::{SseEvent, write_event},
};
use serde_json::{Map, Value, json};

use crate::{Anthropic, Assembler, parse_request, parse_response_value};

impl Relay for Anthropic {
    fn owned_fields(&self) -> &'static [&'static str] {
        &["system", "messages", "tools"]
    }

    fn read_request(&self, body: &[u8]) -> Result<Request, RelayError> {
        parse_request(body, &WireNames::default())
            .map(|parsed| parsed.request)
            .map_err(|e| RelayError::Request(Box::new(e)))
    }

    /// The MCP connector (`mcp_servers`): Anthropic would call those servers' tools itself,
    /// where no blocklist or schema check can reach them.
    fn refusal(&self, extras: &Map<String, Value>) -> Option<String> {
        extras
            .get("mcp_servers")
            .is_some_and(|v| !v.is_null())
            .then(|| {
                "`mcp_servers` (the MCP connector) is not supported by chef serve: its tools \
                 would run upstream, out of the gate's reach"
                    .to_owned()
            })
    }

    /// `{"type": "any"}`, with the choice's other members (`disable_parallel_tool_use`).
    fn any_tool(&self, given: &Value) -> Value {
        let mut any = Map::new();
        any.insert("type".to_owned(), Value::from("any"));
        for (key, value) in given.as_object().into_iter().flatten() {
            if !matches!(key.as_str(), "type" | "name") {
                any.insert(key.clone(), value.clone());
            }
        }
        Value::Object(any)
    }

    fn auto_tool(&self) -> Value {
        json!({"type": "auto"})
    }

    /// `stop_reason: "max_tokens"` (or the context window): the reply was cut short.
    fn cut_short(&self, reply: &Value) -> bool {
        matches!(
            reply.get("stop_reason").and_then(Value::as_str),
            Some("max_tokens" | "model_context_window_exceeded")
        )
    }

    fn read_reply(&self, reply: &Value, names: &WireNames) -> Result<Message, RelayError> {
        if let Some(Value::Array(blocks)) = reply.get("content") {
            blocks
                .iter()
                .try_for_each(|b| check_block(b.get("type").and_then(Value::as_str)))?;
        }
        parse_response_value(reply, names)
            .map(|parsed| parsed.message)
            .map_err(|e| RelayError::Reply(Box::new(e)))
    }

    /// Every block of the earlier rounds but their `tool_use` calls, before the final
    /// round's blocks.
    fn carry_earlier(&self, reply: &mut Value, earlier: &[Value]) {
        chef_ir::relay::carry_parts(reply, earlier, "content", "tool_use");
    }

    fn finish_reply(
        &self,
        reply: &mut Value,
        fate: &dyn Fn(&str) -> Option<CallFate>,
        usage: Option<&Map<String, Value>>,
    ) {
        let mut any_call = false;
        if let Some(Value::Array(blocks)) = reply.get_mut("content") {
            blocks.retain_mut(|block| {
                if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                    return true;
                }
                let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                match fate(id) {
                    Some(CallFate::Client { name, arguments }) => {
                        if let Some(block) = block.as_object_mut() {
                            block.insert("name".to_owned(), Value::String(name));
                            block.insert("input".to_owned(), arguments);
                        }
                        any_call = true;
                        true
                    }
                    Some(CallFate::Answered) => false,
                    None => {
                        any_call = true;
                        true
                    }
                }
            });
        }
        let Some(object) = reply.as_object_mut() else {
            return;
        };
        if !any_call && object.get("stop_reason").and_then(Value::as_str) == Some("tool_use") {
            object.insert("stop_reason".to_owned(), Value::from("end_turn"));
        }
        if let Some(usage) = usage {
            object.insert("usage".to_owned(), Value::Object(usage.clone()));
        }
    }

    /// `{"type":"error","error":{"type","message"}}`.
    fn error_body(&self, kind: ErrorKind, message: &str) -> Value {
        error_body(kind, message)
    }

    fn forced_tool<'v>(&self, choice: &'v mut Value) -> Option<&'v mut Value> {
        let by_name = choice.get("type").and_then(Value::as_str) == Some("tool");
        choice.get_mut("name").filter(|_| by_name)
    }

    fn stream(&self, _: &Map<String, Value>, _: Echo) -> Box<dyn RelayStream> {
        Box::new(MessagesStream::default())
    }
}

/// Refuses a reply block other than text, thinking and the `tool_use` calls chef routes: a
/// server tool's call or result (`server_tool_use`, `web_search_tool_result`, …) or an MCP
/// connector's (`mcp_tool_use`, `mcp_tool_result`). chef serve refuses requests that
/// declare such tools, so an upstream that sends one anyway is not relayed: none of them
/// can be checked against the blocklist, and the call already ran upstream.
fn check_block(kind: Option<&str>) -> Result<(), RelayError> {
    match kind {
        Some("text" | "thinking" | "redacted_thinking" | "tool_use") => Ok(()),
        Some(other) => Err(RelayError::ungated(format!("a `{other}` content block"))),
        None => Err(RelayError::ungated("a content block without a `type`")),
    }
}

/// `{"type":"error","error":{"type","message"}}`, with the error type Anthropic documents
/// for `kind`.
fn error_body(kind: ErrorKind, message: &str) -> Value {
    let kind = match kind {
        ErrorKind::InvalidRequest => "invalid_request_error",
        ErrorKind::NotFound => "not_found_error",
        ErrorKind::TooLarge => "request_too_large",
        ErrorKind::Timeout => "timeout_error",
        ErrorKind::Upstream | ErrorKind::Internal => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// A Messages client's stream (see the module docs).
#[derive(Debug, Default)]
struct MessagesStream {
    /// The current round.
    assembler: Assembler,
    /// The current round's upstream block index → client block index, for blocks passed
    /// through.
    passed: HashMap<u64, u64>,
    /// Bytes not yet taken.
    out: Vec<u8>,
    /// Whether `message_start` went out.
    started: bool,
    /// The next client block index.
    next_index: u64,
}

impl MessagesStream {
    fn next_block(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    fn start(&mut self, message: &Value) {
        if self.started {
            return;
        }
        self.started = true;
        let mut message = message.clone();
        if let Some(m) = message.as_object_mut() {
            m.insert("content".to_owned(), json!([]));
        }
        write_event(
            &mut self.out,
            "message_start",
            &json!({"type": "message_start", "message": message}),
        );
    }

    fn block_event(&mut self, kind: &str, value: &Value, client_index: u64) {
        let mut value = value.clone();
        if let Some(v) = value.as_object_mut() {
            v.insert("index".to_owned(), Value::from(client_index));
        }
        write_event(&mut self.out, kind, &value);
    }
}

impl RelayStream for MessagesStream {
    fn event(&mut self, event: &SseEvent) -> Result<(), RelayError> {
        let value: Value = serde_json::from_str(&event.data).map_err(RelayError::malformed)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" => {
                let message = value
                    .pointer("/error/message")
                    .or_else(|| value.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("the upstream reported an error in the stream");
                // The event is Messages' error body itself when it has an `error` object.
                let error = value
                    .get("error")
                    .is_some_and(Value::is_object)
                    .then(|| value.clone());
                return Err(RelayError::Upstream {
                    message: message.to_owned(),
                    error,
                });
            }
            "message_start" => {
                if let Some(message) = value.get("message") {
                    self.start(message);
                }
            }
            "content_block_start" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                let block = value.pointer("/content_block/type").and_then(Value::as_str);
                // Refused before any of it reaches the client.
                check_block(block)?;
                let is_call = block == Some("tool_use");
                if !is_call {
                    let client = self.next_block();
                    self.passed.insert(index, client);
                    self.block_event(kind, &value, client);
                }
            }
            "content_block_delta" | "content_block_stop" => {
                let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(client) = self.passed.get(&index).copied() {
                    self.block_event(kind, &value, client);
                }
            }
            _ => {}
        }
        self.assembler.push(&value).map_err(RelayError::malformed)
    }

    fn end_round(&mut self) -> Result<Value, RelayError> {
        let assembler = std::mem::take(&mut self.assembler);
        self.passed.clear();
        if !assembler.is_stopped() {
            return Err(RelayError::Truncated);
        }
        assembler.to_value().map_err(RelayError::malformed)
    }

    fn finish(&mut self, reply: &Value, usage: Option<&Map<String, Value>>) {
        let calls = reply
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
        for call in calls {
            let index = self.next_block();
            let input = call.get("input").cloned().unwrap_or_else(|| json!({}));
            let mut start = call.clone();
            if let Some(s) = start.as_object_mut() {
                s.insert("input".to_owned(), json!({}));
            }
            write_event(
                &mut self.out,
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            let partial = serde_json::to_string(&input).unwrap_or_else(|_| "{}".to_owned());
            write_event(
                &mut self.out,
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": partial}}),
            );
            write_event(
                &mut self.out,
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
        let delta = json!({
            "stop_reason": reply.get("stop_reason").cloned().unwrap_or(Value::Null),
            "stop_sequence": reply.get("stop_sequence").cloned().unwrap_or(Value::Null),
        });
        let usage = usage.cloned().map_or_else(|| json!({}), Value::Object);
        write_event(
            &mut self.out,
            "message_delta",
            &json!({"type": "message_delta", "delta": delta, "usage": usage}),
        );
        write_event(
            &mut self.out,
            "message_stop",
            &json!({"type": "message_stop"}),
        );
    }

    fn fail(&mut self, kind: ErrorKind, message: &str) {
        write_event(&mut self.out, "error", &error_body(kind, message));
    }

    fn fail_upstream(&mut self, body: &Value, note: &str) {
        // The stream's error event is the error body itself, its `type`s filled in when
        // the upstream left them out.
        let mut error = chef_ir::relay::with_note(body, note)
            .get_mut("error")
            .map(Value::take)
            .unwrap_or_else(|| json!({"message": "the upstream failed"}));
        if let Some(error) = error.as_object_mut()
            && !error.get("type").is_some_and(Value::is_string)
        {
            error.insert("type".to_owned(), Value::from("api_error"));
        }
        write_event(
            &mut self.out,
            "error",
            &json!({"type": "error", "error": error}),
        );
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

    use chef_ir::{
        relay::{CallFate, Relay, RelayError},
        sse::SseEvent,
    };
    use serde_json::{Value, json};

    use crate::Anthropic;

    fn event(value: &Value) -> SseEvent {
        SseEvent::new(None, value.to_string())
    }

    /// The `event:` names written, in order.
    fn names(bytes: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(bytes)
            .lines()
            .filter_map(|l| l.strip_prefix("event: ").map(str::to_owned))
            .collect()
    }

    #[test]
    fn text_passes_through_calls_are_held_and_written_whole_under_their_real_names() {
        let round = [
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 3}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "c", "name": "t", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"f\":1}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ];
        let mut stream = Anthropic.stream(&serde_json::Map::new(), chef_ir::relay::Echo::new());
        for value in &round {
            stream.event(&event(value)).unwrap();
        }
        let passed = stream.take();
        assert_eq!(
            names(&passed),
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop"
            ]
        );
        let mut reply = stream.end_round().unwrap();
        assert_eq!(reply["content"][1]["input"], json!({"f": 1}));
        let fate = |id: &str| {
            (id == "c").then(|| CallFate::Client {
                name: "files.read".into(),
                arguments: json!({"path": "a"}),
            })
        };
        Anthropic.finish_reply(&mut reply, &fate, None);
        stream.finish(&reply, Anthropic.usage(&reply));
        let end = String::from_utf8(stream.take()).unwrap();
        assert!(end.contains(r#""index":1,"content_block":{"type":"tool_use","id":"c","name":"files.read","input":{}}"#), "{end}");
        assert!(
            end.contains(r#""partial_json":"{\"path\":\"a\"}""#),
            "{end}"
        );
        assert!(end.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
    }

    #[test]
    fn an_answered_call_leaves_and_the_stop_reason_follows() {
        let mut reply = json!({"content": [{"type": "tool_use", "id": "q", "name": "q", "input": {}}], "stop_reason": "tool_use"});
        Anthropic.finish_reply(&mut reply, &|_| Some(CallFate::Answered), None);
        assert_eq!(reply, json!({"content": [], "stop_reason": "end_turn"}));
    }

    #[test]
    fn a_round_that_stops_early_or_reports_an_error_is_a_typed_error() {
        let mut stream = Anthropic.stream(&serde_json::Map::new(), chef_ir::relay::Echo::new());
        assert!(matches!(stream.end_round(), Err(RelayError::Truncated)));
        let error =
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}});
        assert!(
            matches!(stream.event(&event(&error)), Err(RelayError::Upstream { message, .. }) if message == "busy")
        );
        let broken = SseEvent::new(None, "{");
        let err = stream.event(&broken).unwrap_err();
        assert!(std::error::Error::source(&err).is_some(), "{err}");
    }
}
