//! Conversions to and from [async-openai](https://docs.rs/async-openai) 0.43 types.
//!
//! *Available on crate feature `async_openai043` only.* The feature pulls in async-openai
//! with only its `chat-completion-types` and `response-types` features: serde types, no
//! HTTP client, no reqwest, no tokio.
//!
//! | from | into | how |
//! |---|---|---|
//! | [`ToolDefinition`] | `ChatCompletionTools`, `ChatCompletionTool` (chat completions) | `From` |
//! | [`ToolDefinition`] | `responses::Tool`, `FunctionTool` (responses) | `From` |
//! | `ChatCompletionMessageToolCalls`, `ChatCompletionMessageToolCall` | [`ToolCall`] | `TryFrom` |
//! | `FunctionToolCall`, `FunctionToolCallResource` (responses) | [`ToolCall`] | `TryFrom` |
//! | [`ToolCall`] | `ChatCompletionMessageToolCall`, `FunctionToolCall` (to replay history) | `From` |
//!
//! ```
//! use async_openai::types::chat::{ChatCompletionMessageToolCall, ChatCompletionTools, FunctionCall};
//! use chef_ir::{ToolCall, ToolDefinition};
//! use serde_json::{Value, json};
//!
//! let tool = ToolDefinition::new("get_weather", json!({"type": "object"}));
//! let wire = ChatCompletionTools::from(&tool);
//! assert_eq!(serde_json::to_value(&wire)?["function"]["name"], "get_weather");
//!
//! let reply = ChatCompletionMessageToolCall {
//!     id: "call_1".into(),
//!     function: FunctionCall { name: "get_weather".into(), arguments: r#"{"city":"Oslo"}"#.into() },
//! };
//! let call = ToolCall::try_from(&reply)?;
//! assert_eq!(call.arguments, json!({"city": "Oslo"}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Argument text that is not JSON
//!
//! OpenAI sends a call's arguments as a string, and models do write broken JSON. The
//! conversion does not fail on it: it keeps the raw text as a JSON string value, as
//! [`ToolCall`] documents, so nothing is lost and chef's resolver can answer the model with
//! an error it can act on (an `Err` here would leave the agent loop nothing to answer the
//! call with). Text that parses is kept as the parsed value, whatever its type, except a
//! JSON string literal, which is kept as its raw text too: a string value then always means
//! "the text as the model wrote it". Blank text (OpenAI sends `""` for a function without
//! parameters) becomes `{}`. The reverse
//! conversions write a string value back verbatim, so broken text round-trips byte for byte.
//!
//! `TryFrom` fails only where a value is not a function call chef can route: a custom
//! (free-text) tool call, a responses call inside a namespace, or a call without an id
//! or a name.
//!
//! # What carries over
//!
//! Chat completions has no `defer_loading`; responses tools carry it. Responses function
//! tools default to `strict: true` on the API, which requires schemas chef does not
//! rewrite; the conversion states `strict: false`, as chat completions defaults to. Tags
//! and annotations are chef's own and stay out of the request.

use async_openai::types::{
    chat::{
        ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionTool,
        ChatCompletionTools, FunctionCall, FunctionObject,
    },
    responses::{FunctionTool, FunctionToolCall, FunctionToolCallResource, Tool},
};
use serde_json::{Map, Value};

use crate::tool::{ToolCall, ToolDefinition};

/// A tool call chef cannot route.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConversionError {
    /// A chat-completions custom tool call: its input is free text for a custom tool,
    /// not arguments for a function tool.
    #[error("tool call {id:?} is a custom tool call to {name:?}, not a function call")]
    CustomToolCall {
        /// The call's id.
        id: String,
        /// The custom tool's name.
        name: String,
        /// The model's input text, kept whole.
        input: String,
    },
    /// A responses call inside a namespace; chef's tools are sent without namespaces.
    #[error(
        "tool call {call_id:?} to {name:?} is in namespace {namespace:?}, which chef did not send"
    )]
    Namespaced {
        /// The call's `call_id`.
        call_id: String,
        /// The namespace.
        namespace: String,
        /// The function name.
        name: String,
    },
    /// The call has no id, so no result could answer it.
    #[error("tool call to {name:?} has an empty id")]
    MissingId {
        /// The function name.
        name: String,
    },
    /// The call has no function name.
    #[error("tool call {id:?} has an empty function name")]
    MissingName {
        /// The call's id.
        id: String,
    },
}

