//! The session: compile, announcements, memory through owned tools, toolkits, snapshots.

use chef::{
    Channel, Chef, ChefConfig, MemoryPlacement, PrunePolicy, Routed, ToolGroup, ToolsMode,
    memory::{Memory, SetOptions},
};
use chef_compress::Level;
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::{Value, json};

use crate::{
    fixtures::real_tools,
    support::{handoff_config, wire_names},
};

fn body(chef: &mut Chef, target: Target) -> Value {
    serde_json::from_slice(&chef.compile(target).unwrap().body).unwrap()
}

/// The part of a request a provider caches: tools, the system slot, and every message
/// before the final user turn.
fn cached_prefix(target: Target, body: &Value) -> (Value, Value, Vec<Value>) {
    let (system, messages) = match target {
        Target::Anthropic => (body["system"].clone(), body["messages"].clone()),
        Target::OpenAiChat => (Value::Null, body["messages"].clone()),
        Target::OpenAiResponses => (body["instructions"].clone(), body["input"].clone()),
        Target::Gemini => (body["systemInstruction"].clone(), body["contents"].clone()),
    };
    let messages = messages.as_array().cloned().unwrap_or_default();
    (body["tools"].clone(), system, messages)
}

fn stable_chef(level: Level, placement: MemoryPlacement) -> Chef {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(level)
            .with_memory_placement(placement)
            .with_tool_change_announcements(true),
    )
    .with_memory(Memory::new());
    chef.register_tools(real_tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You are the logistics agent.")]);
    chef
}

/// Announcements, memory, the blocklist, dynamic state and injected context all change
/// every turn.
#[test]
fn fifty_turns_never_move_the_cached_prefix() {
    for target in Target::ALL {
        let mut chef = stable_chef(Level::Three, MemoryPlacement::BeforeHistoryTail);
        let mut previous: Option<(Value, Value, Vec<Value>)> = None;
        for turn in 0..50 {
            chef.push(Message::user(format!("Request number {turn}")));
            // Volatile state changes every turn.
            chef.announce(
                "progress",
                format!("{turn} requests handled"),
                Channel::Auto,
            );
            if turn % 3 == 0 {
                chef.announce("note", "a standing note", Channel::UserTail);
            } else {
                chef.retract_announcement("note");
            }
            chef.memory_mut()
                .unwrap()
                .set("last_request", format!("{turn}"), SetOptions::new())
                .unwrap();
            if turn % 2 == 0 {
                chef.tools_mut().set_blocked(["active_locations"]);
            } else {
                chef.tools_mut().set_blocked(Vec::<String>::new());
            }
            // So do the dynamic state and the injected context (default placement).
            chef.layers_mut()
                .set_dynamic_state(
                    &serde_json::json!({"turn": turn, "open": ["a.rs"]}),
                    chef::dynamic::Placement::LastUser,
                )
                .unwrap();
            chef.layers_mut().add_injector(
                "rag",
                move |_: &chef::dynamic::InjectionView<'_>, out: &mut chef::dynamic::Injections| {
                    out.push(format!("retrieved for request {turn}"));
                    Ok(())
                },
            );
            let now = cached_prefix(target, &body(&mut chef, target));
            if let Some((tools, system, messages)) = &previous {
                assert_eq!(tools, &now.0, "{target} turn {turn}: tools moved");
                assert_eq!(system, &now.1, "{target} turn {turn}: system moved");
                // Everything before the previous request's final user turn is unchanged.
                let keep = messages.len().saturating_sub(2);
                assert_eq!(
                    &messages[..keep],
                    &now.2[..keep],
                    "{target} turn {turn}: history prefix moved"
                );
            }
            previous = Some(now);
            chef.push(Message::assistant(format!("Done with {turn}.")));
        }
    }
}

