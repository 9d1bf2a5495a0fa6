//! Streaming: server-sent events in, the same [`ParsedResponse`] as a whole reply out.
//!
//! [`SseDecoder`] (chef-ir's [`chef_ir::sse`], shared by every provider) cuts a byte
//! stream into events however the bytes were split; [`Assembler`] applies the Messages streaming events (`message_start`,
//! `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`, `ping`,
//! `error`) to rebuild the response JSON, then parses it exactly as
//! [`parse_response`](crate::parse_response) does. Blocks the crate does not model arrive
//! whole in `content_block_start` (plus `input_json_delta`s for server tool calls) and are
//! kept verbatim, as in a whole reply.
//!
//! Tool arguments that do not form valid JSON when the block stops are kept as a JSON
//! string holding the raw text, so nothing is lost (the resolver answers the model).
//!
//! ```
//! use chef_anthropic::{Assembler, SseDecoder};
//! use chef_ir::{WireNames, sse::SseEvent};
//!
//! let sse = concat!(
//!     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
//!     "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
//!     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
//!     "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
//!     "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
//!     "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n\n",
//!     "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
//! );
//! let mut decoder = SseDecoder::new();
//! let mut assembler = Assembler::new();
//! for chunk in sse.as_bytes().chunks(7) {
//!     for event in decoder.push(chunk)? {
//!         assembler.push_sse(&event)?;
//!     }
//! }
//! let parsed = assembler.finish(&WireNames::default())?;
//! assert_eq!(parsed.message.text(), "Hello");
//! assert_eq!(parsed.usage.output_tokens, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use chef_ir::{WireNames, sse::SseEvent};
use serde_json::{Map, Value};

use crate::{
    error::{Error, Result},
    parse::{ParsedResponse, parse_response_value},
};

/// Rebuilds a response from Messages streaming events.
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    message: Option<Map<String, Value>>,
    blocks: BTreeMap<u64, Block>,
    stopped: bool,
}

#[derive(Debug, Clone)]
struct Block {
    value: Map<String, Value>,
    partial_json: String,
}

fn field<'v>(event: &'v Value, key: &str, path: &str) -> Result<&'v Value> {
    event
        .get(key)
        .ok_or_else(|| Error::shape(path, format!("event without `{key}`")))
}

fn append(map: &mut Map<String, Value>, key: &str, text: &str) {
    match map.get_mut(key) {
        Some(Value::String(existing)) => existing.push_str(text),
        _ => {
            map.insert(key.to_owned(), Value::String(text.to_owned()));
        }
    }
}

impl Assembler {
    /// An assembler before `message_start`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `message_stop` was seen.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Applies one decoded server-sent event (its `data` is the event JSON).
    pub fn push_sse(&mut self, event: &SseEvent) -> Result<()> {
        let value: Value =
            serde_json::from_str(&event.data).map_err(|source| Error::InvalidJson {
                source,
                body: event.data.clone(),
            })?;
        self.push(&value)
    }

    /// Applies one event JSON object. Unknown event types are ignored, as Anthropic asks
    /// of clients; an `error` event is an [`Error::Api`].
    pub fn push(&mut self, event: &Value) -> Result<()> {
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "message_start" => {
                let Value::Object(message) = field(event, "message", kind)? else {
                    return Err(Error::shape(kind, "`message` must be an object"));
                };
                self.message = Some(message.clone());
            }
            "content_block_start" => {
                let index = self.index(event, kind)?;
                let Value::Object(block) = field(event, "content_block", kind)? else {
                    return Err(Error::shape(kind, "`content_block` must be an object"));
                };
                self.blocks.insert(
                    index,
                    Block {
                        value: block.clone(),
                        partial_json: String::new(),
                    },
                );
            }
            "content_block_delta" => {
                let index = self.index(event, kind)?;
                let delta = field(event, "delta", kind)?;
                let block = self.blocks.get_mut(&index).ok_or_else(|| {
                    Error::shape(kind, format!("delta for block {index} before its start"))
                })?;
                block.apply(delta)?;
            }
            "content_block_stop" => {
                let index = self.index(event, kind)?;
                if let Some(block) = self.blocks.get_mut(&index) {
                    block.stop();
                }
            }
            "message_delta" => {
                let message = self
                    .message
                    .as_mut()
                    .ok_or_else(|| Error::shape(kind, "message_delta before message_start"))?;
                if let Some(Value::Object(delta)) = event.get("delta") {
                    for (key, value) in delta {
                        message.insert(key.clone(), value.clone());
                    }
                }
                if let Some(Value::Object(usage)) = event.get("usage") {
                    let target = message
                        .entry("usage")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(target) = target {
                        for (key, value) in usage {
                            if !value.is_null() {
                                target.insert(key.clone(), value.clone());
                            }
                        }
                    }
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let error = event.get("error");
                let text = |key: &str| {
                    error
                        .and_then(|e| e.get(key))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                return Err(Error::Api {
                    kind: text("type"),
                    message: text("message"),
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn index(&self, event: &Value, kind: &str) -> Result<u64> {
        field(event, "index", kind)?
            .as_u64()
            .ok_or_else(|| Error::shape(kind, "`index` must be a non-negative integer"))
    }

    /// The response JSON assembled so far (blocks in index order).
    pub fn to_value(&self) -> Result<Value> {
        let mut message = self
            .message
            .clone()
            .ok_or_else(|| Error::shape("stream", "no message_start"))?;
        let content = self
            .blocks
            .values()
            .map(|b| {
                let mut b = b.clone();
                b.stop();
                Value::Object(b.value)
            })
            .collect();
        message.insert("content".to_owned(), Value::Array(content));
        Ok(Value::Object(message))
    }

    /// Parses the assembled response, mapping tool names back through `names`.
    pub fn finish(self, names: &WireNames) -> Result<ParsedResponse> {
        parse_response_value(&self.to_value()?, names)
    }
}

impl Block {
    fn apply(&mut self, delta: &Value) -> Result<()> {
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
        let text = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| Error::shape(kind, format!("delta without string `{key}`")))
        };
        match kind {
            "text_delta" => append(&mut self.value, "text", text("text")?),
            "thinking_delta" => append(&mut self.value, "thinking", text("thinking")?),
            "signature_delta" => append(&mut self.value, "signature", text("signature")?),
            "input_json_delta" => self.partial_json.push_str(text("partial_json")?),
            "citations_delta" => {
                let citation = delta
                    .get("citation")
                    .cloned()
                    .ok_or_else(|| Error::shape(kind, "delta without `citation`"))?;
                match self.value.get_mut("citations") {
                    Some(Value::Array(list)) => list.push(citation),
                    _ => {
                        self.value
                            .insert("citations".to_owned(), Value::Array(vec![citation]));
                    }
                }
            }
            other => {
                return Err(Error::shape(
                    "content_block_delta",
                    format!("unknown delta type {other:?}"),
                ));
            }
        }
        Ok(())
    }

    fn stop(&mut self) {
        if self.partial_json.is_empty() {
            return;
        }
        let raw = std::mem::take(&mut self.partial_json);
        let input = serde_json::from_str(&raw).unwrap_or(Value::String(raw));
        self.value.insert("input".to_owned(), input);
    }
}
