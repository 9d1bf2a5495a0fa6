//! The tools inside a session snapshot: shared with the registry when saved, kept as JSON
//! text when read, reused without parsing when the restoring session has the same tools,
//! parsed (with the same typed errors as before) otherwise. The file format is unchanged.

use chef::snapshot::{self, Origin, SnapshotError, SnapshotTools};
use chef::{Chef, ChefConfig, ChefError, SessionState};
use chef_ir::{Message, Target, ToolDefinition};
use serde_json::json;

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            "read_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        )
        .with_description("Read a file."),
        ToolDefinition::new("list_dir", json!({"type": "object", "properties": {"z": {}, "a": {}}}))
            .with_tags(["fs"]),
    ]
}

fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You manage files.")]);
    chef.push(Message::user("What is in /srv?"));
    chef
}

/// The registry's tools, by address: equal when the registry kept the same allocation.
fn registry_address(chef: &Chef) -> *const ToolDefinition {
    chef.tools().pruner().all_tools().as_ptr()
}

#[test]
fn the_tools_field_is_the_v1_array_of_tool_definitions() {
    let chef = session();
    let bytes = snapshot::to_vec(&chef.snapshot(None)).unwrap();
    let file: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(file["format_version"], 2);
    assert_eq!(
        serde_json::to_string(&file["payload"]["tools"]).unwrap(),
        serde_json::to_string(&tools()).unwrap(),
    );
    // The second save writes the same bytes (the cached text is the serialisation).
    assert_eq!(snapshot::to_vec(&chef.snapshot(None)).unwrap(), bytes);
}

#[test]
fn a_v1_file_written_before_the_tools_were_shared_still_loads() {
    // Written by the build before this change (only the fields without defaults).
    let v1 = br#"{"format":"chef-snapshot","format_version":1,"label":"v1","created_turn":1,"payload":{"system":[{"role":"system","content":[{"type":"text","text":"You manage files."}]}],"history":[{"role":"user","content":[{"type":"text","text":"What is in /srv?"}]}],"tools":[{"name":"read_file","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},{"name":"list_dir","description":"","input_schema":{"type":"object","properties":{"z":{},"a":{}}},"tags":["fs"]}],"turn":1}}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.json");
    std::fs::write(&path, v1).unwrap();
    for mut chef in [Chef::new(ChefConfig::default()), session()] {
        chef.load(&path).unwrap();
        assert_eq!(chef.tools().pruner().all_tools(), tools().as_slice());
        assert_eq!(chef.history()[0].text(), "What is in /srv?");
    }
}

#[test]
fn restoring_the_same_tools_keeps_the_registry_and_other_tools_are_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut chef = session();
    chef.save(&path, None).unwrap();
    let expected = chef.compile(Target::Anthropic).unwrap().body;

    // Same tools registered: the bytes match, the registry's allocation is kept.
    let mut warm = session();
    let before = registry_address(&warm);
    warm.push(Message::user("something else"));
    warm.load(&path).unwrap();
    assert_eq!(registry_address(&warm), before);
    assert_eq!(warm.compile(Target::Anthropic).unwrap().body, expected);

    // No tools, or other tools: the snapshot's are parsed and replace them.
    let mut fresh = Chef::new(ChefConfig::default());
    fresh.load(&path).unwrap();
    assert_eq!(fresh.compile(Target::Anthropic).unwrap().body, expected);
    let mut other = Chef::new(ChefConfig::default());
    other
        .register_tools(vec![ToolDefinition::new("rm", json!({"type": "object"}))])
        .unwrap();
    other.load(&path).unwrap();
    assert_eq!(other.tools().pruner().all_tools(), tools().as_slice());
    assert_eq!(other.compile(Target::Anthropic).unwrap().body, expected);
}

