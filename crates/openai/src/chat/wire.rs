//! Serde mirror of the Chat Completions JSON (`POST /v1/chat/completions`).
//!
//! Only the fields chef produces or reads are modelled; kinds we do not model (new tool
//! types, content parts, tool-call types) are kept verbatim through [`Tagged`]. Types
//! borrow from the IR request (`Cow`) so compiling does not copy schemas and texts.
//!
//! # Format
//!
//! ```json
//! {"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],
//!  "messages":[{"role":"system","content":"Be terse."},
//!              {"role":"user","content":"Oslo?"},
//!              {"role":"assistant","tool_calls":[{"type":"function","id":"call_1",
//!                 "function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
//!              {"role":"tool","tool_call_id":"call_1","content":"-3 C"}]}
//! ```
//!
//! `tools` is written before `messages` so that the serialised body's prefix follows the
//! order the model reads (tools, then the conversation) and can be reused between turns.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::tagged::{KnownTags, Tagged};

/// The request body (the parts chef fills; the caller adds `model` and sampling fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Request<'a> {
    /// "A list of tools the model may call." Function tools, then provider-native tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tagged<'a, Tool<'a>>>,
    /// "A list of messages comprising the conversation so far."
    pub messages: Vec<Message<'a>>,
}

/// A tool of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Tool<'a> {
    /// `{"type":"function","function":{…}}`.
    Function {
        /// The function's definition.
        function: FunctionDefinition<'a>,
    },
}

impl KnownTags for Tool<'_> {
    const KIND: &'static str = "tool";
    const TAGS: &'static [&'static str] = &["function"];
}

/// "The function definition": name, description and JSON Schema of the parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionDefinition<'a> {
    /// "The name of the function to be called. Must be a-z, A-Z, 0-9, or contain
    /// underscores and dashes, with a maximum length of 64."
    pub name: Cow<'a, str>,
    /// "A description of what the function does, used by the model to choose when and
    /// how to call the function."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    /// "The parameters the functions accepts, described as a JSON Schema object."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Cow<'a, Value>>,
    /// "Whether to enable strict schema adherence when generating the function call."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl<'a> FunctionDefinition<'a> {
    /// A definition with a name only.
    pub fn new(name: impl Into<Cow<'a, str>>) -> Self {
        Self {
            name: name.into(),
            description: None,
            parameters: None,
            strict: None,
        }
    }
}

/// One message, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message<'a> {
    /// "Developer-provided instructions that the model should follow."
    System {
        /// Text, or text (and, as chef sends them, media) parts.
        content: MessageContent<'a>,
        /// "An optional name for the participant."
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    /// The newer name of `system` for reasoning models; read, never written.
    Developer {
        /// Text or text parts.
        content: MessageContent<'a>,
        /// "An optional name for the participant."
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    /// "Messages sent by an end user, containing prompts or additional context
    /// information."
    User {
        /// Text, or text, image and file parts.
        content: MessageContent<'a>,
        /// "An optional name for the participant."
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Cow<'a, str>>,
    },
    /// "Messages sent by the model in response to user messages."
    Assistant(AssistantMessage<'a>),
    /// The result of one tool call.
    Tool {
        /// "The contents of the tool message": text or text parts.
        content: MessageContent<'a>,
        /// "Tool call that this message is responding to."
        tool_call_id: Cow<'a, str>,
    },
}

/// An assistant message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssistantMessage<'a> {
    /// "The contents of the assistant message. Required unless `tool_calls` … is
    /// specified." Text or text/refusal parts; absent or `null` with tool calls only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<MessageContent<'a>>,
    /// "The refusal message by the assistant" (responses carry it here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Cow<'a, str>>,
    /// "The tool calls generated by the model, such as function calls."
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<Tagged<'a, ToolCall<'a>>>,
    /// Any other field (`audio`, `annotations`, a compatible provider's
    /// `reasoning_content`, …), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool call of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolCall<'a> {
    /// `{"type":"function","id":…,"function":{"name":…,"arguments":…}}`.
    Function {
        /// "The ID of the tool call."
        id: Cow<'a, str>,
        /// "The function that the model called."
        function: FunctionCall<'a>,
    },
}

impl KnownTags for ToolCall<'_> {
    const KIND: &'static str = "tool call";
    const TAGS: &'static [&'static str] = &["function"];
    const UNTAGGED: Option<&'static str> = Some("function");
}

/// "The function that the model called."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionCall<'a> {
    /// "The name of the function to call."
    pub name: Cow<'a, str>,
    /// "The arguments to call the function with, as generated by the model in JSON
    /// format. Note that the model does not always generate valid JSON." Some compatible
    /// servers send the JSON value itself instead of its text; it is read as its text.
    #[serde(deserialize_with = "arguments_text")]
    pub arguments: Cow<'a, str>,
}

