//! Relaying a provider's replies to a client that speaks the same API: what a gateway asks
//! of a provider crate, so that it reads and writes no wire JSON of its own.
//!
//! A gateway (`chef serve`) takes a client's request in a provider's API, runs it through a
//! chef session, forwards it upstream, and answers the client in the same API: the final
//! reply with every tool call under its real name and the calls it answered itself left
//! out, streamed or whole. What that takes of each API is [`Relay`]:
//!
//! - the request members chef compiles ([`Relay::owned_fields`]), the ones a gateway
//!   cannot honour ([`Relay::refusal`]), `tool_choice` ([`Relay::forced_tool`],
//!   [`Relay::any_tool`]) and streamed usage ([`Relay::ask_stream_usage`]);
//! - what the reply repeats of the client's request ([`Relay::echo`], an [`Echo`]);
//! - the reply: read into the IR ([`Relay::read_reply`]), its usage
//!   ([`Relay::usage`]), its calls restored for the client ([`Relay::finish_reply`]), an
//!   error body's message ([`Relay::error_message`]);
//! - a streamed reply ([`Relay::stream`], a [`RelayStream`]): each upstream round read
//!   from its events, the text passed through to the client as it comes, the round
//!   assembled into the JSON a whole reply would be, and the final calls, stop reason and
//!   usage written in the client's event format.
//!
//! The trait is object safe: a gateway keeps one `&'static dyn Relay` per API it answers.

use serde::ser::{Serialize, SerializeMap as _, Serializer};
use serde_json::{Map, Value, value::RawValue};

use crate::{Message, Request, WireNames, sse::SseEvent};

/// A provider API whose replies a gateway relays (see the [module docs](self)).
pub trait Relay: Send + Sync {
    /// The top-level request members chef compiles; the others are sent upstream as the
    /// client gave them.
    fn owned_fields(&self) -> &'static [&'static str];

    /// The top-level request member that holds the tools (`tools` in every API relayed
    /// so far).
    fn tools_member(&self) -> &'static str {
        "tools"
    }

    /// Whether the client asked for a stream, from its other request members (`"stream":
    /// true` in every API relayed so far).
    fn streamed(&self, extras: &Map<String, Value>) -> bool {
        extras.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// The client's `tool_choice`, among its other request members (`tool_choice` in every
    /// API relayed so far).
    fn tool_choice<'m>(&self, extras: &'m mut Map<String, Value>) -> Option<&'m mut Value> {
        extras.get_mut("tool_choice")
    }

    /// Reads a client's whole request body into the IR, its history repaired (a Messages
    /// prefill stays [`Request::prefill`]).
    ///
    /// # Errors
    ///
    /// [`RelayError::Request`] with the provider crate's error.
    fn read_request(&self, body: &[u8]) -> Result<Request, RelayError>;

    /// Why a request with these other members cannot be relayed faithfully (several
    /// choices, conversation state kept upstream, …), as a sentence for the client. None by
    /// default.
    fn refusal(&self, extras: &Map<String, Value>) -> Option<String> {
        let _ = extras;
        None
    }

    /// The member of a `tool_choice` value that names the tool it forces, when it forces
    /// one by name.
    fn forced_tool<'v>(&self, choice: &'v mut Value) -> Option<&'v mut Value>;

    /// A `tool_choice` value that forces some tool, whichever the model picks, in place of
    /// `given`, a choice that named one tool: what `given` says besides which tool (a
    /// parallel-calls flag) is kept.
    fn any_tool(&self, given: &Value) -> Value;

    /// A `tool_choice` value that leaves the model free to call a tool or not.
    fn auto_tool(&self) -> Value;

    /// Asks, in the members sent upstream, for usage at the end of a stream (where the
    /// API sends it only when asked). Nothing by default.
    fn ask_stream_usage(&self, extras: &mut Map<String, Value>) {
        let _ = extras;
    }

    /// What the reply repeats of the client's request, read from its members (`member`
    /// gives the last value of a top-level member, unparsed). Nothing by default.
    fn echo(&self, member: &dyn Fn(&str) -> Option<Box<RawValue>>) -> Echo {
        let _ = member;
        Echo::new()
    }

    /// Reads a whole reply (or one assembled from a stream) into the IR.
    ///
    /// # Errors
    ///
    /// [`RelayError::Reply`] with the provider crate's error.
    fn read_reply(&self, reply: &Value, names: &WireNames) -> Result<Message, RelayError>;

    /// Whether a reply (whole, or assembled from a stream) was cut short by the output
    /// limit (`max_tokens` and the like): a call in it may be half written, and the client
    /// must hear that the reply is cut. False by default.
    fn cut_short(&self, reply: &Value) -> bool {
        let _ = reply;
        false
    }

    /// The usage object of a reply (`usage` in every API relayed so far).
    fn usage<'v>(&self, reply: &'v Value) -> Option<&'v Map<String, Value>> {
        reply.get("usage").and_then(Value::as_object)
    }

    /// Puts what a streamed client sees of the rounds answered inside the gateway (their
    /// text, thinking and reasoning; never their calls) at the front of the final reply,
    /// in order, so a whole reply carries what a streamed one does. `earlier` are those
    /// rounds' raw replies. Nothing by default.
    fn carry_earlier(&self, reply: &mut Value, earlier: &[Value]) {
        let _ = (reply, earlier);
    }

    /// Rewrites the final reply for the client: each tool call as `fate` says (a call it
    /// does not know stays as it is), the stop reason made to agree when no call is left,
    /// and `usage` (every round's) in place of the reply's own.
    fn finish_reply(
        &self,
        reply: &mut Value,
        fate: &dyn Fn(&str) -> Option<CallFate>,
        usage: Option<&Map<String, Value>>,
    );

    /// The message of an error body (`{"error":{"message":…}}` in every API relayed so
    /// far).
    fn error_message<'v>(&self, body: &'v Value) -> Option<&'v str> {
        body.pointer("/error/message").and_then(Value::as_str)
    }

    /// Whether `body` is an error in the API's error shape.
    fn is_error_body(&self, body: &Value) -> bool {
        body.get("error").is_some()
    }

    /// The gateway's own error in the API's error shape.
    fn error_body(&self, kind: ErrorKind, message: &str) -> Value;

    /// The client's stream of one request, across every upstream round. `extras` are the
    /// client's other request members (a stream option may be among them); `echo` is
    /// what [`Relay::echo`] gave.
    fn stream(&self, extras: &Map<String, Value>, echo: Echo) -> Box<dyn RelayStream>;
}

