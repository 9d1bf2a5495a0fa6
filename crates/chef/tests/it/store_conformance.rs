//! One backend-conformance suite, run against every `StorageBackend`.
//!
//! Each case is a plain async function over `Arc<dyn StorageBackend>`; the
//! `backend_suite!` macro (in `support.rs`) instantiates every case as a `#[tokio::test]` for
//! each backend. Adding a backend is one more line there. The PostgreSQL backend (feature
//! `postgres`) runs the same cases against a real server (see `pg.rs`), each in a fresh
//! schema, and skips loudly when no server is available.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use chef::snapshot::{self, Snapshot};
use chef::store::{
    Entry, Expect, FsBackend, MemoryBackend, Namespace, StorageBackend, StoreError, StoreKey,
};
use tempfile::TempDir;

use crate::support::{content, increment_retrying, key};

/// A backend under test plus whatever must live as long as it (a temp directory).
pub(crate) struct Fixture {
    pub(crate) store: Arc<dyn StorageBackend>,
    _dir: Option<TempDir>,
    _guard: Option<Box<dyn Send>>,
}

impl Fixture {
    /// A backend kept alive with `guard` (dropped after the test).
    #[cfg_attr(
        not(feature = "postgres"),
        allow(dead_code, reason = "used by the pg fixture")
    )]
    pub(crate) fn with_guard(store: Arc<dyn StorageBackend>, guard: Box<dyn Send>) -> Self {
        Self {
            store,
            _dir: None,
            _guard: Some(guard),
        }
    }
}

pub(crate) fn memory() -> Fixture {
    Fixture {
        store: Arc::new(MemoryBackend::new()),
        _dir: None,
        _guard: None,
    }
}

pub(crate) fn file_system() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    Fixture {
        store: Arc::new(FsBackend::open(dir.path()).unwrap()),
        _dir: Some(dir),
        _guard: None,
    }
}

/// A [`Scoped`](chef::store::Scoped) view of a memory backend whose neighbouring scopes hold
/// entries under the same keys and namespaces the cases use: each case must see only its
/// own.
pub(crate) async fn scoped() -> Fixture {
    let shared: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
    for scope in ["neighbour", "s"] {
        let view = chef::store::Scoped::new(Arc::clone(&shared), scope).unwrap();
        for namespace in [Namespace::NOTES, Namespace::MEMORY, Namespace::SESSIONS] {
            for key in ["a", "b", "k", "notes/a", "session"] {
                let key = chef::store::StoreKey::new(key).unwrap();
                view.put(
                    &namespace,
                    &key,
                    chef::store::Entry::new("noise"),
                    chef::store::Expect::Any,
                )
                .await
                .unwrap();
            }
        }
    }
    Fixture {
        store: Arc::new(chef::store::Scoped::new(shared, "s/case").unwrap()),
        _dir: None,
        _guard: None,
    }
}

backend_suite!(store_conformance, worker_threads = 4;
    put_then_get_returns_the_entry_and_its_version,
    every_write_changes_the_version,
    compare_and_set_refuses_stale_writes_and_changes_nothing,
    expect_any_overwrites_whatever_is_stored,
    delete_honours_its_expectation,
    a_recreated_key_never_reuses_a_version,
    list_filters_by_prefix_and_sorts_by_bytes,
    scan_returns_entries_with_versions_in_key_order,
    namespaces_are_isolated,
    unusual_but_valid_keys_round_trip,
    concurrent_writers_that_retry_lose_no_update,
    concurrent_creators_exactly_one_wins,
    a_second_holder_is_refused_while_the_lease_holds,
    an_expired_lease_is_taken_over_and_the_old_grant_is_dead,
    concurrent_claimers_exactly_one_wins,
    a_saved_session_loads_with_its_version_and_stale_saves_conflict
);

