//! Chat Completions relayed: chunks accumulated into a `chat.completion`; content and
//! refusal deltas passed through; the final calls written whole, one `tool_calls` delta
//! each, then the finish reason, the usage chunk when the client asked for it, `[DONE]`.

use std::collections::BTreeMap;

use chef_ir::{
    Message, WireNames,
    relay::{CallFate, Echo, ErrorKind, Relay, RelayError, RelayStream},
    sse::{SseEvent, write_data},
};
use serde_json::{Map, Value, json};

use crate::Chat;

/// What goes between the texts of two rounds in one Chat `content` (a Chat reply has one
/// text, where Messages and Responses keep each round's parts apart): without it, "Let me
/// look." and "It is done." would read "Let me look.It is done.".
const ROUND_BREAK: &str = "\n\n";

impl Relay for Chat {
    shared_relay!(chat);

    fn owned_fields(&self) -> &'static [&'static str] {
        &["messages", "tools"]
    }

    fn refusal(&self, extras: &Map<String, Value>) -> Option<String> {
        if extras
            .get("n")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            return Some(
                "n > 1 is not supported by chef serve: send one request per choice".to_owned(),
            );
        }
        // The deprecated form of `tools`: chef would neither prune, validate nor gate
        // them, so they are refused rather than passed through.
        ["functions", "function_call"]
            .into_iter()
            .find(|key| extras.get(*key).is_some_and(|v| !v.is_null()))
            .map(|key| {
                format!(
                    "the deprecated `{key}` is not supported by chef serve: send the functions \
                     as `tools` (and `tool_choice`)"
                )
            })
    }

    fn forced_tool<'v>(&self, choice: &'v mut Value) -> Option<&'v mut Value> {
        choice.pointer_mut("/function/name")
    }

    /// `finish_reason: "length"`: the output limit (`max_tokens`,
    /// `max_completion_tokens`) or the context ended the reply.
    fn cut_short(&self, reply: &Value) -> bool {
        reply
            .pointer("/choices/0/finish_reason")
            .and_then(Value::as_str)
            == Some("length")
    }

    /// `"required"` (the parallel-calls flag is a request member of its own).
    fn any_tool(&self, _given: &Value) -> Value {
        Value::from("required")
    }

    fn auto_tool(&self) -> Value {
        Value::from("auto")
    }

    fn ask_stream_usage(&self, extras: &mut Map<String, Value>) {
        let options = extras
            .entry("stream_options")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(options) = options {
            options.insert("include_usage".to_owned(), Value::Bool(true));
        }
    }

    /// The rounds' texts in order, those that are not empty joined by a blank line: what a
    /// streamed reply's deltas spell (see `ChatStream::event`). A refusal likewise, in
    /// `refusal`.
    fn carry_earlier(&self, reply: &mut Value, earlier: &[Value]) {
        for member in ["content", "refusal"] {
            let text = |r: &Value| {
                r.pointer("/choices/0/message")
                    .and_then(|m| m.get(member))
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
            };
            let mut texts: Vec<String> = earlier.iter().filter_map(text).collect();
            if texts.is_empty() {
                continue;
            }
            texts.extend(text(reply));
            if let Some(message) = reply
                .pointer_mut("/choices/0/message")
                .and_then(Value::as_object_mut)
            {
                message.insert(member.to_owned(), Value::String(texts.join(ROUND_BREAK)));
            }
        }
    }

    fn finish_reply(
        &self,
        reply: &mut Value,
        fate: &dyn Fn(&str) -> Option<CallFate>,
        usage: Option<&Map<String, Value>>,
    ) {
        if let Some(choice) = reply.pointer_mut("/choices/0") {
            restore_calls(choice, fate);
        }
        super::put_usage(reply, usage);
    }

    fn stream(&self, extras: &Map<String, Value>, _: Echo) -> Box<dyn RelayStream> {
        let usage = extras
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            == Some(true);
        Box::new(ChatStream {
            client_usage: usage,
            ..ChatStream::default()
        })
    }
}

/// Refuses a reply holding a call the gateway cannot route ([`RelayError::Ungated`]): a
/// second choice (chef serve asks for one), or what [`check_calls`] refuses in its message.
fn check_reply(reply: &Value) -> Result<(), RelayError> {
    if reply
        .get("choices")
        .and_then(Value::as_array)
        .is_some_and(|choices| choices.len() > 1)
    {
        return Err(second_choice());
    }
    reply
        .pointer("/choices/0/message")
        .map_or(Ok(()), check_calls)
}

