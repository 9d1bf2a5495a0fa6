//! One session, four providers: the same state compiled for Anthropic Messages, OpenAI Chat
//! Completions, OpenAI Responses and Gemini, and a scripted reply from each parsed back to
//! the provider-neutral IR and routed through the one dispatch entry point.
//!
//! Run with `cargo run -p chef-examples --example providers_side_by_side`. Offline: the
//! replies are fixed JSON bodies in each provider's shape, as the API would send them.
//! `cargo test -p chef-examples` runs it too and fails if anything it shows stops holding.
//!
//! What it shows, each step checked:
//! - each request body (the first characters) and its size;
//! - tool names a provider refuses (`weather.current` has a dot) are renamed on the wire
//!   and mapped back when the reply is parsed, so routing sees the real name;
//! - every provider's reply comes back as the same IR tool call and routes to the same
//!   validated `Routed::Call`;
//! - compiling the same state twice gives the same bytes.

mod common;

use chef::{Chef, ChefConfig, Routed, TargetOptions};
use chef_ir::{Message, Target, ToolCall, ToolDefinition, WireNames};
use serde_json::{Value, json};

use common::{Error, ensure};

fn session() -> Result<Chef, Error> {
    let mut targets = TargetOptions::default();
    targets.anthropic = chef_anthropic::CompileOptions::default()
        .with_model("claude-sonnet-4-5")
        .with_max_tokens(1024);
    let mut chef = Chef::new(ChefConfig::default().with_targets(targets));
    chef.register_tools(vec![
        ToolDefinition::new(
            "weather.current",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Oslo."},
                    "units": {"type": "string", "enum": ["metric", "imperial"]}
                },
                "required": ["city"]
            }),
        )
        .with_description("Current weather for a city. Data refreshes every ten minutes."),
        ToolDefinition::new(
            "calendar.create_event",
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "start": {"type": "string", "format": "date-time"}
                },
                "required": ["title", "start"]
            }),
        )
        .with_description("Create an event in the user's calendar."),
    ])?;
    chef.set_system_prompt(vec![Message::system("You are a concise assistant.")]);
    chef.push(Message::user("What's the weather in Oslo right now?"));
    Ok(chef)
}

/// The reply each API would send when the model calls `wire_name` with `args`.
fn scripted_reply(target: Target, wire_name: &str, args: &Value) -> Result<Vec<u8>, Error> {
    let args_text = serde_json::to_string(args)?;
    let reply = match target {
        Target::Anthropic => json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": wire_name, "input": args}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 412, "output_tokens": 31}
        }),
        Target::OpenAiChat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-x",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_1", "type": "function",
                                    "function": {"name": wire_name, "arguments": args_text}}]
                },
                "finish_reason": "tool_calls"
            }],
            "usage": {"prompt_tokens": 398, "completion_tokens": 20, "total_tokens": 418}
        }),
        Target::OpenAiResponses => json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-x",
            "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                        "name": wire_name, "arguments": args_text, "status": "completed"}],
            "usage": {"input_tokens": 401, "output_tokens": 22, "total_tokens": 423}
        }),
        Target::Gemini => json!({
            "candidates": [{
                "content": {"role": "model",
                            "parts": [{"functionCall": {"name": wire_name, "args": args}}]},
                "finishReason": "STOP"
            }],
            "usageMetadata": {"promptTokenCount": 405, "candidatesTokenCount": 18}
        }),
    };
    Ok(serde_json::to_vec(&reply)?)
}

/// Parses a reply with the provider crate of `target`, mapping wire names back.
fn parse_reply(
    target: Target,
    bytes: &[u8],
    names: &WireNames,
    history: &[Message],
) -> Result<Message, Error> {
    Ok(match target {
        Target::Anthropic => chef_anthropic::parse_response(bytes, names)?.message,
        Target::OpenAiChat => chef_openai::chat::parse_response(bytes, names)?.message,
        Target::OpenAiResponses => chef_openai::responses::parse_response(bytes, names)?.message,
        Target::Gemini => chef_gemini::parse_response(bytes, names, history)?.message,
    })
}

