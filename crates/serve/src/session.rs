//! One client request as a chef session: the client's body read into the IR, the session
//! built from the config, each round compiled to upstream bytes, and each reply's tool calls
//! routed.

use chef::{Chef, ChefConfig, PrunePolicy, Routed};
use chef_ir::{Content, Message, Role, ToolCall, ToolCallId, ToolResult, WireNames};
use serde_json::{Map, Value};

use crate::{
    api::{Api, ApiError, Kind},
    config::{Config, Prune},
};

/// A client request read and turned into a session.
pub struct Prepared {
    /// The client's API.
    pub api: Api,
    /// The session: the client's tools, system prompt and history.
    pub chef: Chef,
    /// The top-level fields chef does not compile (`model`, `max_tokens`, `stream`, …), in
    /// the client's order, sent upstream as received (`tool_choice` adjusted to the wire
    /// tools).
    pub extras: Map<String, Value>,
    /// Whether the client asked for a stream.
    pub stream: bool,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("api", &self.api)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

fn invalid(api: Api, message: impl Into<String>) -> ApiError {
    ApiError::new(api, Kind::InvalidRequest, message)
}

/// The session configuration the gateway's config asks for.
pub fn chef_config(config: &Config) -> ChefConfig {
    let mut options = chef_compress::Options::new().with_level(config.level);
    if let Some(style) = config.map_style {
        options = options.with_map_style(style);
    }
    let prune = match &config.prune {
        Prune::All => PrunePolicy::All,
        Prune::ByTask => PrunePolicy::ByTask,
        Prune::Allowlist(names) => PrunePolicy::Allowlist {
            names: names.clone(),
        },
        Prune::Ranked { top_k, always_keep } => PrunePolicy::Ranked {
            top_k: *top_k,
            always_keep: always_keep.clone(),
        },
    };
    ChefConfig::default()
        .with_compress(options)
        .with_prune(prune)
        .with_cache(config.cache)
        .with_tool_change_announcements(config.announce_tool_changes)
}

/// Reads a client body and builds its session.
pub fn prepare(config: &Config, api: Api, body: &[u8]) -> Result<Prepared, ApiError> {
    prepare_with(config, api, body, |_| {})
}

/// [`prepare`], with a subscriber to the session's events from its start.
pub fn prepare_with(
    config: &Config,
    api: Api,
    body: &[u8],
    subscriber: impl Fn(&chef::ChefEvent) + Send + Sync + 'static,
) -> Result<Prepared, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| invalid(api, format!("the request body is not valid JSON: {e}")))?;
    let Value::Object(object) = &value else {
        return Err(invalid(api, "the request body must be a JSON object"));
    };
    let owned = api.owned_fields();
    let extras: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| !owned.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let stream = extras.get("stream").and_then(Value::as_bool) == Some(true);
    let request = match api {
        Api::Messages => {
            let parsed = chef_anthropic::parse_request_value(&value, &WireNames::default())
                .map_err(|e| invalid(api, e.to_string()))?;
            let mut request = parsed.request;
            // chef sessions have no prefill: the trailing assistant text goes back at the end
            // of the history, where the Messages API reads it as one.
            if let Some(prefill) = request.prefill.take() {
                request.messages.push(Message::assistant(prefill));
            }
            request
        }
        Api::Chat => {
            chef_openai::chat::parse_request(body).map_err(|e| invalid(api, e.to_string()))?
        }
        Api::Responses => {
            chef_openai::responses::parse_request(body).map_err(|e| invalid(api, e.to_string()))?
        }
    };
    if !request.native_tools.is_empty() {
        return Err(invalid(
            api,
            "provider-native tools (web search, code execution, …) are not supported by chef serve yet",
        ));
    }
    if request.tools.len() > config.max_tools {
        return Err(invalid(
            api,
            format!(
                "the request declares {} tools; the gateway accepts at most {} (limits.max_tools)",
                request.tools.len(),
                config.max_tools
            ),
        ));
    }
    let mut messages = request.messages;
    let lead = messages
        .iter()
        .take_while(|m| m.role == Role::System && !m.positional)
        .count();
    let history = messages.split_off(lead);
    let mut chef = Chef::new(chef_config(config));
    chef.subscribe(subscriber);
    chef.register_tools(request.tools)
        .map_err(|e| invalid(api, format!("the tools cannot be used: {e}")))?;
    chef.set_blocked_tools(config.blocked.iter().cloned());
    chef.set_system_prompt(messages);
    chef.set_history(history);
    let encoded = encode_history(&mut chef);
    chef.set_history(encoded);
    Ok(Prepared {
        api,
        chef,
        extras,
        stream,
    })
}