/// Refuses a streamed chunk's choice that holds what [`check_reply`] refuses: a choice
/// other than the first, or what [`check_calls`] refuses in its delta.
fn check_chunk_choice(choice: &Value) -> Result<(), RelayError> {
    if choice
        .get("index")
        .and_then(Value::as_u64)
        .is_some_and(|i| i != 0)
    {
        return Err(second_choice());
    }
    choice.get("delta").map_or(Ok(()), check_calls)
}

fn second_choice() -> RelayError {
    RelayError::ungated("a second choice (chef serve asks for one)")
}

/// Refuses a message (or a streamed delta of one) holding a legacy `function_call`, or a
/// tool call whose `type` is not `function` (a custom tool's). A call without `type` is a
/// function call: some OpenAI-compatible servers leave it out, the parser reads it so
/// (`wire::ToolCall`'s untagged kind), and a call's later deltas leave it out too.
fn check_calls(message: &Value) -> Result<(), RelayError> {
    if message.get("function_call").is_some_and(|c| !c.is_null()) {
        return Err(RelayError::ungated("a legacy `function_call`"));
    }
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let kind = call.get("type").and_then(Value::as_str);
        if call.get("custom").is_some() || kind.is_some_and(|kind| kind != "function") {
            return Err(RelayError::ungated(format!(
                "a tool call of type `{}`",
                kind.unwrap_or("custom")
            )));
        }
    }
    Ok(())
}