/// Parses OpenAI's argument text; text that is not JSON (or is a JSON string literal) is
/// kept whole as a string value.
///
/// ```
/// use chef_ir::interop::async_openai043::parse_arguments;
/// use serde_json::{Value, json};
///
/// assert_eq!(parse_arguments(r#"{"a":1}"#), json!({"a": 1}));
/// assert_eq!(parse_arguments(""), json!({}));
/// assert_eq!(parse_arguments("{\"a\":"), Value::String("{\"a\":".into()));
/// assert_eq!(parse_arguments("\"{}\""), Value::String("\"{}\"".into()));
/// ```
pub fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str(text) {
        // A JSON string literal is kept as the raw text too, quotes and all: a string value
        // then always means "the text as the model wrote it", and replays byte for byte.
        Ok(Value::String(_)) | Err(_) => Value::String(text.to_owned()),
        Ok(value) => value,
    }
}

/// The argument text for a call: a string value is written verbatim (it is text that was
/// not JSON), anything else as compact JSON.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

fn function_call(id: &str, name: &str, arguments: &str) -> Result<ToolCall, ConversionError> {
    if name.is_empty() {
        return Err(ConversionError::MissingName { id: id.to_owned() });
    }
    if id.is_empty() {
        return Err(ConversionError::MissingId {
            name: name.to_owned(),
        });
    }
    Ok(ToolCall::new(id, name, parse_arguments(arguments)))
}

// --- tools out: chat completions ---

impl From<&ToolDefinition> for FunctionObject {
    fn from(def: &ToolDefinition) -> Self {
        Self {
            name: def.name.as_str().to_owned(),
            description: (!def.description.is_empty()).then(|| def.description.clone()),
            parameters: Some(def.input_schema.clone()),
            strict: None,
        }
    }
}

impl From<&ToolDefinition> for ChatCompletionTool {
    fn from(def: &ToolDefinition) -> Self {
        Self {
            function: FunctionObject::from(def),
        }
    }
}

impl From<&ToolDefinition> for ChatCompletionTools {
    fn from(def: &ToolDefinition) -> Self {
        Self::Function(ChatCompletionTool::from(def))
    }
}

by_reference!(From<ToolDefinition> for ChatCompletionTools);

// --- tools out: responses ---

impl From<&ToolDefinition> for FunctionTool {
    fn from(def: &ToolDefinition) -> Self {
        Self {
            name: def.name.as_str().to_owned(),
            parameters: Some(def.input_schema.clone()),
            strict: Some(false),
            description: (!def.description.is_empty()).then(|| def.description.clone()),
            defer_loading: def.defer_loading.then_some(true),
            r#async: None,
            output_schema: None,
            allowed_callers: None,
        }
    }
}

impl From<&ToolDefinition> for Tool {
    fn from(def: &ToolDefinition) -> Self {
        Self::Function(FunctionTool::from(def))
    }
}

by_reference!(From<ToolDefinition> for Tool);

// --- calls in: chat completions ---

impl TryFrom<&ChatCompletionMessageToolCall> for ToolCall {
    type Error = ConversionError;

    fn try_from(call: &ChatCompletionMessageToolCall) -> Result<Self, Self::Error> {
        function_call(&call.id, &call.function.name, &call.function.arguments)
    }
}

by_reference!(TryFrom<ChatCompletionMessageToolCall> for ToolCall, ConversionError);

impl TryFrom<&ChatCompletionMessageToolCalls> for ToolCall {
    type Error = ConversionError;

    fn try_from(call: &ChatCompletionMessageToolCalls) -> Result<Self, Self::Error> {
        match call {
            ChatCompletionMessageToolCalls::Function(call) => Self::try_from(call),
            ChatCompletionMessageToolCalls::Custom(custom) => {
                Err(ConversionError::CustomToolCall {
                    id: custom.id.clone(),
                    name: custom.custom_tool.name.clone(),
                    input: custom.custom_tool.input.clone(),
                })
            }
        }
    }
}

