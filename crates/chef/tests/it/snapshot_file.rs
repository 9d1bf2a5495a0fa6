//! Snapshot files: format, round trip, typed errors, atomic save.

use std::collections::BTreeMap;
use std::fs;

use chef::memory::MemoryState;
use chef::snapshot::{self, FORMAT_VERSION, Snapshot, SnapshotError};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::memory_with;

/// A stand-in for the session snapshot: the shapes it will hold (messages with free-form
/// JSON, announcements in order, a blocklist, memory state, counters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Payload {
    history: Vec<chef::ir::Message>,
    announcements: Vec<(String, String)>,
    blocked_tools: Vec<String>,
    loaded_toolkits: BTreeMap<String, u32>,
    memory: MemoryState,
    extra: serde_json::Value,
}

fn payload() -> Payload {
    let memory = memory_with("lang", "Rust \u{1F980}", "d");
    let history = vec![
        chef::ir::Message::system("You are careful.").with_cache_breakpoint(true),
        chef::ir::Message::user("hi \"there\" <b>"),
        chef::ir::Message::assistant("hello\nworld"),
    ];
    Payload {
        history,
        announcements: vec![("tools:added".into(), "Tools newly available: grep".into())],
        blocked_tools: vec!["delete_file".into()],
        loaded_toolkits: BTreeMap::from([("git".into(), 3)]),
        memory: memory.state(),
        extra: serde_json::json!({"z": 1, "a": [null, true, 1.5]}),
    }
}

fn snap() -> Snapshot<Payload> {
    Snapshot::new(payload())
        .with_label("before risky tool call")
        .with_created_turn(12)
}

#[test]
fn save_then_load_returns_the_same_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.json");
    snapshot::save(&path, &snap()).unwrap();
    let back: Snapshot<Payload> = snapshot::load(&path).unwrap();
    assert_eq!(back, snap());
    // Nothing but the file in the directory.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["session.json"]);
}

