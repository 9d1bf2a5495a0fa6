//! The stdio transport's front door: every line the host sends is checked against
//! JSON-RPC 2.0 before rmcp reads it, so a malformed message gets the error the spec
//! names, with the request's `id` where it had one, and never silence.
//!
//! | what the host sent | the answer |
//! |---|---|
//! | a line that is not JSON | `-32700` Parse error, `id: null` |
//! | a line over [`MAX_LINE`] bytes | `-32600` Invalid Request, `id: null` (the line is skipped) |
//! | `jsonrpc` other than `"2.0"`, no `method`, `params` neither object nor array, an `id` that is not a string or an integer (MCP: never null) | `-32600` with the `id` |
//! | an `id` outside -2^63..2^63-1 (what rmcp reads) | `-32600`, with the `id` when it fits 64 bits, else `null` (never the rounded float) |
//! | a key twice in one object, anywhere in the message | `-32600` with the `id` |
//! | an integer wider than 64 bits anywhere in the params (it would be forwarded rounded) | `-32602` with the `id` |
//! | `params` an array | `-32602` Invalid params, with the `id` (MCP's params are objects) |
//! | `tools/call` without a string `name`, or with `arguments` that are not an object | `-32602` with the `id` |
//! | a batch (an array) | an array with one `-32600` per element, each with its `id` (MCP has no batches since 2025-06-18) |
//!
//! A notification (a message with a `method` and no `id`) is never answered, as JSON-RPC
//! requires: one whose params are wrong (`-32602` above) is dropped without a word (on
//! HTTP: `202 Accepted`, as for any notification), and a batch's notifications get no
//! element of its answer. A message too malformed to tell whether it is a notification
//! (`-32600`, `-32700`) is answered with `id: null`, as the spec's own examples do.
//!
//! Everything else (requests, notifications, the host's responses to chef's own
//! requests) goes to rmcp unchanged, and rmcp's lines and these error lines reach stdout
//! whole, one at a time.

use chef_ir::json_scan::{Oddity, oddity, string_end};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream},
    sync::mpsc,
};

/// How long a host may take to send one HTTP message's body once its headers are in.
const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The longest line read from the host: 16 MiB.
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// What to do with one line from the host.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Hand it to rmcp as it is.
    Forward,
    /// Answer it with this line (a JSON-RPC error, or an array of them) and drop it.
    Answer(Value),
    /// Nothing: a blank line.
    Skip,
    /// A notification with wrong params: dropped, and not answered (JSON-RPC answers no
    /// notification).
    Drop,
}

/// What [`check_message`] found.
#[derive(Debug, PartialEq)]
enum Check {
    /// Well formed: rmcp reads it.
    Pass,
    /// Refused with this error.
    Answer(Value),
    /// A notification refused: nothing is said.
    Drop,
}

fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// The `id` of a message to echo in an error: a string, number or null as given; any
/// other value (or none) is `null`.
fn id_of(message: &serde_json::Map<String, Value>) -> (Value, bool) {
    match message.get("id") {
        None => (Value::Null, true),
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => (echo_id(id), true),
        Some(_) => (Value::Null, false),
    }
}

/// `id` as an error echoes it: as given, but `null` for an integer too wide for 64 bits,
/// which the parser holds rounded (echoing `1.8446744073709552e19` for the host's
/// `18446744073709551616` would answer an id it never sent).
fn echo_id(id: &Value) -> Value {
    match id {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(is_wide_integer) => Value::Null,
        other => other.clone(),
    }
}

/// Whether `f` is a whole number outside what 64-bit integers hold (so it came from an
/// integer literal the parser could only round, or from a float written that large).
fn is_wide_integer(f: f64) -> bool {
    // -2^63 and 2^64, exact as f64.
    const LOW: f64 = -9_223_372_036_854_775_808.0;
    const HIGH: f64 = 18_446_744_073_709_551_616.0;
    f.fract() == 0.0 && !(LOW..HIGH).contains(&f)
}