by_reference!(TryFrom<ChatCompletionMessageToolCalls> for ToolCall, ConversionError);

// --- calls in: responses ---

fn responses_call(
    call_id: &str,
    namespace: Option<&String>,
    name: &str,
    arguments: &str,
) -> Result<ToolCall, ConversionError> {
    if let Some(namespace) = namespace {
        return Err(ConversionError::Namespaced {
            call_id: call_id.to_owned(),
            namespace: namespace.clone(),
            name: name.to_owned(),
        });
    }
    function_call(call_id, name, arguments)
}

/// `TryFrom<&T> for ToolCall` for the Responses call types (`function_call` items: the
/// input one and the one a response holds), which carry the same fields.
macro_rules! responses_call_from {
    ($($ty:ty),+) => {$(
        /// The call's id is its `call_id` (the id a `function_call_output` answers), not
        /// the item id.
        impl TryFrom<&$ty> for ToolCall {
            type Error = ConversionError;

            fn try_from(call: &$ty) -> Result<Self, Self::Error> {
                responses_call(
                    &call.call_id,
                    call.namespace.as_ref(),
                    &call.name,
                    &call.arguments,
                )
            }
        }
    )+};
}

responses_call_from!(FunctionToolCall, FunctionToolCallResource);
by_reference!(TryFrom<FunctionToolCall> for ToolCall, ConversionError);

// --- calls out, to replay an assistant turn ---

impl From<&ToolCall> for ChatCompletionMessageToolCall {
    fn from(call: &ToolCall) -> Self {
        Self {
            id: call.id.as_str().to_owned(),
            function: FunctionCall {
                name: call.name.as_str().to_owned(),
                arguments: arguments_text(&call.arguments),
            },
        }
    }
}

