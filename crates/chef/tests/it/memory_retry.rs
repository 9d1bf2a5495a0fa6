//! Memory writes through the owned tools retry transparently where that is safe.
//!
//! Two sessions (two `Chef`s, as two workers would run them) share one backend and write
//! memory through the owned `context` / `create_memory` / `modify_memory` tools, each
//! session writing through to the store (`Chef::with_memory_store`). The cases interleave
//! their writes: disjoint keys, a key whose fact is unchanged underneath (re-applied), the
//! same change made twice (already applied, not counted twice), a key changed or created
//! underneath (refused, never overwritten, the model told), remove against modify, a lost
//! acknowledgement, and a retry budget that runs out (typed `Conflict`).
//!
//! Every case runs against the in-memory and the file-system backend and, with the
//! `postgres` feature, against PostgreSQL (skipped loudly without a server, see `pg.rs`).

use std::sync::{Arc, Mutex};

use chef::memory::{Memory, MemoryEntry, MemoryEvent, RetryOutcome, SetOptions, Ttl};
use chef::store::StorageBackend;
use chef::{Chef, ChefConfig, ChefEvent, OwnedCall, OwnedReply, ToolsMode};
use serde_json::{Value, json};

use crate::faulty::{Fault, Faulty};

backend_suite!(memory_retry, worker_threads = 2;
    disjoint_keys_never_conflict,
    a_write_whose_fact_is_unchanged_underneath_is_reapplied,
    the_same_change_made_twice_is_applied_once,
    an_edit_of_a_key_changed_underneath_is_refused_and_never_overwrites,
    a_create_racing_a_create_is_refused_unless_it_is_the_same_fact,
    remove_against_modify_is_refused_both_ways,
    a_rename_never_deletes_its_source_unless_the_destination_was_saved,
    a_lost_acknowledgement_is_not_written_twice,
    an_exhausted_retry_budget_is_a_typed_conflict,
    direct_writes_keep_conflicting_except_a_delete_of_a_gone_key
);

/// One session (one worker's view), its memory loaded from `store` and written through.
struct Session {
    chef: Chef,
    retries: Arc<Mutex<Vec<(String, u32, RetryOutcome)>>>,
}

impl Session {
    async fn open(store: &Arc<dyn StorageBackend>) -> Self {
        Self::open_with(store, Memory::new()).await
    }

    /// Two sessions (two workers) on `store`.
    async fn two(store: &Arc<dyn StorageBackend>) -> (Self, Self) {
        (Self::open(store).await, Self::open(store).await)
    }

    async fn open_with(store: &Arc<dyn StorageBackend>, mut memory: Memory) -> Self {
        memory.load(&**store).await.unwrap();
        let mut chef = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified))
            .with_memory(memory)
            .with_memory_store(Arc::clone(store));
        let retries = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&retries);
        chef.subscribe(move |event| {
            if let ChefEvent::Memory(MemoryEvent::PersistRetried {
                key,
                attempts,
                outcome,
            }) = event
            {
                sink.lock()
                    .unwrap()
                    .push((key.as_str().to_owned(), *attempts, *outcome));
            }
        });
        Self { chef, retries }
    }

    async fn call(&mut self, name: &str, arguments: Value) -> OwnedReply {
        let call = OwnedCall {
            id: "c1".into(),
            name: name.to_owned(),
            arguments,
        };
        self.chef.handle_tool(&call).await.unwrap()
    }

    async fn create(&mut self, k: &str, text: &str) -> OwnedReply {
        let path = format!("context://memory/{k}");
        self.call(
            "context",
            json!({"command": "create", "path": path, "file_text": text}),
        )
        .await
    }

    async fn replace(&mut self, k: &str, old: &str, new: &str) -> OwnedReply {
        let path = format!("context://memory/{k}");
        self.call(
            "context",
            json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new}),
        )
        .await
    }

    async fn rename(&mut self, from: &str, to: &str) -> OwnedReply {
        let (path, new_path) = (
            format!("context://memory/{from}"),
            format!("context://memory/{to}"),
        );
        self.call(
            "context",
            json!({"command": "rename", "path": path, "new_path": new_path}),
        )
        .await
    }

    async fn delete(&mut self, k: &str) -> OwnedReply {
        let path = format!("context://memory/{k}");
        self.call("context", json!({"command": "delete", "path": path}))
            .await
    }

    fn value(&self, k: &str) -> Option<String> {
        self.chef
            .memory()
            .unwrap()
            .get(k)
            .map(|e| e.value().to_owned())
    }

    fn retries(&self) -> Vec<(String, u32, RetryOutcome)> {
        self.retries.lock().unwrap().clone()
    }
}

