//! Errors keep their typed cause: a program can match on what went wrong, and
//! `Error::source` walks to the provider crate's or the resolver's own error.

use std::error::Error as _;

use chef::{Chef, ChefConfig, ChefError, ProviderError, RouteError, Routed};
use chef_compress::ResolveError;
use chef_ir::{Content, Message, Role, Target, ToolCall, ToolDefinition};
use serde_json::json;

fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(vec![ToolDefinition::new(
        "read_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )])
    .unwrap();
    chef.push(Message::user("Read the file."));
    chef
}

fn route_error(chef: &mut Chef, call: ToolCall) -> (RouteError, String) {
    match chef.route(&call) {
        Routed::Error { error, reply, .. } => (error, reply),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_resolver_refusal_is_the_resolvers_typed_error() {
    let mut chef = session();
    chef.compile(Target::Anthropic).unwrap();

    let (error, reply) = route_error(&mut chef, ToolCall::new("c1", "raed_file", json!({})));
    let RouteError::Resolve(ResolveError::UnknownTool { name, .. }) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(name, "raed_file");
    // What the model reads is the resolver's own message, with the name it meant.
    assert_eq!(format!("{error} Did you mean \"read_file\"?"), reply);

    let (error, reply) = route_error(
        &mut chef,
        ToolCall::new("c2", "read_file", json!({"path": 3})),
    );
    let RouteError::Resolve(ResolveError::InvalidArguments(e)) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(e.tool.as_str(), "read_file");
    assert_eq!(error.to_string(), reply);
    assert_eq!(error.clone(), error);
}

#[test]
fn a_provider_failure_keeps_the_provider_crates_error_as_its_source() {
    let mut chef = session();
    // Anthropic's system slot holds text only.
    chef.set_system_prompt(vec![Message::new(
        Role::System,
        vec![Content::Unknown {
            target: None,
            value: json!({"type": "chart"}),
        }],
    )]);
    let error = chef.compile(Target::Anthropic).unwrap_err();
    let ChefError::Provider { target, source } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(*target, Target::Anthropic);
    assert!(
        matches!(
            source,
            ProviderError::Anthropic(chef_anthropic::Error::SystemContent { index: 0, .. })
        ),
        "{source:?}"
    );
    // The chain reaches the provider crate's error, and the text names both.
    let cause = error.source().unwrap();
    assert!(cause.downcast_ref::<ProviderError>().is_some());
    assert!(
        error
            .to_string()
            .starts_with("cannot compile for anthropic: "),
        "{error}"
    );
    assert!(error.to_string().contains("system message 0"), "{error}");
    // A failed compile changes nothing: the turn counter stays.
    assert_eq!(chef.turn(), 0);
}

/// Issue 26: the tool an error is about is a field of the outcome, at every level and
/// through every route (a dispatcher code, a real name, a namespace member, a tool no
/// longer offered), never only inside the reply's text.
#[test]
fn an_error_about_a_tool_names_it_as_a_field() {
    for level in [
        chef_compress::Level::Zero,
        chef_compress::Level::One,
        chef_compress::Level::Three,
    ] {
        let mut chef = Chef::new(ChefConfig::default().with_level(level));
        chef.register_tools(vec![ToolDefinition::new(
            "files.read",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        )])
        .unwrap();
        chef.push(Message::user("Read the file."));
        chef.compile(Target::OpenAiChat).unwrap();
        let bad = chef
            .tools()
            .encode_call("files.read", json!({"path": 3}))
            .unwrap();
        let routed = chef.route(&bad);
        assert!(routed.is_error(), "{level}: {routed:?}");
        assert_eq!(routed.tool(), Some("files.read"), "{level}: {routed:?}");
        let Routed::Error { error, .. } = &routed else {
            panic!("{routed:?}");
        };
        assert_eq!(error.tool(), Some("files.read"));
        // A call that reaches no tool names none.
        let unknown = chef.route(&ToolCall::new("c9", "nothing_like_it", json!({})));
        assert!(unknown.is_error());
        assert_eq!(unknown.tool(), None, "{level}");
        // A dispatched call names its tool too.
        let good = chef
            .tools()
            .encode_call("files.read", json!({"path": "/x"}))
            .unwrap();
        assert_eq!(chef.route(&good).tool(), Some("files.read"));
    }
}

#[test]
fn a_tool_no_longer_offered_is_named_by_the_error() {
    let mut chef = session();
    chef.compile(Target::Anthropic).unwrap();
    chef.register_tools(vec![ToolDefinition::new(
        "read_file",
        json!({"type": "object", "properties": {"file": {"type": "string"}}}),
    )])
    .unwrap();
    let (error, _) = route_error(
        &mut chef,
        ToolCall::new("c1", "read_file", json!({"path": "/x"})),
    );
    assert!(
        matches!(error, RouteError::ToolListChanged { .. }),
        "{error:?}"
    );
    assert_eq!(error.tool(), Some("read_file"));
}

/// One tool compression cannot take is refused when it is registered, naming it, and the
/// registry is left as it was. Taken, it failed every later compile on every target, and
/// `route` of a healthy tool said the tool list could not be prepared (found by session
/// 41's library audit). Namespaces and toolkits are checked the same way.
#[test]
fn a_tool_compression_cannot_take_is_refused_at_registration() {
    use chef::{ToolGroup, ir::Target};

    let mut deep = json!({"type": "object"});
    for _ in 0..70 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let bad = [
        ("rejects_all", json!(false)),
        ("a_string", json!("object")),
        ("an_array", json!([1])),
        ("string_args", json!({"type": "string"})),
        ("too_deep", deep),
        (&*"n".repeat(2000), json!({"type": "object"})),
    ];
    for (name, schema) in bad {
        let mut chef = session();
        let before = chef.compile(Target::OpenAiChat).unwrap().body;
        let mut tools = vec![ToolDefinition::new(
            "get_weather",
            json!({"type": "object"}),
        )];
        tools.push(ToolDefinition::new(name, schema.clone()));
        let error = chef.register_tools(tools.clone()).unwrap_err();
        let shown = &name[..name.len().min(12)];
        assert!(
            matches!(error, chef::ChefError::Compress(_)),
            "{shown}: {error:?}"
        );
        assert_eq!(
            chef.compile(Target::OpenAiChat).unwrap().body,
            before,
            "{shown}: the registry is unchanged"
        );
        let group = ToolGroup::new("kit", "A kit.", tools);
        assert!(
            chef.tools_mut()
                .register_toolkits(vec![group.clone()])
                .is_err(),
            "{shown}"
        );
        assert!(
            chef.tools_mut().register_namespaces(vec![group]).is_err(),
            "{shown}"
        );
    }
}