impl From<&ToolCall> for FunctionToolCall {
    fn from(call: &ToolCall) -> Self {
        Self {
            arguments: arguments_text(&call.arguments),
            call_id: call.id.as_str().to_owned(),
            name: call.name.as_str().to_owned(),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use async_openai::types::chat::{ChatCompletionMessageCustomToolCall, CustomTool};
    use proptest::strategy::Strategy;
    use serde_json::json;

    use super::*;

    fn weather() -> ToolDefinition {
        ToolDefinition::new(
            "get_weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        )
        .with_description("Current weather.")
        .with_tags(["weather"])
    }

    fn chat_call(id: &str, name: &str, arguments: &str) -> ChatCompletionMessageToolCall {
        ChatCompletionMessageToolCall {
            id: id.into(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }

    #[test]
    fn chat_tool_wire_shape() {
        let wire = serde_json::to_string(&ChatCompletionTools::from(&weather())).unwrap();
        assert_eq!(
            wire,
            r#"{"type":"function","function":{"name":"get_weather","description":"Current weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}"#
        );
    }

    #[test]
    fn responses_tool_wire_shape_states_strict_false_and_keeps_defer_loading() {
        let wire = serde_json::to_value(Tool::from(&weather().with_defer_loading(true))).unwrap();
        assert_eq!(
            wire,
            json!({
                "type": "function",
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                "strict": false,
                "description": "Current weather.",
                "defer_loading": true
            })
        );
        let plain = serde_json::to_value(Tool::from(ToolDefinition::new("x", json!({})))).unwrap();
        assert_eq!(
            plain,
            json!({"type": "function", "name": "x", "parameters": {}, "strict": false})
        );
    }

    #[test]
    fn argument_text_table() {
        let table: [(&str, Value); 8] = [
            (r#""{}""#, Value::String(r#""{}""#.into())),
            (r#""city""#, Value::String(r#""city""#.into())),
            (r#"{"city":"Oslo"}"#, json!({"city": "Oslo"})),
            ("", json!({})),
            ("  \n", json!({})),
            ("[1,2]", json!([1, 2])),
            (r#"{"city":"Os"#, Value::String(r#"{"city":"Os"#.into())),
            ("city=Oslo", Value::String("city=Oslo".into())),
        ];
        for (text, expected) in table {
            let call = ToolCall::try_from(&chat_call("c1", "get_weather", text)).unwrap();
            assert_eq!(call.arguments, expected, "{text:?}");
            assert_eq!(call.id.as_str(), "c1");
            assert_eq!(call.name, "get_weather");
        }
    }

    #[test]
    fn broken_argument_text_round_trips_byte_for_byte() {
        for text in [r#"{"city":"Os"#, r#"{"b": 1,  "a": 2}"#] {
            let call = ToolCall::try_from(chat_call("c", "f", text)).unwrap();
            let back = ChatCompletionMessageToolCall::from(&call);
            if call.arguments.is_string() {
                assert_eq!(back.function.arguments, text);
            } else {
                assert_eq!(back.function.arguments, r#"{"b":1,"a":2}"#);
            }
            let resp = FunctionToolCall::from(&call);
            assert_eq!(ToolCall::try_from(&resp).unwrap(), call);
        }
    }

    proptest::proptest! {
        /// Replaying a call and reading it back changes nothing, whatever the model wrote.
        #[test]
        fn argument_text_survives_a_replay(text in proptest::prop_oneof![
            ".{0,24}",
            "\"[{}a-z ]{0,6}\"",
            proptest::collection::btree_map("[a-z]{1,4}", proptest::num::i32::ANY, 0..4)
                .prop_map(|m| serde_json::to_string(&m).unwrap_or_default()),
        ]) {
            let call = ToolCall::try_from(chat_call("c", "f", &text)).unwrap();
            let replayed = ChatCompletionMessageToolCall::from(&call);
            proptest::prop_assert_eq!(ToolCall::try_from(&replayed).unwrap(), call.clone());
            if call.arguments.is_string() {
                proptest::prop_assert_eq!(replayed.function.arguments, text);
            }
        }
    }

    #[test]
    fn custom_tool_calls_are_refused_with_their_input_kept() {
        let custom = ChatCompletionMessageToolCalls::Custom(ChatCompletionMessageCustomToolCall {
            id: "c9".into(),
            custom_tool: CustomTool {
                name: "sql".into(),
                input: "SELECT 1".into(),
            },
        });
        let err = ToolCall::try_from(&custom).unwrap_err();
        assert_eq!(
            err,
            ConversionError::CustomToolCall {
                id: "c9".into(),
                name: "sql".into(),
                input: "SELECT 1".into()
            }
        );
        let function = ChatCompletionMessageToolCalls::Function(chat_call("c", "f", "{}"));
        assert_eq!(
            ToolCall::try_from(function).unwrap(),
            ToolCall::new("c", "f", json!({}))
        );
    }

    #[test]
    fn empty_ids_and_names_are_refused() {
        assert_eq!(
            ToolCall::try_from(&chat_call("", "f", "{}")),
            Err(ConversionError::MissingId { name: "f".into() })
        );
        assert_eq!(
            ToolCall::try_from(&chat_call("c", "", "{}")),
            Err(ConversionError::MissingName { id: "c".into() })
        );
    }

    #[test]
    fn responses_calls_use_call_id_and_refuse_namespaces() {
        let call: FunctionToolCall = serde_json::from_value(json!({
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": "{\"city\":\"Oslo\"}"
        }))
        .unwrap();
        assert_eq!(
            ToolCall::try_from(call.clone()).unwrap(),
            ToolCall::new("call_1", "get_weather", json!({"city": "Oslo"}))
        );

        let namespaced = FunctionToolCall {
            namespace: Some("github".into()),
            ..call
        };
        assert_eq!(
            ToolCall::try_from(&namespaced),
            Err(ConversionError::Namespaced {
                call_id: "call_1".into(),
                namespace: "github".into(),
                name: "get_weather".into()
            })
        );
    }

    #[test]
    fn a_responses_call_resource_converts_too() {
        let resource: FunctionToolCallResource = serde_json::from_value(json!({
            "id": "fc_2",
            "call_id": "call_2",
            "name": "f",
            "arguments": "",
            "status": "completed"
        }))
        .unwrap();
        assert_eq!(
            ToolCall::try_from(&resource).unwrap(),
            ToolCall::new("call_2", "f", json!({}))
        );
    }
}