/// What the store holds for memory key `k`, decoded through a fresh `Memory`.
async fn stored(store: &Arc<dyn StorageBackend>, k: &str) -> Option<MemoryEntry> {
    let mut memory = Memory::new();
    memory.load(&**store).await.unwrap();
    memory.get(k).cloned()
}

async fn seed(store: &Arc<dyn StorageBackend>, k: &str, value: &str) {
    let mut memory = Memory::new();
    memory.load(&**store).await.unwrap();
    memory.set(k, value, SetOptions::new()).unwrap();
    memory.persist(&**store).await.unwrap();
}

fn assert_ok(reply: &OwnedReply) {
    assert!(!reply.is_error, "{}", reply.text);
}

/// Asserts the tool refused, saying `why`.
fn assert_refused(reply: &OwnedReply, why: &str) {
    assert!(reply.is_error);
    assert!(reply.text.contains(why), "{}", reply.text);
}

pub(crate) async fn disjoint_keys_never_conflict(store: Arc<dyn StorageBackend>) {
    let (mut a, mut b) = Session::two(&store).await;
    for i in 0..3 {
        assert_ok(&a.create(&format!("a{i}"), "from a").await);
        assert_ok(&b.create(&format!("b{i}"), "from b").await);
    }
    assert_ok(&a.replace("a0", "from a", "edited by a").await);
    assert_ok(&b.delete("b1").await);
    assert_eq!(stored(&store, "a0").await.unwrap().value(), "edited by a");
    assert_eq!(stored(&store, "b0").await.unwrap().value(), "from b");
    assert!(stored(&store, "b1").await.is_none());
    let mut fresh = Memory::new();
    fresh.load(&*store).await.unwrap();
    assert_eq!(fresh.len(), 5);
    assert!(a.retries().is_empty() && b.retries().is_empty());
    assert!(!a.chef.memory().unwrap().has_unsaved_changes());
}

pub(crate) async fn a_write_whose_fact_is_unchanged_underneath_is_reapplied(
    store: Arc<dyn StorageBackend>,
) {
    seed(&store, "plan", "draft").await;
    let mut a = Session::open(&store).await;
    // Another worker refreshes the entry's TTL: same fact, new version and bookkeeping.
    let mut other = Memory::new();
    other.load(&*store).await.unwrap();
    other
        .set("plan", "draft", SetOptions::new().with_ttl(Ttl::Turns(50)))
        .unwrap();
    other.persist(&*store).await.unwrap();

    let reply = a.replace("plan", "draft", "final").await;
    assert_ok(&reply);
    assert_eq!(reply.text, "Edited context://memory/plan.");
    let now = stored(&store, "plan").await.unwrap();
    assert_eq!(now.value(), "final");
    // Three writes in all, and the refreshed TTL the edit did not touch is kept.
    assert_eq!(now.update_count(), 3);
    assert_eq!(now.expires_at_turn(), Some(50));
    assert_eq!(
        a.retries(),
        [("plan".to_owned(), 1, RetryOutcome::Reapplied)]
    );
    assert_eq!(a.chef.memory().unwrap().get("plan"), Some(&now));

    // Changed and changed back (A -> B -> A) underneath: the fact the model saw holds.
    let mut b = Session::open(&store).await;
    let mut c = Session::open(&store).await;
    assert_ok(&c.replace("plan", "final", "other").await);
    assert_ok(&c.replace("plan", "other", "final").await);
    assert_ok(&b.replace("plan", "final", "final, checked").await);
    assert_eq!(
        stored(&store, "plan").await.unwrap().value(),
        "final, checked"
    );
    assert_eq!(b.retries().len(), 1);
}

pub(crate) async fn the_same_change_made_twice_is_applied_once(store: Arc<dyn StorageBackend>) {
    seed(&store, "tz", "UTC").await;
    let (mut a, mut b) = Session::two(&store).await;
    assert_ok(&b.replace("tz", "UTC", "CET").await);
    let after_b = stored(&store, "tz").await.unwrap();
    assert_ok(&a.replace("tz", "UTC", "CET").await);
    // A's identical change is recognised as done: not written again, not counted twice.
    assert_eq!(stored(&store, "tz").await.unwrap(), after_b);
    assert_eq!(after_b.update_count(), 2);
    assert_eq!(
        a.retries(),
        [("tz".to_owned(), 1, RetryOutcome::AlreadyApplied)]
    );
    // The same for two removes of one entry.
    assert_ok(&b.delete("tz").await);
    assert_ok(&a.delete("tz").await);
    assert!(stored(&store, "tz").await.is_none());
    assert_eq!(a.retries().len(), 2);
}