/// One client's stream (see [`Relay::stream`]): upstream rounds read in, the client's
/// event stream written out.
pub trait RelayStream: Send {
    /// Reads one event of the current upstream round, passing what is not a tool call to
    /// the client at once.
    ///
    /// # Errors
    ///
    /// [`RelayError::Upstream`] for an error event, [`RelayError::Malformed`] for an event
    /// that is not the API's JSON.
    fn event(&mut self, event: &SseEvent) -> Result<(), RelayError>;

    /// Ends the current round: the reply assembled as a whole reply's JSON. The next event
    /// starts the next round.
    ///
    /// # Errors
    ///
    /// [`RelayError::Truncated`] when the round stopped before its reply was complete,
    /// [`RelayError::Malformed`] when it does not assemble.
    fn end_round(&mut self) -> Result<Value, RelayError>;

    /// Writes the end of the stream from the final reply (as [`Relay::finish_reply`] left
    /// it): its tool calls whole, the stop reason, `usage`.
    fn finish(&mut self, reply: &Value, usage: Option<&Map<String, Value>>);

    /// Writes an error event: the stream fails with `kind` and `message`.
    fn fail(&mut self, kind: ErrorKind, message: &str);

    /// Writes the upstream's own error as the stream's error event: `body` is an error
    /// body in the API's shape ([`Relay::is_error_body`]), answered with an error status
    /// by an upstream round after the stream began (the client already has a 200). Its
    /// type and code are kept; `note` (the status and the upstream's `Retry-After`, which
    /// no header can carry any more) follows its message.
    fn fail_upstream(&mut self, body: &Value, note: &str);

    /// The bytes written since the last call.
    fn take(&mut self) -> Vec<u8>;
}

/// What went wrong, in terms every relayed API has an error type for (a gateway's own
/// errors, and the upstream's as the gateway reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The request is malformed.
    InvalidRequest,
    /// The body is too large.
    TooLarge,
    /// No such route.
    NotFound,
    /// The upstream could not be reached or answered nonsense.
    Upstream,
    /// The upstream took too long.
    Timeout,
    /// The gateway itself failed.
    Internal,
}