/// The answer to a request (or the silence for a notification) that holds an [`Oddity`]
/// (a key twice, which serde reads as the last one and rmcp's typed read refuses, answering
/// without the id; an integer wider than 64 bits, which would be forwarded rounded).
fn refuse_oddity(message: &Value, odd: Oddity) -> Verdict {
    let object = message.as_object();
    let has_id = object.is_some_and(|o| o.contains_key("id"));
    let id = object.map_or(Value::Null, |o| id_of(o).0);
    let (code, text) = match odd {
        Oddity::DuplicateKey(key) => (
            -32600,
            format!(
                "Invalid Request: the key {} appears twice in one object",
                Value::String(key)
            ),
        ),
        Oddity::WideInteger(_) if has_id && id.is_null() => (
            -32600,
            "Invalid Request: an MCP request's id is a string or an integer from -2^63 to \
             2^63-1 (not null)"
                .to_owned(),
        ),
        Oddity::WideInteger(n) => (
            -32602,
            format!(
                "Invalid params: the integer {n} does not fit in 64 bits, and chef would \
                 forward it rounded; send it as a string if the tool takes one"
            ),
        ),
    };
    // A malformed key in a message that may be a notification: JSON-RPC answers none.
    if !has_id && object.is_some_and(|o| o.get("method").is_some_and(Value::is_string)) {
        return Verdict::Drop;
    }
    Verdict::Answer(error(id, code, text))
}

/// Checks one message (an element of the line, or the line itself).
fn check_message(message: &Value) -> Check {
    let Some(object) = message.as_object() else {
        return Check::Answer(error(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is an object",
        ));
    };
    let (id, id_ok) = id_of(object);
    if !id_ok {
        return Check::Answer(error(
            Value::Null,
            -32600,
            "Invalid Request: id must be a string, a number or null",
        ));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Check::Answer(error(
            id,
            -32600,
            "Invalid Request: jsonrpc must be \"2.0\"",
        ));
    }
    // A response from the host to one of chef's own requests (ping, list roots, …).
    let is_response = object.contains_key("result") || object.contains_key("error");
    if is_response && !object.contains_key("method") {
        return Check::Pass;
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Check::Answer(error(
            id,
            -32600,
            "Invalid Request: method must be a string",
        ));
    };
    // MCP narrows JSON-RPC: a request's id is a string or an integer, never null (rmcp
    // answered `null` and `1.5` with an error that had no id at all). rmcp reads a signed
    // 64-bit integer: a larger one got an answer without an id.
    if let Some(id @ (Value::Null | Value::Number(_))) = object.get("id")
        && !id.is_i64()
    {
        return Check::Answer(error(
            echo_id(id),
            -32600,
            "Invalid Request: an MCP request's id is a string or an integer from -2^63 to \
             2^63-1 (not null)",
        ));
    }
    // Past here the message is a well-formed request or notification; the errors below
    // are about its params, and a notification's are not answered.
    let refuse = |code, message: String| {
        if object.contains_key("id") {
            Check::Answer(error(id.clone(), code, message))
        } else {
            Check::Drop
        }
    };
    match object.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(Value::Array(_)) => {
            return refuse(
                -32602,
                format!("Invalid params: {method} takes its params as an object"),
            );
        }
        Some(_) => {
            return Check::Answer(error(
                id,
                -32600,
                "Invalid Request: params must be an object",
            ));
        }
    }
    if method == "tools/call"
        && !object
            .get("params")
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string)
    {
        return refuse(
            -32602,
            "Invalid params: tools/call needs params.name, the tool to call".to_owned(),
        );
    }
    // rmcp would read a call whose arguments are not an object as no known request
    // ("Method not found"): the params are what is wrong.
    if method == "tools/call"
        && object
            .get("params")
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !(a.is_object() || a.is_null()))
    {
        return refuse(
            -32602,
            "Invalid params: tools/call's params.arguments must be an object of the tool's arguments"
                .to_owned(),
        );
    }
    Check::Pass
}

