//! Tool calls a model wrote as text instead of as native tool calls.
//!
//! Small and local models (a 1.5B coder model behind llama.cpp's OpenAI-compatible
//! server, say) often answer a tool list with the call written into the message text:
//! a fenced JSON block, a bare JSON object, or Qwen/Hermes-style `<tool_call>` tags. The
//! server never fills the native `tool_calls`, so the provider crates parse a text reply.
//! [`find_text_calls`] finds such calls in a text, and [`recover_text_calls`] turns them
//! into ordinary [`Content::ToolCall`] blocks of a parsed reply, so that they route like
//! native calls. Both are pure and opt-in: nothing calls them for you, and a reply not
//! passed to them is exactly what the provider crate parsed.
//!
//! What is recognised, and what is left as text, is documented on [`find_text_calls`].

use std::{borrow::Cow, collections::HashSet, ops::Range};

use serde_json::{Map, Value};

use crate::{
    message::{Content, Message, Role},
    tool::{ToolCall, ToolName},
    wire_name::WireNames,
};

/// One tool call found in text, with the name as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCall {
    /// The tool name as written (trimmed).
    pub name: String,
    /// The arguments: always a JSON object (`{}` when the call gave none).
    pub arguments: Value,
}

/// A piece of text that holds tool calls: a tag pair, a fenced block or a bare object.
#[derive(Debug, Clone, PartialEq)]
pub struct TextCallBlock {
    /// Where the piece is in the text, in bytes: the tags or fences included.
    pub span: Range<usize>,
    /// The calls it holds, in order (at least one).
    pub calls: Vec<TextCall>,
}

/// The prefix of the ids [`recover_text_calls`] gives the calls it recovers.
pub const TEXT_CALL_ID_PREFIX: &str = "text-call-";

/// How many positions of a text the bare-object scan tries to parse JSON at: a bound on
/// the work a long reply full of braces can cause (each try may read to the end).
const MAX_BARE_ATTEMPTS: usize = 256;

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FENCE: &str = "```";

/// Finds the tool calls written in `text`: `<tool_call>` tags, fenced JSON blocks and bare
/// JSON objects, in text order, without overlaps. Text that holds no call gives an empty
/// list; nothing panics.
///
/// # What is recognised
///
/// A *call object* is a JSON object with a non-empty string `name` and, optionally,
/// `arguments` (or `parameters`): an object, a string holding a JSON object, `null`, or
/// absent (`{}`). OpenAI's own shape, `{"type": "function", "function": {"name": …,
/// "arguments": "…"}}`, is a call object too.
///
/// - `<tool_call>…</tool_call>`: one or more call objects (or arrays of them) between the
///   tags, optionally inside a fence; other keys beside `name` and `arguments` are
///   ignored. A last tag the model did not close holds one call object.
/// - A fenced block (three backticks, info string empty, `json` or `tool_call`) whose whole
///   content is one or more call objects, or arrays of them.
/// - A bare call object (or array of them) anywhere else in the text.
///
/// Fenced and bare objects must look like a call and nothing else: their keys are `name`,
/// `arguments`, `parameters`, `id` and `type` only (`{"name": "Ada", "age": 36}` is data,
/// not a call).
///
/// # What is not
///
/// JSON that is not a call object (no `name`, a name that is not a string, arguments that
/// are neither an object nor a string holding one), JSON that does not parse (a cut-off
/// object, a key without quotes, a single-quoted string), fences in any other language (a
/// Python example that builds a dict is left alone: only `<tool_call>` tags inside it are
/// still recognised), and call-like JSON nested inside other JSON.
///
/// Four things models write into JSON that JSON lacks are read, outside strings, when the
/// text does not parse as it is: a placeholder left where a value goes,
/// `"distance": <distance>`, is the string `"<distance>"` (so the call routes and its
/// validation tells the model what value it must give); a comment, `// …` or `/* … */`,
/// is dropped; a comma before `}` or `]` is dropped; and Python's `True`, `False` and
/// `None` are `true`, `false` and `null`. None of it is an error: it stays text, unchanged. The bare-object
/// scan tries at most 256 positions of one text (each try may read to its end), so a long
/// reply full of braces costs bounded work; calls in tags and fences are always found.
///
/// # Example
///
/// ```
/// use chef_ir::find_text_calls;
/// use serde_json::json;
///
/// let text = "Converting now.\n```json\n{\"name\": \"t\", \"arguments\": {\"f\": \"a0\"}}\n```";
/// let found = find_text_calls(text);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].calls[0].name, "t");
/// assert_eq!(found[0].calls[0].arguments, json!({"f": "a0"}));
/// assert_eq!(&text[..found[0].span.start], "Converting now.\n");
/// ```
pub fn find_text_calls(text: &str) -> Vec<TextCallBlock> {
    let mut blocks = tag_blocks(text);
    // Fences outside the tags; a fence in another language is skipped whole.
    let mut skipped: Vec<Range<usize>> = Vec::new();
    for (span, content, info) in fences(text) {
        if overlaps(&blocks, &span) {
            continue;
        }
        let info = info.trim().to_ascii_lowercase();
        if matches!(info.as_str(), "" | "json" | "tool_call")
            && let Some(calls) = calls_in(content, Shape::Strict)
        {
            blocks.push(TextCallBlock { span, calls });
        } else {
            skipped.push(span);
        }
    }
    blocks.sort_by_key(|b| b.span.start);
    let bare = bare_blocks(text, &blocks, &skipped);
    blocks.extend(bare);
    blocks.sort_by_key(|b| b.span.start);
    blocks
}