#[test]
fn the_same_state_compiles_to_the_same_bytes() {
    for target in Target::ALL {
        let build = || {
            let mut chef = stable_chef(Level::One, MemoryPlacement::AfterSystem);
            chef.push(Message::user("hello"));
            chef.announce("a", "one", Channel::Auto);
            chef
        };
        let a = build().compile(target).unwrap().body;
        let b = build().compile(target).unwrap().body;
        assert_eq!(a, b, "{target}");
    }
}

#[test]
fn shuffled_registration_order_compiles_to_the_same_bytes() {
    for level in [Level::One, Level::Three] {
        let mut tools = real_tools();
        let mut a = stable_chef(level, MemoryPlacement::AfterSystem);
        a.push(Message::user("hi"));
        tools.reverse();
        let mut b = stable_chef(level, MemoryPlacement::AfterSystem);
        b.register_tools(tools).unwrap();
        b.push(Message::user("hi"));
        if level == Level::Three {
            // Compression sorts tools: order of registration carries no meaning.
            assert_eq!(
                a.compile(Target::Anthropic).unwrap().body,
                b.compile(Target::Anthropic).unwrap().body
            );
        }
    }
}

#[test]
fn announcements_follow_their_channel_and_never_enter_history() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.push(Message::user("hi"));
    chef.announce("x", "Tool foo is blocked.", Channel::Auto);
    let anthropic = String::from_utf8(chef.compile(Target::Anthropic).unwrap().body).unwrap();
    let openai = String::from_utf8(chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    assert!(
        anthropic.contains("<announcement id=\\\"x\\\">"),
        "{anthropic}"
    );
    assert!(openai.contains("hi\\n\\n<announcements>"), "{openai}");
    assert_eq!(chef.history().len(), 1);
    assert_eq!(chef.history()[0].text(), "hi");
    chef.clear_history();
    assert_eq!(
        chef.announcements().len(),
        1,
        "announcements survive clear_history"
    );
    assert!(chef.retract_announcement("x"));
    assert!(!chef.retract_announcement("x"));
}

#[test]
fn memory_written_through_the_owned_tool_reaches_the_next_compile() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
        chef.push(Message::user("I prefer metric units."));
        let payload = chef.compile(Target::OpenAiChat).unwrap();
        let text = String::from_utf8(payload.body).unwrap();
        assert!(text.contains("create_memory") && text.contains("modify_memory"));
        let call = ToolCall::new(
            "m1",
            "create_memory",
            json!({"key": "units", "value": "metric"}),
        );
        let Routed::Owned(owned) = chef.route(&call) else {
            panic!("not owned")
        };
        let reply = chef.handle_tool(&owned).await.unwrap();
        assert_eq!(reply.text, "Created context://memory/units.");
        assert!(!reply.is_error);
        // Creating again never overwrites.
        let again = chef.handle_tool(&owned).await.unwrap();
        assert!(
            again.is_error && again.text.contains("already exists"),
            "{}",
            again.text
        );
        let text = String::from_utf8(chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
        assert!(text.contains("metric"), "memory block in the next compile");
    });
}

#[test]
fn the_context_tool_refuses_traversal_and_read_only_writes() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut chef = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified))
            .with_memory(Memory::new());
        let mut run = async |args: Value| {
            let Routed::Owned(owned) = chef.route(&ToolCall::new("c", "context", args)) else {
                panic!("not owned")
            };
            chef.handle_tool(&owned).await.unwrap()
        };
        let r =
            run(json!({"command": "create", "path": "notes/plan.md", "file_text": "a\nb"})).await;
        assert_eq!(r.text, "Created context://notes/plan.md.");
        let r = run(json!({"command": "view", "path": "context://notes/plan.md"})).await;
        assert_eq!(r.text, "     1\ta\n     2\tb");
        for path in [
            "notes/../../etc/passwd",
            "../x",
            "notes\\x",
            "/etc/passwd/..",
        ] {
            let r = run(json!({"command": "view", "path": path})).await;
            assert!(r.is_error, "{path}: {}", r.text);
        }
        let r = run(json!({"command": "create", "path": "archive/x", "file_text": "y"})).await;
        assert!(r.is_error && r.text.contains("read-only"), "{}", r.text);
        let r = run(json!({"command": "create", "path": "memory/tz", "file_text": "UTC"})).await;
        assert_eq!(r.text, "Created context://memory/tz.");
        let r = run(json!("{bad json")).await;
        assert_eq!(r.text, "Error: the tool arguments were not valid JSON.");
        let r = run(json!({"command": "frob", "path": "notes/x"})).await;
        assert!(r.text.starts_with("Error: unknown command \"frob\""));
    });
}