pub(crate) async fn an_edit_of_a_key_changed_underneath_is_refused_and_never_overwrites(
    store: Arc<dyn StorageBackend>,
) {
    seed(&store, "plan", "step one").await;
    let (mut a, mut b) = Session::two(&store).await;
    assert_ok(&b.replace("plan", "step one", "step one, then two").await);

    // A's model never saw B's value; its edit (which would still apply textually) must not
    // be merged into it, nor overwrite it.
    let reply = a.replace("plan", "step one", "step 1").await;
    assert_refused(
        &reply,
        "context://memory/plan was changed by someone else meanwhile",
    );
    assert_eq!(
        stored(&store, "plan").await.unwrap().value(),
        "step one, then two"
    );
    // A's memory now shows what is stored, so its next turn decides on the real value.
    assert_eq!(a.value("plan").as_deref(), Some("step one, then two"));
    assert!(!a.chef.memory().unwrap().has_unsaved_changes());
    assert!(a.retries().is_empty());
    // Deciding again on the value it now sees succeeds.
    assert_ok(&a.replace("plan", "then two", "then 2").await);
    assert_eq!(
        stored(&store, "plan").await.unwrap().value(),
        "step one, then 2"
    );
}

pub(crate) async fn a_create_racing_a_create_is_refused_unless_it_is_the_same_fact(
    store: Arc<dyn StorageBackend>,
) {
    let (mut a, mut b) = Session::two(&store).await;
    assert_ok(&b.create("lang", "Rust").await);
    let reply = a.create("lang", "Go").await;
    assert_refused(&reply, "context://memory/lang was created by someone else");
    assert_eq!(stored(&store, "lang").await.unwrap().value(), "Rust");
    assert_eq!(a.value("lang").as_deref(), Some("Rust"));

    // The legacy tool, and a create of the same fact: already applied.
    assert_ok(
        &b.call("create_memory", json!({"key": "editor", "value": "helix"}))
            .await,
    );
    assert_ok(
        &a.call("create_memory", json!({"key": "editor", "value": "helix"}))
            .await,
    );
    assert_eq!(stored(&store, "editor").await.unwrap().update_count(), 1);
    assert_eq!(
        a.retries(),
        [("editor".to_owned(), 1, RetryOutcome::AlreadyApplied)]
    );
}

pub(crate) async fn remove_against_modify_is_refused_both_ways(store: Arc<dyn StorageBackend>) {
    seed(&store, "x", "one").await;
    seed(&store, "y", "one").await;
    let (mut a, mut b) = Session::two(&store).await;

    // B edits x, then A (which saw "one") removes it: refused, B's edit stays.
    assert_ok(&b.replace("x", "one", "two").await);
    let reply = a.delete("x").await;
    assert!(reply.is_error, "{}", reply.text);
    assert_eq!(stored(&store, "x").await.unwrap().value(), "two");
    assert_eq!(a.value("x").as_deref(), Some("two"));

    // B removes y, then A edits it (legacy tool): refused, y is not brought back.
    assert_ok(&b.delete("y").await);
    let reply = a
        .call(
            "modify_memory",
            json!({"action": "update", "key": "y", "value": "resurrected"}),
        )
        .await;
    assert_refused(&reply, "context://memory/y was deleted by someone else");
    assert!(stored(&store, "y").await.is_none());
    assert_eq!(a.value("y"), None);
    assert!(a.retries().is_empty());
}

pub(crate) async fn a_rename_never_deletes_its_source_unless_the_destination_was_saved(
    store: Arc<dyn StorageBackend>,
) {
    seed(&store, "old", "keep me").await;
    let (mut a, mut b) = Session::two(&store).await;
    assert_ok(&b.create("new", "taken").await);
    let reply = a.rename("old", "new").await;
    assert_refused(&reply, "context://memory/old was not saved either");
    assert_eq!(stored(&store, "old").await.unwrap().value(), "keep me");
    assert_eq!(stored(&store, "new").await.unwrap().value(), "taken");
    assert_eq!(a.value("old").as_deref(), Some("keep me"));
    assert_eq!(a.value("new").as_deref(), Some("taken"));
}