fn expect_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, want_current: Option<u64>) {
    match result {
        Err(StoreError::Conflict { current, .. }) => assert_eq!(current, want_current),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

pub(crate) async fn put_then_get_returns_the_entry_and_its_version(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::NOTES;
    assert!(store.get(&ns, &key("plan.md")).await.unwrap().is_none());
    let entry = Entry::new("# plan\nline two")
        .with_meta("zeta", 1)
        .with_meta("alpha", serde_json::json!({"nested": [1, 2]}));
    let version = store
        .put(&ns, &key("plan.md"), entry.clone(), Expect::Absent)
        .await
        .unwrap();
    let got = store.get(&ns, &key("plan.md")).await.unwrap().unwrap();
    assert_eq!(got.version, version);
    assert_eq!(got.value, entry);
    // Metadata keeps its insertion order through the backend.
    let names: Vec<_> = got.value.meta().keys().cloned().collect();
    assert_eq!(names, ["zeta", "alpha"]);
}

pub(crate) async fn every_write_changes_the_version(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::MEMORY;
    let k = key("lang");
    let mut seen = Vec::new();
    let mut expect = Expect::Absent;
    for i in 0..5 {
        let v = store
            .put(&ns, &k, Entry::new(format!("v{i}")), expect)
            .await
            .unwrap();
        assert!(!seen.contains(&v), "version {v} reused");
        seen.push(v);
        expect = Expect::Version(v);
    }
    let got = store.get(&ns, &k).await.unwrap().unwrap();
    assert_eq!(got.value.content(), "v4");
    assert_eq!(Some(&got.version), seen.last());
}

pub(crate) async fn compare_and_set_refuses_stale_writes_and_changes_nothing(
    store: Arc<dyn StorageBackend>,
) {
    let ns = Namespace::MEMORY;
    let k = key("lang");
    // Version expected on an absent key: conflict, current = None.
    expect_conflict(
        store
            .put(&ns, &k, Entry::new("x"), Expect::Version(7))
            .await,
        None,
    );
    assert!(store.get(&ns, &k).await.unwrap().is_none());

    let v1 = store
        .put(&ns, &k, Entry::new("TS"), Expect::Absent)
        .await
        .unwrap();
    // Create over an existing key: conflict carrying the stored version.
    expect_conflict(
        store.put(&ns, &k, Entry::new("Go"), Expect::Absent).await,
        Some(v1),
    );
    // A stale version: conflict carrying the stored version.
    let v2 = store
        .put(&ns, &k, Entry::new("Rust"), Expect::Version(v1))
        .await
        .unwrap();
    expect_conflict(
        store
            .put(&ns, &k, Entry::new("Go"), Expect::Version(v1))
            .await,
        Some(v2),
    );
    let got = store.get(&ns, &k).await.unwrap().unwrap();
    assert_eq!((got.value.content(), got.version), ("Rust", v2));
    // The error names what conflicted.
    let err = store
        .put(&ns, &k, Entry::new("Go"), Expect::Absent)
        .await
        .unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(
        err.to_string(),
        format!("write conflict on memory/lang: stored version is {v2}")
    );
}

pub(crate) async fn expect_any_overwrites_whatever_is_stored(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::NOTES;
    let k = key("n");
    store
        .put(&ns, &k, Entry::new("a"), Expect::Any)
        .await
        .unwrap();
    let v = store
        .put(&ns, &k, Entry::new("b"), Expect::Any)
        .await
        .unwrap();
    let got = store.get(&ns, &k).await.unwrap().unwrap();
    assert_eq!((got.value.content(), got.version), ("b", v));
}

pub(crate) async fn delete_honours_its_expectation(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::NOTES;
    let k = key("d/e");
    assert!(!store.delete(&ns, &k, Expect::Any).await.unwrap());
    assert!(!store.delete(&ns, &k, Expect::Absent).await.unwrap());
    expect_conflict(store.delete(&ns, &k, Expect::Version(3)).await, None);

    let v = store
        .put(&ns, &k, Entry::new("x"), Expect::Absent)
        .await
        .unwrap();
    expect_conflict(store.delete(&ns, &k, Expect::Absent).await, Some(v));
    expect_conflict(
        store
            .delete(&ns, &k, Expect::Version(v.wrapping_add(1)))
            .await,
        Some(v),
    );
    assert!(store.get(&ns, &k).await.unwrap().is_some());
    assert!(store.delete(&ns, &k, Expect::Version(v)).await.unwrap());
    assert!(store.get(&ns, &k).await.unwrap().is_none());
    assert!(store.list(&ns, "").await.unwrap().is_empty());

    store
        .put(&ns, &k, Entry::new("y"), Expect::Absent)
        .await
        .unwrap();
    assert!(store.delete(&ns, &k, Expect::Any).await.unwrap());
    assert!(store.get(&ns, &k).await.unwrap().is_none());
}

pub(crate) async fn a_recreated_key_never_reuses_a_version(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::MEMORY;
    let k = key("aba");
    let v1 = store
        .put(&ns, &k, Entry::new("first"), Expect::Absent)
        .await
        .unwrap();
    assert!(store.delete(&ns, &k, Expect::Version(v1)).await.unwrap());
    let v2 = store
        .put(&ns, &k, Entry::new("second"), Expect::Absent)
        .await
        .unwrap();
    assert_ne!(v1, v2);
    // A writer that read the first incarnation cannot overwrite the second.
    expect_conflict(
        store
            .put(&ns, &k, Entry::new("stale"), Expect::Version(v1))
            .await,
        Some(v2),
    );
}

pub(crate) async fn list_filters_by_prefix_and_sorts_by_bytes(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::NOTES;
    for k in ["b", "a/y", "a/x", "a", "ab", "c/d/e", "B", "é"] {
        store
            .put(&ns, &key(k), Entry::new(k), Expect::Absent)
            .await
            .unwrap();
    }
    let list = |prefix: &'static str| {
        let store = Arc::clone(&store);
        let ns = ns.clone();
        async move {
            store
                .list(&ns, prefix)
                .await
                .unwrap()
                .into_iter()
                .map(StoreKey::into_inner)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        list("").await,
        ["B", "a", "a/x", "a/y", "ab", "b", "c/d/e", "é"]
    );
    assert_eq!(list("a").await, ["a", "a/x", "a/y", "ab"]);
    assert_eq!(list("a/").await, ["a/x", "a/y"]);
    assert_eq!(list("c/d").await, ["c/d/e"]);
    assert!(list("zz").await.is_empty());
    assert!(store.list(&Namespace::VFS, "").await.unwrap().is_empty());
}

pub(crate) async fn scan_returns_entries_with_versions_in_key_order(
    store: Arc<dyn StorageBackend>,
) {
    let ns = Namespace::MEMORY;
    let mut versions = Vec::new();
    for k in ["k2", "k1", "other"] {
        let v = store
            .put(
                &ns,
                &key(k),
                Entry::new(format!("value of {k}")).with_meta("k", k),
                Expect::Absent,
            )
            .await
            .unwrap();
        versions.push((k, v));
    }
    let scanned = store.scan(&ns, "k").await.unwrap();
    let got: Vec<_> = scanned
        .iter()
        .map(|(k, v)| (k.as_str(), v.value.content(), v.version))
        .collect();
    let version_of = |name: &str| versions.iter().find(|(k, _)| *k == name).unwrap().1;
    assert_eq!(
        got,
        [
            ("k1", "value of k1", version_of("k1")),
            ("k2", "value of k2", version_of("k2")),
        ]
    );
}

pub(crate) async fn namespaces_are_isolated(store: Arc<dyn StorageBackend>) {
    let k = key("same");
    let custom = Namespace::new("team-1").unwrap();
    for (i, ns) in [
        Namespace::MEMORY,
        Namespace::NOTES,
        Namespace::VFS,
        Namespace::ARCHIVE,
        custom.clone(),
    ]
    .iter()
    .enumerate()
    {
        store
            .put(ns, &k, Entry::new(format!("{ns}-{i}")), Expect::Absent)
            .await
            .unwrap();
    }
    assert_eq!(content(&*store, &Namespace::NOTES, &k).await, "notes-1");
    assert!(
        store
            .delete(&Namespace::NOTES, &k, Expect::Any)
            .await
            .unwrap()
    );
    assert!(store.get(&Namespace::NOTES, &k).await.unwrap().is_none());
    assert_eq!(content(&*store, &Namespace::MEMORY, &k).await, "memory-0");
    assert_eq!(content(&*store, &custom, &k).await, "team-1-4");
    assert_eq!(
        store.list(&Namespace::VFS, "").await.unwrap(),
        std::slice::from_ref(&k)
    );
    assert!(store.list(&Namespace::NOTES, "").await.unwrap().is_empty());
}

pub(crate) async fn unusual_but_valid_keys_round_trip(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::VFS;
    let big = "x".repeat(1 << 20) + "\u{1F600}\0\u{7f}\"\\";
    let keys = [
        "a.json",
        "a.d",
        "a.json.d/b",
        "with space/ü-é",
        "x.d/y.json",
        "q?*:<>|",
        "a",
        "a/b",
    ];
    for k in keys {
        store
            .put(&ns, &key(k), Entry::new(k), Expect::Absent)
            .await
            .unwrap();
    }
    store
        .put(&ns, &key("big"), Entry::new(big.clone()), Expect::Absent)
        .await
        .unwrap();
    for k in keys {
        assert_eq!(content(&*store, &ns, &key(k)).await, k);
    }
    assert_eq!(content(&*store, &ns, &key("big")).await, big);
    assert_eq!(store.list(&ns, "").await.unwrap().len(), keys.len() + 1);
}

pub(crate) async fn concurrent_writers_that_retry_lose_no_update(store: Arc<dyn StorageBackend>) {
    const TASKS: u64 = 8;
    const INCREMENTS: u64 = 15;
    let ns = Namespace::MEMORY;
    let k = key("counter");
    let mut handles = Vec::new();
    for _ in 0..TASKS {
        let store = Arc::clone(&store);
        let k = k.clone();
        handles.push(tokio::spawn(async move {
            let mut conflicts = 0u64;
            for _ in 0..INCREMENTS {
                conflicts += increment_retrying(&*store, &k).await;
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for h in handles {
        conflicts += h.await.unwrap();
    }
    let got = store.get(&ns, &k).await.unwrap().unwrap();
    assert_eq!(
        got.value.content(),
        (TASKS * INCREMENTS).to_string(),
        "{conflicts} conflicts"
    );
}

pub(crate) async fn concurrent_creators_exactly_one_wins(store: Arc<dyn StorageBackend>) {
    let ns = Namespace::NOTES;
    let k = key("claim");
    let mut handles = Vec::new();
    for i in 0..16 {
        let store = Arc::clone(&store);
        let (ns, k) = (ns.clone(), k.clone());
        handles.push(tokio::spawn(async move {
            store
                .put(&ns, &k, Entry::new(i.to_string()), Expect::Absent)
                .await
        }));
    }
    let mut winners = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        match h.await.unwrap() {
            Ok(_) => winners.push(i),
            Err(e) => assert!(e.is_conflict(), "{e}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let got = store.get(&ns, &k).await.unwrap().unwrap();
    assert_eq!(got.value.content(), winners[0].to_string());
}

pub(crate) async fn a_second_holder_is_refused_while_the_lease_holds(
    store: Arc<dyn StorageBackend>,
) {
    let session = key("sessions/s1");
    let ttl = Duration::from_secs(60);
    let before = SystemTime::now();
    let lease = store.claim_lease(&session, "worker-a", ttl).await.unwrap();
    assert_eq!((lease.session(), lease.holder()), (&session, "worker-a"));
    // Generous bounds: the server's clock may differ a little from ours.
    assert!(lease.expires_at() > before + Duration::from_secs(50));
    match store.claim_lease(&session, "worker-b", ttl).await {
        Err(StoreError::Leased { holder, until, .. }) => {
            assert_eq!(holder, "worker-a");
            assert_eq!(until, lease.expires_at());
        }
        other => panic!("expected Leased, got {other:?}"),
    }
    // Another session is independent.
    store
        .claim_lease(&key("sessions/s2"), "worker-b", ttl)
        .await
        .unwrap();
    // The holder may renew; the renewed lease still refuses others.
    let renewed = store.renew_lease(&lease, ttl).await.unwrap();
    assert!(renewed.expires_at() >= lease.expires_at());
    assert!(
        store
            .claim_lease(&session, "worker-b", ttl)
            .await
            .unwrap_err()
            .is_leased()
    );
    // Released: the next claimer gets it, and the old grant can neither renew nor release.
    assert!(store.release_lease(&renewed).await.unwrap());
    assert!(!store.release_lease(&renewed).await.unwrap());
    let b = store.claim_lease(&session, "worker-b", ttl).await.unwrap();
    assert_eq!(b.holder(), "worker-b");
    assert!(matches!(
        store.renew_lease(&renewed, ttl).await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert!(matches!(
        store.claim_lease(&session, "", ttl).await,
        Err(StoreError::InvalidHolder { .. })
    ));
}

pub(crate) async fn an_expired_lease_is_taken_over_and_the_old_grant_is_dead(
    store: Arc<dyn StorageBackend>,
) {
    let session = key("crashy");
    // worker-a "crashes" holding a short lease.
    let ttl = Duration::from_millis(150);
    let claimed_at = std::time::Instant::now();
    let a = store.claim_lease(&session, "worker-a", ttl).await.unwrap();
    let b = match store
        .claim_lease(&session, "worker-b", Duration::from_secs(60))
        .await
    {
        Err(e) => {
            assert!(e.is_leased(), "{e}");
            tokio::time::sleep(ttl + Duration::from_millis(250)).await;
            store
                .claim_lease(&session, "worker-b", Duration::from_secs(60))
                .await
                .unwrap()
        }
        // Only when this process was stalled past the lease between the two claims (a
        // loaded machine): then the takeover has already happened.
        Ok(b) => {
            assert!(claimed_at.elapsed() >= ttl, "a live lease was taken over");
            b
        }
    };
    assert_eq!(b.holder(), "worker-b");
    assert_ne!(a.token(), b.token());
    // worker-a comes back: its grant is gone.
    assert!(matches!(
        store.renew_lease(&a, Duration::from_secs(60)).await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert!(!store.release_lease(&a).await.unwrap());
    match store
        .claim_lease(&session, "worker-a", Duration::from_secs(60))
        .await
    {
        Err(StoreError::Leased { holder, .. }) => assert_eq!(holder, "worker-b"),
        other => panic!("expected Leased, got {other:?}"),
    }
}

pub(crate) async fn concurrent_claimers_exactly_one_wins(store: Arc<dyn StorageBackend>) {
    let session = key("contended");
    let mut handles = Vec::new();
    for i in 0..12 {
        let store = Arc::clone(&store);
        let session = session.clone();
        handles.push(tokio::spawn(async move {
            store
                .claim_lease(&session, &format!("worker-{i}"), Duration::from_secs(60))
                .await
        }));
    }
    let mut winners = Vec::new();
    for h in handles {
        match h.await.unwrap() {
            Ok(lease) => winners.push(lease.holder().to_owned()),
            Err(e) => assert!(e.is_leased(), "{e}"),
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
}

pub(crate) async fn a_saved_session_loads_with_its_version_and_stale_saves_conflict(
    store: Arc<dyn StorageBackend>,
) {
    let id = key("session-7");
    let turns = |n: u64| Snapshot::new((1..=n).collect::<Vec<u64>>()).with_created_turn(n);
    assert!(
        snapshot::store::load::<Vec<u64>>(&*store, &id)
            .await
            .unwrap()
            .is_none()
    );
    let v1 = snapshot::store::save(&*store, &id, &turns(1), Expect::Absent)
        .await
        .unwrap();
    // Worker B loads what worker A saved, and commits turn 2.
    let loaded = snapshot::store::load::<Vec<u64>>(&*store, &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (loaded.value.payload.as_slice(), loaded.version),
        (&[1][..], v1)
    );
    let v2 = snapshot::store::save(&*store, &id, &turns(2), Expect::Version(v1))
        .await
        .unwrap();
    // Worker A, still at v1, is refused with the current version; nothing is overwritten.
    let err = snapshot::store::save(&*store, &id, &turns(9), Expect::Version(v1))
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");
    match err {
        snapshot::SnapshotError::Store(StoreError::Conflict { current, .. }) => {
            assert_eq!(current, Some(v2));
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let now = snapshot::store::load::<Vec<u64>>(&*store, &id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((now.value.payload, now.version), (vec![1, 2], v2));
    assert_eq!(now.value.created_turn, 2);
    assert_eq!(snapshot::store::list(&*store).await.unwrap(), [id]);
}
