//! Unit tests of [`Memory`](super::Memory).

use super::*;

#[test]
fn the_kept_block_is_what_rendering_now_gives_after_every_kind_of_change() {
    let fresh = |m: &Memory, style| m.render_block_with(style, |all| all);
    // One style throughout, so the first render after a change is the one that would
    // be served stale; a change of style renders anew.
    let check = |m: &Memory| {
        let style = MemoryStyle::Unified;
        assert_eq!(m.render_block(style), fresh(m, style));
        assert_eq!(m.render_block(style), fresh(m, style));
    };
    let mut m = Memory::new().with_default_ttl(1);
    check(&m);
    m.set("a", "1", SetOptions::new()).unwrap();
    check(&m);
    m.set("a", "2", SetOptions::new().with_description("d"))
        .unwrap();
    check(&m);
    m.create("b", "3", None).unwrap();
    check(&m);
    m.modify("b", "4", None).unwrap();
    check(&m);
    m.remove("b").unwrap();
    check(&m);
    let saved = m.state();
    m.delete("a");
    check(&m);
    m.restore_state(saved);
    check(&m);
    m.advance_turn();
    m.advance_turn();
    assert!(!m.sweep_expired().is_empty());
    check(&m);
    let m = m.with_allowed_keys(["a"]);
    check(&m);
    assert_eq!(
        m.render_block(MemoryStyle::Legacy),
        fresh(&m, MemoryStyle::Legacy)
    );
}

pub(super) fn entry(value: &str, description: Option<&str>, count: u64) -> MemoryEntry {
    MemoryEntry {
        key: StoreKey::new("k").unwrap(),
        value: value.to_owned(),
        description: description.map(str::to_owned),
        created_turn: 1,
        updated_turn: 2,
        update_count: count,
        expires_at_turn: None,
    }
}

#[test]
fn changed_keys_lists_created_changed_and_removed_keys() {
    let k = |s: &str| {
        let mut e = entry("v", None, 1);
        e.key = StoreKey::new(s).unwrap();
        e
    };
    let mut changed = k("b");
    changed.value = "w".into();
    let before = vec![k("a"), k("b"), k("c")];
    let after = vec![k("a"), changed, k("d")];
    let keys: Vec<String> = changed_keys(&before, &after)
        .into_iter()
        .map(StoreKey::into_inner)
        .collect();
    assert_eq!(keys, ["b", "c", "d"]);
}

#[test]
fn tool_and_host_writes_are_told_apart_until_synced() {
    let mut memory = Memory::new();
    memory.create("t", "1", None).unwrap();
    memory.set("h", "1", SetOptions::new()).unwrap();
    memory.modify("h", "2", None).unwrap();
    assert!(!memory.host_written.contains("t"));
    // A key a direct write touched stays a host key even after a tool write.
    assert!(memory.host_written.contains("h"));
    memory.remove("t").unwrap();
    assert!(!memory.host_written.contains("t"));
    // A sweep and a restore are direct writes too.
    memory.create("swept", "1", None).unwrap();
    memory.create("kept", "1", None).unwrap();
    let saved = memory.state();
    memory.entries.get_mut("swept").unwrap().expires_at_turn = Some(0);
    assert_eq!(memory.sweep_expired().len(), 1);
    assert!(memory.host_written.contains("swept"));
    memory.modify("kept", "2", None).unwrap();
    assert!(!memory.host_written.contains("kept"));
    memory.restore_state(saved);
    assert!(memory.host_written.contains("kept"));
    assert_eq!(memory.persist_retries(), DEFAULT_PERSIST_RETRIES);
    assert_eq!(memory.with_persist_retries(0).persist_retries(), 0);
}
