//! The session journal (issue 24, part 2): deltas per turn, full records when due, replay
//! to the live state, a torn last record dropped, damage elsewhere refused, two writers
//! refused — on every backend.

use std::sync::Arc;

use chef::snapshot::journal::{self, CompactPolicy, Journal};
use chef::snapshot::{self, SnapshotError};
use chef::store::{Entry, Expect, Namespace, StorageBackend, StoreKey};
use chef::{Chef, ChefConfig, ChefError};
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use serde_json::json;

use crate::support::{assert_same_bytes, content, key, memory_journal, memory_with, replayed};

backend_suite!(journal, worker_threads = 2;
    turns_append_deltas_and_replay_to_the_live_session,
    a_torn_last_record_is_dropped_and_the_next_save_takes_its_place,
    damage_before_the_last_record_is_refused_and_changes_nothing,
    a_second_writer_is_refused_and_recovers_by_loading,
    rewrites_and_registry_changes_write_full_records
);

/// Compaction by record count only: this test session is small, so by default its deltas
/// would soon outweigh its snapshot and bring full records of their own.
fn by_count(max_records: u64) -> CompactPolicy {
    CompactPolicy::default()
        .with_max_records(max_records)
        .with_max_bytes_percent(100_000)
}

fn journal_of(store: &Arc<dyn StorageBackend>, id: &StoreKey) -> Journal {
    Journal::new(Arc::clone(store), id.clone()).with_policy(by_count(64))
}

/// A fresh [`session`] and its journal `id` in `store` ([`journal_of`]).
fn started(store: &Arc<dyn StorageBackend>, id: &str) -> (StoreKey, Journal, Chef) {
    let id = key(id);
    let journal = journal_of(store, &id);
    (id, journal, session())
}

fn config() -> ChefConfig {
    ChefConfig::default().with_tool_change_announcements(true)
}