/// The `id` member of a line holding one JSON object, read without parsing the rest (a
/// message too deep to parse): a string, a number or null, else `None`.
fn top_level_id(line: &[u8]) -> Option<Value> {
    let mut depth = 0_usize;
    let mut expect_key = false;
    let mut i = 0;
    while let Some(&byte) = line.get(i) {
        match byte {
            b'"' => {
                let end = string_end(line, i)?;
                if depth == 1 && expect_key {
                    let key: String = serde_json::from_slice(line.get(i..=end)?).ok()?;
                    if key == "id" {
                        let rest = line.get(end + 1..)?;
                        let colon = rest.iter().position(|b| *b == b':')?;
                        let value = serde_json::Deserializer::from_slice(rest.get(colon + 1..)?)
                            .into_iter::<Value>()
                            .next()?
                            .ok()?;
                        return matches!(value, Value::String(_) | Value::Number(_) | Value::Null)
                            .then_some(value);
                    }
                }
                expect_key = false;
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                expect_key = byte == b'{' && depth == 1;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => expect_key = depth == 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The verdict on one line from the host.
pub(crate) fn check_line(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        // JSON nested deeper than the parser goes: still a request, answered with its id
        // (read without recursion) so the host is not left waiting for it.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return Verdict::Answer(error(
                top_level_id(line).unwrap_or(Value::Null),
                -32600,
                "Invalid Request: the message nests deeper than 128 levels",
            ));
        }
        Err(e) => {
            return Verdict::Answer(error(
                Value::Null,
                -32700,
                format!("Parse error: the line is not JSON ({e})"),
            ));
        }
    };
    match &value {
        Value::Array(batch) if batch.is_empty() => Verdict::Answer(error(
            Value::Null,
            -32600,
            "Invalid Request: an empty batch",
        )),
        Value::Array(batch) => {
            let answers: Vec<Value> = batch
                .iter()
                .filter_map(|m| {
                    let object = m.as_object();
                    let notification = object.is_some_and(|o| {
                        !o.contains_key("id") && o.get("method").is_some_and(Value::is_string)
                    });
                    match check_message(m) {
                        Check::Answer(answer) => Some(answer),
                        Check::Drop => None,
                        Check::Pass if notification => None,
                        Check::Pass => Some(error(
                            object.map_or(Value::Null, |o| id_of(o).0),
                            -32600,
                            "Invalid Request: MCP takes one message per line, not batches",
                        )),
                    }
                })
                .collect();
            // JSON-RPC: a batch of notifications alone is answered with nothing at all.
            if answers.is_empty() {
                Verdict::Drop
            } else {
                Verdict::Answer(Value::Array(answers))
            }
        }
        message => match check_message(message) {
            Check::Answer(answer) => Verdict::Answer(answer),
            Check::Drop => Verdict::Drop,
            // A host's response to chef's own request goes on as it is (JSON-RPC answers
            // no response); a request or notification is read for what serde hides.
            Check::Pass if message.get("method").is_none() => Verdict::Forward,
            Check::Pass => match oddity(line) {
                Some(odd) => refuse_oddity(message, odd),
                None => Verdict::Forward,
            },
        },
    }
}

/// Serves `stdin`/`stdout` through the check: returns the pair rmcp reads and writes. Ends
/// rmcp's input when `stdin` ends or fails.
pub(crate) fn front<R, W>(stdin: R, stdout: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_reads, mut to_rmcp) = tokio::io::duplex(1 << 16);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines, mut outbox) = mpsc::channel::<Vec<u8>>(64);

    // One writer: whole lines, in the order they were queued.
    tokio::spawn(async move {
        let mut stdout = stdout;
        while let Some(line) = outbox.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });

    // rmcp's output, line by line, to the writer.
    let from_rmcp_lines = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if from_rmcp_lines.send(line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });

    // The host's lines, checked.
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdin);
        loop {
            let line = match read_line(&mut reader).await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            let verdict = match line {
                Line::TooLong => Verdict::Answer(error(
                    Value::Null,
                    -32600,
                    format!(
                        "Invalid Request: the message is longer than {} MiB and was not read",
                        MAX_LINE / (1024 * 1024)
                    ),
                )),
                Line::Text(ref bytes) => check_line(bytes),
            };
            match verdict {
                Verdict::Skip | Verdict::Drop => {}
                Verdict::Answer(answer) => {
                    let mut out = serde_json::to_vec(&answer).unwrap_or_default();
                    out.push(b'\n');
                    if lines.send(out).await.is_err() {
                        break;
                    }
                }
                Verdict::Forward => {
                    let Line::Text(mut bytes) = line else {
                        continue;
                    };
                    bytes.push(b'\n');
                    if to_rmcp.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_rmcp.shutdown().await;
    });

    (rmcp_reads, rmcp_writes)
}

