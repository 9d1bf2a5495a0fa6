//! IR request → Gemini `generateContent` body.
//!
//! The mapping, message by message (spec providers.md §3.4, with the deliberate changes
//! listed at the end):
//!
//! - A system message goes to `systemInstruction` (one text part per text block, in
//!   order). A *positional* system message becomes a `user` content at its position, as
//!   Gemini has no system role inside `contents` ([`Notice::PositionalSystemAsUser`]).
//! - User and tool messages become `user` contents; assistant messages `model` contents.
//!   Consecutive contents with the same role are merged (parallel tool results become one
//!   content, a positional system message joins the user turn before it).
//! - Text → `{text}`, with `thoughtSignature` when the block carries one. Empty text
//!   without a signature is skipped (Gemini refuses empty text parts).
//! - Tool call → `{functionCall:{name, args}}` with a sibling `thoughtSignature`; the
//!   arguments must be a JSON object and are sent exactly as given (no re-parsing).
//! - Tool result → `{functionResponse:{name, response}}` where `response` is
//!   `{"output": text}` or, for an error, `{"error": text}` — the keys Gemini documents
//!   for a function's output and error. The text is sent verbatim as a string (a JSON text
//!   is not re-parsed, so nothing is rewritten); several text blocks become an array of
//!   strings. The name is the result's name, else the name of the call it answers.
//!   Attachments in a result follow the `functionResponse` as parts of the same content.
//! - Attachment → `{inlineData:{mimeType, data}}` for base64 and `data:…;base64,` URLs;
//!   `{fileData:{mimeType, fileUri}}` for `gs://`, `https://` and other URIs.
//! - Thinking → per [`ThinkingMode`]: dropped (the default, as the spec says), textified
//!   (§3.5), or sent as a native `{text, thought: true, thoughtSignature}` part. Redacted
//!   thinking cannot be expressed and is dropped. Every drop is a [`Notice`].
//! - `Content::Unknown` for Gemini is sent back byte for byte; an Anthropic compaction
//!   block (`{"type":"compaction","content":…}`) becomes a text part after
//!   [`COMPACTION_HEADER`](crate::COMPACTION_HEADER) so the summary is not lost; any other target's block is left out
//!   with a notice.
//!
//! Tools: all function declarations sit in ONE `{functionDeclarations:[…]}` object, with
//! names mapped through [`WireNames`] under [`NameRule::GEMINI`] and parameters cleaned by
//! [`clean_schema`](crate::clean_schema); native tools aimed at Gemini follow as their own
//! tool objects.
//!
//! # Deliberate departures from the reference
//!
//! - **Prefill.** Gemini has no prefill. The instruction text [`prefill_enforcement`] is
//!   appended as a NEW text part to the last content when it is a user content, else it
//!   becomes a new trailing user content. The reference replaces an earlier user turn's
//!   parts (dropping its attachments) and may rewrite a turn before the tail; this never
//!   drops content and never rewrites an earlier turn.
//! - **Tool results** are always wrapped in an object (`output`/`error`), as Gemini
//!   requires; the reference sends `42`, `[1,2]` or `null` unwrapped and re-serialises JSON
//!   text through doubles.
//! - **Result names** come from the call the result answers, not from the call id.
//! - **Attachments** on assistant messages and in tool results are sent, not dropped.

use std::{borrow::Cow, collections::HashMap, ops::Range};

use chef_ir::{
    AttachmentSource, Content, Message, NameRule, Request, Role, Target, ToolDefinition, ToolPass,
    ToolResult, WireNames,
};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    error::{Error, Result},
    schema::takes_parameters,
    wire::{self, Blob, Data, FileData, FunctionCall, FunctionResponse, KnownPart, Part},
};

/// What becomes of thinking blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThinkingMode {
    /// Leave them out (spec default); each is reported with [`Notice::ThinkingDropped`].
    #[default]
    Drop,
    /// Send `"<thinking>\n" + thinking + "\n</thinking>\n\n"` as a text part where the
    /// block was (spec §3.5); signatures are dropped.
    AsText,
    /// Send `{text, thought: true, thoughtSignature}` parts, as Gemini returned them.
    /// Use only for thinking that came from Gemini.
    Native,
}