/// The first `max` characters of a body, on one line.
fn trimmed(body: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(body);
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// One target's row: the target, body size, the wire name of `weather.current`, the call
/// as parsed, and what routing made of it.
#[derive(Debug)]
struct Row {
    target: Target,
    bytes: usize,
    wire_name: String,
    parsed: ToolCall,
    routed: Routed,
}

fn run() -> Result<(Vec<String>, Vec<Row>), Error> {
    let mut chef = session()?;
    let mut log = Vec::new();
    let mut rows = Vec::new();
    let args = json!({"city": "Oslo", "units": "metric"});
    for target in Target::ALL {
        let payload = chef.compile(target)?;
        let again = chef.compile(target)?;
        ensure(
            payload.body == again.body,
            format!("{target}: the same state compiled to different bytes"),
        )?;
        let wire_name = payload.names.to_wire("weather.current").to_owned();
        log.push(format!(
            "== {target}: {} bytes; weather.current is sent as {wire_name:?}",
            payload.body.len()
        ));
        log.push(format!("   {}", trimmed(&payload.body, 220)));
        for notice in &payload.notices {
            log.push(format!("   notice: {notice}"));
        }

        let reply = scripted_reply(target, &wire_name, &args)?;
        let message = parse_reply(target, &reply, &payload.names, chef.history())?;
        let parsed = message
            .tool_calls()
            .next()
            .cloned()
            .ok_or_else(|| format!("{target}: the reply parsed without a tool call"))?;
        let routed = chef.route(&parsed);
        let outcome = match &routed {
            Routed::Call(c) => format!("Routed::Call {}({})", c.name, c.arguments),
            other => format!("{other:?}"),
        };
        log.push(format!(
            "   reply ({} bytes) -> IR call {}({}) id {} -> {outcome}",
            reply.len(),
            parsed.name,
            parsed.arguments,
            parsed.id.as_str()
        ));
        rows.push(Row {
            target,
            bytes: payload.body.len(),
            wire_name,
            parsed,
            routed,
        });
    }

    for row in &rows {
        ensure(
            row.parsed.name == "weather.current" && row.parsed.arguments == args,
            format!("{}: parsed {:?}", row.target, row.parsed),
        )?;
        let Routed::Call(call) = &row.routed else {
            return Err(format!("{}: routed to {:?}", row.target, row.routed).into());
        };
        ensure(
            call.name == "weather.current" && call.arguments == args,
            format!("{}: routed call {call:?}", row.target),
        )?;
    }
    log.push(String::new());
    log.push(format!("{:<18} {:>7}  wire name", "target", "bytes"));
    for row in &rows {
        log.push(format!(
            "{:<18} {:>7}  {}",
            row.target.as_str(),
            row.bytes,
            row.wire_name
        ));
    }
    Ok((log, rows))
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?.0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use chef::Routed;
    use chef_ir::Target;

    #[test]
    fn every_provider_round_trips_to_the_same_routed_call() {
        let (log, rows) = super::run().unwrap();
        assert_eq!(rows.len(), 4, "{log:?}");
        for row in &rows {
            assert!(matches!(&row.routed, Routed::Call(c) if c.name == "weather.current"));
            assert!(row.bytes > 0);
        }
        let wire = |t: Target| {
            rows.iter()
                .find(|r| r.target == t)
                .unwrap()
                .wire_name
                .clone()
        };
        // Anthropic and OpenAI refuse dots in tool names; the table renames and maps back.
        assert_eq!(wire(Target::Anthropic), "weather_current");
        assert_eq!(wire(Target::OpenAiChat), "weather_current");
        assert_eq!(wire(Target::OpenAiResponses), "weather_current");
        let text = log.join("\n");
        assert!(text.contains("== anthropic: "), "{text}");
        assert!(
            text.contains(r#"{"model":"claude-sonnet-4-5","max_tokens":1024"#),
            "{text}"
        );
    }
}