/// A choice's calls restored; when none is left, no `tool_calls` and a `stop` finish.
fn restore_calls(choice: &mut Value, fate: &dyn Fn(&str) -> Option<CallFate>) {
    let mut emptied = false;
    if let Some(Value::Array(calls)) = choice.pointer_mut("/message/tool_calls") {
        calls.retain_mut(|call| {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            let fate = fate(id);
            super::restore_call(
                call.get_mut("function").and_then(Value::as_object_mut),
                fate,
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

/// One streamed call, as its deltas built it.
#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// One text delta (`content` or `refusal`) added to the round's text so far (`round`), and
/// what the client gets of it: nothing for an empty delta, and in front of a round's first
/// text after an earlier round's (`sent`: any went out), the break the whole reply puts
/// between them (`carry_earlier`).
fn relayed_text(round: &mut Option<String>, sent: &mut bool, text: &str) -> Option<String> {
    let round = round.get_or_insert_with(String::new);
    let first_in_round = round.is_empty();
    round.push_str(text);
    if text.is_empty() {
        return None;
    }
    let later_round = std::mem::replace(sent, true) && first_in_round;
    Some(if later_round {
        format!("{ROUND_BREAK}{text}")
    } else {
        text.to_owned()
    })
}

/// A Chat client's stream (see the module docs).
#[derive(Debug, Default)]
struct ChatStream {
    // The current round.
    /// `id`, `created`, `model`… of the round's first chunk.
    round_head: Option<Map<String, Value>>,
    content: Option<String>,
    refusal: Option<String>,
    calls: BTreeMap<u64, Call>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    done: bool,
    // The client's stream.
    /// Bytes not yet taken.
    out: Vec<u8>,
    /// Whether the client asked for the usage chunk.
    client_usage: bool,
    /// `id`, `created`, `model`… of the first round, on every chunk.
    head: Option<Map<String, Value>>,
    /// Whether the role delta went out.
    role_sent: bool,
    /// Whether any text went out, in any round.
    text_sent: bool,
    /// Whether any refusal went out, in any round.
    refusal_sent: bool,
}

impl ChatStream {
    fn chunk(&mut self, delta: Map<String, Value>, finish_reason: Value, logprobs: Value) {
        let mut chunk = self.head.clone().unwrap_or_default();
        chunk.insert("object".to_owned(), Value::from("chat.completion.chunk"));
        chunk.insert(
            "choices".to_owned(),
            json!([{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish_reason}]),
        );
        write_data(&mut self.out, &Value::Object(chunk));
    }

    /// A delta, with the upstream chunk's `logprobs` of the text it carries (`null` for
    /// none).
    fn delta(&mut self, mut delta: Map<String, Value>, logprobs: Value) {
        if !self.role_sent {
            self.role_sent = true;
            let mut with_role = Map::new();
            with_role.insert("role".to_owned(), Value::from("assistant"));
            with_role.append(&mut delta);
            delta = with_role;
        }
        self.chunk(delta, Value::Null, logprobs);
    }
}

impl RelayStream for ChatStream {
    fn event(&mut self, event: &SseEvent) -> Result<(), RelayError> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(&event.data).map_err(RelayError::malformed)?;
        if chunk.get("error").is_some() {
            return Err(super::upstream_error(&chunk));
        }
        if self.round_head.is_none() {
            let mut head = Map::new();
            for key in [
                "id",
                "created",
                "model",
                "system_fingerprint",
                "service_tier",
            ] {
                if let Some(v) = chunk.get(key) {
                    head.insert(key.to_owned(), v.clone());
                }
            }
            if self.head.is_none() {
                self.head = Some(head.clone());
            }
            self.round_head = Some(head);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        for choice in chunk
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            check_chunk_choice(choice)?;
        }
        if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.finish_reason = Some(reason.clone());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        let mut passed = Map::new();
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && let Some(text) = relayed_text(&mut self.content, &mut self.text_sent, text)
        {
            passed.insert("content".to_owned(), Value::from(text));
        }
        if let Some(text) = delta.get("refusal").and_then(Value::as_str)
            && let Some(text) = relayed_text(&mut self.refusal, &mut self.refusal_sent, text)
        {
            passed.insert("refusal".to_owned(), Value::from(text));
        }
        if !passed.is_empty() {
            // The text's token log probabilities, when the client asked for them.
            let logprobs = choice.get("logprobs").cloned().unwrap_or(Value::Null);
            self.delta(passed, logprobs);
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for call in calls {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                let entry = self.calls.entry(index).or_default();
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    entry.id.push_str(id);
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    entry.name.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    entry.arguments.push_str(args);
                }
            }
        }
        Ok(())
    }

    fn end_round(&mut self) -> Result<Value, RelayError> {
        let head = self.round_head.take();
        let content = self.content.take();
        let refusal = self.refusal.take();
        let calls = std::mem::take(&mut self.calls);
        let finish_reason = self.finish_reason.take();
        let usage = self.usage.take();
        let done = std::mem::take(&mut self.done);
        let Some(mut raw) = head.filter(|_| done || finish_reason.is_some()) else {
            return Err(RelayError::Truncated);
        };
        raw.insert("object".to_owned(), Value::from("chat.completion"));
        let mut message = Map::new();
        message.insert("role".to_owned(), Value::from("assistant"));
        message.insert(
            "content".to_owned(),
            content.map_or(Value::Null, Value::from),
        );
        if let Some(refusal) = refusal {
            message.insert("refusal".to_owned(), Value::from(refusal));
        }
        if !calls.is_empty() {
            let calls: Vec<Value> = calls
                .into_values()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            message.insert("tool_calls".to_owned(), Value::Array(calls));
        }
        raw.insert(
            "choices".to_owned(),
            json!([{"index": 0, "message": message,
                    "finish_reason": finish_reason.unwrap_or(Value::Null)}]),
        );
        if let Some(usage) = usage {
            raw.insert("usage".to_owned(), usage);
        }
        Ok(Value::Object(raw))
    }

    fn finish(&mut self, reply: &Value, usage: Option<&Map<String, Value>>) {
        let calls = reply
            .pointer("/choices/0/message/tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (index, call) in calls.iter().enumerate() {
            let mut call = call.clone();
            if let Some(call) = call.as_object_mut() {
                call.insert("index".to_owned(), Value::from(index));
            }
            let mut delta = Map::new();
            delta.insert("tool_calls".to_owned(), Value::Array(vec![call]));
            self.delta(delta, Value::Null);
        }
        if !self.role_sent {
            self.delta(Map::new(), Value::Null);
        }
        let reason = reply
            .pointer("/choices/0/finish_reason")
            .cloned()
            .unwrap_or_else(|| Value::from("stop"));
        self.chunk(Map::new(), reason, Value::Null);
        if self.client_usage {
            let mut chunk = self.head.clone().unwrap_or_default();
            chunk.insert("object".to_owned(), Value::from("chat.completion.chunk"));
            chunk.insert("choices".to_owned(), json!([]));
            chunk.insert(
                "usage".to_owned(),
                usage.cloned().map_or(Value::Null, Value::Object),
            );
            write_data(&mut self.out, &Value::Object(chunk));
        }
        self.out.extend_from_slice(b"data: [DONE]\n\n");
    }

    fn fail(&mut self, kind: ErrorKind, message: &str) {
        write_data(&mut self.out, &super::error_body(kind, message));
    }

    fn fail_upstream(&mut self, body: &Value, note: &str) {
        // A Chat stream's error chunk is the error body itself.
        write_data(&mut self.out, &chef_ir::relay::with_note(body, note));
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

    use chef_ir::{
        relay::{Echo, Relay},
        sse::SseEvent,
    };
    use serde_json::{Map, json};

    use crate::Chat;

    #[test]
    fn chunks_assemble_into_a_completion_and_the_client_asks_for_its_usage() {
        let mut extras = Map::new();
        extras.insert("stream_options".into(), json!({"include_usage": true}));
        let mut stream = Chat.stream(&extras, Echo::new());
        let chunks = [
            r#"{"id":"c1","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"lo","tool_calls":[{"index":0,"id":"k","function":{"name":"t","arguments":"{\"a\""}}]}}]}"#,
            r#"{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":4}}"#,
            "[DONE]",
        ];
        for chunk in chunks {
            stream.event(&SseEvent::new(None, chunk)).unwrap();
        }
        let passed = String::from_utf8(stream.take()).unwrap();
        assert_eq!(passed.matches("data: ").count(), 2, "{passed}");
        let reply = stream.end_round().unwrap();
        let message = &reply["choices"][0]["message"];
        assert_eq!(message["content"], "Hello");
        assert_eq!(
            message["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(Chat.usage(&reply), json!({"prompt_tokens": 4}).as_object());
        stream.finish(&reply, Chat.usage(&reply));
        let end = String::from_utf8(stream.take()).unwrap();
        assert!(end.contains(r#""usage":{"prompt_tokens":4}"#), "{end}");
        assert!(end.ends_with("data: [DONE]\n\n"));
    }

    /// A stream's text deltas and a whole reply spell the same content for any pattern
    /// of rounds with and without text: a break between two texts, none at the start or
    /// for a round that wrote nothing.
    #[test]
    fn rounds_texts_are_broken_alike_in_a_stream_and_a_whole_reply() {
        let cases: [(&[&str], &str); 5] = [
            (&["Looking.", "Done."], "Looking.\n\nDone."),
            (&["", "Done."], "Done."),
            (&["Looking.", ""], "Looking."),
            (&["A.", "", "C."], "A.\n\nC."),
            (&["", "", ""], ""),
        ];
        for (rounds, expected) in cases {
            let (streamed, whole) = stream_and_whole("content", rounds);
            assert_eq!(streamed, expected, "{rounds:?}");
            assert_eq!(whole, expected, "{rounds:?}");
        }
        // A refusal is carried the same way, in its own member.
        let (streamed, whole) = stream_and_whole("refusal", &["R1 refuses.", "R2 refuses."]);
        assert_eq!(streamed, "R1 refuses.\n\nR2 refuses.");
        assert_eq!(whole, streamed);
    }

    /// Streams `rounds` (each round's `member` text in two deltas, the second possibly
    /// empty), and returns what the client's deltas spell and what the whole reply's
    /// `member` holds once the earlier rounds are carried.
    fn stream_and_whole(member: &str, rounds: &[&str]) -> (String, String) {
        let mut stream = Chat.stream(&Map::new(), Echo::new());
        let mut replies = Vec::new();
        for text in rounds {
            let (head, tail) = text.split_at(text.len() / 2);
            for part in [head, tail] {
                let chunk = json!({"id": "c", "choices": [{"index": 0,
                    "delta": {member: part}}]});
                stream
                    .event(&SseEvent::new(None, chunk.to_string()))
                    .unwrap();
            }
            stream.event(&SseEvent::new(None, "[DONE]")).unwrap();
            replies.push(stream.end_round().unwrap());
        }
        let passed = String::from_utf8(stream.take()).unwrap();
        let pointer = format!("/choices/0/delta/{member}");
        let streamed: String = passed
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str::<serde_json::Value>(d).unwrap())
            .filter_map(|c| {
                c.pointer(&pointer)
                    .and_then(|t| t.as_str().map(str::to_owned))
            })
            .collect();
        let (last, earlier) = replies.split_last_mut().unwrap();
        Chat.carry_earlier(last, earlier);
        let whole = last["choices"][0]["message"][member]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (streamed, whole)
    }

    #[test]
    fn a_forced_tool_is_renamed_or_becomes_required() {
        let mut choice = json!({"type": "function", "function": {"name": "files.read"}});
        *Chat.forced_tool(&mut choice).unwrap() = json!("files_read");
        assert_eq!(choice["function"]["name"], "files_read");
        assert_eq!(Chat.any_tool(&json!({})), json!("required"));
        let mut extras = Map::new();
        Chat.ask_stream_usage(&mut extras);
        assert_eq!(extras["stream_options"], json!({"include_usage": true}));
    }
}