/// The history with every earlier call of a client tool written the way the model writes
/// it at this level (`t` with the tool's code at level 3, the namespace tool at level 2):
/// the client replays the real names the gateway gave it, and the model must see its own
/// calls as it made them, or it learns to call tools that are not on the wire.
fn encode_history(chef: &mut Chef) -> Vec<Message> {
    let mut history = chef.history().to_vec();
    let registered: std::collections::HashSet<String> = chef
        .pruner()
        .all_tools()
        .iter()
        .map(|t| t.name.as_str().to_owned())
        .collect();
    for message in &mut history {
        if message.role != Role::Assistant {
            continue;
        }
        for content in &mut message.content {
            let Content::ToolCall(call) = content else {
                continue;
            };
            if !registered.contains(call.name.as_str()) {
                continue;
            }
            if let Some(encoded) = chef.encode_call(call.name.as_str(), call.arguments.clone()) {
                call.name = encoded.name;
                call.arguments = encoded.arguments;
            }
        }
    }
    history
}

/// The upstream body of one round: chef's compiled body with the client's other fields
/// appended, in the client's order.
///
/// `tool_choice` naming a tool that is not on the wire this turn (at level 3 no real tool
/// is) becomes "some tool" (`"required"`, Anthropic `{"type":"any"}`); a named tool on the
/// wire is sent under its wire name.
pub fn upstream_body(
    api: Api,
    compiled: &[u8],
    payload_names: &WireNames,
    wire_tools: &[chef_ir::ToolName],
    extras: &Map<String, Value>,
    force_stream_usage: bool,
) -> Vec<u8> {
    let mut extras = extras.clone();
    if let Some(choice) = extras.get_mut("tool_choice") {
        adjust_tool_choice(api, choice, payload_names, wire_tools);
    }
    if force_stream_usage && api == Api::Chat {
        let options = extras
            .entry("stream_options")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(options) = options {
            options.insert("include_usage".to_owned(), Value::Bool(true));
        }
    }
    splice(compiled, &extras)
}

/// `body` (a JSON object) with `extras` appended as members.
pub fn splice(body: &[u8], extras: &Map<String, Value>) -> Vec<u8> {
    if extras.is_empty() {
        return body.to_vec();
    }
    let members = serde_json::to_vec(extras).unwrap_or_else(|_| b"{}".to_vec());
    // `members` is `{…}`: its inside goes before `body`'s closing brace.
    let inner = members
        .get(1..members.len().saturating_sub(1))
        .unwrap_or_default();
    let Some(close) = body.iter().rposition(|&b| b == b'}') else {
        return body.to_vec();
    };
    let head = body.get(..close).unwrap_or_default();
    let empty = head.iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let mut out = Vec::with_capacity(body.len() + inner.len() + 1);
    out.extend_from_slice(head);
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(inner);
    out.push(b'}');
    out
}

fn adjust_tool_choice(
    api: Api,
    choice: &mut Value,
    names: &WireNames,
    wire_tools: &[chef_ir::ToolName],
) {
    let named = match api {
        Api::Chat => choice.pointer("/function/name"),
        Api::Responses => choice
            .get("name")
            .filter(|_| choice.get("type").and_then(Value::as_str) == Some("function")),
        Api::Messages => choice
            .get("name")
            .filter(|_| choice.get("type").and_then(Value::as_str) == Some("tool")),
    };
    let Some(name) = named.and_then(Value::as_str).map(str::to_owned) else {
        return;
    };
    let on_wire = wire_tools.iter().any(|t| t.as_str() == name);
    if on_wire {
        let wire = names.to_wire(&name).to_owned();
        let slot = match api {
            Api::Chat => choice.pointer_mut("/function/name"),
            Api::Responses | Api::Messages => choice.get_mut("name"),
        };
        if let Some(slot) = slot {
            *slot = Value::String(wire);
        }
        return;
    }
    *choice = match api {
        Api::Chat | Api::Responses => Value::String("required".to_owned()),
        Api::Messages => serde_json::json!({"type": "any"}),
    };
}