/// Streamable HTTP's front door, as an axum middleware on `/mcp`: a POST whose body fails
/// the same checks as a stdio line is answered `400` with the JSON-RPC error as its body
/// (rmcp answers `415` with plain text); a body over [`MAX_LINE`] bytes is answered `413`
/// with a JSON-RPC error. A session `DELETE` that rmcp accepts (`202`) is answered
/// `204 No Content`, the status MCP clients expect of a terminated session.
pub(crate) async fn http_front(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::{http::StatusCode, response::IntoResponse};
    let reply = |status: StatusCode, body: Value| {
        (
            status,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    match *request.method() {
        axum::http::Method::POST => {
            let (parts, body) = request.into_parts();
            let bytes = match tokio::time::timeout(
                BODY_TIMEOUT,
                axum::body::to_bytes(body, MAX_LINE),
            )
            .await
            {
                Ok(Ok(bytes)) => bytes,
                // A host that trickles its message holds a connection and its buffer.
                Err(_) => {
                    return reply(
                        StatusCode::REQUEST_TIMEOUT,
                        error(
                            Value::Null,
                            -32600,
                            format!(
                                "Invalid Request: the message did not arrive within {} s",
                                BODY_TIMEOUT.as_secs()
                            ),
                        ),
                    );
                }
                Ok(Err(_)) => {
                    return reply(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        error(
                            Value::Null,
                            -32600,
                            format!(
                                "Invalid Request: the message is longer than {} MiB and was not read",
                                MAX_LINE / (1024 * 1024)
                            ),
                        ),
                    );
                }
            };
            match check_line(&bytes) {
                Verdict::Answer(answer) => return reply(StatusCode::BAD_REQUEST, answer),
                // A notification is accepted with no body (streamable HTTP), even refused.
                Verdict::Drop => return StatusCode::ACCEPTED.into_response(),
                Verdict::Forward | Verdict::Skip => {}
            }
            let request = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
            next.run(request).await
        }
        axum::http::Method::DELETE => {
            let mut response = next.run(request).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            response
        }
        _ => next.run(request).await,
    }
}

enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// Reads one line (without its `\n`), at most [`MAX_LINE`] bytes; a longer one is read to
/// its end and dropped. `None` at the end of the input.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (true, false) => None,
                (_, true) => Some(Line::TooLong),
                (false, false) => Some(Line::Text(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (buf.get(..at).unwrap_or(buf), Some(at + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Line::Text(line)
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match check_line(line.as_bytes()) {
            Verdict::Answer(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// A request nested deeper than the parser goes is still answered with its id (the
    /// audit's host waited for it forever: it was answered `id: null`).
    #[test]
    fn a_request_too_deep_to_parse_is_answered_with_its_id() {
        let deep = format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200));
        for (line, id) in [
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{{"name":"x","arguments":{deep}}}}}"#
                ),
                json!(23),
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","params":{{"arguments":{deep},"id":9}},"id":"r\"1","method":"tools/call"}}"#
                ),
                json!("r\"1"),
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{deep}}}"#),
                Value::Null,
            ),
        ] {
            let a = answer(&line);
            assert_eq!(a["id"], id, "{a}");
            assert_eq!(a["error"]["code"], json!(-32600), "{a}");
        }
        assert_eq!(top_level_id(br#"{"a":{"id":1},"id":2}"#), Some(json!(2)));
        assert_eq!(top_level_id(br#"{"a":"id","b":[{"id":1}]}"#), None);
        assert_eq!(top_level_id(br#"{"id":{"x":1}}"#), None);
    }

    #[test]
    fn malformed_messages_get_the_spec_s_error_with_their_id() {
        let a = answer("this is not json");
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        for (line, id, code) in [
            (r#"{"jsonrpc":"2.0","id":7}"#, json!(7), -32600),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":1}"#,
                json!("x"),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}"#,
                json!(8),
                -32602,
            ),
            (
                r#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#,
                json!(9),
                -32600,
            ),
            (r#"{"id":9,"method":"tools/list"}"#, json!(9), -32600),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
                Value::Null,
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
                json!(1.5),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
                json!(12),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"x","arguments":"a=1"}}"#,
                json!(13),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"arguments":{}}}"#,
                json!(11),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":5}}"#,
                json!(12),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
                Value::Null,
                -32600,
            ),
            ("[]", Value::Null, -32600),
            ("5", Value::Null, -32600),
        ] {
            let a = answer(line);
            assert_eq!(a["jsonrpc"], "2.0", "{line}");
            assert_eq!(a["id"], id, "{line}");
            assert_eq!(a["error"]["code"], code, "{line}: {a}");
        }
        let batch = answer(
            r#"[{"jsonrpc":"2.0","id":10,"method":"tools/list"},{"jsonrpc":"2.0","method":"x"}]"#,
        );
        assert_eq!(batch[0]["id"], 10);
        assert_eq!(batch[0]["error"]["code"], -32600);
        // The batch's notification gets no element of the answer.
        assert_eq!(batch.as_array().map(Vec::len), Some(1), "{batch}");
    }

    /// JSON-RPC answers no notification: one whose params are wrong is dropped silently,
    /// and so is a batch of notifications alone; one too malformed to tell is answered.
    #[test]
    fn a_notification_is_never_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[1]}]"#,
        ] {
            assert_eq!(check_line(line.as_bytes()), Verdict::Drop, "{line}");
        }
        let a = answer(r#"{"jsonrpc":"2.0","method":"x","params":7}"#);
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
    }

    /// What serde reads without a word: a key twice (rmcp then answered without the id,
    /// and over HTTP with 415), integers wider than 64 bits (forwarded rounded), and ids
    /// past what rmcp reads (answered without the id) or echoed rounded.
    #[test]
    fn duplicate_keys_and_wide_integers_are_refused_with_the_id() {
        for (line, id, code, says) in [
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
                json!(3),
                -32600,
                "\"name\" appears twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{"x":{"k":1,"k":2}}}}"#,
                json!(4),
                -32600,
                "\"k\" appears twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","id":"b","method":"tools/list"}"#,
                json!("b"),
                -32600,
                "\"id\" appears twice",
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","arguments":{"n":123456789012345678901234}}}"#,
                json!(5),
                -32602,
                "123456789012345678901234 does not fit in 64 bits",
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"a","arguments":{"n":-99999999999999999999}}}"#,
                json!(6),
                -32602,
                "-99999999999999999999",
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/list"}"#,
                Value::Null,
                -32600,
                "2^63-1",
            ),
            (
                r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#,
                json!(9_223_372_036_854_775_808_u64),
                -32600,
                "2^63-1",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1e300,"method":"tools/list"}"#,
                Value::Null,
                -32600,
                "2^63-1",
            ),
        ] {
            let a = answer(line);
            assert_eq!(a["id"], id, "{line}: {a}");
            assert_eq!(a["error"]["code"], code, "{line}: {a}");
            let message = a["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{line}: {message}");
        }
        // Keys may repeat in different objects; big floats, exact u64s and escaped keys
        // that differ are fine; a notification is not answered.
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"name":{"name":1},"x":[{"k":1},{"k":2}],"f":1.5e300,"u":18446744073709551615,"s":"\"k\":1,\"k\":2 12345678901234567890123","k\u0031":1,"k1x":2}}}"#;
        assert_eq!(check_line(line.as_bytes()), Verdict::Forward, "{line}");
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1,"a":2}}"#),
            Verdict::Drop
        );
        // A response to chef's own request goes on as it is.
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","id":3,"result":{"a":1,"a":2}}"#),
            Verdict::Forward
        );
    }

    #[test]
    fn well_formed_messages_and_responses_go_through() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"foo/bar"}"#,
        ] {
            assert_eq!(check_line(line.as_bytes()), Verdict::Forward, "{line}");
        }
        assert_eq!(check_line(b"  \r"), Verdict::Skip);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_answered_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.push(b'\n');
        input.extend_from_slice(b"{\"a\":1}\r\n");
        let mut reader = BufReader::new(&input[..]);
        assert!(matches!(
            read_line(&mut reader).await.unwrap(),
            Some(Line::TooLong)
        ));
        assert!(
            matches!(read_line(&mut reader).await.unwrap(), Some(Line::Text(t)) if t == b"{\"a\":1}")
        );
        assert!(read_line(&mut reader).await.unwrap().is_none());
    }
}