#[test]
fn toolkits_load_persist_and_survive_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.json");
    let weather = ToolDefinition::new(
        "get_weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
    .with_description("Weather now.");
    let build = || {
        let mut chef = Chef::new(ChefConfig::default().with_tool_change_announcements(true));
        chef.tools_mut()
            .register_toolkits(vec![ToolGroup::new(
                "Weather",
                "Forecasts",
                vec![weather.clone()],
            )])
            .unwrap();
        chef
    };
    let mut chef = build();
    chef.push(Message::user("weather in Oslo?"));
    let first = body(&mut chef, Target::Anthropic);
    assert!(!first.to_string().contains("\"get_weather\""));
    let loaded = chef.route(&ToolCall::new(
        "l",
        "load_toolkit",
        json!({"toolkit_name": "Weather"}),
    ));
    assert!(matches!(loaded, Routed::ToolkitLoaded { .. }), "{loaded:?}");
    chef.push(Message::tool_results(vec![ToolResult::text(
        "l",
        loaded.reply().unwrap(),
    )]));
    let second = body(&mut chef, Target::Anthropic);
    assert!(second.to_string().contains("\"get_weather\""));
    assert!(
        second
            .to_string()
            .contains("Toolkit \\\"Weather\\\" is loaded"),
        "announced"
    );
    assert!(matches!(
        chef.route(&ToolCall::new("w", "get_weather", json!({"city": "Oslo"}))),
        Routed::Call(_)
    ));

    chef.save(&path, Some("after load")).unwrap();
    let next = chef.compile(Target::Anthropic).unwrap().body;
    let mut resumed = build();
    resumed.load(&path).unwrap();
    assert_eq!(resumed.tools().loaded_toolkits(), ["Weather"]);
    assert_eq!(
        resumed.compile(Target::Anthropic).unwrap().body,
        next,
        "byte-identical after load"
    );
}

#[test]
fn a_corrupt_or_newer_snapshot_leaves_the_session_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let mut chef = Chef::new(ChefConfig::default());
    chef.push(Message::user("keep me"));
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(
        &corrupt,
        b"{\"format\":\"chef-snapshot\",\"format_version\":1,\"payl",
    )
    .unwrap();
    assert!(chef.load(&corrupt).is_err());
    let newer = dir.path().join("newer.json");
    std::fs::write(
        &newer,
        br#"{"format":"chef-snapshot","format_version":99,"created_turn":0,"payload":{}}"#,
    )
    .unwrap();
    let err = chef.load(&newer).unwrap_err();
    assert!(err.to_string().contains("99"), "{err}");
    assert_eq!(chef.history().len(), 1);
    assert_eq!(chef.history()[0].text(), "keep me");
}

#[test]
fn ranked_pruning_happens_inside_compile_and_says_why() {
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::Ranked {
        top_k: 5,
        always_keep: vec!["active_locations".into()],
    }));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user(
        "Show me the accessorial revenue summary by billing status for this year",
    ));
    let payload = chef.compile(Target::OpenAiChat).unwrap();
    assert!(payload.meta.wire_tools.len() <= 6);
    assert_eq!(payload.meta.kept[0].0, "active_locations");
    assert!(payload.meta.kept.len() >= 2, "{:?}", payload.meta.kept);
    assert!(matches!(
        payload.meta.kept[1].1,
        chef::KeepReason::Ranked { rank: 1, .. }
    ));
}

