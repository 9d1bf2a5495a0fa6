//! Issue 26: `route` reads the names the latest compile's target put on the wire (a call
//! recovered from text, or built from the raw reply, carries the wire name, not the real
//! one) and refuses a wire name that could mean two tools.

use chef::{Chef, ChefConfig, RouteError, Routed};
use chef_compress::{Level, ResolveError};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::json;

use crate::support::{asked_at, one_tool_group};

fn odd_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "timezone.convert",
            json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}),
        ),
        ToolDefinition::new(
            "files/read",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
    ]
}

fn session(level: Level) -> Chef {
    asked_at(level, odd_tools(), "what time is it in Oslo?")
}

#[track_caller]
fn expect_call(routed: Routed, name: &str) {
    match routed {
        Routed::Call(c) => assert_eq!(c.name.as_str(), name),
        other => panic!("expected a call to {name}, got {other:?}"),
    }
}

#[test]
fn route_reads_the_wire_names_of_the_latest_compile() {
    for level in [Level::Zero, Level::One] {
        let mut chef = session(level);
        let tz = ToolCall::new("c1", "timezone_convert", json!({"tz": "Europe/Oslo"}));
        let read = ToolCall::new("c2", "files_read", json!({"path": "/tmp/x"}));
        // Before any compile there is no wire table: the sanitised name is unknown.
        assert!(matches!(chef.route(&tz), Routed::Error { .. }));
        for target in [
            Target::OpenAiChat,
            Target::OpenAiResponses,
            Target::Anthropic,
        ] {
            let payload = chef.compile(target).unwrap();
            assert_eq!(
                payload.names.to_wire("timezone.convert"),
                "timezone_convert"
            );
            expect_call(chef.route(&tz), "timezone.convert");
            expect_call(chef.route(&read), "files/read");
            expect_call(chef.check_tool_call(&tz), "timezone.convert");
            // Real names still route.
            let real = ToolCall::new("c3", "timezone.convert", json!({"tz": "UTC"}));
            expect_call(chef.route(&real), "timezone.convert");
        }
        // Gemini keeps the dot: `timezone_convert` is no wire name of its compile.
        let payload = chef.compile(Target::Gemini).unwrap();
        assert_eq!(
            payload.names.to_wire("timezone.convert"),
            "timezone.convert"
        );
        expect_call(chef.route(&read), "files/read");
        assert!(matches!(chef.route(&tz), Routed::Error { .. }));
    }
}

#[test]
fn request_sets_the_wire_names_route_reads_too() {
    let mut chef = session(Level::One);
    chef.request(Target::OpenAiChat).unwrap();
    let tz = ToolCall::new("c1", "timezone_convert", json!({"tz": "UTC"}));
    expect_call(chef.route(&tz), "timezone.convert");
}

#[test]
fn a_gated_tool_is_blocked_under_its_wire_name_too() {
    let mut chef = session(Level::One);
    chef.tools_mut().set_blocked(["timezone.convert"]);
    chef.compile(Target::OpenAiChat).unwrap();
    // Bad arguments too: the gate comes before validation.
    let tz = ToolCall::new("c1", "timezone_convert", json!({}));
    assert!(matches!(chef.route(&tz), Routed::Blocked { .. }));
}

/// A level-3 session with a map tool `a_b` and, loaded and compiled, a toolkit tool `a.b`
/// (sent on the wire as `a_b`), and that compile.
fn map_tool_beside_loaded_toolkit_tool() -> (Chef, chef::Payload) {
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    chef.register_tools(vec![ToolDefinition::new("a_b", json!({"type": "object"}))])
        .unwrap();
    chef.tools_mut()
        .register_toolkits(vec![one_tool_group("kit", "a.b")])
        .unwrap();
    chef.push(Message::user("go"));
    chef.compile(Target::OpenAiChat).unwrap();
    let load = ToolCall::new("c0", "load_toolkit", json!({"toolkit_name": "kit"}));
    assert!(matches!(chef.route(&load), Routed::ToolkitLoaded { .. }));
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    (chef, payload)
}

#[test]
fn a_toolkit_tool_s_wire_name_that_is_also_a_map_tool_is_refused_naming_both() {
    let (mut chef, payload) = map_tool_beside_loaded_toolkit_tool();
    // The toolkit's tool goes on the wire beside `t` and `q`, renamed; the map's `a_b`
    // is not on the wire, so the table gives `a.b` the name `a_b`.
    assert_eq!(payload.names.to_wire("a.b"), "a_b");
    match chef.route(&ToolCall::new("c1", "a_b", json!({}))) {
        Routed::Error {
            error: RouteError::Resolve(e),
            reply,
            ..
        } => {
            assert_eq!(
                e,
                ResolveError::AmbiguousWireName {
                    name: "a_b".to_owned(),
                    wire_of: "a.b".to_owned(),
                    reaches: "a_b".to_owned(),
                }
            );
            assert!(
                reply.contains("\"a.b\"") && reply.contains("\"a_b\""),
                "{reply}"
            );
        }
        other => panic!("expected an ambiguity error, got {other:?}"),
    }
    // Unambiguous routes still reach each tool: the map tool by its code, the toolkit tool
    // by its real name.
    let code = chef.tools().code_for("a_b").unwrap();
    expect_call(
        chef.route(&ToolCall::new("c2", "t", json!({"f": code}))),
        "a_b",
    );
    expect_call(chef.route(&ToolCall::new("c3", "a.b", json!({}))), "a.b");
}

#[test]
fn an_ambiguous_wire_name_involving_a_blocked_tool_is_blocked_not_explained() {
    for blocked in ["a.b", "a_b", "A-B"] {
        let (mut chef, _) = map_tool_beside_loaded_toolkit_tool();
        chef.tools_mut().set_blocked([blocked]);
        match chef.route(&ToolCall::new("c1", "a_b", json!({}))) {
            Routed::Blocked { name, reply, .. } => {
                // Blocklist entries match ignoring separators, so either entry blocks both.
                assert!(name == "a.b" || name == "a_b", "{name}");
                assert!(!reply.contains("could mean"), "{reply}");
            }
            other => panic!("expected Blocked for {blocked}, got {other:?}"),
        }
    }
}