#[test]
fn a_snapshot_taken_after_new_tools_are_registered_carries_the_new_tools() {
    let mut chef = session();
    let first = snapshot::to_vec(&chef.snapshot(None)).unwrap();
    chef.register_tools(vec![ToolDefinition::new("grep", json!({"type": "object"}))])
        .unwrap();
    let second: snapshot::Snapshot<SessionState> =
        snapshot::from_slice(&snapshot::to_vec(&chef.snapshot(None)).unwrap()).unwrap();
    let names: Vec<String> = second
        .payload
        .tools
        .tools()
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["grep"]);
    // Restoring the first snapshot brings the old tools back.
    chef.restore(&snapshot::from_slice(&first).unwrap())
        .unwrap();
    assert_eq!(chef.tools().pruner().all_tools(), tools().as_slice());
}

/// A snapshot file of `session()` with its tools field replaced by `tools`.
fn file_with_tools(tools: &str) -> Vec<u8> {
    let bytes = snapshot::to_vec(&session().snapshot(None)).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let good = serde_json::to_string(&self::tools()).unwrap();
    assert!(text.contains(&good));
    crate::support::resealed(text.replacen(&good, tools, 1).as_bytes())
}

#[test]
fn a_corrupt_tools_field_is_a_typed_error_and_leaves_the_session_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    for (tools, check) in [
        // Read as text, parsed on restore: the error names the file and the field.
        (r#"[{"description":"no name"}]"#, "payload.tools"),
        (r#"[{"name":"x","input_schema":{}},5]"#, "payload.tools"),
        // Not an array at all: refused when the file is read.
        (r#"{"name":"x"}"#, "tool definitions"),
        ("5", "tool definitions"),
    ] {
        std::fs::write(&path, file_with_tools(tools)).unwrap();
        for mut chef in [Chef::new(ChefConfig::default()), session()] {
            chef.push(Message::user("keep me"));
            let registry = registry_address(&chef);
            let history = chef.history().to_vec();
            let err = chef.load(&path).unwrap_err();
            match &err {
                ChefError::Snapshot(SnapshotError::Corrupt {
                    origin: Origin::File(p),
                    source,
                }) => {
                    assert_eq!(p, &path);
                    assert!(source.to_string().contains(check), "{tools}: {source}");
                }
                other => panic!("{tools}: {other:?}"),
            }
            assert_eq!(chef.history(), history.as_slice(), "{tools}");
            assert_eq!(registry_address(&chef), registry, "{tools}");
        }
    }
    // The same through `restore`, from bytes.
    let read: snapshot::Snapshot<SessionState> =
        snapshot::from_slice(&file_with_tools(r#"[{"description":"no name"}]"#)).unwrap();
    let mut chef = session();
    let err = chef.restore(&read).unwrap_err();
    assert!(
        matches!(
            err,
            ChefError::Snapshot(SnapshotError::Corrupt {
                origin: Origin::Bytes,
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(chef.history().len(), 1);
}

#[test]
fn duplicate_tool_names_in_a_file_are_refused_before_anything_changes() {
    let one = r#"{"name":"dup","description":"","input_schema":{"type":"object"}}"#;
    let read: snapshot::Snapshot<SessionState> =
        snapshot::from_slice(&file_with_tools(&format!("[{one},{one}]"))).unwrap();
    let mut chef = session();
    chef.push(Message::user("keep me"));
    let err = chef.restore(&read).unwrap_err();
    assert!(matches!(err, ChefError::Registry(_)), "{err:?}");
    assert_eq!(chef.history().len(), 2);
    assert_eq!(chef.tools().pruner().all_tools(), tools().as_slice());
}

#[test]
fn snapshot_tools_compare_by_content_whatever_their_form() {
    let parsed = SnapshotTools::new(tools());
    let text = serde_json::to_string(&parsed).unwrap();
    let read: SnapshotTools = serde_json::from_str(&text).unwrap();
    assert!(parsed.is_parsed() && !read.is_parsed());
    assert_eq!(read, parsed);
    assert_eq!(parsed, read);
    // Other spacing, same tools.
    let pretty: SnapshotTools =
        serde_json::from_str(&serde_json::to_string_pretty(&tools()).unwrap()).unwrap();
    assert_eq!(pretty, read);
    // Other tools.
    let fewer = SnapshotTools::new(tools().into_iter().take(1).collect::<Vec<_>>());
    assert_ne!(fewer, read);
    // Text that does not parse equals only itself.
    let bad: SnapshotTools = serde_json::from_str(r#"[{"x":1}]"#).unwrap();
    assert!(bad.tools().is_err());
    assert_eq!(bad, bad.clone());
    assert_ne!(bad, read);
    // Through serde_json::Value both ways, as tools that inspect snapshots do.
    let value = serde_json::to_value(&read).unwrap();
    assert_eq!(value, serde_json::to_value(tools()).unwrap());
    let from_value: SnapshotTools = serde_json::from_value(value).unwrap();
    assert_eq!(from_value, parsed);
    // Debug does not dump unparsed text.
    assert_eq!(format!("{bad:?}"), "SnapshotTools { unparsed_bytes: 9 }");
    // Re-serialised, read text is written back byte for byte.
    assert_eq!(
        serde_json::to_string(&pretty).unwrap(),
        serde_json::to_string_pretty(&tools()).unwrap()
    );
}

#[test]
fn a_newer_version_is_refused_even_when_its_payload_would_fit() {
    let text = br#"{"format":"chef-snapshot","format_version":7,"created_turn":0,"payload":{"any":"thing"}}"#;
    assert!(matches!(
        snapshot::from_slice::<serde_json::Value>(text),
        Err(SnapshotError::NewerVersion { found: 7, .. })
    ));
    let text = br#"{"format":"other","format_version":1,"created_turn":0,"payload":{}}"#;
    assert!(matches!(
        snapshot::from_slice::<serde_json::Value>(text),
        Err(SnapshotError::NotASnapshot { .. })
    ));
}

/// Fresh sessions restoring snapshots of one catalogue share its parsed tools while any of
/// them holds them (a gateway resuming many sessions parses a catalogue once); the same
/// tools written differently are parsed on their own; the bytes compiled are the same.
#[test]
fn fresh_sessions_restoring_one_catalogue_share_its_parsed_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut chef = session();
    chef.register_tools(vec![
        ToolDefinition::new("share_probe_a", json!({"type": "object"})),
        ToolDefinition::new(
            "share_probe_b",
            json!({"type": "object", "properties": {"q": {}}}),
        ),
    ])
    .unwrap();
    chef.save(&path, None).unwrap();
    let expected = chef.compile(Target::OpenAiChat).unwrap().body;

    let mut first = Chef::new(ChefConfig::default());
    first.load(&path).unwrap();
    let mut second = Chef::new(ChefConfig::default());
    second.load(&path).unwrap();
    assert_eq!(registry_address(&first), registry_address(&second));
    assert_eq!(second.compile(Target::OpenAiChat).unwrap().body, expected);

    // The same tools, pretty-printed: equal once parsed, but not the same text.
    let pretty_path = dir.path().join("pretty.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let compact = serde_json::to_string(&file["payload"]["tools"]).unwrap();
    let pretty = serde_json::to_string_pretty(&file["payload"]["tools"]).unwrap();
    assert!(text.contains(&compact));
    let edited = text.replacen(&compact, &pretty, 1);
    std::fs::write(&pretty_path, crate::support::resealed(edited.as_bytes())).unwrap();
    let mut third = Chef::new(ChefConfig::default());
    third.load(&pretty_path).unwrap();
    assert_eq!(
        third.tools().pruner().all_tools(),
        first.tools().pruner().all_tools()
    );
    assert_eq!(third.compile(Target::OpenAiChat).unwrap().body, expected);

    // Once no session holds them, a restore parses them again and still compiles the same.
    drop((first, second, third));
    let mut later = Chef::new(ChefConfig::default());
    later.load(&path).unwrap();
    assert_eq!(later.compile(Target::OpenAiChat).unwrap().body, expected);
}