/// Which field carries a tool's parameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaMode {
    /// `parameters`, cleaned into the OpenAPI subset ([`clean_schema`](crate::clean_schema)).
    #[default]
    Parameters,
    /// `parametersJsonSchema`, the schema verbatim (models that accept full JSON Schema).
    JsonSchema,
}

/// Options for [`compile`] and [`envelope`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompileOptions {
    /// What becomes of thinking blocks.
    pub thinking: ThinkingMode,
    /// Which field carries a tool's parameters.
    pub schema: SchemaMode,
    /// Send tool-call ids as `functionCall.id` / `functionResponse.id`. Off by default:
    /// Gemini pairs calls and responses by name and order, and ids from another provider
    /// mean nothing to it.
    pub call_ids: bool,
}

impl CompileOptions {
    /// Sets the thinking mode.
    #[must_use]
    pub fn with_thinking(mut self, thinking: ThinkingMode) -> Self {
        self.thinking = thinking;
        self
    }

    /// Sets the schema mode.
    #[must_use]
    pub fn with_schema(mut self, schema: SchemaMode) -> Self {
        self.schema = schema;
        self
    }

    /// Sets whether call ids are sent.
    #[must_use]
    pub fn with_call_ids(mut self, on: bool) -> Self {
        self.call_ids = on;
        self
    }
}

/// Something the request asked for that Gemini cannot express, and what was done instead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// A positional system message was sent as a user content at its position.
    PositionalSystemAsUser {
        /// Index of the message in the request.
        message: usize,
    },
    /// Non-text blocks of a system message were sent in a user content at its position
    /// (`systemInstruction` is text only).
    SystemContentMoved {
        /// Index of the message in the request.
        message: usize,
    },
    /// The prefill was degraded to an instruction in a user turn.
    PrefillDegraded {
        /// True when a new user content was added for it; false when it was appended to
        /// the last user content.
        new_content: bool,
    },
    /// A thinking block was left out ([`ThinkingMode::Drop`]).
    ThinkingDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A thinking block was sent as text and its signature left out.
    ThinkingSignatureDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// An Anthropic compaction summary was sent as a text part, after
    /// [`crate::COMPACTION_HEADER`].
    CompactionAsText {
        /// Index of the message in the request.
        message: usize,
    },
    /// A redacted-thinking block was left out (Gemini has no such part).
    RedactedThinkingDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A block in another provider's format (or a kind a tool result cannot hold) was left
    /// out.
    ContentDropped {
        /// Index of the message in the request.
        message: usize,
        /// The block's target, when it had one.
        target: Option<Target>,
    },
    /// An attachment's file name was left out (Gemini parts carry none).
    FilenameDropped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A message produced no part (Gemini refuses empty contents) and was left out.
    EmptyMessageSkipped {
        /// Index of the message in the request.
        message: usize,
    },
    /// A tool result had no name and answers no call in the request; its call id was used
    /// as the function name.
    ToolResultUnnamed {
        /// Index of the message in the request.
        message: usize,
        /// The call id it answers.
        tool_call_id: String,
    },
    /// A tool asked for `defer_loading`; Gemini has no deferred loading, so it is declared
    /// like any other.
    DeferLoadingIgnored {
        /// The tool's real name.
        tool: String,
    },
    /// A native tool for other targets was left out.
    NativeToolLeftOut {
        /// Its index in `Request::native_tools`.
        index: usize,
        /// The targets it belongs to.
        targets: Vec<Target>,
    },
    /// A tool name Gemini refuses is sent under another name (mapped back when parsing).
    ToolRenamed {
        /// The real name.
        real: String,
        /// The name on the wire.
        wire: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PositionalSystemAsUser { message } => write!(
                f,
                "positional system message {message} sent as a user content (Gemini has no system role in contents)"
            ),
            Self::SystemContentMoved { message } => write!(
                f,
                "non-text blocks of system message {message} sent in a user content"
            ),
            Self::PrefillDegraded { new_content: true } => {
                f.write_str("prefill degraded to an instruction in a new user content")
            }
            Self::PrefillDegraded { new_content: false } => {
                f.write_str("prefill degraded to an instruction appended to the last user content")
            }
            Self::ThinkingDropped { message } => {
                write!(f, "thinking in message {message} left out")
            }
            Self::ThinkingSignatureDropped { message } => write!(
                f,
                "thinking signature in message {message} left out (thinking sent as text)"
            ),
            Self::CompactionAsText { message } => {
                write!(f, "compaction summary in message {message} sent as text")
            }
            Self::RedactedThinkingDropped { message } => {
                write!(f, "redacted thinking in message {message} left out")
            }
            Self::ContentDropped { message, target } => match target {
                Some(t) => write!(f, "{t} content in message {message} left out"),
                None => write!(f, "content of unknown format in message {message} left out"),
            },
            Self::FilenameDropped { message } => {
                write!(f, "attachment file name in message {message} left out")
            }
            Self::EmptyMessageSkipped { message } => {
                write!(f, "message {message} has nothing Gemini can take; left out")
            }
            Self::ToolResultUnnamed {
                message,
                tool_call_id,
            } => write!(
                f,
                "tool result {tool_call_id:?} in message {message} has no name and answers no call; its id is used as the name"
            ),
            Self::DeferLoadingIgnored { tool } => write!(
                f,
                "tool {tool:?} asks for defer_loading, which Gemini lacks; declared normally"
            ),
            Self::NativeToolLeftOut { index, targets } => {
                write!(f, "native tool #{index} left out (targets:")?;
                for t in targets {
                    write!(f, " {t}")?;
                }
                f.write_str(")")
            }
            Self::ToolRenamed { real, wire } => {
                write!(f, "tool {real:?} sent as {wire:?}")
            }
        }
    }
}

