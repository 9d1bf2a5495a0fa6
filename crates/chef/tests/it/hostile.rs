//! Hostile input: arbitrary key text and arbitrary snapshot bytes never panic, and every
//! key that is accepted stays inside its namespace directory.

use chef::snapshot::{self, Snapshot};
use chef::store::{FsBackend, Namespace, StoreKey};
use proptest::prelude::*;

fn key_text() -> impl Strategy<Value = String> {
    // Biased towards the characters that matter for traversal.
    proptest::collection::vec(
        prop_oneof![
            Just("..".to_owned()),
            Just(".".to_owned()),
            Just("/".to_owned()),
            Just("\\".to_owned()),
            Just("\0".to_owned()),
            Just(".d".to_owned()),
            Just(".json".to_owned()),
            "[a-z]{1,3}",
            any::<char>().prop_map(String::from),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

#[test]
fn accepted_keys_stay_inside_their_namespace_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let base = store.root().join("notes");
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(2048));
    runner
        .run(&key_text(), |text| {
            if let Ok(key) = StoreKey::new(text.clone()) {
                for segment in key.segments() {
                    prop_assert!(!segment.is_empty() && !segment.starts_with('.'));
                    prop_assert!(!segment.contains('\\') && !segment.chars().any(char::is_control));
                }
                let path = store.entry_path(&Namespace::NOTES, &key);
                prop_assert!(path.starts_with(&base), "{text:?} -> {}", path.display());
                prop_assert!(path.components().all(|c| matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::RootDir
                )));
            }
            Ok(())
        })
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic_the_snapshot_loader(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = snapshot::from_slice::<serde_json::Value>(&bytes);
    }

    #[test]
    fn mutated_snapshots_load_or_fail_cleanly(index in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = snapshot::to_vec(&Snapshot::new(serde_json::json!({"a": [1, "x"], "b": null})).with_label("l")).unwrap();
        let i = index.index(bytes.len());
        bytes[i] = byte;
        let _ = snapshot::from_slice::<serde_json::Value>(&bytes);
    }
}
