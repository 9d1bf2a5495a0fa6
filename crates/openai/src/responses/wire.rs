//! Serde mirror of the Responses JSON (`POST /v1/responses`).
//!
//! Only the fields chef produces or reads are modelled. Items, tools and content parts
//! of other kinds (`reasoning`, `web_search_call`, `tool_search_call`, …) are kept
//! verbatim through [`Tagged`]; typed items keep any field we do not model in `extra`
//! (item `id`s and `status`, which the API uses to pair a function call or message with
//! the reasoning item before it).
//!
//! # Format
//!
//! ```json
//! {"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}],
//!  "instructions":"Be terse.",
//!  "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Oslo?"}]},
//!           {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"…"},
//!           {"type":"function_call","call_id":"call_1","name":"get_weather",
//!            "arguments":"{\"city\":\"Oslo\"}","id":"fc_1"},
//!           {"type":"function_call_output","call_id":"call_1","output":"-3 C"}]}
//! ```
//!
//! `tools`, then `instructions`, then `input`: the order the model reads them, so the
//! serialised body's prefix can be reused between turns.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::tagged::{KnownTags, Tagged};

/// The request body (the parts chef fills; the caller adds `model`, `reasoning`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Request<'a> {
    /// "An array of tools the model may call while generating a response."
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tagged<'a, Tool<'a>>>,
    /// "A system (or developer) message inserted into the model's context."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Cow<'a, str>>,
    /// "Text, image, or file inputs to the model, used to generate a response."
    #[serde(default)]
    pub input: Input<'a>,
}

/// `input`: a plain string (read only) or a list of items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Input<'a> {
    /// "A text input to the model, equivalent to a text input with the user role."
    Text(Cow<'a, str>),
    /// "A list of one or many input items to the model."
    Items(Vec<Tagged<'a, Item<'a>>>),
}

impl Default for Input<'_> {
    fn default() -> Self {
        Self::Items(Vec::new())
    }
}

/// A tool of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Tool<'a> {
    /// A function tool, flat: `{"type":"function","name":…,"parameters":…}`.
    Function(FunctionTool<'a>),
}

impl KnownTags for Tool<'_> {
    const KIND: &'static str = "tool";
    const TAGS: &'static [&'static str] = &["function"];
}

/// "Defines a function in your own code the model can choose to call."
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionTool<'a> {
    /// "The name of the function to call."
    pub name: Cow<'a, str>,
    /// "A description of the function. Used by the model to determine whether or not to
    /// call the function."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Cow<'a, str>>,
    /// "A JSON schema object describing the parameters of the function."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Cow<'a, Value>>,
    /// "Whether to enforce strict parameter validation."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Tool search: "Mark the functions … you want to make searchable with
    /// `defer_loading: true`" (only meaningful beside a `{"type":"tool_search"}` tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defer_loading: Option<bool>,
}

impl<'a> FunctionTool<'a> {
    /// A function tool with a name only.
    pub fn new(name: impl Into<Cow<'a, str>>) -> Self {
        Self {
            name: name.into(),
            description: None,
            parameters: None,
            strict: None,
            defer_loading: None,
        }
    }
}

/// An input or output item of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Item<'a> {
    /// A message from the user, system, developer or assistant.
    Message(MessageItem<'a>),
    /// "A tool call to run a function."
    FunctionCall(FunctionCallItem<'a>),
    /// "The output of a function tool call."
    FunctionCallOutput(FunctionCallOutputItem<'a>),
}

impl KnownTags for Item<'_> {
    const KIND: &'static str = "item";
    const TAGS: &'static [&'static str] = &["message", "function_call", "function_call_output"];
}

