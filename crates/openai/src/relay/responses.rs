//! Responses relayed: the round's reply is `response.completed`'s response; output items
//! other than function calls are passed through, renumbered; the final calls are written
//! whole (`output_item.added`, one arguments delta, arguments done, `output_item.done`),
//! then `response.completed` (or `response.incomplete`) with every item the client saw,
//! the first round's id and the usage of every round. Every event that carries the
//! response object carries the client's own `tools` and `instructions` ([`Echo`]).

use std::collections::{BTreeMap, HashMap};

use chef_ir::{
    Message, WireNames,
    relay::{CallFate, Echo, ErrorKind, Relay, RelayError, RelayStream},
    sse::{SseEvent, write_event},
};
use serde_json::{Map, Value, json, value::RawValue};

use crate::Responses;

/// The member of a streamed event that holds the response object.
const RESPONSE: &str = "response";

impl Relay for Responses {
    shared_relay!(responses);

    fn owned_fields(&self) -> &'static [&'static str] {
        &["input", "instructions", "tools"]
    }

    fn refusal(&self, extras: &Map<String, Value>) -> Option<String> {
        ["previous_response_id", "conversation"]
            .into_iter()
            .find(|key| extras.get(*key).is_some_and(|v| !v.is_null()))
            .map(|key| {
                format!(
                    "`{key}` is not supported by chef serve: send the whole conversation in `input`"
                )
            })
            .or_else(|| {
                // `false` and `null` ask for what the gateway does anyway.
                let background = extras
                    .get("background")
                    .is_some_and(|v| !(v.is_null() || v.as_bool() == Some(false)));
                background.then(|| {
                    "`background` is not supported by chef serve: a background response is \
                     stored upstream and read back later, past the gateway's gate (the \
                     blocklist, the tool schemas); send the request without it"
                        .to_owned()
                })
            })
    }

    /// `"required"` (the parallel-calls flag is a request member of its own).
    fn any_tool(&self, _given: &Value) -> Value {
        Value::from("required")
    }

    fn auto_tool(&self) -> Value {
        Value::from("auto")
    }

    fn forced_tool<'v>(&self, choice: &'v mut Value) -> Option<&'v mut Value> {
        match choice.get("type").and_then(Value::as_str) {
            Some("function") => choice.get_mut("name"),
            _ => None,
        }
    }

    /// `status: "incomplete"`: the output limit (`max_output_tokens`) or a filter ended
    /// the response.
    fn cut_short(&self, reply: &Value) -> bool {
        reply.get("status").and_then(Value::as_str) == Some("incomplete")
    }

    /// The client's `tools` (absent: `[]`), `instructions` (absent: `null`) and
    /// `tool_choice` (when it sent one: the gateway may send another upstream, "some tool"
    /// for a tool behind the dispatcher).
    fn echo(&self, member: &dyn Fn(&str) -> Option<Box<RawValue>>) -> Echo {
        let given = |key: &str, absent: &str| {
            member(key).map_or_else(|| RawValue::from_string(absent.to_owned()), Ok)
        };
        let mut echo = Echo::new().with_event_member(RESPONSE);
        // `[]` and `null` are JSON: these cannot fail.
        if let Ok(tools) = given("tools", "[]") {
            echo = echo.with_member("tools", tools);
        }
        if let Ok(instructions) = given("instructions", "null") {
            echo = echo.with_member("instructions", instructions);
        }
        if let Some(choice) = member("tool_choice") {
            echo = echo.with_member("tool_choice", choice);
        }
        echo
    }

    /// Every output item of the earlier rounds but their `function_call`s, before the
    /// final round's items.
    fn carry_earlier(&self, reply: &mut Value, earlier: &[Value]) {
        chef_ir::relay::carry_parts(reply, earlier, "output", "function_call");
    }

    fn finish_reply(
        &self,
        reply: &mut Value,
        fate: &dyn Fn(&str) -> Option<CallFate>,
        usage: Option<&Map<String, Value>>,
    ) {
        if let Some(Value::Array(items)) = reply.get_mut("output") {
            items.retain_mut(|item| {
                if item.get("type").and_then(Value::as_str) != Some("function_call") {
                    return true;
                }
                let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                let fate = fate(id);
                super::restore_call(item.as_object_mut(), fate)
            });
        }
        super::put_usage(reply, usage);
    }

    fn stream(&self, _: &Map<String, Value>, echo: Echo) -> Box<dyn RelayStream> {
        Box::new(ResponsesStream {
            echo,
            ..ResponsesStream::default()
        })
    }
}