/// Turns the tool calls an assistant `message` wrote as text into
/// [`Content::ToolCall`] blocks, in place, and returns how many it recovered.
///
/// Each text block holding calls ([`find_text_calls`]) is split: the prose before,
/// between and after the calls stays as text blocks (pieces that are only whitespace are
/// left out), and each call becomes a tool call whose name is mapped through `names` (the
/// wire-name table of the request the model answered, as the provider parsers map native
/// calls) and whose id is `text-call-N`: the first such number not taken by a call in
/// `history` or `message`, so ids are deterministic and unique in the conversation.
///
/// Nothing changes, and 0 is returned, when the message is not an assistant message, when
/// it already holds native tool calls (text beside them is the model's prose, not a call),
/// or when no text holds a call. Text blocks carrying a Gemini thought signature are left
/// as they are (the signature covers the text as sent).
///
/// ```
/// use chef_ir::{Content, Message, WireNames, recover_text_calls};
/// use serde_json::json;
///
/// let mut reply = Message::assistant(
///     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
/// );
/// assert_eq!(recover_text_calls(&mut reply, &WireNames::default(), &[]), 1);
/// let call = reply.tool_calls().next().unwrap();
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("text-call-0", "get_weather"));
/// assert_eq!(call.arguments, json!({"city": "Oslo"}));
/// assert!(reply.content.iter().all(|c| !matches!(c, Content::Text { .. })));
/// ```
pub fn recover_text_calls(message: &mut Message, names: &WireNames, history: &[Message]) -> usize {
    if message.role != Role::Assistant || message.tool_calls().next().is_some() {
        return 0;
    }
    let found: Vec<Vec<TextCallBlock>> = message
        .content
        .iter()
        .map(|c| match c {
            Content::Text {
                text,
                thought_signature: None,
            } => find_text_calls(text),
            _ => Vec::new(),
        })
        .collect();
    if found.iter().all(Vec::is_empty) {
        return 0;
    }
    let mut ids = Ids::new(history.iter().chain(std::iter::once(&*message)));
    let mut recovered = 0;
    let old = std::mem::take(&mut message.content);
    for (content, blocks) in old.into_iter().zip(found) {
        let text = match content {
            Content::Text { text, .. } if !blocks.is_empty() => text,
            other => {
                message.content.push(other);
                continue;
            }
        };
        let mut at = 0;
        for block in blocks {
            push_prose(&mut message.content, text.get(at..block.span.start));
            for call in block.calls {
                let name = ToolName::from(names.to_real(&call.name));
                message.content.push(Content::ToolCall(ToolCall::new(
                    ids.next(),
                    name,
                    call.arguments,
                )));
                recovered += 1;
            }
            at = block.span.end;
        }
        push_prose(&mut message.content, text.get(at..));
    }
    recovered
}

fn push_prose(content: &mut Vec<Content>, piece: Option<&str>) {
    if let Some(piece) = piece.filter(|p| !p.trim().is_empty()) {
        content.push(Content::text(piece));
    }
}

/// `text-call-N` ids, skipping those already taken.
struct Ids {
    taken: HashSet<String>,
    next: usize,
}

impl Ids {
    fn new<'a>(messages: impl Iterator<Item = &'a Message>) -> Self {
        let taken = messages
            .flat_map(Message::tool_calls)
            .map(|c| c.id.as_str().to_owned())
            .collect();
        Self { taken, next: 0 }
    }

    fn next(&mut self) -> String {
        loop {
            let id = format!("{TEXT_CALL_ID_PREFIX}{}", self.next);
            self.next += 1;
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// How strictly an object must look like a call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Inside `<tool_call>` tags: the tags say it is a call; other keys are ignored.
    Tagged,
    /// Fenced or bare: only a call's own keys.
    Strict,
}

/// Reads one call object (see the module docs).
fn as_call(value: &Value, shape: Shape) -> Option<TextCall> {
    let object = value.as_object()?;
    if let Some(Value::Object(function)) = object.get("function") {
        let outer_ok = object
            .keys()
            .all(|k| matches!(k.as_str(), "function" | "id" | "type"));
        return if outer_ok || shape == Shape::Tagged {
            as_call(&Value::Object(function.clone()), shape)
        } else {
            None
        };
    }
    if shape == Shape::Strict
        && !object.keys().all(|k| {
            matches!(
                k.as_str(),
                "name" | "arguments" | "parameters" | "id" | "type"
            )
        })
    {
        return None;
    }
    let name = object.get("name")?.as_str()?.trim();
    if name.is_empty() {
        return None;
    }
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(object @ Value::Object(_)) => object.clone(),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => return None,
        },
        Some(_) => return None,
    };
    Some(TextCall {
        name: name.to_owned(),
        arguments,
    })
}

/// The calls in one JSON value: a call object, or a non-empty array of them.
fn calls_of(value: &Value, shape: Shape) -> Option<Vec<TextCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| as_call(item, shape)).collect()
        }
        Value::Array(_) => None,
        other => as_call(other, shape).map(|call| vec![call]),
    }
}

/// The calls in `content` when all of it (whitespace aside) is one or more JSON values,
/// each a call or an array of calls; what a model writes into JSON that JSON does not
/// have (a placeholder for a value it lacks, a comment, a trailing comma, a Python
/// literal) is read as [`relax_json`] reads it.
fn calls_in(content: &str, shape: Shape) -> Option<Vec<TextCall>> {
    calls_in_exact(content, shape)
        .or_else(|| relax_json(content).and_then(|relaxed| calls_in_exact(&relaxed, shape)))
}

fn calls_in_exact(content: &str, shape: Shape) -> Option<Vec<TextCall>> {
    let mut stream = serde_json::Deserializer::from_str(content).into_iter::<Value>();
    let mut calls = Vec::new();
    for value in stream.by_ref() {
        calls.extend(calls_of(&value.ok()?, shape)?);
    }
    let rest = content.get(stream.byte_offset()..)?;
    (!calls.is_empty() && rest.trim().is_empty()).then_some(calls)
}

/// The longest a placeholder may be, `<` and `>` included.
const MAX_PLACEHOLDER_BYTES: usize = 80;

/// What a placeholder may not hold: JSON's own punctuation, a line break, another `<`.
const NOT_IN_PLACEHOLDER: &[u8] = b"\"{}[],:\n<";