/// A compiled request: the body, the name table to parse replies with, and the notices.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Compiled<'a> {
    /// The `generateContent` body, borrowing text, arguments and schemas from the request.
    pub body: wire::Request<'a>,
    /// Real ↔ wire tool names; pass it to [`parse_response`](crate::parse_response).
    pub names: WireNames,
    /// What could not be expressed, and what was done instead.
    pub notices: Vec<Notice>,
    /// How many leading `contents` form, with `systemInstruction` and `tools`, the
    /// cache-stable prefix: the contents holding only messages up to the last
    /// `cache_breakpoint`, untouched by prefill degradation, and not the last content (a
    /// later message of the same role would merge into it). `None` when no message has a
    /// breakpoint, or when `systemInstruction` holds a system message from after it.
    /// The body serialises `systemInstruction`, `tools`, then `contents`, so this prefix
    /// is also a byte prefix of [`to_vec`]'s output up to that content.
    pub cache_prefix: Option<usize>,
    /// Which of [`notices`](Self::notices) are about the request's tools as declared
    /// ([`Notice::DeferLoadingIgnored`], [`Notice::NativeToolLeftOut`]): they depend on
    /// the tools alone. They follow the [`Notice::ToolRenamed`] notices (which depend on
    /// the whole name table) and precede those about messages. With [`ToolPass::Skip`]
    /// the range is empty, at the place they would take.
    pub tool_notices: Range<usize>,
}

/// Function tools (and a system preamble) in Gemini's shape, ready to merge into a body.
///
/// Serialises as `{"systemInstruction":{"parts":[{"text":preamble}]},
/// "tools":[{"functionDeclarations":[…]}]}`; either key is absent when empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Envelope<'a> {
    /// The preamble as a system instruction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<wire::Content<'a>>,
    /// One tool object holding every function declaration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<wire::Tool<'a>>,
    /// Real ↔ wire tool names.
    #[serde(skip)]
    pub names: WireNames,
    /// Renamed and deferred tools.
    #[serde(skip)]
    pub notices: Vec<Notice>,
}