/// Refuses a reply that is not a Responses reply (no `output` list), or that holds an
/// output item the gateway cannot route ([`check_item`]).
fn check_reply(reply: &Value) -> Result<(), RelayError> {
    let Some(items) = reply.get("output").and_then(Value::as_array) else {
        return Err(RelayError::Reply(
            "it is not a Responses reply: it has no `output` list".into(),
        ));
    };
    items.iter().try_for_each(check_item)
}

/// Refuses an output item other than text (`message`), `reasoning` and the `function_call`s
/// chef routes: a `custom_tool_call`, a `local_shell_call`, a hosted tool's call (chef
/// serve refuses requests with such tools, so an upstream that sends one anyway is not
/// relayed: none of them can be checked against the blocklist).
fn check_item(item: &Value) -> Result<(), RelayError> {
    match item.get("type").and_then(Value::as_str) {
        Some("message" | "reasoning" | "function_call") => Ok(()),
        Some(other) => Err(RelayError::ungated(format!("a `{other}` output item"))),
        None => Err(RelayError::ungated("an output item without a `type`")),
    }
}

/// A Responses client's stream (see the module docs).
#[derive(Debug, Default)]
struct ResponsesStream {
    // The current round.
    /// Upstream output index → client output index, for items passed through.
    passed: HashMap<u64, u64>,
    /// Upstream output index → the item its `output_item.done` gave.
    round_items: BTreeMap<u64, Value>,
    /// The `call_id`s of the function calls the round announced (`output_item.added`).
    round_calls: Vec<String>,
    completed: Option<Value>,
    // The client's stream.
    /// Bytes not yet taken.
    out: Vec<u8>,
    /// Whether the opening events went out.
    started: bool,
    /// The next client output index.
    next_index: u64,
    /// The next sequence number.
    sequence: u64,
    /// The first round's response object (id, created_at, model…).
    head: Option<Value>,
    /// The items passed through, as their `output_item.done` gave them.
    items: Vec<Value>,
    /// The client's own `tools` and `instructions`.
    echo: Echo,
}

impl ResponsesStream {
    fn seq(&mut self) -> u64 {
        let n = self.sequence;
        self.sequence += 1;
        n
    }

    fn next_item(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    /// An event that carries the response object, with the client's members in it.
    fn response_event(&mut self, name: &str, value: &Value) {
        write_event(&mut self.out, name, &self.echo.event(value));
    }

    fn start(&mut self, response: &Value) {
        if self.started {
            return;
        }
        self.started = true;
        self.head = Some(response.clone());
        for kind in ["response.created", "response.in_progress"] {
            let seq = self.seq();
            let mut response = response.clone();
            if let Some(r) = response.as_object_mut() {
                r.insert("status".to_owned(), Value::from("in_progress"));
                r.insert("output".to_owned(), json!([]));
            }
            self.response_event(
                kind,
                &json!({"type": kind, "sequence_number": seq, "response": response}),
            );
        }
    }

    fn item_event(&mut self, value: &Value, client_index: u64) {
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let seq = self.seq();
        let mut value = value.clone();
        if let Some(v) = value.as_object_mut() {
            v.insert("output_index".to_owned(), Value::from(client_index));
            v.insert("sequence_number".to_owned(), Value::from(seq));
        }
        if kind == "response.output_item.done"
            && let Some(item) = value.get("item")
        {
            self.items.push(item.clone());
        }
        write_event(&mut self.out, &kind, &value);
    }

    /// One final call, whole: added, its arguments in one delta, done.
    fn call_events(&mut self, call: &Value) {
        let index = self.next_item();
        let item_id = call.get("id").cloned().unwrap_or(Value::Null);
        let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!(""));
        let mut added = call.clone();
        if let Some(a) = added.as_object_mut() {
            a.insert("arguments".to_owned(), json!(""));
            a.insert("status".to_owned(), json!("in_progress"));
        }
        let mut done = call.clone();
        if let Some(d) = done.as_object_mut() {
            d.insert("status".to_owned(), json!("completed"));
        }
        self.items.push(done.clone());
        let events = [
            (
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            ),
            (
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": arguments}),
            ),
            (
                "response.function_call_arguments.done",
                json!({"item_id": item_id, "output_index": index, "arguments": arguments}),
            ),
            (
                "response.output_item.done",
                json!({"output_index": index, "item": done}),
            ),
        ];
        for (kind, fields) in events {
            // `type` and `sequence_number` first, as OpenAI sends them.
            let mut event = Map::new();
            event.insert("type".to_owned(), Value::from(kind));
            event.insert("sequence_number".to_owned(), Value::from(self.seq()));
            if let Value::Object(mut fields) = fields {
                event.append(&mut fields);
            }
            write_event(&mut self.out, kind, &Value::Object(event));
        }
    }
}

