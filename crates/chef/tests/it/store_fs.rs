//! File-system backend specifics: layout, symlinks, corrupt files, temp files, two handles.

use std::fs;
use std::sync::Arc;

use chef::store::{
    Entry, Expect, FsBackend, KeyProblem, Namespace, StorageBackend, StoreError, StoreKey,
};

use crate::support::{content, increment_retrying, key};

/// Puts `content` at key `k` of `ns`.
async fn put(
    store: &FsBackend,
    ns: &Namespace,
    k: &str,
    content: &str,
    expect: Expect,
) -> Result<u64, StoreError> {
    store.put(ns, &key(k), Entry::new(content), expect).await
}

fn assert_refused<T: std::fmt::Debug>(result: Result<T, StoreError>, want: KeyProblem) {
    match result {
        Err(StoreError::InvalidKey(e)) => assert_eq!(e.problem, want, "{e}"),
        other => panic!("expected an invalid-key error, got {other:?}"),
    }
}

/// Asserts a read of key `get` and a blind write of key `put` in `ns` are both refused with
/// `want`.
async fn assert_get_and_put_refused(
    store: &FsBackend,
    ns: &Namespace,
    [get, put_key]: [&str; 2],
    want: KeyProblem,
) {
    assert_refused(store.get(ns, &key(get)).await, want);
    assert_refused(put(store, ns, put_key, "x", Expect::Any).await, want);
}

#[tokio::test]
async fn an_entry_file_is_a_compact_json_envelope_with_the_version_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let entry = Entry::new("TS").with_meta("description", "d");
    let v = store
        .put(&Namespace::MEMORY, &key("lang"), entry, Expect::Absent)
        .await
        .unwrap();
    let path = store.root().join("memory/lang.json");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        format!(r#"{{"version":{v},"content":"TS","meta":{{"description":"d"}}}}"#)
    );
    put(
        &store,
        &Namespace::NOTES,
        "sub/plan.md",
        "# plan",
        Expect::Absent,
    )
    .await
    .unwrap();
    let note = fs::read_to_string(store.root().join("notes/sub.d/plan.md.json")).unwrap();
    assert!(note.ends_with(r##","content":"# plan"}"##), "{note}");
}

#[tokio::test]
async fn entries_survive_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let v = {
        let store = FsBackend::open(dir.path()).unwrap();
        put(&store, &Namespace::NOTES, "a/b", "kept", Expect::Absent)
            .await
            .unwrap()
    };
    let store = FsBackend::open(dir.path()).unwrap();
    let got = store
        .get(&Namespace::NOTES, &key("a/b"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((got.value.content(), got.version), ("kept", v));
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_out_of_the_root_are_refused_and_nothing_is_written_outside() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("secret.json"),
        r#"{"version":1,"content":"secret"}"#,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let root = store.root().to_path_buf();

    // A directory link inside a namespace.
    fs::create_dir_all(root.join("notes")).unwrap();
    symlink(outside.path(), root.join("notes/evil.d")).unwrap();
    assert_get_and_put_refused(
        &store,
        &Namespace::NOTES,
        ["evil/secret", "evil/planted"],
        KeyProblem::Symlink,
    )
    .await;
    assert_refused(
        store
            .delete(&Namespace::NOTES, &key("evil/secret"), Expect::Any)
            .await,
        KeyProblem::Symlink,
    );
    // Listing skips the link instead of walking out.
    assert!(store.list(&Namespace::NOTES, "").await.unwrap().is_empty());

    // A namespace directory that is a link.
    symlink(outside.path(), root.join("vfs")).unwrap();
    assert_get_and_put_refused(
        &store,
        &Namespace::VFS,
        ["secret", "planted"],
        KeyProblem::Symlink,
    )
    .await;

    // An entry file that is a link.
    fs::create_dir_all(root.join("memory")).unwrap();
    symlink(
        outside.path().join("secret.json"),
        root.join("memory/lang.json"),
    )
    .unwrap();
    assert_get_and_put_refused(
        &store,
        &Namespace::MEMORY,
        ["lang", "lang"],
        KeyProblem::Symlink,
    )
    .await;

    let mut outside_names: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    outside_names.sort();
    assert_eq!(outside_names, ["secret.json"]);
    assert_eq!(
        fs::read_to_string(outside.path().join("secret.json")).unwrap(),
        r#"{"version":1,"content":"secret"}"#
    );
}

#[test]
fn traversal_keys_never_become_store_keys() {
    for hostile in [
        "..",
        "../x",
        "a/../../x",
        "/etc/passwd",
        "a\\..\\x",
        "a\0b",
        "",
        "a//b",
        "a/",
        ".locks/00.lock",
        "./a",
        "a/.",
        ".tmp-1-x",
    ] {
        assert!(StoreKey::new(hostile).is_err(), "{hostile:?} accepted");
    }
}

#[tokio::test]
async fn something_else_in_the_way_of_a_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    fs::create_dir_all(store.root().join("notes/a.json")).unwrap();
    fs::write(store.root().join("notes/b.d"), "not a directory").unwrap();
    assert_get_and_put_refused(
        &store,
        &Namespace::NOTES,
        ["a", "b/c"],
        KeyProblem::NotAnEntry,
    )
    .await;
}

#[tokio::test]
async fn a_corrupt_entry_is_a_typed_error_and_only_a_blind_write_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    fs::create_dir_all(store.root().join("memory")).unwrap();
    let path = store.root().join("memory/lang.json");
    for body in [
        "",
        "{\"version\":1,\"cont",
        "[]",
        "{\"content\":\"no version\"}",
    ] {
        fs::write(&path, body).unwrap();
        match store.get(&Namespace::MEMORY, &key("lang")).await {
            Err(StoreError::Corrupt { path: p, .. }) => assert_eq!(p, path),
            other => panic!("{body:?}: {other:?}"),
        }
        assert!(matches!(
            put(&store, &Namespace::MEMORY, "lang", "x", Expect::Absent).await,
            Err(StoreError::Corrupt { .. })
        ));
    }
    put(&store, &Namespace::MEMORY, "lang", "fixed", Expect::Any)
        .await
        .unwrap();
    assert_eq!(
        content(&store, &Namespace::MEMORY, &key("lang")).await,
        "fixed"
    );
}