/// `json` with what models write into JSON and JSON lacks rewritten as JSON, outside
/// strings; `None` when there is none of it (or a comment is never closed):
///
/// - a placeholder where a value goes (`<distance>`, `<the order id>`: after `:`, `[` or
///   `,`, with no quote, bracket, comma, colon or line break inside) becomes a string
///   (`"<distance>"`), so the call parses and its validation tells the model the value it
///   must give;
/// - a comment, `// …` to the end of the line or `/* … */`, is dropped (coder models
///   annotate arguments: `"amount": 10000, // total sales`);
/// - a comma before `}` or `]` is dropped;
/// - Python's `True`, `False` and `None` where a value goes become `true`, `false`, `null`.
///
/// Nothing else changes: a number, a key or a string is copied as written, so what still
/// is not JSON fails to parse as before.
fn relax_json(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len() + 8);
    let (mut i, mut copied, mut changed) = (0, 0, false);
    // The last byte that is neither whitespace nor in a comment, and where the output
    // holds a comma that a closing bracket would make trailing.
    let mut last = b'{';
    let mut comma: Option<usize> = None;
    while let Some(&byte) = bytes.get(i) {
        // A placeholder or a Python literal where a value goes, written as JSON.
        if matches!(last, b':' | b'[' | b',')
            && let Some((len, json_value)) = value_stand_in(bytes.get(i..)?)
        {
            out.push_str(json.get(copied..i)?);
            out.push_str(&json_value);
            (i, copied, changed) = (i + len, i + len, true);
            (last, comma) = (b'"', None);
            continue;
        }
        let skip = match byte {
            b'"' => {
                i = crate::json_scan::string_end(bytes, i)? + 1;
                (last, comma) = (b'"', None);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let line = bytes.get(i..)?.iter().position(|&b| b == b'\n');
                line.map_or(bytes.len(), |end| i + end)
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let close = memchr::memmem::find(bytes.get(i + 2..)?, b"*/")?;
                i + 2 + close + 2
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out.push_str(json.get(copied..i)?);
                    out.remove(at);
                    copied = i;
                    changed = true;
                }
                last = byte;
                i += 1;
                continue;
            }
            b',' => {
                out.push_str(json.get(copied..i)?);
                comma = Some(out.len());
                out.push(',');
                (last, copied) = (byte, i + 1);
                i += 1;
                continue;
            }
            b if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {
                (last, comma) = (byte, None);
                i += 1;
                continue;
            }
        };
        // A comment, `i..skip`: dropped, with the line break that ends a `//` kept.
        out.push_str(json.get(copied..i)?);
        (i, copied, changed) = (skip, skip, true);
    }
    if !changed {
        return None;
    }
    out.push_str(json.get(copied..)?);
    Some(out)
}

/// What starts `rest` in a value's place that JSON lacks, with its length and its JSON:
/// a placeholder `<…>` (as a string) or Python's `True`, `False`, `None`.
fn value_stand_in(rest: &[u8]) -> Option<(usize, Cow<'static, str>)> {
    match rest.first()? {
        b'<' => {
            let len = placeholder_len(rest)?;
            let text = std::str::from_utf8(rest.get(..len)?).ok()?;
            Some((len, Cow::Owned(serde_json::to_string(text).ok()?)))
        }
        b'T' | b'F' | b'N' => {
            let word = rest
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            let literal = match rest.get(..word)? {
                b"True" => "true",
                b"False" => "false",
                b"None" => "null",
                _ => return None,
            };
            Some((word, Cow::Borrowed(literal)))
        }
        _ => None,
    }
}

/// The length of the placeholder `<…>` that starts `rest`, when it is one.
fn placeholder_len(rest: &[u8]) -> Option<usize> {
    let end = rest
        .iter()
        .take(MAX_PLACEHOLDER_BYTES)
        .position(|&b| b == b'>')?;
    let inner = rest.get(1..end)?;
    (end > 1 && !inner.iter().any(|b| NOT_IN_PLACEHOLDER.contains(b))).then_some(end + 1)
}

/// [`value_at`], or, when the JSON there does not parse, the object or array that starts
/// `text` read as [`relax_json`] reads it; the offset is the original text's.
fn value_at_lenient(text: &str) -> Option<(Value, usize)> {
    if let Some(found) = value_at(text) {
        return Some(found);
    }
    let end = crate::json_scan::container_end(text.as_bytes())?;
    let relaxed = relax_json(text.get(..end)?)?;
    let value = serde_json::from_str::<Value>(&relaxed).ok()?;
    Some((value, end))
}

/// One JSON value at the start of `text` (after whitespace), and the byte offset after it.
fn value_at(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => Some((value, stream.byte_offset())),
        _ => None,
    }
}

/// `<tool_call>` blocks.
fn tag_blocks(text: &str) -> Vec<TextCallBlock> {
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some((start, rest)) = next_marker(text, from, OPEN_TAG) {
        let body = start + OPEN_TAG.len();
        if let Some(close) = rest.find(CLOSE_TAG) {
            let end = body + close + CLOSE_TAG.len();
            let inner = rest.get(..close).unwrap_or_default();
            if let Some(calls) = calls_in(unfenced(inner), Shape::Tagged) {
                blocks.push(TextCallBlock {
                    span: start..end,
                    calls,
                });
            }
            from = end;
        } else {
            // An unclosed last tag: one call object right after it.
            if let Some((value, used)) = value_at(rest)
                && let Some(calls) = calls_of(&value, Shape::Tagged)
            {
                blocks.push(TextCallBlock {
                    span: start..body + used,
                    calls,
                });
            }
            break;
        }
    }
    blocks
}

/// The content of a fence wrapping all of `inner` (tag content written as a fenced block),
/// else `inner`.
fn unfenced(inner: &str) -> &str {
    let trimmed = inner.trim();
    match trimmed
        .strip_prefix(FENCE)
        .and_then(|rest| rest.strip_suffix(FENCE))
    {
        Some(body) => body.split_once('\n').map_or(body, |(_, content)| content),
        None => inner,
    }
}