/// Wraps tool definitions (level-0 tools, or a compressed tool set) and an optional system
/// preamble in Gemini's shape: compress.md §10.4 `forGemini`.
///
/// ```
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// let tools = [ToolDefinition::new("lookup.get", json!({
///     "type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false
/// }))];
/// let env = chef_gemini::envelope(&tools, "", &Default::default())?;
/// assert_eq!(serde_json::to_string(&env)?,
///     r#"{"tools":[{"functionDeclarations":[{"name":"lookup.get","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}]}]}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn envelope<'a>(
    tools: &'a [ToolDefinition],
    preamble: &'a str,
    options: &CompileOptions,
) -> Result<Envelope<'a>> {
    let names = if tools
        .iter()
        .all(|t| NameRule::GEMINI.accepts(t.name.as_str()))
    {
        WireNames::default()
    } else {
        WireNames::new(tools.iter().map(|t| &t.name), NameRule::GEMINI)
    };
    let mut notices = renamed(&names);
    let decls = declarations(tools, &names, options, &mut notices)?;
    let system_instruction =
        (!preamble.is_empty()).then(|| wire::Content::without_role(vec![Part::text(preamble)]));
    Ok(Envelope {
        system_instruction,
        tools: if decls.is_empty() {
            Vec::new()
        } else {
            vec![wire::Tool::FunctionDeclarations(decls)]
        },
        names,
        notices,
    })
}

/// The instruction a prefill degrades to (providers.md §0.2 `PREFILL_ENFORCEMENT`): six
/// lines, the prefill quoted verbatim (no escaping), no trailing newline
/// ([`chef_ir::prefill_enforcement`] with
/// [`PrefillWording::Response`](chef_ir::PrefillWording::Response)).
pub fn prefill_enforcement(prefill: &str) -> String {
    chef_ir::prefill_enforcement(prefill, chef_ir::PrefillWording::Response)
}

/// Serialises the body as compact JSON. Identical requests give identical bytes.
pub fn to_vec(compiled: &Compiled<'_>) -> Result<Vec<u8>> {
    to_vec_with_tools_at(compiled).map(|(bytes, _)| bytes)
}

/// Like [`to_vec`], also returning where the `tools` member starts: just after `{` and
/// the `systemInstruction` member with its comma. When the body has no tools, inserting
/// `"tools":[…],` there gives the body with them (for a caller that keeps the serialised
/// tools of a [`ToolPass::Skip`] compile).
///
/// ```
/// use chef_ir::{Message, Request};
///
/// let request = Request::new(vec![Message::system("Be terse."), Message::user("Hi")]);
/// let compiled = chef_gemini::compile(&request, &Default::default())?;
/// let (body, at) = chef_gemini::to_vec_with_tools_at(&compiled)?;
/// assert_eq!(body, chef_gemini::to_vec(&compiled)?);
/// assert!(body[at..].starts_with(br#""contents":"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_vec_with_tools_at(compiled: &Compiled<'_>) -> Result<(Vec<u8>, usize)> {
    // The members in the order `wire::Request` declares (and derives) them; a test pins
    // the bytes to its `Serialize`.
    let body = &compiled.body;
    let mut bytes = Vec::with_capacity(64 * 1024);
    bytes.push(b'{');
    if let Some(system) = &body.system_instruction {
        bytes.extend_from_slice(b"\"systemInstruction\":");
        serde_json::to_writer(&mut bytes, system).map_err(Error::Serialize)?;
        bytes.push(b',');
    }
    let tools_at = bytes.len();
    if !body.tools.is_empty() {
        bytes.extend_from_slice(b"\"tools\":");
        serde_json::to_writer(&mut bytes, &body.tools).map_err(Error::Serialize)?;
        bytes.push(b',');
    }
    bytes.extend_from_slice(b"\"contents\":");
    serde_json::to_writer(&mut bytes, &body.contents).map_err(Error::Serialize)?;
    bytes.push(b'}');
    Ok((bytes, tools_at))
}

/// Compiles a provider-neutral request into a Gemini `generateContent` body.
///
/// ```
/// use chef_ir::{Message, Request};
///
/// let request = Request::new(vec![Message::system("Be terse."), Message::user("Hi")]);
/// let compiled = chef_gemini::compile(&request, &Default::default())?;
/// assert_eq!(
///     String::from_utf8(chef_gemini::to_vec(&compiled)?)?,
///     r#"{"systemInstruction":{"parts":[{"text":"Be terse."}]},"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn compile<'a>(request: &'a Request, options: &CompileOptions) -> Result<Compiled<'a>> {
    compile_with(request, options, ToolPass::Convert)
}