/// A message item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MessageItem<'a> {
    /// `user`, `assistant`, `system` or `developer`.
    pub role: Cow<'a, str>,
    /// Text, or a list of content parts.
    pub content: MessageContent<'a>,
    /// Fields chef does not model (`id`, `status`, …), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A function call item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionCallItem<'a> {
    /// "The unique ID of the function tool call generated by the model."
    pub call_id: Cow<'a, str>,
    /// "The name of the function to run."
    pub name: Cow<'a, str>,
    /// "A JSON string of the arguments to pass to the function."
    pub arguments: Cow<'a, str>,
    /// Fields chef does not model (`id`, `status`, `namespace`, …), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A function call output item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionCallOutputItem<'a> {
    /// "The unique ID of the function tool call generated by the model."
    pub call_id: Cow<'a, str>,
    /// "Text, image, or file output of the function tool call."
    pub output: MessageContent<'a>,
    /// Fields chef does not model (`id`, `status`), kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Content of a message or of a function call's output: a string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum MessageContent<'a> {
    /// Plain text.
    Text(Cow<'a, str>),
    /// "A list of one or many input items to the model, containing different content
    /// types."
    Parts(Vec<Tagged<'a, Part<'a>>>),
}

/// A content part of a kind we model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part<'a> {
    /// "A text input to the model."
    InputText {
        /// "The text input to the model."
        text: Cow<'a, str>,
    },
    /// "A text output from the model."
    OutputText {
        /// "The text output from the model."
        text: Cow<'a, str>,
        /// Other fields (`annotations`, `logprobs`), kept verbatim.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// "An image input to the model."
    InputImage(InputImage<'a>),
    /// "A file input to the model."
    InputFile(InputFile<'a>),
}

impl KnownTags for Part<'_> {
    const KIND: &'static str = "content part";
    const TAGS: &'static [&'static str] =
        &["input_text", "output_text", "input_image", "input_file"];
}

/// "An image input to the model."
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputImage<'a> {
    /// "The URL of the image to be sent to the model. A fully qualified URL or base64
    /// encoded image in a data URL."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<Cow<'a, str>>,
    /// "The ID of the file to be sent to the model."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<Cow<'a, str>>,
    /// "The detail level of the image to be sent to the model."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Cow<'a, str>>,
}

/// "A file input to the model."
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct InputFile<'a> {
    /// "The content of the file to be sent to the model." chef sends a `data:` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_data: Option<Cow<'a, str>>,
    /// "The ID of the file to be sent to the model."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<Cow<'a, str>>,
    /// "The URL of the file to be sent to the model."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_url: Option<Cow<'a, str>>,
    /// "The name of the file to be sent to the model."
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<Cow<'a, str>>,
}

/// A response object (the reply).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Response {
    /// "The status of the response generation": `completed`, `incomplete`, `failed`, ….
    #[serde(default)]
    pub status: Option<String>,
    /// "Details about why the response is incomplete."
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    /// "An array of content items generated by the model." Required: a body without it
    /// (an error body, `{}`) is not a response.
    pub output: Vec<Tagged<'static, Item<'static>>>,
    /// Token counts.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// "An error object returned when the model fails to generate a Response" (`null`
    /// when it did not fail).
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

/// "Details about why the response is incomplete."
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct IncompleteDetails {
    /// "The reason why the response is incomplete."
    #[serde(default)]
    pub reason: Option<String>,
}

/// "Represents token usage details."
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// "The number of input tokens."
    #[serde(default)]
    pub input_tokens: u64,
    /// "A detailed breakdown of the input tokens."
    #[serde(default)]
    pub input_tokens_details: Option<InputTokensDetails>,
    /// "The number of output tokens."
    #[serde(default)]
    pub output_tokens: u64,
    /// "A detailed breakdown of the output tokens."
    #[serde(default)]
    pub output_tokens_details: Option<OutputTokensDetails>,
}

/// "A detailed breakdown of the input tokens."
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct InputTokensDetails {
    /// "The number of tokens that were retrieved from the cache."
    #[serde(default)]
    pub cached_tokens: u64,
}

/// "A detailed breakdown of the output tokens."
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct OutputTokensDetails {
    /// "The number of reasoning tokens."
    #[serde(default)]
    pub reasoning_tokens: u64,
}