fn session() -> Chef {
    let mut chef = Chef::new(config()).with_memory(memory_with("plan", "ship it", "The plan."));
    chef.register_tools(crate::support::two_tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You help.")]);
    chef
}

/// One turn: a user message, a call and its result (every third one an error), a compile.
fn turn(chef: &mut Chef, i: usize) {
    chef.push(Message::user(format!("turn {i}: book a ride")));
    let id = format!("c{i}");
    chef.push(Message::assistant_with(vec![Content::ToolCall(
        ToolCall::new(
            id.as_str(),
            "uber_request",
            json!({"to": format!("street {i}")}),
        ),
    )]));
    let result = if i.is_multiple_of(3) {
        ToolResult::error(id.as_str(), "no cars nearby")
    } else {
        ToolResult::text(id.as_str(), format!("car {i} on its way"))
    };
    chef.push(Message::tool_results(vec![result]));
    chef.compile(Target::ALL[i % Target::ALL.len()]).unwrap();
}

/// The bytes of a snapshot of `chef`: what a replay must give.
fn state_bytes(chef: &Chef) -> Vec<u8> {
    snapshot::to_vec(&chef.snapshot(None)).unwrap()
}

async fn replayed_bytes(store: &dyn StorageBackend, id: &StoreKey) -> Vec<u8> {
    let replayed = journal::read(store, id).await.unwrap().expect("a journal");
    snapshot::to_vec(&replayed.snapshot).unwrap()
}

/// The journal `id` replays to a snapshot of `chef`, byte for byte.
async fn assert_replays_to(store: &dyn StorageBackend, id: &StoreKey, chef: &Chef) {
    assert_eq!(
        replayed_bytes(store, id).await,
        state_bytes(chef),
        "journal {id} does not replay to the session"
    );
}

/// A fresh session loaded from the journal compiles what `live` compiles, on every target.
async fn assert_resumes(store: &Arc<dyn StorageBackend>, id: &StoreKey, live: &mut Chef) {
    let mut resumed = replayed(store, id, Chef::new(config())).await;
    assert_same_bytes(&mut resumed, live);
}

async fn record_keys(store: &dyn StorageBackend, id: &StoreKey) -> Vec<StoreKey> {
    store
        .list(&Namespace::JOURNAL, &format!("{id}/"))
        .await
        .unwrap()
}

pub(crate) async fn turns_append_deltas_and_replay_to_the_live_session(
    store: Arc<dyn StorageBackend>,
) {
    let id = key("users/ada/chat-1");
    let mut journal = Journal::new(Arc::clone(&store), id.clone()).with_policy(by_count(8));
    let mut chef = session();
    let mut kinds = Vec::new();
    for i in 0..30 {
        turn(&mut chef, i);
        if i == 11 {
            chef.memory_mut()
                .unwrap()
                .set("plan", "ship it friday", Default::default())
                .unwrap();
        }
        let saved = journal.save(&chef).await.unwrap();
        assert_eq!(saved.seq, i as u64 + 1);
        kinds.push(saved.full);
        if !saved.full {
            // A turn's delta holds the turn, not the session.
            assert!(saved.bytes < 2_000, "turn {i}: {} bytes", saved.bytes);
        }
        assert_eq!(
            replayed_bytes(store.as_ref(), &id).await,
            state_bytes(&chef),
            "turn {i}"
        );
    }
    // A full record first, then one after every 8 deltas.
    let fulls: Vec<usize> = (0..30).filter(|&i| kinds[i]).collect();
    assert_eq!(fulls, [0, 9, 18, 27]);
    // Compaction keeps the records from the previous full one (18, 0-based 18 → seq 19).
    let keys = record_keys(store.as_ref(), &id).await;
    assert_eq!(
        keys.first().unwrap().as_str(),
        "users/ada/chat-1/00000000000000000019"
    );
    assert_eq!(keys.len(), 12);
    assert_eq!(
        journal::list(store.as_ref()).await.unwrap(),
        vec![id.clone()]
    );
    assert_resumes(&store, &id, &mut chef).await;
}

pub(crate) async fn a_torn_last_record_is_dropped_and_the_next_save_takes_its_place(
    store: Arc<dyn StorageBackend>,
) {
    let (id, mut journal, mut chef) = started(&store, "torn");
    let mut before_last = Vec::new();
    for i in 0..5 {
        turn(&mut chef, i);
        if i == 4 {
            before_last = replayed_bytes(store.as_ref(), &id).await;
        }
        journal.save(&chef).await.unwrap();
    }
    // The last record cut short, as a torn append on a backend without atomic writes
    // would leave it.
    let last = key("torn/00000000000000000005");
    let stored = store
        .get(&Namespace::JOURNAL, &last)
        .await
        .unwrap()
        .unwrap();
    let text = stored.value.content();
    store
        .put(
            &Namespace::JOURNAL,
            &last,
            Entry::new(&text[..text.len() / 2]),
            Expect::Any,
        )
        .await
        .unwrap();
    // Reading reports it and leaves it.
    let read = journal::read(store.as_ref(), &id).await.unwrap().unwrap();
    assert_eq!((read.loaded.seq, read.loaded.dropped), (4, Some(5)));
    assert_eq!(snapshot::to_vec(&read.snapshot).unwrap(), before_last);
    // Loading drops it: the session resumes at the record before, and saves continue.
    let mut resumed = Chef::new(config());
    let mut again = journal_of(&store, &id);
    let loaded = again.load(&mut resumed).await.unwrap().unwrap();
    assert_eq!(
        (loaded.seq, loaded.dropped, loaded.records),
        (4, Some(5), 4)
    );
    assert_eq!(state_bytes(&resumed), before_last);
    turn(&mut resumed, 4);
    let saved = again.save(&resumed).await.unwrap();
    assert_eq!((saved.seq, saved.full), (5, false));
    assert_replays_to(store.as_ref(), &id, &resumed).await;
    assert_resumes(&store, &id, &mut resumed).await;
}

pub(crate) async fn damage_before_the_last_record_is_refused_and_changes_nothing(
    store: Arc<dyn StorageBackend>,
) {
    let (id, mut journal, mut chef) = started(&store, "damaged");
    for i in 0..5 {
        turn(&mut chef, i);
        journal.save(&chef).await.unwrap();
    }
    for (record, from, to) in [
        // One digit of a result's text ("car 2" → "car 3"): the checksum finds it.
        ("damaged/00000000000000000003", "car 2", "car 3"),
        // The full record itself.
        ("damaged/00000000000000000001", "You help.", "You helq."),
    ] {
        let record = key(record);
        let good = content(store.as_ref(), &Namespace::JOURNAL, &record).await;
        assert!(good.contains(from), "{record}");
        let bad = good.replacen(from, to, 1);
        store
            .put(&Namespace::JOURNAL, &record, Entry::new(bad), Expect::Any)
            .await
            .unwrap();
        let mut other = session();
        let before = state_bytes(&other);
        let err = Journal::new(Arc::clone(&store), id.clone())
            .load(&mut other)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ChefError::Snapshot(SnapshotError::Corrupt { .. })),
            "{record}: {err:?}"
        );
        assert!(err.to_string().contains("journal record"), "{err}");
        assert_eq!(state_bytes(&other), before, "{record}");
        store
            .put(&Namespace::JOURNAL, &record, Entry::new(good), Expect::Any)
            .await
            .unwrap();
    }
    assert_resumes(&store, &id, &mut chef).await;
}