/// Like [`compile`], with the request's tools converted or left out as `pass` says.
///
/// With [`ToolPass::Skip`] the body's `tools` is empty and [`Compiled::tool_notices`] is
/// an empty range where the tool notices would be; everything else (contents, the name
/// table, the other notices) is what [`compile`] gives. A caller that kept the serialised
/// `tools` and the tool notices of an earlier compile of the same tools puts them back
/// there and has [`compile`]'s output, without converting every declaration again. The
/// tools still enter the name table, so calls and results are named as in that compile.
///
/// ```
/// use chef_ir::{Message, Request, ToolDefinition};
/// use chef_gemini::{CompileOptions, ToolPass};
/// use serde_json::json;
///
/// let request = Request::new(vec![Message::user("Hi")]).with_tools(vec![
///     ToolDefinition::new("later", json!({"type": "object"})).with_defer_loading(true),
/// ]);
/// let options = CompileOptions::default();
/// let full = chef_gemini::compile(&request, &options)?;
/// let skipped = chef_gemini::compile_with(&request, &options, ToolPass::Skip)?;
/// assert!(skipped.body.tools.is_empty());
/// assert_eq!(full.tool_notices.clone(), 0..1);
/// assert_eq!(skipped.tool_notices.clone(), 0..0);
/// assert_eq!(skipped.body.contents, full.body.contents);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`compile`]; with [`ToolPass::Skip`], tools are not checked.
pub fn compile_with<'a>(
    request: &'a Request,
    options: &CompileOptions,
    pass: ToolPass,
) -> Result<Compiled<'a>> {
    let names = table(request);
    let mut notices = renamed(&names);
    let tools_from = notices.len();
    let tools = match pass {
        ToolPass::Convert => tools(request, &names, options, &mut notices)?,
        ToolPass::Skip => Vec::new(),
    };
    let tool_notices = tools_from..notices.len();

    let mut cx = Cx {
        names: &names,
        options,
        notices,
        messages: &request.messages,
        call_names: None,
    };
    let mut system = Vec::new();
    let mut system_last = None;
    // Contents are merged as they are built: a message whose role matches the previous
    // content's extends it.
    let mut pending: Vec<Pending> = Vec::with_capacity(request.messages.len() + 1);
    for (i, message) in request.messages.iter().enumerate() {
        let role = match message.role {
            Role::System if !message.positional => {
                let mut moved = Vec::new();
                for block in &message.content {
                    match block {
                        Content::Text { .. } => cx.block(i, block, &mut system)?,
                        other => cx.block(i, other, &mut moved)?,
                    }
                }
                system_last = Some(i);
                if !moved.is_empty() {
                    cx.notices.push(Notice::SystemContentMoved { message: i });
                    push_parts(&mut pending, wire::Role::USER, i, moved);
                }
                continue;
            }
            Role::System => {
                cx.notices
                    .push(Notice::PositionalSystemAsUser { message: i });
                wire::Role::USER
            }
            Role::User | Role::Tool => wire::Role::USER,
            Role::Assistant => wire::Role::MODEL,
        };
        let joins = pending.last().is_some_and(|p| p.role == role);
        if !joins {
            pending.push(Pending {
                role,
                parts: Vec::with_capacity(message.content.len()),
                last: i,
                touched: false,
            });
        }
        let Some(content) = pending.last_mut() else {
            continue;
        };
        let before = content.parts.len();
        for block in &message.content {
            cx.block(i, block, &mut content.parts)?;
        }
        if content.parts.len() > before {
            content.last = i;
        } else {
            cx.notices.push(Notice::EmptyMessageSkipped { message: i });
            if !joins {
                pending.pop();
            }
        }
    }

    if let Some(prefill) = &request.prefill {
        let part = Part::text(prefill_enforcement(prefill));
        match pending.last_mut() {
            Some(last) if last.role == wire::Role::USER => {
                last.parts.push(part);
                last.touched = true;
                cx.notices
                    .push(Notice::PrefillDegraded { new_content: false });
            }
            _ => {
                pending.push(Pending {
                    role: wire::Role::USER,
                    parts: vec![part],
                    last: request.messages.len(),
                    touched: true,
                });
                cx.notices
                    .push(Notice::PrefillDegraded { new_content: true });
            }
        }
    }

    let merged = pending;
    let cache_prefix = request
        .messages
        .iter()
        .rposition(|m| m.cache_breakpoint)
        .filter(|bp| system_last.is_none_or(|s| s <= *bp))
        .map(|bp| {
            // The last content stays open: the next turn's message may merge into it.
            let closed = merged.len().saturating_sub(1);
            merged
                .iter()
                .take(closed)
                .take_while(|c| c.last <= bp && !c.touched)
                .count()
        });
    let body = wire::Request {
        system_instruction: (!system.is_empty()).then(|| wire::Content::without_role(system)),
        tools,
        contents: merged
            .into_iter()
            .map(|c| wire::Content::new(c.role, c.parts))
            .collect(),
    };
    let notices = cx.notices;
    Ok(Compiled {
        body,
        names,
        notices,
        tool_notices,
        cache_prefix,
    })
}