#[tokio::test]
async fn foreign_and_hidden_files_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    put(&store, &Namespace::NOTES, "real", "x", Expect::Absent)
        .await
        .unwrap();
    let ns_dir = store.root().join("notes");
    fs::write(ns_dir.join("README"), "no suffix").unwrap();
    fs::write(ns_dir.join(".hidden.json"), "{}").unwrap();
    fs::create_dir(ns_dir.join("plain-dir")).unwrap();
    fs::write(ns_dir.join("plain-dir/x.json"), "{}").unwrap();
    assert_eq!(
        store.list(&Namespace::NOTES, "").await.unwrap(),
        [key("real")]
    );
}

#[tokio::test]
async fn opening_removes_temp_files_of_dead_writers_only() {
    if !std::path::Path::new("/proc/self").exists() {
        return; // liveness by pid needs /proc; elsewhere the age rule applies
    }
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("notes/a.d")).unwrap();
    let dead = dir.path().join("notes/a.d/.tmp-0-deadbeef");
    let live = dir
        .path()
        .join(format!("notes/.tmp-{}-cafe", std::process::id()));
    fs::write(&dead, "half").unwrap();
    fs::write(&live, "in flight").unwrap();
    FsBackend::open(dir.path()).unwrap();
    assert!(!dead.exists());
    assert!(live.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_root_keep_compare_and_set() {
    // Two independent handles open their own lock files, exactly as two processes would:
    // the flock on each read-check-write must exclude the other handle.
    let dir = tempfile::tempdir().unwrap();
    let stores: [Arc<dyn StorageBackend>; 2] = [
        Arc::new(FsBackend::open(dir.path()).unwrap()),
        Arc::new(FsBackend::open(dir.path()).unwrap()),
    ];
    let k = key("shared");
    let mut handles = Vec::new();
    for i in 0..8 {
        let store = Arc::clone(&stores[i % 2]);
        let k = k.clone();
        handles.push(tokio::spawn(async move {
            for _ in 0..10 {
                increment_retrying(&*store, &k).await;
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let got = stores[0]
        .get(&Namespace::MEMORY, &k)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.value.content(), "80");
}

#[test]
fn the_backend_works_outside_a_tokio_runtime() {
    // No runtime: the blocking I/O runs inline instead of panicking.
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let fut = async {
        put(&store, &Namespace::NOTES, "x", "y", Expect::Absent)
            .await
            .unwrap();
        store
            .get(&Namespace::NOTES, &key("x"))
            .await
            .unwrap()
            .unwrap()
    };
    let got = poll_once(fut);
    assert_eq!(got.value.content(), "y");
}

/// Poll a future that completes without waiting (no runtime needed).
fn poll_once<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("future did not complete inline"),
    }
}

/// Opening and reading a store writes nothing into it; the lock files come with the first
/// write (found by session 33's CLI audit: `chef sessions ls` created `.locks/`).
#[tokio::test]
async fn only_a_write_creates_the_lock_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let ns = Namespace::new("notes").unwrap();
    assert!(store.get(&ns, &key("a")).await.unwrap().is_none());
    assert!(store.list(&ns, "").await.unwrap().is_empty());
    let names = |p: &std::path::Path| -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    put(&store, &ns, "a", "x", Expect::Absent).await.unwrap();
    assert_eq!(names(dir.path()), [".locks", "notes"]);
    // The lock file stays open and is reused: the next writes on that stripe go through.
    put(&store, &ns, "a", "y", Expect::Any).await.unwrap();
    assert!(store.delete(&ns, &key("a"), Expect::Any).await.unwrap());
}