pub(crate) async fn a_second_writer_is_refused_and_recovers_by_loading(
    store: Arc<dyn StorageBackend>,
) {
    let id = key("two-writers");
    let mut chef = session();
    turn(&mut chef, 0);
    Journal::new(Arc::clone(&store), id.clone())
        .save(&chef)
        .await
        .unwrap();
    // Two workers resume the same session.
    let (mut a, mut b) = (Chef::new(config()), Chef::new(config()));
    let mut ja = journal_of(&store, &id);
    let mut jb = journal_of(&store, &id);
    ja.load(&mut a).await.unwrap().unwrap();
    jb.load(&mut b).await.unwrap().unwrap();
    turn(&mut a, 1);
    turn(&mut b, 1);
    b.push(Message::user("only b says this"));
    assert_eq!(ja.save(&a).await.unwrap().seq, 2);
    let err = jb.save(&b).await.unwrap_err();
    assert!(
        matches!(&err, ChefError::Snapshot(e) if e.is_conflict()),
        "{err:?}"
    );
    // Nothing of b's was written; b reloads, re-applies, saves.
    assert_replays_to(store.as_ref(), &id, &a).await;
    assert_eq!(jb.next_seq(), Some(2));
    jb.load(&mut b).await.unwrap().unwrap();
    b.push(Message::user("only b says this"));
    assert_eq!(jb.save(&b).await.unwrap().seq, 3);
    assert_replays_to(store.as_ref(), &id, &b).await;
}

pub(crate) async fn rewrites_and_registry_changes_write_full_records(
    store: Arc<dyn StorageBackend>,
) {
    let (id, mut journal, mut chef) = started(&store, "rewrites");
    let mut kinds = Vec::new();
    let mut save = async |chef: &Chef| {
        let saved = journal.save(chef).await.unwrap();
        kinds.push(saved.full);
    };
    turn(&mut chef, 0);
    save(&chef).await; // first: full
    turn(&mut chef, 1);
    save(&chef).await; // delta
    chef.clear_history();
    save(&chef).await; // a rewritten history: full
    turn(&mut chef, 2);
    save(&chef).await; // delta
    let mut tools = crate::support::two_tools();
    tools.pop();
    chef.register_tools(tools).unwrap();
    save(&chef).await; // the registry moved: full
    chef.tools_mut().set_blocked(["weather_now"]);
    chef.announce("a", "Maintenance at noon.", chef::Channel::System);
    save(&chef).await; // state only: delta
    save(&chef).await; // nothing changed: a delta of the turn alone
    assert_eq!(kinds, [true, false, true, false, true, false, false]);
    assert_replays_to(store.as_ref(), &id, &chef).await;
    // A journal handed another session writes a full record, not a delta against the
    // first session's state.
    let other = session();
    let mut journal = journal_of(&store, &id);
    journal.load(&mut Chef::new(config())).await.unwrap();
    let saved = journal.save(&other).await.unwrap();
    assert!(saved.full);
    assert_replays_to(store.as_ref(), &id, &other).await;
    // Full records at 1, 3, 5 and 8: each compaction kept the records from the full one
    // before it, so 5–8 remain.
    assert_eq!(saved.pruned, 2);
    let keys = record_keys(store.as_ref(), &id).await;
    assert_eq!(
        keys.first().unwrap().as_str(),
        "rewrites/00000000000000000005"
    );
    assert_eq!(journal::delete(store.as_ref(), &id).await.unwrap(), 4);
    assert!(journal::read(store.as_ref(), &id).await.unwrap().is_none());
}

