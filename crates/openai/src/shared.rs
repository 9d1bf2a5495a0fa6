//! What the two OpenAI APIs share: options, argument text, data URLs, the prefill
//! instruction, reply metadata and the history repair rule.

use std::borrow::Cow;

use chef_ir::{
    Content, Message, NameRule, RepairOptions, Request, ToolName, ToolResult, WireNames,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::notice::Notice;

/// Options for compiling a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// Chat Completions only: send assistant thinking as `<thinking>` text in front of
    /// the assistant's text, instead of leaving it out. Redacted thinking is always left
    /// out (it is opaque).
    pub thinking_as_text: bool,
}

impl CompileOptions {
    /// The defaults: thinking is left out.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`CompileOptions::thinking_as_text`].
    #[must_use]
    pub fn with_thinking_as_text(mut self, on: bool) -> Self {
        self.thinking_as_text = on;
        self
    }
}

/// The text for an Anthropic `compaction` block kept in the IR
/// (`Content::Unknown { target: Some(Target::Anthropic), value: {"type":"compaction",
/// "content": …} }`): [`chef_ir::COMPACTION_HEADER`], a line feed, the summary. `None` for any
/// other value.
pub(crate) fn compaction_text(target: Option<chef_ir::Target>, value: &Value) -> Option<String> {
    if target != Some(chef_ir::Target::Anthropic)
        || value.get("type").and_then(Value::as_str) != Some("compaction")
    {
        return None;
    }
    let summary = value.get("content").and_then(Value::as_str)?;
    Some(chef_ir::compaction_text(summary))
}

/// The instruction that stands in for a prefill on APIs that cannot start the reply
/// with given text ([`chef_ir::prefill_enforcement`] with
/// [`PrefillWording::Reply`](chef_ir::PrefillWording::Reply)).
///
/// Six lines joined by `"\n"`, no trailing newline; the prefill is quoted as is (no
/// escaping), so the model sees exactly the text it must start with:
///
/// ```
/// let text = chef_openai::prefill_enforcement("{\"a\":");
/// assert!(text.starts_with("<ephemeral_message type=\"prefill_enforcement\">\n"));
/// assert!(text.contains("\n\"{\"a\":\"\n"));
/// assert!(text.ends_with("</ephemeral_message>"));
/// ```
pub fn prefill_enforcement(prefill: &str) -> String {
    chef_ir::prefill_enforcement(prefill, chef_ir::PrefillWording::Reply)
}

/// The argument text sent for a call.
///
/// A JSON string value is raw argument text the model produced and that was not valid
/// JSON (see [`arguments_from_text`]): it is sent back exactly as received. Any other
/// value is serialised compactly, keys in their stored order, numbers as serde_json
/// holds them (no round trip through doubles).
pub(crate) fn arguments_to_text(arguments: &Value) -> Result<Cow<'_, str>, serde_json::Error> {
    match arguments {
        Value::String(raw) => Ok(Cow::Borrowed(raw)),
        other => serde_json::to_string(other).map(Cow::Owned),
    }
}

/// The IR value for the argument text of a call.
///
/// Text that parses as JSON other than a string becomes that value. Anything else — text
/// that is not JSON (models do produce broken JSON), or a JSON string literal — is kept
/// as a `Value::String` holding the raw text, so that [`arguments_to_text`] sends back
/// exactly the bytes received and the resolver can tell the model what was wrong.
pub(crate) fn arguments_from_text(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(_)) | Err(_) => Value::String(text.to_owned()),
        Ok(value) => value,
    }
}

/// `data:<media type>;base64,<data>`.
pub(crate) fn data_url(media_type: &str, data: &str) -> String {
    let mut url = String::with_capacity(media_type.len() + data.len() + 13);
    url.push_str("data:");
    url.push_str(media_type);
    url.push_str(";base64,");
    url.push_str(data);
    url
}

