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

/// A discovery session over a catalogue with a dotted and a non-ASCII name, blocking the
/// non-ASCII one, asked about invoices.
fn invoices() -> Chef {
    let tool = |name: &str, description: &str, schema: serde_json::Value| {
        ToolDefinition::new(name, schema).with_description(description)
    };
    let mut tools = vec![
        tool(
            "café_send",
            "Send a café order to the kitchen.",
            json!({"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}),
        ),
        tool(
            "billing.invoice_create",
            "Create an invoice for a customer.",
            json!({"type": "object", "properties": {"customer": {"type": "string"}, "amount": {"type": "number"}}, "required": ["customer", "amount"]}),
        ),
        tool(
            "billing.invoice_void",
            "Void an invoice.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
    ];
    for i in 0..12 {
        tools.push(tool(
            &format!("tool_{i}"),
            &format!("Does unrelated thing number {i} with widgets."),
            json!({"type": "object", "properties": {}}),
        ));
    }
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::One)
            .with_prune(chef::PrunePolicy::discover(3)),
    );
    chef.register_tools(tools).unwrap();
    chef.tools_mut().set_blocked(["café_send"]);
    chef.push(Message::user("make an invoice for ACME of 30 dollars"));
    chef
}

fn reply_of(routed: &Routed) -> &str {
    match routed {
        Routed::Blocked { reply, .. }
        | Routed::Error { reply, .. }
        | Routed::Lookup { reply, .. } => reply,
        other => panic!("expected a reply for the model, got {other:?}"),
    }
}

/// The texts written for the model name a tool as the list it answered did: by the wire
/// name the latest compile's target gave it (`billing_invoice_create` under OpenAI's rule,
/// the dotted name under Gemini's, `cafe_send` for `café_send`), while the outcome's
/// fields keep the real name for the program.
#[test]
fn refusals_and_search_answers_name_tools_as_the_model_saw_them() {
    let mut chef = invoices();
    chef.compile(Target::OpenAiChat).unwrap();
    let find = chef.route(&ToolCall::new(
        "c1",
        "find_tools",
        json!({"query": "void an invoice"}),
    ));
    let text = reply_of(&find);
    assert!(text.contains("- billing_invoice_void(id)"), "{text}");
    assert!(text.contains("- billing_invoice_create("), "{text}");
    assert!(!text.contains("billing.invoice"), "{text}");

    let blocked = chef.route(&ToolCall::new("c2", "cafe_send", json!({"item": "tea"})));
    assert!(
        matches!(&blocked, Routed::Blocked { name, .. } if name == "café_send"),
        "{blocked:?}"
    );
    assert_eq!(
        reply_of(&blocked),
        "Tool \"cafe_send\" is currently blocked."
    );

    let missing = ToolCall::new("c3", "billing_invoice_create", json!({"customer": "ACME"}));
    let refused = chef.route(&missing);
    match &refused {
        Routed::Error {
            error: RouteError::Resolve(ResolveError::InvalidArguments(problem)),
            ..
        } => assert_eq!(problem.tool, "billing.invoice_create"),
        other => panic!("{other:?}"),
    }
    assert!(
        reply_of(&refused).contains("for billing_invoice_create."),
        "{}",
        reply_of(&refused)
    );
    // The same call in a later reply gets the shorter correction, named the same way.
    chef.push(Message::assistant_with(vec![chef_ir::Content::ToolCall(
        missing.clone(),
    )]));
    let again = chef.route(&missing);
    assert!(
        reply_of(&again).contains("billing_invoice_create takes")
            || reply_of(&again).contains("billing_invoice_create("),
        "{}",
        reply_of(&again)
    );
    assert!(!reply_of(&again).contains("billing.invoice"));

    let slip = chef.check_tool_call(&ToolCall::new(
        "c4",
        "billing_invoice_creat",
        json!({"customer": "a", "amount": 1}),
    ));
    assert!(
        reply_of(&slip).ends_with("Did you mean \"billing_invoice_create\"?"),
        "{}",
        reply_of(&slip)
    );

    // Gemini keeps the dot, so its texts do too.
    chef.compile(Target::Gemini).unwrap();
    let refused = chef.check_tool_call(&ToolCall::new(
        "c5",
        "billing.invoice_create",
        json!({"customer": "ACME"}),
    ));
    assert!(
        reply_of(&refused).contains("for billing.invoice_create."),
        "{}",
        reply_of(&refused)
    );
}

/// A search lists no tool scoring under a tenth of its best: in a small catalogue the
/// unrelated tail would otherwise fill its places and join the model's list.
#[test]
fn a_search_does_not_list_an_unrelated_tail() {
    let mut chef = invoices();
    chef.compile(Target::OpenAiChat).unwrap();
    let find = chef.route(&ToolCall::new(
        "c1",
        "find_tools",
        json!({"query": "void an invoice", "limit": 10}),
    ));
    let listed: Vec<&str> = reply_of(&find)
        .lines()
        .filter(|l| l.starts_with("- "))
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    let searched: Vec<String> = chef
        .tools()
        .search("void an invoice", 10)
        .into_iter()
        .map(|(t, _)| t.name.as_str().to_owned())
        .collect();
    assert_eq!(
        searched,
        ["billing.invoice_void", "billing.invoice_create"],
        "{searched:?}"
    );
}