/// The request's function declarations (one tool object) and native tools for Gemini,
/// with their notices.
fn tools<'a>(
    request: &'a Request,
    names: &WireNames,
    options: &CompileOptions,
    notices: &mut Vec<Notice>,
) -> Result<Vec<wire::Tool<'a>>> {
    let mut tools = Vec::new();
    let decls = declarations(&request.tools, names, options, notices)?;
    if !decls.is_empty() {
        tools.push(wire::Tool::FunctionDeclarations(decls));
    }
    for (index, native) in request.native_tools.iter().enumerate() {
        if native.targets.contains(&Target::Gemini) {
            if !native.value.is_object() {
                return Err(Error::NativeToolNotObject { index });
            }
            tools.push(wire::Tool::Native(Cow::Borrowed(&native.value)));
        } else {
            notices.push(Notice::NativeToolLeftOut {
                index,
                targets: native.targets.clone(),
            });
        }
    }
    Ok(tools)
}

/// A content before merging, with the last message it holds.
struct Pending<'a> {
    role: wire::Role,
    parts: Vec<Part<'a>>,
    last: usize,
    touched: bool,
}

/// Appends parts to the last content when it has this role, else starts a new content.
fn push_parts<'a>(
    pending: &mut Vec<Pending<'a>>,
    role: wire::Role,
    i: usize,
    parts: Vec<Part<'a>>,
) {
    match pending.last_mut() {
        Some(last) if last.role == role => {
            last.parts.extend(parts);
            last.last = i;
        }
        _ => pending.push(Pending {
            role,
            parts,
            last: i,
            touched: false,
        }),
    }
}

/// Every tool name the request mentions: offered tools, calls and results.
fn table(request: &Request) -> WireNames {
    let calls = request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|block| match block {
            Content::ToolCall(call) => Some(&call.name),
            Content::ToolResult(ToolResult {
                name: Some(name), ..
            }) => Some(name),
            _ => None,
        });
    let mut all = request.tools.iter().map(|t| &t.name).chain(calls);
    // Most catalogues need no renaming; skip building the table then.
    if all.clone().all(|n| gemini_accepts(n.as_str())) {
        return WireNames::default();
    }
    WireNames::new(all.by_ref(), NameRule::GEMINI)
}

/// The bytes [`NameRule::GEMINI`] allows after the first: letters, digits, `_`, `-`, `.`
/// and `:`.
#[allow(
    clippy::indexing_slicing,
    reason = "a const loop over the table's own length; `get_mut` is not const here"
)]
static GEMINI_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':');
        b += 1;
    }
    table
};

/// [`NameRule::GEMINI`]'s test on bytes, inlined for the hot path (every tool name, every
/// turn): a letter or `_` first, then bytes of [`GEMINI_BYTES`], 64 bytes at most.
fn gemini_accepts(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.split_first() {
        Some((first, rest)) => {
            bytes.len() <= NameRule::GEMINI.max_len
                && (first.is_ascii_alphabetic() || *first == b'_')
                && rest
                    .iter()
                    .all(|b| GEMINI_BYTES.get(usize::from(*b)).copied().unwrap_or(false))
        }
        None => false,
    }
}

/// The wire name, borrowing the real name when it is sent unchanged.
fn wire_name<'a>(names: &WireNames, real: &'a str) -> Cow<'a, str> {
    match names.to_wire(real) {
        wire if std::ptr::eq(wire, real) => Cow::Borrowed(real),
        wire => Cow::Owned(wire.to_owned()),
    }
}