/// Splits a base64 `data:` URL into media type and payload.
pub(crate) fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (head, data) = rest.split_once(',')?;
    let media_type = head.strip_suffix(";base64")?;
    Some((media_type, data))
}

/// The attachment for a URL or `data:` URL received on the wire.
pub(crate) fn attachment_from_url(
    url: &str,
    fallback_media_type: &str,
    filename: Option<&str>,
) -> chef_ir::Attachment {
    let attachment = match split_data_url(url) {
        Some((media_type, data)) if !media_type.is_empty() => {
            chef_ir::Attachment::base64(media_type, data)
        }
        _ => chef_ir::Attachment::url(fallback_media_type, url),
    };
    match filename {
        Some(name) => attachment.with_filename(name),
        None => attachment,
    }
}

/// The wire name for a real name, borrowed when it is unchanged.
pub(crate) fn wire_name<'a>(names: &WireNames, real: &'a str) -> Cow<'a, str> {
    let wire = names.to_wire(real);
    if wire == real {
        Cow::Borrowed(real)
    } else {
        Cow::Owned(wire.to_owned())
    }
}

/// An uploaded OpenAI file is referenced by its id (`file-…`); chef keeps such ids as
/// URL sources.
pub(crate) fn is_file_id(url: &str) -> bool {
    url.starts_with("file-")
}

/// A media type for inline file data that names none: PDF for `.pdf` files (the
/// document type both OpenAI APIs read), otherwise `application/octet-stream`.
pub(crate) fn media_type_for(filename: Option<&str>) -> &'static str {
    match filename {
        Some(name) if name.to_ascii_lowercase().ends_with(".pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// `<thinking>\nT\n</thinking>\n\n` for a non-empty thinking text.
pub(crate) fn thinking_text(thinking: &str) -> String {
    format!("<thinking>\n{thinking}\n</thinking>\n\n")
}

/// The wire-name table for a request: its tools, and every name used by a call or
/// result in its messages (a call to a tool no longer offered still needs a valid name).
pub(crate) fn wire_names(request: &Request, notices: &mut Vec<Notice>) -> WireNames {
    let mut names: Vec<&ToolName> = request.tools.iter().map(|t| &t.name).collect();
    for message in &request.messages {
        for content in &message.content {
            match content {
                Content::ToolCall(call) => names.push(&call.name),
                Content::ToolResult(ToolResult {
                    name: Some(name), ..
                }) => names.push(name),
                _ => {}
            }
        }
    }
    let table = WireNames::new(names, NameRule::OPENAI);
    notices.extend(table.renamed().map(|(real, wire)| Notice::ToolRenamed {
        real: ToolName::from(real),
        wire: wire.to_owned(),
    }));
    table
}

/// A request holding only tools and, when non-empty, one system message.
pub(crate) fn envelope_request(tools: &[chef_ir::ToolDefinition], preamble: &str) -> Request {
    let messages = if preamble.is_empty() {
        Vec::new()
    } else {
        vec![Message::system(preamble)]
    };
    Request::new(messages).with_tools(tools.to_vec())
}

/// The IR tool for a function tool read from a request body: its name as given, its
/// parameters (an empty object schema when there are none) and its description.
pub(crate) fn function_tool(
    name: Cow<'_, str>,
    description: Option<Cow<'_, str>>,
    parameters: Option<Cow<'_, Value>>,
) -> chef_ir::ToolDefinition {
    let schema = parameters.map_or_else(chef_ir::ToolDefinition::empty_schema, Cow::into_owned);
    let definition = chef_ir::ToolDefinition::new(name.into_owned(), schema);
    match description {
        Some(description) => definition.with_description(description),
        None => definition,
    }
}

/// What an input adapter returns: the messages read, repaired ([`repair_history`]), and
/// the tools; a request body holds no prefill.
pub(crate) fn parsed_request(
    messages: Vec<Message>,
    tools: Vec<chef_ir::ToolDefinition>,
    native_tools: Vec<chef_ir::NativeTool>,
) -> Request {
    Request {
        messages: repair_history(messages),
        tools,
        native_tools,
        prefill: None,
    }
}

/// Why the model stopped, as the API reports it.
///
/// Chat Completions reports a `finish_reason`; Responses reports a `status`, refined by
/// `incomplete_details.reason` when the status is `incomplete`. Values we do not know are
/// kept as they are.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StopReason(Cow<'static, str>);

impl StopReason {
    /// Chat: the model finished its turn.
    pub const STOP: Self = Self(Cow::Borrowed("stop"));
    /// Chat: the token limit was reached.
    pub const LENGTH: Self = Self(Cow::Borrowed("length"));
    /// Chat: the model called tools.
    pub const TOOL_CALLS: Self = Self(Cow::Borrowed("tool_calls"));
    /// Chat / Responses: output was withheld by the content filter.
    pub const CONTENT_FILTER: Self = Self(Cow::Borrowed("content_filter"));
    /// Responses: the response completed.
    pub const COMPLETED: Self = Self(Cow::Borrowed("completed"));
    /// Responses: `max_output_tokens` was reached.
    pub const MAX_OUTPUT_TOKENS: Self = Self(Cow::Borrowed("max_output_tokens"));

    /// Wraps a reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self(Cow::Owned(reason.into()))
    }

    /// The reason as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Token counts of one reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Usage {
    /// Prompt tokens (`prompt_tokens` / `input_tokens`).
    pub input_tokens: u64,
    /// Of those, tokens served from the prompt cache.
    pub cached_input_tokens: u64,
    /// Completion tokens (`completion_tokens` / `output_tokens`).
    pub output_tokens: u64,
    /// Of those, reasoning tokens.
    pub reasoning_tokens: u64,
}

/// A parsed reply: the assistant message in IR form, why it stopped, and token counts.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedResponse {
    /// The assistant turn, with real tool names.
    pub message: Message,
    /// Why the model stopped.
    pub stop_reason: Option<StopReason>,
    /// Token counts, when the API reported them.
    pub usage: Option<Usage>,
}