/// Fenced blocks: (span with the fences, content, info string).
fn fences(text: &str) -> Vec<(Range<usize>, &str, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some((start, rest)) = next_marker(text, from, FENCE) {
        let after = start + FENCE.len();
        let Some(line_end) = rest.find('\n') else {
            break;
        };
        let info = rest.get(..line_end).unwrap_or_default();
        if info.contains('`') {
            // Not an opening fence (inline code, or four backticks): move on.
            from = after;
            continue;
        }
        let body = after + line_end + 1;
        let Some((close, _)) = next_marker(text, body, FENCE) else {
            break;
        };
        let end = close + FENCE.len();
        out.push((start..end, text.get(body..close).unwrap_or_default(), info));
        from = end;
    }
    out
}

/// The first `marker` in `text` at or after byte `from`: where it starts, and the text
/// after it.
fn next_marker<'t>(text: &'t str, from: usize, marker: &str) -> Option<(usize, &'t str)> {
    let start = from + text.get(from..)?.find(marker)?;
    Some((start, text.get(start + marker.len()..).unwrap_or_default()))
}

fn overlaps(blocks: &[TextCallBlock], span: &Range<usize>) -> bool {
    blocks
        .iter()
        .any(|b| b.span.start < span.end && span.start < b.span.end)
}

/// Bare call objects (or arrays of them) outside `taken` and `skipped`.
fn bare_blocks(
    text: &str,
    taken: &[TextCallBlock],
    skipped: &[Range<usize>],
) -> Vec<TextCallBlock> {
    let mut holes: Vec<Range<usize>> = taken
        .iter()
        .map(|b| b.span.clone())
        .chain(skipped.iter().cloned())
        .collect();
    holes.sort_by_key(|r| r.start);
    let mut blocks = Vec::new();
    let mut attempts = 0;
    let mut at = 0;
    while at < text.len() && attempts < MAX_BARE_ATTEMPTS {
        if let Some(hole) = holes.iter().find(|h| h.start <= at && at < h.end) {
            at = hole.end;
            continue;
        }
        let Some(offset) = text.get(at..).and_then(|rest| rest.find(['{', '['])) else {
            break;
        };
        let start = at + offset;
        if let Some(hole) = holes.iter().find(|h| h.start <= start && start < h.end) {
            at = hole.end;
            continue;
        }
        attempts += 1;
        // The value may not run into a hole (a fence or a tag after it).
        let limit = holes
            .iter()
            .map(|h| h.start)
            .filter(|&s| s > start)
            .min()
            .unwrap_or(text.len());
        match text.get(start..limit).and_then(value_at_lenient) {
            Some((value, used)) => {
                let end = start + used;
                if let Some(calls) = calls_of(&value, Shape::Strict) {
                    blocks.push(TextCallBlock {
                        span: start..end,
                        calls,
                    });
                }
                // JSON that is not a call is skipped whole: nothing nested in it is a call.
                at = end;
            }
            None => at = start + 1,
        }
    }
    blocks
}

/// How deep a pythonic call's argument values may nest.
const MAX_PYTHONIC_DEPTH: usize = 32;