pub(crate) async fn a_lost_acknowledgement_is_not_written_twice(store: Arc<dyn StorageBackend>) {
    seed(&store, "count", "1").await;
    let flaky = Faulty::over(Arc::clone(&store), Fault::LoseNextAck);
    let mut a = Session::open(&flaky).await;
    let call = OwnedCall {
        id: "c1".into(),
        name: "context".to_owned(),
        arguments: json!({"command": "str_replace", "path": "context://memory/count", "old_str": "1", "new_str": "2"}),
    };
    // The write reached the store but its answer was lost: the host sees the failure.
    let err = a.chef.handle_tool(&call).await.unwrap_err();
    assert!(err.to_string().contains("answer lost"), "{err}");
    assert!(a.chef.memory().unwrap().has_unsaved_changes());
    // Persisting again finds its own write already there: adopted, not applied twice.
    let written = a.chef.memory_mut().unwrap().persist(&*flaky).await.unwrap();
    assert_eq!(written, 0);
    let now = stored(&store, "count").await.unwrap();
    assert_eq!((now.value(), now.update_count()), ("2", 2));
    assert_eq!(
        a.retries(),
        [("count".to_owned(), 1, RetryOutcome::AlreadyApplied)]
    );
}

pub(crate) async fn an_exhausted_retry_budget_is_a_typed_conflict(store: Arc<dyn StorageBackend>) {
    // Every reload sees the entry one step late: a writer refreshes it (same fact) right
    // after each read, so each re-applied write conflicts again.
    for (churns, budget, succeeds) in [(2, 3, true), (2, 2, false), (0, 0, false)] {
        let k = format!("hot{churns}{budget}");
        seed(&store, &k, "v").await;
        let churn = Faulty::over(Arc::clone(&store), Fault::Churn(churns));
        let mut memory = Memory::new().with_persist_retries(budget);
        memory.load(&*churn).await.unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        memory.subscribe(move |e| {
            if let MemoryEvent::PersistRetried { attempts, .. } = e {
                sink.lock().unwrap().push(*attempts);
            }
        });
        // The first conflict: another writer refreshed the entry before this write.
        seed(&store, &k, "v").await;
        memory.modify(&k, "mine", None).unwrap();
        let result = memory.persist(&*churn).await;
        if succeeds {
            assert_eq!(result.unwrap(), 1);
            assert_eq!(stored(&store, &k).await.unwrap().value(), "mine");
            assert_eq!(*events.lock().unwrap(), [churns + 1]);
        } else {
            let err = result.unwrap_err();
            assert!(err.is_conflict(), "{err}");
            assert!(memory.has_unsaved_changes());
            assert_eq!(stored(&store, &k).await.unwrap().value(), "v");
            assert!(events.lock().unwrap().is_empty());
        }
    }

    // Through the tool: the budget spent, the model is told and nothing is overwritten.
    seed(&store, "tool", "v").await;
    let churn = Faulty::over(Arc::clone(&store), Fault::Churn(100));
    let mut a = Session::open_with(&churn, Memory::new().with_persist_retries(1)).await;
    seed(&store, "tool", "v").await;
    let reply = a.replace("tool", "v", "mine").await;
    assert!(reply.is_error, "{}", reply.text);
    assert_eq!(stored(&store, "tool").await.unwrap().value(), "v");
}

pub(crate) async fn direct_writes_keep_conflicting_except_a_delete_of_a_gone_key(
    store: Arc<dyn StorageBackend>,
) {
    seed(&store, "k", "v").await;
    let (mut a, mut b) = (Memory::new(), Memory::new());
    a.load(&*store).await.unwrap();
    b.load(&*store).await.unwrap();
    // A refresh of the same fact underneath still fails a direct write: host code asked
    // for conflicts, and gets them.
    b.set("k", "v", SetOptions::new()).unwrap();
    b.persist(&*store).await.unwrap();
    a.set("k", "w", SetOptions::new()).unwrap();
    let err = a.persist(&*store).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    assert_eq!(stored(&store, "k").await.unwrap().value(), "v");

    // Two deletes of one key: the second finds it gone, which is what it asked for.
    a.load(&*store).await.unwrap();
    b.load(&*store).await.unwrap();
    assert!(b.delete("k").is_some());
    b.persist(&*store).await.unwrap();
    assert!(a.delete("k").is_some());
    assert_eq!(a.persist(&*store).await.unwrap(), 0);
    assert!(!a.has_unsaved_changes());
    assert!(stored(&store, "k").await.is_none());
}