fn renamed(names: &WireNames) -> Vec<Notice> {
    names
        .renamed()
        .map(|(real, wire)| Notice::ToolRenamed {
            real: real.to_owned(),
            wire: wire.to_owned(),
        })
        .collect()
}

/// Call id → real tool name, over the whole request.
fn call_names(messages: &[Message]) -> HashMap<&str, &str> {
    messages
        .iter()
        .flat_map(Message::tool_calls)
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect()
}

fn declarations<'a>(
    tools: &'a [ToolDefinition],
    names: &WireNames,
    options: &CompileOptions,
    notices: &mut Vec<Notice>,
) -> Result<Vec<wire::FunctionDeclaration<'a>>> {
    let mut decls = Vec::with_capacity(tools.len());
    for tool in tools {
        if !tool.input_schema.is_object() {
            return Err(Error::SchemaNotObject {
                tool: tool.name.to_string(),
            });
        }
        if tool.defer_loading {
            notices.push(Notice::DeferLoadingIgnored {
                tool: tool.name.to_string(),
            });
        }
        let mut decl = wire::FunctionDeclaration::new(wire_name(names, tool.name.as_str()));
        decl.description =
            (!tool.description.is_empty()).then_some(Cow::Borrowed(tool.description.as_str()));
        match options.schema {
            SchemaMode::Parameters => {
                decl.parameters = takes_parameters(&tool.input_schema)
                    .then_some(wire::Schema::Cleaned(&tool.input_schema));
            }
            SchemaMode::JsonSchema => {
                decl.parameters_json_schema = Some(Cow::Borrowed(&tool.input_schema));
            }
        }
        decls.push(decl);
    }
    Ok(decls)
}

/// Per-compile state for turning blocks into parts.
struct Cx<'r, 'a> {
    names: &'r WireNames,
    options: &'r CompileOptions,
    notices: Vec<Notice>,
    messages: &'a [Message],
    /// Call id → real tool name, built on first need.
    call_names: Option<HashMap<&'a str, &'a str>>,
}