/// Calls written the Python way, `name(key=value, …)` or `name(value, …)`, as some small
/// models write them (Llama 3.2's "pythonic" tool calls, Qwen's `find_tools("…")`): the
/// whole text, whitespace aside, is one or more such calls (separated by commas or line
/// breaks, optionally inside `[…]`, optionally in one fenced block), each named by a tool
/// `parameters` knows. `parameters(name)` gives that tool's parameter names in the order
/// its schema lists them (the order the model read), or `None` when no offered tool has
/// the name. Positional values take the parameters in that order, as Python binds them;
/// keyword values follow. Values are Python or JSON literals: strings in single or double
/// quotes, numbers, `True`/`False`/`None` (or `true`/`false`/`null`), lists and dicts of
/// them. Anything else gives `None` and the text stays text: a name that is no tool, prose
/// around the calls, a key given twice (or by position and by name), more positional
/// values than the tool has parameters, a positional value after a keyword one, an
/// expression.
///
/// ```
/// use chef_ir::find_pythonic_calls;
/// use serde_json::json;
///
/// let parameters = |name: &str| {
///     (name == "find_tools").then(|| vec!["query".to_owned(), "limit".to_owned()])
/// };
/// let calls = find_pythonic_calls("find_tools(query='schedule a meeting', limit=1)", &parameters).unwrap();
/// assert_eq!(calls[0].name, "find_tools");
/// assert_eq!(calls[0].arguments, json!({"query": "schedule a meeting", "limit": 1}));
/// let calls = find_pythonic_calls("find_tools(\"convert distance\", 3)", &parameters).unwrap();
/// assert_eq!(calls[0].arguments, json!({"query": "convert distance", "limit": 3}));
/// assert!(find_pythonic_calls("find_tools('a', 1, 2)", &parameters).is_none());
/// assert!(find_pythonic_calls("Call find_tools(query='x') first.", &parameters).is_none());
/// assert!(find_pythonic_calls("print(x='y')", &parameters).is_none());
/// ```
pub fn find_pythonic_calls(
    text: &str,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Option<Vec<TextCall>> {
    let text = text.trim();
    let text = match text.strip_prefix(FENCE).and_then(|t| t.strip_suffix(FENCE)) {
        Some(body) => {
            let (info, content) = body.split_once('\n')?;
            if !matches!(
                info.trim().to_ascii_lowercase().as_str(),
                "" | "python" | "py" | "tool_call"
            ) {
                return None;
            }
            content
        }
        None => text,
    };
    let mut p = Pythonic {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let bracketed = p.eat(b'[');
    let mut calls = Vec::new();
    loop {
        p.ws();
        let (name, positional, mut keywords) = p.call()?;
        let parameters = parameters(&name)?;
        let mut arguments = Map::new();
        if positional.len() > parameters.len() {
            return None;
        }
        for (param, value) in parameters.into_iter().zip(positional) {
            if keywords.contains_key(&param) {
                return None;
            }
            arguments.insert(param, value);
        }
        arguments.append(&mut keywords);
        calls.push(TextCall {
            name,
            arguments: Value::Object(arguments),
        });
        p.ws();
        if p.eat(b',') {
            p.ws();
            if bracketed && p.peek() == Some(b']') {
                break;
            }
            continue;
        }
        if p.at_end() || (bracketed && p.peek() == Some(b']')) {
            break;
        }
        // A line break (already skipped as whitespace) separates calls too.
        if p.peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        {
            continue;
        }
        return None;
    }
    if bracketed && !p.eat(b']') {
        return None;
    }
    p.ws();
    p.at_end().then_some(calls)
}

/// A cursor over the text of pythonic calls.
struct Pythonic<'a> {
    s: &'a [u8],
    i: usize,
}

impl Pythonic<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// A name: a letter or `_`, then letters, digits, `_`, `.` and `-`.
    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        if !self
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        {
            return None;
        }
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        {
            self.i += 1;
        }
        std::str::from_utf8(self.s.get(start..self.i)?)
            .ok()
            .map(str::to_owned)
    }

    /// `name(value, …, key=value, …)`: the name, the positional values, the keyword ones.
    fn call(&mut self) -> Option<(String, Vec<Value>, Map<String, Value>)> {
        let name = self.ident()?;
        self.ws();
        if !self.eat(b'(') {
            return None;
        }
        let mut positional = Vec::new();
        let mut keywords = Map::new();
        self.items(b')', |p| {
            // `key=` starts a keyword value; anything else is a positional value, which
            // may not follow a keyword one.
            let start = p.i;
            let keyword = p.ident().and_then(|key| {
                p.ws();
                p.eat(b'=').then_some(key)
            });
            if let Some(key) = keyword {
                p.ws();
                let value = p.value(0)?;
                return keywords.insert(key, value).is_none().then_some(());
            }
            p.i = start;
            if !keywords.is_empty() {
                return None;
            }
            positional.push(p.value(0)?);
            Some(())
        })?;
        Some((name, positional, keywords))
    }

    /// The rest of a comma-separated sequence whose opening bracket was just read, up to
    /// `close` (a trailing comma allowed), each item read by `item`; `None` when an item
    /// fails or the sequence does not close.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        loop {
            self.ws();
            if self.eat(close) {
                return Some(());
            }
            item(self)?;
            self.ws();
            if !self.eat(b',') {
                return self.eat(close).then_some(());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_PYTHONIC_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' | b'\'' => self.string().map(Value::String),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.items(b']', |p| {
                    items.push(p.value(depth + 1)?);
                    Some(())
                })?;
                Some(Value::Array(items))
            }
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                self.items(b'}', |p| {
                    let key = p.string()?;
                    p.ws();
                    if !p.eat(b':') {
                        return None;
                    }
                    p.ws();
                    let value = p.value(depth + 1)?;
                    map.insert(key, value).is_none().then_some(())
                })?;
                Some(Value::Object(map))
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => match self.ident()?.as_str() {
                "True" | "true" => Some(Value::Bool(true)),
                "False" | "false" => Some(Value::Bool(false)),
                "None" | "null" => Some(Value::Null),
                _ => None,
            },
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.i += 1;
        }
        let token = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
        serde_json::from_str::<Value>(token)
            .ok()
            .filter(Value::is_number)
    }

    /// A string in single or double quotes; `\n`, `\t`, `\\`, the quotes and `\uXXXX`
    /// escapes are read, any other escape is the character itself.
    fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        if !matches!(quote, b'"' | b'\'') {
            return None;
        }
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let byte = self.peek()?;
            self.i += 1;
            match byte {
                b if b == quote => break,
                b'\\' => {
                    let escaped = self.peek()?;
                    self.i += 1;
                    match escaped {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'u' => {
                            let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
                            let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                            self.i += 4;
                            let mut buf = [0; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                b'\n' => return None,
                other => out.push(other),
            }
        }
        String::from_utf8(out).ok()
    }
}

/// [`recover_text_calls`] for calls written the Python way ([`find_pythonic_calls`]): an
/// assistant `message` without tool calls whose only text block is such calls, each
/// named by a tool `parameters` knows (see [`find_pythonic_calls`]), gets them as [`Content::ToolCall`]s (ids
/// `text-call-N`, as [`recover_text_calls`] gives them) in place of that text. Returns
/// how many; 0 leaves the message as it was.
pub fn recover_pythonic_calls(
    message: &mut Message,
    parameters: &dyn Fn(&str) -> Option<Vec<String>>,
    history: &[Message],
) -> usize {
    if message.role != Role::Assistant || message.tool_calls().next().is_some() {
        return 0;
    }
    // The one text block, unsigned.
    let mut texts = message
        .content
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Content::Text { .. }));
    let (
        Some((
            at,
            Content::Text {
                text,
                thought_signature: None,
            },
        )),
        None,
    ) = (texts.next(), texts.next())
    else {
        return 0;
    };
    let Some(calls) = find_pythonic_calls(text, parameters) else {
        return 0;
    };
    let mut ids = Ids::new(history.iter().chain(std::iter::once(&*message)));
    let count = calls.len();
    let replacement: Vec<Content> = calls
        .into_iter()
        .map(|call| {
            Content::ToolCall(ToolCall::new(
                ids.next(),
                ToolName::from(call.name),
                call.arguments,
            ))
        })
        .collect();
    message.content.splice(at..=at, replacement);
    count
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn names(text: &str) -> Vec<Vec<String>> {
        find_text_calls(text)
            .into_iter()
            .map(|b| b.calls.into_iter().map(|c| c.name).collect())
            .collect()
    }

    #[test]
    fn a_fenced_json_block_is_a_call() {
        let text = "I will convert it.\n```json\n{\"name\": \"t\", \"arguments\": {\"f\": \"a0\", \"a\": {\"tz\": \"UTC\"}}}\n```\nDone.";
        let found = find_text_calls(text);
        assert_eq!(found.len(), 1);
        let block = &found[0];
        assert_eq!(
            block.calls,
            vec![TextCall {
                name: "t".into(),
                arguments: json!({"f": "a0", "a": {"tz": "UTC"}})
            }]
        );
        assert_eq!(&text[..block.span.start], "I will convert it.\n");
        assert_eq!(&text[block.span.end..], "\nDone.");
    }

    #[test]
    fn parameters_and_arguments_as_a_json_string_are_accepted() {
        for text in [
            "```json\n{\"name\": \"t\", \"parameters\": {\"f\": \"a0\"}}\n```",
            "```\n{\"name\": \"t\", \"arguments\": \"{\\\"f\\\": \\\"a0\\\"}\"}\n```",
            "{\"type\": \"function\", \"function\": {\"name\": \"t\", \"arguments\": \"{\\\"f\\\":\\\"a0\\\"}\"}}",
            "<tool_call>{\"name\": \"t\", \"arguments\": {\"f\": \"a0\"}, \"why\": \"tags allow extra keys\"}</tool_call>",
        ] {
            let found = find_text_calls(text);
            assert_eq!(found.len(), 1, "{text}");
            assert_eq!(found[0].calls[0].arguments, json!({"f": "a0"}), "{text}");
            assert_eq!(found[0].span, 0..text.len(), "{text}");
        }
    }

    #[test]
    fn absent_or_null_arguments_are_an_empty_object() {
        for text in [
            "{\"name\": \"list_sites\"}",
            "{\"name\": \"list_sites\", \"arguments\": null}",
            "{\"name\": \"list_sites\", \"arguments\": \"\"}",
        ] {
            let found = find_text_calls(text);
            assert_eq!(found[0].calls[0].arguments, json!({}), "{text}");
        }
    }

    #[test]
    fn a_bare_object_in_prose_is_a_call() {
        let text =
            "Sure: {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}} — on it.";
        let found = find_text_calls(text);
        assert_eq!(found.len(), 1);
        assert_eq!(
            &text[found[0].span.clone()],
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"
        );
    }

    #[test]
    fn qwen_tool_call_tags_are_calls_with_or_without_a_close_or_a_fence() {
        let text = "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n```json\n{\"name\": \"b\", \"arguments\": {\"x\": 1}}\n```\n</tool_call>\n<tool_call>\n{\"name\": \"c\", \"arguments\": {}}";
        assert_eq!(names(text), vec![vec!["a"], vec!["b"], vec!["c"]]);
        let found = find_text_calls(text);
        assert_eq!(found[1].calls[0].arguments, json!({"x": 1}));
        assert_eq!(found[2].span.end, text.len());
    }

    #[test]
    fn several_calls_in_one_reply_keep_their_order() {
        let text = "```json\n{\"name\": \"a\"}\n{\"name\": \"b\"}\n```\nthen [{\"name\": \"c\"}, {\"name\": \"d\"}] and <tool_call>{\"name\": \"e\"}</tool_call>";
        assert_eq!(names(text), vec![vec!["a", "b"], vec!["c", "d"], vec!["e"]]);
    }

    #[test]
    fn json_that_is_not_a_call_is_ignored() {
        for text in [
            "{\"arguments\": {\"x\": 1}}",
            "{\"name\": 3, \"arguments\": {}}",
            "{\"name\": \"\", \"arguments\": {}}",
            "{\"name\": [\"t\"]}",
            "{\"name\": \"Ada\", \"age\": 36}",
            "{\"name\": \"t\", \"arguments\": [1, 2]}",
            "{\"name\": \"t\", \"arguments\": \"not json\"}",
            "{\"result\": {\"name\": \"t\", \"arguments\": {}}}",
            "[{\"name\": \"t\"}, 3]",
            "[]",
            "```python\nprint({\"name\": \"t\", \"arguments\": {}})\n```",
            "```json\n{\"name\": \"t\", \"arguments\": {'a': 1}}\n```",
            "<tool_call>{\"name\": \"t\", \"arguments\": {</tool_call>",
            "{\"name\": \"t\", \"arguments\": {\"cut\": ",
            "plain prose with {braces} and [brackets] and ``` stray fences",
            "",
        ] {
            assert!(find_text_calls(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn hostile_text_never_panics() {
        let deep = "[".repeat(10_000);
        let braces = "{\"a".repeat(5_000);
        for text in [
            deep.as_str(),
            braces.as_str(),
            "<tool_call>",
            "<tool_call></tool_call>",
            "```",
            "```json",
            "```json\n",
            "é{\"name\":\"t\"}é",
            "{\"name\":\"t\"}<tool_call>{\"name\":\"u\"}",
        ] {
            let _ = find_text_calls(text);
        }
        assert_eq!(names("é{\"name\":\"t\"}é"), vec![vec!["t"]]);
    }

    #[test]
    fn recovery_splits_prose_and_numbers_ids_past_the_history() {
        let history = vec![Message::assistant_with(vec![Content::ToolCall(
            ToolCall::new("text-call-0", "x", json!({})),
        )])];
        let mut reply = Message::assistant(
            "Looking it up.\n```json\n{\"name\": \"timezone_convert\", \"arguments\": {\"tz\": \"UTC\"}}\n```\nThen: {\"name\": \"search\"}",
        );
        let names = WireNames::new(
            &[ToolName::from("timezone.convert"), ToolName::from("search")],
            crate::NameRule::OPENAI,
        );
        assert_eq!(recover_text_calls(&mut reply, &names, &history), 2);
        assert_eq!(
            reply.content,
            vec![
                Content::text("Looking it up.\n"),
                Content::ToolCall(ToolCall::new(
                    "text-call-1",
                    "timezone.convert",
                    json!({"tz": "UTC"})
                )),
                Content::text("\nThen: "),
                Content::ToolCall(ToolCall::new("text-call-2", "search", json!({}))),
            ]
        );
    }

    /// Text made of the pieces calls are written with, in any order.
    fn callish() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            "\"name\"",
            ":",
            "\"t\"",
            ",",
            "\"arguments\"",
            "{}",
            "\"a0\"",
            "<tool_call>",
            "</tool_call>",
            "```",
            "```json\n",
            "\n",
            " ",
            "é",
            "prose",
            "// note",
            "/*",
            "*/",
            "True",
            "<x>",
            "{\"name\": \"t\", \"arguments\": {\"f\": \"a0\"}}",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    /// Any JSON value, its strings drawn from what the relaxed reader looks for.
    fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let text = prop::sample::select(vec![
            "// c", "/* c */", "True", "None", ",]", "<x>", "a\"b", "",
        ])
        .prop_map(serde_json::Value::from);
        let leaf = prop_oneof![
            text,
            any::<i64>().prop_map(serde_json::Value::from),
            any::<bool>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z/ ]{0,3}", inner, 0..4)
                    .prop_map(|m| { serde_json::Value::Object(m.into_iter().collect()) }),
            ]
        })
    }

    proptest::proptest! {
        /// JSON, compact or pretty, is never rewritten: what the relaxed reader changes is
        /// only ever outside strings and never JSON.
        #[test]
        fn the_relaxed_reader_leaves_json_alone(value in any_json()) {
            let compact = serde_json::to_string(&value).unwrap();
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            proptest::prop_assert_eq!(relax_json(&compact), None);
            proptest::prop_assert_eq!(relax_json(&pretty), None);
        }
    }

    proptest::proptest! {
        /// Whatever the text: no panic; blocks in order, apart, on character boundaries;
        /// and recovery keeps every byte outside the blocks (whitespace-only pieces
        /// aside), so nothing the model wrote is dropped.
        #[test]
        fn recovery_never_panics_and_never_drops_text(text in callish()) {
            let found = find_text_calls(&text);
            let mut end = 0;
            for block in &found {
                proptest::prop_assert!(block.span.start >= end);
                proptest::prop_assert!(block.span.start < block.span.end);
                proptest::prop_assert!(text.get(block.span.clone()).is_some());
                proptest::prop_assert!(!block.calls.is_empty());
                end = block.span.end;
            }
            let mut message = Message::assistant(text.clone());
            let recovered = recover_text_calls(&mut message, &WireNames::default(), &[]);
            proptest::prop_assert_eq!(
                recovered,
                found.iter().map(|b| b.calls.len()).sum::<usize>()
            );
            let mut kept = String::new();
            let mut at = 0;
            for block in &found {
                let piece = &text[at..block.span.start];
                if !piece.trim().is_empty() {
                    kept.push_str(piece);
                }
                at = block.span.end;
            }
            if !text[at..].trim().is_empty() {
                kept.push_str(&text[at..]);
            }
            if recovered == 0 {
                proptest::prop_assert_eq!(message, Message::assistant(text.clone()));
            } else {
                proptest::prop_assert_eq!(message.text(), kept);
            }
        }
    }

    #[test]
    fn recovery_leaves_other_messages_alone() {
        let call = "{\"name\": \"t\"}";
        let untouched = [
            Message::user(call),
            Message::assistant("no call here"),
            Message::assistant_with(vec![
                Content::text(call),
                Content::ToolCall(ToolCall::new("c1", "native", json!({}))),
            ]),
            Message::assistant_with(vec![Content::Text {
                text: call.to_owned(),
                thought_signature: Some("sig".to_owned()),
            }]),
        ];
        for message in untouched {
            let mut copy = message.clone();
            assert_eq!(recover_text_calls(&mut copy, &WireNames::default(), &[]), 0);
            assert_eq!(copy, message);
        }
    }

    #[test]
    fn pythonic_calls_are_read_only_when_they_are_the_whole_text() {
        use serde_json::json;
        let tools: [(&str, &[&str]); 3] = [
            ("find_tools", &["query", "limit"]),
            (
                "get_weather",
                &["city", "units", "days", "hourly", "at", "x"],
            ),
            ("send.email", &["to", "meta"]),
        ];
        let parameters = |name: &str| {
            tools
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, params)| params.iter().map(|p| (*p).to_owned()).collect())
        };
        let one = |text: &str| find_pythonic_calls(text, &parameters);
        let calls =
            one("[get_weather(city=\"Oslo\", units='metric', days=3, hourly=True, at=None)]")
                .unwrap();
        assert_eq!(
            calls[0].arguments,
            json!({"city": "Oslo", "units": "metric", "days": 3, "hourly": true, "at": null})
        );
        let calls =
            one("get_weather(city='Oslo'),\nfind_tools(query=\"it's raining\\n\")").unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].arguments, json!({"query": "it's raining\n"}));
        let calls = one("get_weather(city='Oslo')\nget_weather(city='Rome')").unwrap();
        assert_eq!(calls.len(), 2);
        let calls =
            one("```python\nsend.email(to=['a@b.c', 'd@e.f'], meta={'k': [1, -2.5e3]})\n```")
                .unwrap();
        assert_eq!(
            calls[0].arguments,
            json!({"to": ["a@b.c", "d@e.f"], "meta": {"k": [1, -2500.0]}})
        );
        assert_eq!(one("get_weather()").unwrap()[0].arguments, json!({}));
        assert_eq!(
            one("get_weather(city='\\u00e9')").unwrap()[0].arguments,
            json!({"city": "é"})
        );
        // Positional values take the parameters in schema order, then keywords follow.
        assert_eq!(
            one("find_tools(\"convert distance\")").unwrap()[0].arguments,
            json!({"query": "convert distance"})
        );
        assert_eq!(
            one("find_tools('generate_random_password', 4)").unwrap()[0].arguments,
            json!({"query": "generate_random_password", "limit": 4})
        );
        assert_eq!(
            one("get_weather('Oslo', days=3, units=None)").unwrap()[0].arguments,
            json!({"city": "Oslo", "days": 3, "units": null})
        );
        assert_eq!(
            one("get_weather(True, [1])").unwrap()[0].arguments,
            json!({"city": true, "units": [1]})
        );
        for text in [
            "print(x='y')",                           // not a tool
            "Calling get_weather(city='Oslo') now.",  // prose around it
            "find_tools('a', 1, 2)",                  // more values than parameters
            "get_weather('Oslo', city='Rome')",       // one parameter by position and by name
            "get_weather(city='Oslo', 'metric')",     // a positional value after a keyword
            "get_weather(Oslo)",                      // a bare word is no value
            "get_weather(city='Oslo', city='Rome')",  // a key twice
            "get_weather(city=os.environ)",           // an expression
            "get_weather(city='Oslo'",                // unclosed
            "[get_weather(city='Oslo')",              // unclosed list
            "```bash\nget_weather(city='Oslo')\n```", // another language
            "get_weather(city='a\nb')",               // a raw line break in a string
            "",
        ] {
            assert!(one(text).is_none(), "{text:?}");
        }
        let deep = format!("get_weather(x={}{})", "[".repeat(40), "]".repeat(40));
        assert!(one(&deep).is_none());

        let mut reply = Message::assistant("find_tools(query='schedule a meeting', limit=1)");
        assert_eq!(recover_pythonic_calls(&mut reply, &parameters, &[]), 1);
        let call = reply.tool_calls().next().unwrap();
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("text-call-0", "find_tools")
        );
        assert_eq!(reply.content.len(), 1);
        let mut prose = Message::assistant("I would call find_tools(query='x').");
        assert_eq!(recover_pythonic_calls(&mut prose, &parameters, &[]), 0);
    }

    #[test]
    fn comments_trailing_commas_and_python_literals_are_read() {
        use serde_json::json;
        // As a 1.5B coder model wrote it (NESTFUL line-76, session 42).
        let fenced = "```json\n{\n  \"name\": \"calculate_sales_tax\",\n  \"arguments\": {\n    \"amount\": 10000, // total sales amount\n    \"tax_rate\": 0.08 // sales tax rate\n  }\n}\n```";
        let found = find_text_calls(fenced);
        assert_eq!(found.len(), 1, "{fenced}");
        assert_eq!(
            found[0].calls[0].arguments,
            json!({"amount": 10000, "tax_rate": 0.08})
        );
        let bare = "Sure. {\"name\": \"f\", /* the call */ \"arguments\": {\"on\": True, \"off\": False, \"x\": None, \"ids\": [1, 2,],},}";
        let found = find_text_calls(bare);
        assert_eq!(found.len(), 1, "{bare}");
        assert_eq!(found[0].span, 6..bare.len());
        assert_eq!(
            found[0].calls[0].arguments,
            json!({"on": true, "off": false, "x": null, "ids": [1, 2]})
        );
        let tagged = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"q\": \"a // b\", \"n\": 1,}}\n</tool_call>";
        assert_eq!(
            find_text_calls(tagged)[0].calls[0].arguments,
            json!({"q": "a // b", "n": 1})
        );
        // Inside strings nothing changes; a word that only starts like a literal, a key
        // without quotes, a comment never closed and a lone comma stay what they were.
        assert_eq!(
            relax_json(r#"{"a": "True, // None,]", "b": 1}"#),
            None,
            "nothing outside strings to change"
        );
        assert_eq!(
            relax_json(r#"{"a": Trueish,}"#).as_deref(),
            Some(r#"{"a": Trueish}"#)
        );
        for text in [
            r#"{"name": "f", "arguments": {"a": Trueish}}"#,
            r#"{"name": "f", "arguments": {a: 1}}"#,
            r#"{"name": "f", "arguments": {"a": 1 /* open}}"#,
            r#"{"name": "f", "arguments": {"a": 1,, }}"#,
            r#"{"name": "f", "arguments": {"a": 'x'}}"#,
        ] {
            assert!(find_text_calls(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_placeholder_left_for_a_value_is_read_as_a_string() {
        use serde_json::json;
        let bare = r#"{"name": "calculate_pace", "arguments": {"distance": <distance>, "time": <time in minutes>}}"#;
        let found = find_text_calls(bare);
        assert_eq!(found.len(), 1, "{bare}");
        assert_eq!(found[0].span, 0..bare.len());
        assert_eq!(
            found[0].calls[0].arguments,
            json!({"distance": "<distance>", "time": "<time in minutes>"})
        );
        let fenced = "```json\n{\"name\": \"f\", \"arguments\": {\"ids\": [<id1>, <id2>]}}\n```";
        assert_eq!(
            find_text_calls(fenced)[0].calls[0].arguments,
            json!({"ids": ["<id1>", "<id2>"]})
        );
        let tagged = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": <x>}}\n</tool_call>";
        assert_eq!(
            find_text_calls(tagged)[0].calls[0].arguments,
            json!({"x": "<x>"})
        );
        // A `<` that is not in a value's place, or one inside a string, is left alone.
        for text in [
            r#"{"name": "f", "arguments": {"a": 1 < 2}}"#,
            r#"{"name": "f", "arguments": {<key>: 1}}"#,
            r#"{"name": "f", "arguments": {"a": <not, one>}}"#,
        ] {
            assert!(find_text_calls(text).is_empty(), "{text}");
        }
        let html = r#"{"name": "f", "arguments": {"html": "<b>"}}"#;
        assert_eq!(
            find_text_calls(html)[0].calls[0].arguments,
            json!({"html": "<b>"})
        );
        assert_eq!(relax_json(r#"{"a": "<x>"}"#), None);
    }
}
