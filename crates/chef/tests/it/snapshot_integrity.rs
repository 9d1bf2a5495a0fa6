//! Snapshot files carry a checksum (format version 2): a bit flipped anywhere in a file,
//! a message's text included, is a typed `Corrupt` error and leaves the session that tried
//! to load it unchanged; files written before the checksum (version 1) still load.

use chef::{
    Chef, ChefConfig, ChefError, SessionState,
    ir::{Message, Target},
    snapshot::{self, SnapshotError},
};

/// A small session with a conversation, an announcement and a blocked tool.
fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.set_system_prompt(vec![Message::system("You are careful.")]);
    chef.push(Message::user("Transfer 100 EUR to account 42."));
    chef.push(Message::assistant("Done: 100 EUR to account 42."));
    chef.announce("env", "cwd /srv", chef::Channel::System);
    chef.tools_mut().set_blocked(["delete_file"]);
    chef
}

fn is_corrupt(result: &Result<snapshot::Snapshot<SessionState>, SnapshotError>) -> bool {
    matches!(result, Err(SnapshotError::Corrupt { .. }))
}

#[test]
fn every_single_bit_flip_of_a_file_is_corrupt() {
    let bytes = snapshot::to_vec(&session().snapshot(Some("before transfer"))).unwrap();
    assert!(snapshot::from_slice::<SessionState>(&bytes).is_ok());
    let mut flipped = bytes.clone();
    for at in 0..bytes.len() {
        for bit in 0..8 {
            flipped[at] ^= 1 << bit;
            let result = snapshot::from_slice::<SessionState>(&flipped);
            assert!(
                is_corrupt(&result),
                "byte {at} ({:?}) bit {bit}: {:?}",
                char::from(bytes[at]),
                result.err()
            );
            flipped[at] = bytes[at];
        }
    }
}

#[test]
fn a_flipped_digit_in_a_message_is_found_and_the_session_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    session().save(&path, None).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // "100 EUR" becomes "101 EUR": valid JSON, a valid snapshot, another conversation.
    let at = bytes.windows(7).position(|w| w == b"100 EUR").unwrap();
    bytes[at + 2] ^= 1;
    std::fs::write(&path, &bytes).unwrap();

    let mut receiving = Chef::new(ChefConfig::default());
    receiving.push(Message::user("an earlier conversation"));
    let before = receiving.compile(Target::Anthropic).unwrap().body;
    let err = receiving.load(&path).unwrap_err();
    match &err {
        ChefError::Snapshot(SnapshotError::Corrupt { source, .. }) => {
            assert!(source.to_string().contains("checksum mismatch"), "{source}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(receiving.compile(Target::Anthropic).unwrap().body, before);
}

#[test]
fn files_end_with_their_checksum_and_version_1_files_still_load() {
    let bytes = snapshot::to_vec(&session().snapshot(None)).unwrap();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(text.starts_with(r#"{"format":"chef-snapshot","format_version":2,"#));
    let (covered, checksum) = text.rsplit_once(r#","checksum":"crc32:"#).unwrap();
    assert_eq!(checksum.len(), r#"01234567"}"#.len() + 1, "{checksum}");
    assert!(checksum.ends_with("\"}\n"));

    // The same file as version 1 wrote it: no checksum member.
    let v1 = format!(
        "{}}}\n",
        covered.replace(r#""format_version":2"#, r#""format_version":1"#)
    );
    let old = snapshot::from_slice::<SessionState>(v1.as_bytes()).unwrap();
    let new = snapshot::from_slice::<SessionState>(&bytes).unwrap();
    assert_eq!(old.payload, new.payload);

    // Version 2 without its checksum is corrupt, not silently accepted.
    let stripped = format!("{covered}}}\n");
    assert!(is_corrupt(&snapshot::from_slice::<SessionState>(
        stripped.as_bytes()
    )));

    // Saved raw into a store, each keeps the version it declares in the entry's metadata.
    crate::support::block_on(async {
        use chef::store::{Expect, MemoryBackend, Namespace, StorageBackend, StoreKey};
        let store = MemoryBackend::new();
        for (id, raw, version) in [("old", v1.into_bytes(), 1_u64), ("new", bytes, 2)] {
            let key = StoreKey::new(id).unwrap();
            snapshot::store::save_raw(&store, &key, raw, Expect::Absent)
                .await
                .unwrap();
            let entry = store
                .get(&Namespace::SESSIONS, &key)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                entry.value.meta().get("format_version"),
                Some(&serde_json::json!(version)),
                "{id}"
            );
        }
    });
}