impl<'a> Cx<'_, 'a> {
    fn block(&mut self, i: usize, block: &'a Content, out: &mut Vec<Part<'a>>) -> Result<()> {
        match block {
            Content::Text {
                text,
                thought_signature,
            } => {
                if !text.is_empty() || thought_signature.is_some() {
                    out.push(Part::Known(
                        KnownPart::new(Data::Text(Cow::Borrowed(text))).with_thought_signature(
                            thought_signature.as_deref().map(Cow::Borrowed),
                        ),
                    ));
                }
            }
            Content::Attachment(attachment) => {
                if attachment.filename.is_some() {
                    self.notices.push(Notice::FilenameDropped { message: i });
                }
                let mime = attachment.media_type.as_str();
                let data = match &attachment.source {
                    AttachmentSource::Base64 { data } => {
                        Data::InlineData(Blob::new(mime, data.as_str()))
                    }
                    AttachmentSource::Url { url } => match url.strip_prefix("data:") {
                        Some(rest) => {
                            let (header, payload) = rest
                                .split_once(',')
                                .filter(|(h, _)| h.ends_with(";base64"))
                                .ok_or(Error::UnsupportedDataUrl { message: i })?;
                            let url_mime = header.trim_end_matches(";base64");
                            let mime = if mime.is_empty() { url_mime } else { mime };
                            Data::InlineData(Blob::new(mime, payload))
                        }
                        None => Data::FileData(FileData::new(
                            (!mime.is_empty()).then_some(Cow::Borrowed(mime)),
                            url.clone(),
                        )),
                    },
                };
                out.push(Part::Known(KnownPart::new(data)));
            }
            Content::ToolCall(call) => {
                let Value::Object(args) = &call.arguments else {
                    return Err(Error::NonObjectArguments {
                        call_id: call.id.to_string(),
                        tool: call.name.to_string(),
                    });
                };
                let fc = FunctionCall::new(
                    wire_name(self.names, call.name.as_str()),
                    Some(Cow::Borrowed(args)),
                )
                .with_id(
                    self.options
                        .call_ids
                        .then_some(Cow::Borrowed(call.id.as_str())),
                );
                out.push(Part::Known(
                    KnownPart::new(Data::FunctionCall(fc)).with_thought_signature(
                        call.thought_signature.as_deref().map(Cow::Borrowed),
                    ),
                ));
            }
            Content::ToolResult(result) => self.result(i, result, out)?,
            Content::Thinking {
                thinking,
                signature,
            } => match self.options.thinking {
                ThinkingMode::Drop => self.notices.push(Notice::ThinkingDropped { message: i }),
                ThinkingMode::AsText => {
                    if signature.is_some() {
                        self.notices
                            .push(Notice::ThinkingSignatureDropped { message: i });
                    }
                    if !thinking.is_empty() {
                        out.push(Part::text(format!(
                            "<thinking>\n{thinking}\n</thinking>\n\n"
                        )));
                    }
                }
                ThinkingMode::Native => out.push(Part::Known(
                    KnownPart::new(Data::Text(Cow::Borrowed(thinking)))
                        .with_thought(true)
                        .with_thought_signature(signature.as_deref().map(Cow::Borrowed)),
                )),
            },
            Content::RedactedThinking { .. } => {
                self.notices
                    .push(Notice::RedactedThinkingDropped { message: i });
            }
            Content::Unknown {
                target: Some(Target::Gemini),
                value,
            } => out.push(Part::Unknown(Cow::Borrowed(value))),
            Content::Unknown {
                target: Some(Target::Anthropic),
                value,
            } if value.get("type").is_some_and(|t| t == "compaction") => {
                // A server-side compaction summary holds the earlier conversation: keep
                // it as text (providers.md §3.4) rather than lose it.
                match value.get("content").and_then(Value::as_str) {
                    Some(summary) => {
                        out.push(Part::text(chef_ir::compaction_text(summary)));
                        self.notices.push(Notice::CompactionAsText { message: i });
                    }
                    None => self.notices.push(Notice::ContentDropped {
                        message: i,
                        target: Some(Target::Anthropic),
                    }),
                }
            }
            Content::Unknown { target, .. } => self.notices.push(Notice::ContentDropped {
                message: i,
                target: *target,
            }),
        }
        Ok(())
    }

    fn result(&mut self, i: usize, result: &'a ToolResult, out: &mut Vec<Part<'a>>) -> Result<()> {
        let id = result.tool_call_id.as_str();
        let real = match &result.name {
            Some(name) => name.as_str(),
            None => match self
                .call_names
                .get_or_insert_with(|| call_names(self.messages))
                .get(id)
            {
                Some(name) => name,
                None => {
                    self.notices.push(Notice::ToolResultUnnamed {
                        message: i,
                        tool_call_id: id.to_owned(),
                    });
                    id
                }
            },
        };
        let mut texts = Vec::new();
        let mut extra = Vec::new();
        for block in &result.content {
            match block {
                Content::Text { text, .. } => texts.push(Value::String(text.clone())),
                Content::Attachment(_)
                | Content::Unknown {
                    target: Some(Target::Gemini),
                    ..
                } => self.block(i, block, &mut extra)?,
                Content::Unknown { target, .. } => self.notices.push(Notice::ContentDropped {
                    message: i,
                    target: *target,
                }),
                _ => self.notices.push(Notice::ContentDropped {
                    message: i,
                    target: None,
                }),
            }
        }
        let value = match texts.len() {
            0 => Value::String(String::new()),
            1 => texts.pop().unwrap_or_default(),
            _ => Value::Array(texts),
        };
        let mut response = Map::with_capacity(1);
        let key = if result.is_error { "error" } else { "output" };
        response.insert(key.to_owned(), value);
        let fr = FunctionResponse::new(wire_name(self.names, real), response)
            .with_id(self.options.call_ids.then_some(Cow::Borrowed(id)));
        out.push(Part::Known(KnownPart::new(Data::FunctionResponse(fr))));
        out.extend(extra);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use chef_ir::NameRule;
    use proptest::prelude::*;

    use super::gemini_accepts;

    proptest! {
        #[test]
        fn the_inlined_name_test_is_the_gemini_rule(name in "[a-zA-Z0-9_.:/ -]{0,70}|\\PC{0,8}") {
            prop_assert_eq!(gemini_accepts(&name), NameRule::GEMINI.accepts(&name));
        }
    }
}