impl RelayStream for ResponsesStream {
    fn event(&mut self, event: &SseEvent) -> Result<(), RelayError> {
        let value: Value = serde_json::from_str(&event.data).map_err(RelayError::malformed)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "error" | "response.failed" => return Err(super::upstream_error(&value)),
            "response.created" => {
                if let Some(response) = value.get(RESPONSE) {
                    self.start(response);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.completed = value.get(RESPONSE).cloned();
            }
            _ => {
                let Some(index) = value.get("output_index").and_then(Value::as_u64) else {
                    return Ok(());
                };
                if kind == "response.output_item.added" {
                    if let Some(item) = value.get("item") {
                        check_item(item)?;
                    }
                    let is_call = value.pointer("/item/type").and_then(Value::as_str)
                        == Some("function_call");
                    if is_call {
                        let id = value.pointer("/item/call_id").and_then(Value::as_str);
                        self.round_calls.push(id.unwrap_or("").to_owned());
                    } else {
                        let client = self.next_item();
                        self.passed.insert(index, client);
                    }
                }
                if kind == "response.output_item.done"
                    && let Some(item) = value.get("item")
                {
                    self.round_items.insert(index, item.clone());
                }
                if let Some(client) = self.passed.get(&index).copied() {
                    self.item_event(&value, client);
                }
            }
        }
        Ok(())
    }

    /// The round's `response.completed`. Its `output` is what is relayed and routed, so
    /// a call the stream announced is never dropped because that list left it out: an
    /// empty or absent `output` is filled with the items the stream gave whole
    /// (`output_item.done`, in upstream order), and a round whose announced call is in
    /// neither is refused as malformed.
    fn end_round(&mut self) -> Result<Value, RelayError> {
        self.passed.clear();
        let items = std::mem::take(&mut self.round_items);
        let announced = std::mem::take(&mut self.round_calls);
        let mut completed = self.completed.take().ok_or(RelayError::Truncated)?;
        let listed = completed
            .get("output")
            .and_then(Value::as_array)
            .is_some_and(|output| !output.is_empty());
        if !listed
            && !items.is_empty()
            && let Some(response) = completed.as_object_mut()
        {
            response.insert(
                "output".to_owned(),
                Value::Array(items.into_values().collect()),
            );
        }
        let output = completed.get("output").and_then(Value::as_array);
        let has_call = |id: &str| {
            output.into_iter().flatten().any(|item| {
                item.get("type").and_then(Value::as_str) == Some("function_call")
                    && item.get("call_id").and_then(Value::as_str) == Some(id)
            })
        };
        match announced.iter().find(|id| !has_call(id)) {
            None => Ok(completed),
            Some(id) => Err(RelayError::Malformed(
                format!(
                    "its stream announced the function call `{id}`, which neither \
                     `response.completed` nor an `output_item.done` holds"
                )
                .into(),
            )),
        }
    }

    fn finish(&mut self, reply: &Value, usage: Option<&Map<String, Value>>) {
        let calls: Vec<Value> = reply
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
            .cloned()
            .collect();
        for call in &calls {
            self.call_events(call);
        }
        let mut response = reply.clone();
        if let Some(r) = response.as_object_mut() {
            if let Some(head) = &self.head {
                for key in ["id", "created_at"] {
                    if let Some(v) = head.get(key) {
                        r.insert(key.to_owned(), v.clone());
                    }
                }
            }
            r.insert("output".to_owned(), Value::Array(self.items.clone()));
            if let Some(usage) = usage {
                r.insert("usage".to_owned(), Value::Object(usage.clone()));
            }
        }
        let kind = if reply.get("status").and_then(Value::as_str) == Some("incomplete") {
            "response.incomplete"
        } else {
            "response.completed"
        };
        let seq = self.seq();
        self.response_event(
            kind,
            &json!({"type": kind, "sequence_number": seq, "response": response}),
        );
    }

    fn fail(&mut self, kind: ErrorKind, message: &str) {
        let seq = self.seq();
        let value = json!({"type": "error", "sequence_number": seq,
            "code": super::error_code(kind), "message": message, "param": null});
        write_event(&mut self.out, "error", &value);
    }

    fn fail_upstream(&mut self, body: &Value, note: &str) {
        // A Responses error event carries the error's members at its top level; its code
        // is the error's code, else its type.
        let body = chef_ir::relay::with_note(body, note);
        let error = body.get("error").unwrap_or(&Value::Null);
        let code = error
            .get("code")
            .filter(|c| !c.is_null())
            .or_else(|| error.get("type"))
            .cloned()
            .unwrap_or(Value::Null);
        let seq = self.seq();
        let value = json!({"type": "error", "sequence_number": seq, "code": code,
            "message": error.get("message").cloned().unwrap_or(Value::Null),
            "param": error.get("param").cloned().unwrap_or(Value::Null)});
        write_event(&mut self.out, "error", &value);
    }

    fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}