#[test]
fn the_envelope_is_pinned_and_saving_twice_gives_identical_bytes() {
    let bytes = snapshot::to_vec(&snap()).unwrap();
    assert_eq!(bytes, snapshot::to_vec(&snap()).unwrap());
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with(r#"{"format":"chef-snapshot","format_version":2,"label":"before risky tool call","created_turn":12,"payload":{"#));
    assert!(text.ends_with("}\n"));
    insta::assert_snapshot!(text);
    // No label: the field is left out.
    let unlabeled = snapshot::to_vec(&Snapshot::new(1u8)).unwrap();
    assert_eq!(
        unlabeled,
        b"{\"format\":\"chef-snapshot\",\"format_version\":2,\"created_turn\":0,\"payload\":1,\"checksum\":\"crc32:c7db5ad1\"}\n"
    );
}

#[test]
fn unknown_fields_are_tolerated() {
    let text = r#"{"written_by":"chef 9.9","format":"chef-snapshot","format_version":1,"created_turn":3,"payload":{"a":1,"future":[1]},"checksum":"x"}"#;
    #[derive(Debug, PartialEq, Deserialize)]
    struct Small {
        a: u32,
    }
    let snap: Snapshot<Small> = snapshot::from_slice(text.as_bytes()).unwrap();
    assert_eq!(
        snap,
        Snapshot {
            label: None,
            created_turn: 3,
            payload: Small { a: 1 }
        }
    );
}

#[test]
fn a_newer_format_version_is_refused_with_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    fs::write(&path, r#"{"format":"chef-snapshot","format_version":3,"created_turn":0,"payload":{"new":"shape"}}"#).unwrap();
    match snapshot::load::<Payload>(&path) {
        Err(SnapshotError::NewerVersion {
            found, supported, ..
        }) => {
            assert_eq!((found, supported), (3, FORMAT_VERSION));
        }
        other => panic!("{other:?}"),
    }
    let err = snapshot::load::<Payload>(&path).unwrap_err().to_string();
    assert!(
        err.contains("format version 3") && err.contains("s.json"),
        "{err}"
    );
}

#[test]
fn json_that_is_not_a_snapshot_is_named_so() {
    for text in [
        "{}",
        r#"{"format":"other","format_version":1}"#,
        "[1,2]",
        r#""chef-snapshot""#,
        "null",
        "[\"chef-snapshot\",1]",
    ] {
        assert!(
            matches!(
                snapshot::from_slice::<Payload>(text.as_bytes()),
                Err(SnapshotError::NotASnapshot { .. })
            ),
            "{text}"
        );
    }
}

#[test]
fn empty_garbage_truncated_and_misshapen_files_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    for text in [
        "",
        "   \n",
        "{not json",
        r#"{"format":"chef-snapshot"}"#,
        r#"{"format":"chef-snapshot","format_version":0,"created_turn":0,"payload":{}}"#,
        r#"{"format":"chef-snapshot","format_version":1,"created_turn":0,"payload":{"history":5}}"#,
        r#"{"format":"chef-snapshot","format_version":1,"payload":{}}"#,
        // A version that is not a u64 is a chef snapshot with an invalid version, not
        // another kind of file.
        r#"{"format":"chef-snapshot","format_version":18446744073709551616,"created_turn":0,"payload":{}}"#,
        r#"{"format":"chef-snapshot","format_version":"2","created_turn":0,"payload":{}}"#,
        r#"{"format":"chef-snapshot","format_version":-1,"created_turn":0,"payload":{}}"#,
        r#"{"format":"chef-snapshot","format_version":1.5,"created_turn":0,"payload":{}}"#,
    ] {
        fs::write(&path, text).unwrap();
        match snapshot::load::<Payload>(&path) {
            Err(SnapshotError::Corrupt { .. }) => {}
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn every_truncation_of_a_valid_file_is_an_error_never_a_different_snapshot() {
    let bytes = snapshot::to_vec(&snap()).unwrap();
    // The trailing newline is optional; everything shorter than the closing brace is not.
    let body_len = bytes.len() - 1;
    for len in 0..body_len {
        let result = snapshot::from_slice::<Payload>(&bytes[..len]);
        assert!(result.is_err(), "prefix of {len} bytes loaded");
    }
    assert_eq!(
        snapshot::from_slice::<Payload>(&bytes[..body_len]).unwrap(),
        snap()
    );
}

#[test]
fn a_missing_file_is_an_io_error_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.json");
    match snapshot::load::<Payload>(&path) {
        Err(SnapshotError::Io { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_payload_that_cannot_be_serialized_is_a_typed_error_and_the_old_file_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    snapshot::save(&path, &Snapshot::new(1u32)).unwrap();
    let bad: BTreeMap<(u8, u8), u8> = BTreeMap::from([((1, 2), 3)]);
    assert!(matches!(
        snapshot::save(&path, &Snapshot::new(bad)),
        Err(SnapshotError::Serialize { .. })
    ));
    assert_eq!(snapshot::load::<u32>(&path).unwrap().payload, 1);
}

#[test]
fn save_removes_temp_files_left_by_dead_writers() {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join(".tmp-0-0123456789abcdef");
    fs::write(&stale, "half a snapshot").unwrap();
    snapshot::save(dir.path().join("s.json"), &snap()).unwrap();
    assert!(!stale.exists());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn save_then_load_is_the_identity(
        label in proptest::option::of(".{0,20}"),
        turn in any::<u64>(),
        values in proptest::collection::btree_map("[a-z/]{1,8}", ".{0,40}", 0..8),
        numbers in proptest::collection::vec(any::<i64>(), 0..8),
    ) {
        let snap = Snapshot { label, created_turn: turn, payload: (values, numbers) };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        snapshot::save(&path, &snap).unwrap();
        prop_assert_eq!(snapshot::load(&path).unwrap(), snap);
    }
}

/// A symbolic link is followed (the link stays, its file gets the bytes), an existing
/// file keeps its permission bits, and a FIFO or directory is refused, never replaced.
#[cfg(unix)]
#[test]
fn save_follows_links_keeps_modes_and_refuses_what_is_not_a_regular_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.json");
    fs::write(&target, "old").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    snapshot::save(&link, &snap()).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let back: Snapshot<Payload> = snapshot::load(&target).unwrap();
    assert_eq!(back, snap());
    let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // A new file is owner-only.
    let fresh = dir.path().join("new.json");
    snapshot::save(&fresh, &snap()).unwrap();
    assert_eq!(
        fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A FIFO stays a FIFO (a writer would block on it forever: it is refused first).
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for refused in [fifo.clone(), dir.path().to_path_buf()] {
        match snapshot::save(&refused, &snap()) {
            Err(SnapshotError::Io { source, .. }) => {
                assert_eq!(source.kind(), std::io::ErrorKind::InvalidInput, "{source}");
                assert!(
                    source.to_string().contains("not a regular file"),
                    "{source}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    use std::os::unix::fs::FileTypeExt as _;
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Arguments nested `depth` levels (`{"a": {"a": … "x"}}`).
fn nested(depth: usize) -> serde_json::Value {
    let mut value = serde_json::json!("x");
    for _ in 0..depth {
        value = serde_json::json!({ "a": value });
    }
    value
}

/// A model's reply whose arguments nest 126 levels (serde_json reads a reply up to 128) sits
/// deeper than 128 in a snapshot: such a session was saved, and every load then said
/// "corrupt" (found by session 41's library audit). It now reads back to the same next
/// request, from a file and from a journal; a session nested past `MAX_NESTING` is refused
/// at the save, with nothing written.
#[tokio::test]
async fn a_session_holding_deeply_nested_arguments_loads_as_it_was_saved() {
    use chef::ir::{Message, Target, ToolDefinition};
    use std::sync::Arc;

    let session = |depth: usize| {
        let mut chef = chef::Chef::new(chef::ChefConfig::default());
        chef.register_tools(vec![ToolDefinition::new(
            "f",
            serde_json::json!({"type": "object", "properties": {"a": {}}}),
        )])
        .unwrap();
        chef.push(Message::user("go"));
        let payload = chef.compile(Target::OpenAiChat).unwrap();
        let arguments = serde_json::to_string(&nested(depth)).unwrap();
        let reply = serde_json::json!({"id": "x", "object": "chat.completion", "created": 0,
            "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                "type": "function", "function": {"name": "f", "arguments": arguments}}]}}]});
        let parsed = chef::openai::chat::parse_response(
            &serde_json::to_vec(&reply).unwrap(),
            &payload.names,
        )
        .unwrap();
        let call = parsed.message.tool_calls().next().unwrap().clone();
        chef.push(parsed.message);
        let routed = chef.route(&call);
        chef.push(Message::tool_results(vec![chef::ir::ToolResult::error(
            "c1",
            routed.reply().unwrap_or("ok").to_owned(),
        )]));
        chef
    };
    let mut chef = session(126);
    let want = chef.compile(Target::OpenAiChat).unwrap().body;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.chef");
    chef.save(&path, None).unwrap();
    let mut loaded = chef::Chef::new(chef::ChefConfig::default());
    loaded.load(&path).unwrap();
    assert_eq!(loaded.compile(Target::OpenAiChat).unwrap().body, want);

    let store: Arc<dyn chef::store::StorageBackend> = Arc::new(chef::store::MemoryBackend::new());
    let key = chef::store::StoreKey::new("deep").unwrap();
    chef::snapshot::journal::Journal::new(Arc::clone(&store), key.clone())
        .save(&chef)
        .await
        .unwrap();
    let mut replayed = chef::Chef::new(chef::ChefConfig::default());
    chef::snapshot::journal::Journal::new(store, key)
        .load(&mut replayed)
        .await
        .unwrap();
    assert_eq!(replayed.compile(Target::OpenAiChat).unwrap().body, want);

    // Past the limit (a host's own value, built in Rust): refused, nothing written.
    let mut chef = chef::Chef::new(chef::ChefConfig::default());
    chef.push(Message::user("go"));
    chef.push(Message::assistant_with(vec![chef::ir::Content::ToolCall(
        chef::ir::ToolCall::new("c1", "f", nested(snapshot::MAX_NESTING)),
    )]));
    let path = dir.path().join("too-deep.chef");
    let error = chef.save(&path, None).unwrap_err();
    assert!(
        matches!(
            error,
            chef::ChefError::Snapshot(SnapshotError::TooDeep {
                limit: snapshot::MAX_NESTING,
                ..
            })
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("levels deep"), "{error}");
    assert!(!path.exists());
}