/// What becomes of one tool call of the final reply.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFate {
    /// It goes to the client, under its real name with validated arguments.
    Client {
        /// The real tool name.
        name: String,
        /// The arguments.
        arguments: Value,
    },
    /// It was answered before the client saw it: left out.
    Answered,
}

/// Why a relayed reply could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RelayError {
    /// The upstream reported an error inside the stream.
    #[error("{message}")]
    Upstream {
        /// The upstream's message.
        message: String,
        /// The error in the API's error-body shape (what [`Relay::is_error_body`] accepts),
        /// when the event carried one: a gateway passes it on with its own type and code
        /// ([`RelayStream::fail_upstream`]).
        error: Option<Value>,
    },
    /// An event is not the API's JSON, or the events do not assemble.
    #[error("the upstream stream is malformed")]
    Malformed(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The stream ended before the reply was complete.
    #[error("the upstream stream ended before the reply was complete")]
    Truncated,
    /// The reply could not be read into the IR.
    #[error("the upstream reply could not be read")]
    Reply(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The client's request could not be read into the IR (the provider crate's error).
    #[error(transparent)]
    Request(Box<dyn std::error::Error + Send + Sync>),
    /// The reply holds a call the gateway cannot route — a legacy `function_call`, a
    /// custom or shell tool call, a second choice — so it cannot be checked against the
    /// blocklist or the tool's schema. It is refused, never relayed: `what` names it.
    #[error(
        "the upstream reply holds {what}, which chef cannot check against the blocklist \
         and the tool's schema; it was not relayed"
    )]
    Ungated {
        /// What the reply holds, e.g. "a `custom_tool_call` output item".
        what: String,
    },
}

/// An upstream error body with `note` after its `error.message` (where every API relayed
/// so far keeps it, as [`Relay::error_message`] reads it); a message that is missing or
/// not text is "the upstream failed". A body without an `error` object is returned as it
/// is.
///
/// ```
/// use chef_ir::relay::with_note;
/// use serde_json::json;
///
/// let body = json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}});
/// let noted = with_note(&body, "(Retry-After: 7)");
/// assert_eq!(noted["error"]["message"], "Rate limit reached (Retry-After: 7)");
/// assert_eq!(noted["error"]["code"], "rate_limit_exceeded");
/// ```
pub fn with_note(body: &Value, note: &str) -> Value {
    let mut body = body.clone();
    if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the upstream failed");
        let message = if note.is_empty() {
            message.to_owned()
        } else {
            format!("{message} {note}")
        };
        error.insert("message".to_owned(), Value::from(message));
    }
    body
}

/// The shared body of [`Relay::carry_earlier`] for APIs whose reply is a list of typed
/// parts: every part of `earlier`'s `member` lists whose `type` is not `call_type`, in
/// order, put in front of `reply`'s own `member` list.
///
/// ```
/// use chef_ir::relay::carry_parts;
/// use serde_json::json;
///
/// let earlier = [json!({"content": [{"type": "text", "text": "Looking."},
///     {"type": "tool_use", "id": "s1", "name": "find_tools", "input": {}}]})];
/// let mut reply = json!({"content": [{"type": "text", "text": "Done."}]});
/// carry_parts(&mut reply, &earlier, "content", "tool_use");
/// assert_eq!(reply["content"], json!([{"type": "text", "text": "Looking."},
///     {"type": "text", "text": "Done."}]));
/// ```
pub fn carry_parts(reply: &mut Value, earlier: &[Value], member: &str, call_type: &str) {
    let carried: Vec<Value> = earlier
        .iter()
        .filter_map(|r| r.get(member).and_then(Value::as_array))
        .flatten()
        .filter(|part| part.get("type").and_then(Value::as_str) != Some(call_type))
        .cloned()
        .collect();
    if carried.is_empty() {
        return;
    }
    if let Some(Value::Array(parts)) = reply.get_mut(member) {
        parts.splice(0..0, carried);
    }
}

impl RelayError {
    /// A [`RelayError::Ungated`] naming `what` the reply holds.
    pub fn ungated(what: impl Into<String>) -> Self {
        Self::Ungated { what: what.into() }
    }