#[test]
fn tool_changes_are_announced_once_then_retracted() {
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_prune(PrunePolicy::ByTask)
            .with_tool_change_announcements(true),
    );
    chef.register_tools(vec![
        ToolDefinition::new("read_file", json!({"type": "object"})).with_tags(["file"]),
        ToolDefinition::new("run_bash", json!({"type": "object"})).with_tags(["shell"]),
    ])
    .unwrap();
    chef.push(Message::user("open the file"));
    chef.compile(Target::OpenAiChat).unwrap();
    chef.push(Message::user("now use the shell"));
    let text = String::from_utf8(chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    assert!(text.contains("Tools now available: run_bash."), "{text}");
    assert!(
        text.contains("Tools no longer available: read_file."),
        "{text}"
    );
    let text = String::from_utf8(chef.compile(Target::OpenAiChat).unwrap().body).unwrap();
    assert!(
        !text.contains("Tools now available"),
        "retracted once no longer new"
    );
}

#[test]
fn owned_tools_follow_the_mode() {
    let names = |chef: &mut Chef| wire_names(chef, Target::OpenAiChat);
    assert!(names(&mut Chef::new(ChefConfig::default())).is_empty());
    let mut legacy = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    assert_eq!(names(&mut legacy), ["create_memory", "modify_memory"]);
    let mut unified = Chef::new(handoff_config()).with_memory(Memory::new());
    assert_eq!(names(&mut unified), ["context", "new_context"]);
}

#[test]
fn thinking_and_tool_results_pass_through_history() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.push(Message::user("go"));
    chef.push(Message::assistant_with(vec![
        Content::Thinking {
            thinking: "plan".into(),
            signature: Some("sig".into()),
        },
        Content::ToolCall(ToolCall::new("c1", "x", json!({"n": 1}))),
    ]));
    chef.push(Message::tool_results(vec![ToolResult::error("c1", "boom")]));
    let text = String::from_utf8(chef.compile(Target::Anthropic).unwrap().body).unwrap();
    assert!(text.contains("\"signature\":\"sig\""));
    assert!(text.contains("\"is_error\":true"));
}

#[test]
fn ranked_selections_compress_exactly_as_compress_of_the_kept_tools() {
    // Each turn keeps different tools; the session compresses each selection from the
    // registry prepared once, and the bytes must equal a direct `compress` of those tools.
    let options = chef_compress::Options::new().with_level(Level::Three);
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_compress(options.clone())
            .with_prune(PrunePolicy::ranked(6)),
    );
    let tools = real_tools();
    chef.register_tools(tools.clone()).unwrap();
    let mut systems = std::collections::BTreeSet::new();
    for request in [
        "Show me the accessorial revenue summary by billing status for this year",
        "geocode a batch of street addresses into coordinates",
        "list the active locations",
        "Show me the accessorial revenue summary by billing status for this year",
    ] {
        chef.push(Message::user(request));
        let payload = chef.compile(Target::OpenAiChat).unwrap();
        let kept: Vec<ToolDefinition> = payload
            .meta
            .kept
            .iter()
            .map(|(name, _)| tools.iter().find(|t| &t.name == name).unwrap().clone())
            .collect();
        if kept.is_empty() {
            // The index abstained: nothing fits this request.
            chef.push(Message::assistant("ok"));
            continue;
        }
        let direct = chef_compress::compress(&kept, &options).unwrap();
        let body: Value = serde_json::from_slice(&payload.body).unwrap();
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains(direct.system()), "{system}");
        systems.insert(direct.system().to_owned());
        chef.push(Message::assistant("ok"));
    }
    assert!(systems.len() >= 2, "the selections should differ");
}