/// `arguments` as the API sends it (a JSON text), or as some OpenAI-compatible servers
/// send it (the object itself), read as that value's compact JSON text: a reply is not
/// refused whole for it.
fn arguments_text<'de, 'a, D>(deserializer: D) -> Result<Cow<'a, str>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => Cow::Owned(text),
        other => Cow::Owned(other.to_string()),
    })
}

impl<'a> FunctionCall<'a> {
    /// A call with a name and argument text.
    pub fn new(name: impl Into<Cow<'a, str>>, arguments: impl Into<Cow<'a, str>>) -> Self {
        Self {
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// Message content: a plain string or an array of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MessageContent<'a> {
    /// "The text contents of the message."
    Text(Cow<'a, str>),
    /// "An array of content parts with a defined type."
    Parts(Vec<Tagged<'a, Part<'a>>>),
}

/// A content part of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part<'a> {
    /// `{"type":"text","text":…}`.
    Text {
        /// "The text content."
        text: Cow<'a, str>,
    },
    /// `{"type":"image_url","image_url":{"url":…}}`.
    ImageUrl {
        /// The image.
        image_url: ImageUrl<'a>,
    },
    /// `{"type":"file","file":{…}}`: "Learn about file inputs for text generation."
    File {
        /// The file.
        file: FileRef<'a>,
    },
    /// `{"type":"refusal","refusal":…}` (assistant messages).
    Refusal {
        /// "The refusal message generated by the model."
        refusal: Cow<'a, str>,
    },
}

impl KnownTags for Part<'_> {
    const KIND: &'static str = "content part";
    const TAGS: &'static [&'static str] = &["text", "image_url", "file", "refusal"];
}

/// An image reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ImageUrl<'a> {
    /// "Either a URL of the image or the base64 encoded image data."
    pub url: Cow<'a, str>,
    /// "Specifies the detail level of the image."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Cow<'a, str>>,
}

/// A file reference: inline data or an uploaded file's id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileRef<'a> {
    /// "The base64 encoded file data, used when passing the file to the model as a
    /// string." chef sends a `data:` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_data: Option<Cow<'a, str>>,
    /// "The ID of an uploaded file to use as input."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<Cow<'a, str>>,
    /// "The name of the file, used when passing the file to the model as a string."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<Cow<'a, str>>,
}

/// A chat completion (the reply).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Response {
    /// "A list of chat completion choices."
    #[serde(default)]
    pub choices: Vec<Choice>,
    /// "Usage statistics for the completion request."
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// One choice of a completion.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Choice {
    /// "A chat completion message generated by the model."
    pub message: AssistantMessage<'static>,
    /// "The reason the model stopped generating tokens."
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// Token counts of a completion.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// "Number of tokens in the prompt."
    #[serde(default)]
    pub prompt_tokens: u64,
    /// "Number of tokens in the generated completion."
    #[serde(default)]
    pub completion_tokens: u64,
    /// "Breakdown of tokens used in the prompt."
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// "Breakdown of tokens used in a completion."
    #[serde(default)]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

/// "Breakdown of tokens used in the prompt."
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct PromptTokensDetails {
    /// "Cached tokens present in the prompt."
    #[serde(default)]
    pub cached_tokens: u64,
}

/// "Breakdown of tokens used in a completion."
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct CompletionTokensDetails {
    /// "Tokens generated by the model for reasoning."
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// `response_format`: "An object specifying the format that the model must output."
/// Only the `json_schema` kind ("Structured Outputs"), which chef builds for a turn's
/// tools with [`response_format`](super::response_format).
///
/// Serialises to `{"type":"json_schema","json_schema":{"name":…,"description":…,
/// "schema":{…},"strict":false}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseFormat {
    /// "JSON Schema response format. Used to generate structured JSON responses."
    JsonSchema {
        /// "Structured Outputs configuration options, including a JSON Schema."
        json_schema: JsonSchemaFormat,
    },
}

/// The `json_schema` member of a [`ResponseFormat`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JsonSchemaFormat {
    /// "The name of the response format. Must be a-z, A-Z, 0-9, or contain underscores
    /// and dashes, with a maximum length of 64."
    pub name: String,
    /// "A description of what the response format is for, used by the model to
    /// determine how to respond in the format."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// "The schema for the response format, described as a JSON Schema object."
    pub schema: Value,
    /// "Whether to enable strict schema adherence when generating the output."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl JsonSchemaFormat {
    /// A format with a name and a schema, no description, `strict` unset.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            description: None,
            schema,
            strict: None,
        }
    }
}