/// Makes a history one the API accepts (the input adapters' repair step):
/// [`chef_ir::repair_history`] with each placeholder result in a tool message of its own,
/// the shape both parsers give results (one Chat `tool` message, one Responses
/// `function_call_output` item, per result). What was repaired is not reported.
pub fn repair_history(messages: Vec<Message>) -> Vec<Message> {
    chef_ir::repair_history(
        messages,
        RepairOptions::new().with_one_result_per_message(true),
    )
    .messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argument_text_round_trips_broken_json_and_string_literals() {
        for text in [
            "{\"a\":1}",
            "{\"a\": 1",
            "not json",
            "\"quoted\"",
            "",
            "[1,2]",
            "3",
        ] {
            let value = arguments_from_text(text);
            let back = arguments_to_text(&value).unwrap();
            if serde_json::from_str::<Value>(text).is_ok_and(|v| !v.is_string()) {
                assert_eq!(serde_json::from_str::<Value>(&back).unwrap(), value);
            } else {
                assert_eq!(back, text);
            }
        }
        assert_eq!(arguments_from_text("{\"a\":1}"), json!({"a": 1}));
    }

    #[test]
    fn numbers_stay_as_serde_json_holds_them() {
        let value = arguments_from_text("{\"big\":12345678901234567890,\"f\":1.0,\"e\":1e2}");
        assert_eq!(
            arguments_to_text(&value).unwrap(),
            "{\"big\":12345678901234567890,\"f\":1.0,\"e\":100.0}"
        );
    }

    #[test]
    fn data_urls_split_and_join() {
        assert_eq!(
            split_data_url("data:image/png;base64,AAA"),
            Some(("image/png", "AAA"))
        );
        assert_eq!(split_data_url("https://x"), None);
        assert_eq!(data_url("image/png", "AAA"), "data:image/png;base64,AAA");
    }
}