/// Every single-bit flip of a delta record is caught: as damage (`Corrupt`) in the middle of
/// the journal, as a torn tail (dropped) at its end.
#[test]
fn every_bit_flip_of_a_delta_record_is_caught() {
    crate::support::block_on(async {
        let store: Arc<dyn StorageBackend> = Arc::new(chef::store::MemoryBackend::new());
        let (id, mut journal, mut chef) = started(&store, "flips");
        for i in 0..3 {
            turn(&mut chef, i);
            journal.save(&chef).await.unwrap();
        }
        for (record, last) in [
            ("flips/00000000000000000002", false),
            ("flips/00000000000000000003", true),
        ] {
            let record = key(record);
            let good = content(store.as_ref(), &Namespace::JOURNAL, &record).await;
            let bytes = good.as_bytes().to_vec();
            for bit in 0..bytes.len() * 8 {
                let mut bad = bytes.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                let Ok(text) = String::from_utf8(bad) else {
                    continue; // a store entry is text: such a flip cannot be stored
                };
                store
                    .put(&Namespace::JOURNAL, &record, Entry::new(text), Expect::Any)
                    .await
                    .unwrap();
                match journal::read(store.as_ref(), &id).await {
                    Ok(Some(replayed)) if last => assert_eq!(replayed.loaded.dropped, Some(3)),
                    Err(SnapshotError::Corrupt { .. }) if !last => {}
                    other => panic!("{record}, bit {bit}: {other:?}"),
                }
            }
            store
                .put(
                    &Namespace::JOURNAL,
                    &record,
                    Entry::new(good.as_str()),
                    Expect::Any,
                )
                .await
                .unwrap();
        }
        assert_replays_to(store.as_ref(), &id, &chef).await;
    });
}

/// Saving a turn of a long session writes what the turn added, not the session.
#[test]
fn a_turn_of_a_2000_message_session_saves_as_a_small_delta() {
    crate::support::block_on(async {
        let store: Arc<dyn StorageBackend> = Arc::new(chef::store::MemoryBackend::new());
        let (id, mut journal, mut chef) = started(&store, "long");
        for i in 0..666 {
            chef.push(Message::user(format!(
                "turn {i}: book a ride to street {i}"
            )));
            chef.push(Message::assistant(format!("Booked ride {i}.")));
            chef.push(Message::user("thanks"));
        }
        chef.compile(Target::Anthropic).unwrap();
        let full = journal.save(&chef).await.unwrap();
        assert!(full.full && full.bytes > 60_000, "{full:?}");
        turn(&mut chef, 666);
        let delta = journal.save(&chef).await.unwrap();
        assert!(!delta.full && delta.bytes < 1_500, "{delta:?}");
        assert_replays_to(store.as_ref(), &id, &chef).await;
    });
}

/// By default a full record comes once the deltas since the last one weigh as much as it:
/// replay never reads more than about twice the session.
#[test]
fn deltas_that_outweigh_the_snapshot_bring_a_full_record() {
    crate::support::block_on(async {
        let (store, id, mut journal) = memory_journal("by-bytes");
        let mut chef = session();
        let (mut full_bytes, mut since) = (0, 0);
        for i in 0..30 {
            turn(&mut chef, i);
            let saved = journal.save(&chef).await.unwrap();
            if saved.full {
                assert!(
                    i == 0 || since >= full_bytes,
                    "turn {i}: {since} < {full_bytes}"
                );
                (full_bytes, since) = (saved.bytes, 0);
            } else {
                since += saved.bytes;
                assert!(since < full_bytes + saved.bytes, "turn {i}");
            }
        }
        assert_replays_to(store.as_ref(), &id, &chef).await;
    });
}