    /// A [`RelayError::Malformed`] from its cause.
    pub fn malformed(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Malformed(Box::new(e))
    }
}

/// Members of the client's request that a reply repeats, as the client sent them.
///
/// Some replies describe the request they answer (a Responses reply carries its `tools`
/// and `instructions`); the request upstream saw was chef's, so the client's are put back.
/// Empty for an API whose replies repeat nothing.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    members: Vec<(&'static str, Box<RawValue>)>,
    nested: Option<&'static str>,
}

impl Echo {
    /// An echo of nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also puts `value` back as the member `key` wherever the reply has one.
    #[must_use]
    pub fn with_member(mut self, key: &'static str, value: Box<RawValue>) -> Self {
        self.members.push((key, value));
        self
    }

    /// The member of a streamed event that holds the reply object.
    #[must_use]
    pub fn with_event_member(mut self, key: &'static str) -> Self {
        self.nested = Some(key);
        self
    }

    /// Whether the echo puts nothing back.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// `reply` to serialise with the client's members in place of upstream's; a member
    /// the reply lacks is added after its own (an upstream that leaves them out still
    /// shows the client what it sent).
    pub fn reply<'a>(&'a self, reply: &'a Value) -> impl Serialize + 'a {
        Echoed {
            value: reply,
            echo: self,
            nested: false,
        }
    }

    /// A streamed event to serialise with the reply object it holds (under the key of
    /// [`Echo::with_event_member`]) as [`Echo::reply`] makes it.
    pub fn event<'a>(&'a self, event: &'a Value) -> impl Serialize + 'a {
        Echoed {
            value: event,
            echo: self,
            nested: true,
        }
    }
}

/// A reply object (or an event holding one, when `nested`) with the client's members.
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
        if self.echo.is_empty() {
            return self.value.serialize(serializer);
        }
        let missing = || {
            self.echo
                .members
                .iter()
                .filter(|(key, _)| !self.nested && !members.contains_key(*key))
        };
        let mut map = serializer.serialize_map(Some(members.len() + missing().count()))?;
        for (key, value) in members {
            if self.nested {
                if Some(key.as_str()) == self.echo.nested {
                    let inner = Echoed {
                        value,
                        echo: self.echo,
                        nested: false,
                    };
                    map.serialize_entry(key, &inner)?;
                } else {
                    map.serialize_entry(key, value)?;
                }
                continue;
            }
            match self.echo.members.iter().find(|(k, _)| k == key) {
                Some((_, raw)) => map.serialize_entry(key, raw)?,
                None => map.serialize_entry(key, value)?,
            }
        }
        for (key, raw) in missing() {
            map.serialize_entry(key, raw)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use serde_json::{json, value::RawValue};

    use super::Echo;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn an_echo_puts_the_clients_members_back_and_adds_those_the_reply_lacks() {
        let echo = Echo::new()
            .with_member("tools", raw(r#"[{"name":"real"}]"#))
            .with_member("instructions", raw("null"))
            .with_event_member("response");
        let reply = json!({"id": "r", "tools": [{"name": "t"}], "output": []});
        assert_eq!(
            serde_json::to_string(&echo.reply(&reply)).unwrap(),
            r#"{"id":"r","tools":[{"name":"real"}],"output":[],"instructions":null}"#
        );
        let event = json!({"type": "x", "response": reply, "tools": 1});
        assert_eq!(
            serde_json::to_string(&echo.event(&event)).unwrap(),
            r#"{"type":"x","response":{"id":"r","tools":[{"name":"real"}],"output":[],"instructions":null},"tools":1}"#
        );
        // An upstream that leaves them out: the client's are added after the reply's own.
        let bare = json!({"id": "r", "output": []});
        assert_eq!(
            serde_json::to_string(&echo.reply(&bare)).unwrap(),
            r#"{"id":"r","output":[],"tools":[{"name":"real"}],"instructions":null}"#
        );
        assert_eq!(
            serde_json::to_string(&echo.event(&json!({"type": "x", "response": bare}))).unwrap(),
            r#"{"type":"x","response":{"id":"r","output":[],"tools":[{"name":"real"}],"instructions":null}}"#
        );
        let nothing = Echo::new();
        assert_eq!(
            serde_json::to_string(&nothing.reply(&reply)).unwrap(),
            serde_json::to_string(&reply).unwrap()
        );
    }
}