/// What the gateway does with one call of the model's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Back to the client under the real name with validated arguments.
    Client {
        /// The real tool name.
        name: String,
        /// The validated arguments.
        arguments: Value,
    },
    /// Answered inside the gateway with this reply.
    Internal {
        /// The reply for the model.
        reply: String,
        /// Whether it reports a failure.
        is_error: bool,
        /// `lookup`, `error`, `blocked`, `toolkit` or `owned` (metrics, logs).
        outcome: &'static str,
    },
}

/// Routes every call of `message` through the session.
pub fn route_all(chef: &mut Chef, message: &Message) -> Vec<(ToolCallId, Decision)> {
    let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
    calls
        .into_iter()
        .map(|call| {
            let decision = match chef.route(&call) {
                Routed::Call(routed) => Decision::Client {
                    name: routed.name.as_str().to_owned(),
                    arguments: routed.arguments,
                },
                Routed::Owned(owned) => Decision::Internal {
                    reply: format!(
                        "The tool {} is not available through this gateway.",
                        owned.name
                    ),
                    is_error: true,
                    outcome: "owned",
                },
                other => {
                    let outcome = match &other {
                        Routed::Lookup { .. } => "lookup",
                        Routed::Blocked { .. } => "blocked",
                        Routed::ToolkitLoaded { .. } => "toolkit",
                        _ => "error",
                    };
                    Decision::Internal {
                        reply: other.reply().unwrap_or_default().to_owned(),
                        is_error: other.is_error(),
                        outcome,
                    }
                }
            };
            (call.id, decision)
        })
        .collect()
}

/// Whether a round's calls are all answered inside the gateway (so another round is due).
pub fn all_internal(decisions: &[(ToolCallId, Decision)]) -> bool {
    !decisions.is_empty()
        && decisions
            .iter()
            .all(|(_, d)| matches!(d, Decision::Internal { .. }))
}

/// The tool message answering an internal round.
pub fn internal_results(decisions: &[(ToolCallId, Decision)]) -> Message {
    let results = decisions
        .iter()
        .filter_map(|(id, d)| match d {
            Decision::Internal {
                reply, is_error, ..
            } => Some(if *is_error {
                ToolResult::error(id.clone(), reply.clone())
            } else {
                ToolResult::text(id.clone(), reply.clone())
            }),
            Decision::Client { .. } => None,
        })
        .collect();
    Message::tool_results(results)
}

/// Parses an upstream reply (whole, or assembled from a stream) into the IR.
pub fn parse_reply(api: Api, raw: &Value, names: &WireNames) -> Result<Message, ApiError> {
    let bytes = serde_json::to_vec(raw).unwrap_or_default();
    let bad = |e: String| {
        ApiError::new(
            api,
            Kind::Upstream,
            format!("the upstream reply could not be read: {e}"),
        )
    };
    match api {
        Api::Messages => chef_anthropic::parse_response_value(raw, names)
            .map(|p| p.message)
            .map_err(|e| bad(e.to_string())),
        Api::Chat => chef_openai::chat::parse_response(&bytes, names)
            .map(|p| p.message)
            .map_err(|e| bad(e.to_string())),
        Api::Responses => chef_openai::responses::parse_response(&bytes, names)
            .map(|p| p.message)
            .map_err(|e| bad(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn splice_appends_members_in_order() {
        let mut extras = Map::new();
        extras.insert("model".to_owned(), Value::from("m"));
        extras.insert("stream".to_owned(), Value::from(false));
        assert_eq!(
            splice(br#"{"messages":[]}"#, &extras),
            br#"{"messages":[],"model":"m","stream":false}"#.to_vec()
        );
        assert_eq!(
            splice(b"{}", &extras),
            br#"{"model":"m","stream":false}"#.to_vec()
        );
        assert_eq!(splice(b"{}", &Map::new()), b"{}".to_vec());
    }
}
