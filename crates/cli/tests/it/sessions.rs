//! `chef sessions ls|show|export|import --store URL`: file system to file system always,
//! file system to PostgreSQL and back when the CLI is built with `postgres` and
//! `CHEF_PG_URL` names a server (`.ci/run` provides one).

use std::ffi::OsStr;
use std::path::Path;

use chef::snapshot::{self, Snapshot};
use chef::store::{Expect, FsBackend, StorageBackend, StoreKey};
use serde_json::{Value, json};

use crate::{assert_error, chef, stderr, stdout};

/// A new temporary directory with the file system store `a` in it, [`seed`]ed; returns the
/// directory (keep it alive) and the store's path.
fn seeded_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    seed(&FsBackend::open(&a).unwrap());
    (dir, a)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Two sessions saved through the library, as a worker would.
fn seed(store: &dyn StorageBackend) {
    runtime().block_on(async {
        for (id, turn) in [("support/42", 3u64), ("alpha", 1)] {
            let payload = json!({"history": [{"role": "user", "text": format!("hello from {id}")}], "zeta": 1, "alpha": 2});
            let snap = Snapshot::new(payload)
                .with_created_turn(turn)
                .with_label("seed");
            snapshot::store::save(store, &StoreKey::new(id).unwrap(), &snap, Expect::Absent)
                .await
                .unwrap();
        }
    });
}

/// `chef sessions ARGS…`.
fn sessions<S: AsRef<OsStr>>(args: &[S]) -> std::process::Output {
    chef(std::iter::once(OsStr::new("sessions")).chain(args.iter().map(AsRef::as_ref)))
}

/// `chef sessions ls --store STORE`.
fn ls_output(store: impl AsRef<OsStr>) -> std::process::Output {
    sessions(&["ls".as_ref(), "--store".as_ref(), store.as_ref()])
}

/// `chef sessions show ID --store STORE`.
fn show_output(store: &str, id: &str) -> std::process::Output {
    sessions(&["show", id, "--store", store])
}

/// `chef sessions export --store STORE`, then `more` flags.
fn export_output(store: &str, more: &[&OsStr]) -> std::process::Output {
    let mut args: Vec<&OsStr> = vec!["export".as_ref(), "--store".as_ref(), store.as_ref()];
    args.extend(more);
    sessions(&args)
}

fn ls(store: &str) -> Vec<Value> {
    let out = ls_output(store);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn show(store: &str, id: &str) -> String {
    let out = show_output(store, id);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

fn export(store: &str, bundle: &Path) {
    let out = export_output(store, &["--out".as_ref(), bundle.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
}

fn import(store: &str, bundle: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&OsStr> = vec![
        "import".as_ref(),
        bundle.as_os_str(),
        "--store".as_ref(),
        store.as_ref(),
    ];
    args.extend(extra.iter().map(|s| OsStr::new(*s)));
    sessions(&args)
}

/// Export from `from`, import into `to`, and check both list and show the same sessions.
fn round_trip(from: &str, to: &str, scratch: &Path) {
    let bundle = scratch.join(format!("bundle-{}.jsonl", std::process::id()));
    export(from, &bundle);
    let out = import(to, &bundle, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "{\"imported\":2}\n");
    let ids = |store: &str| -> Vec<(String, u64)> {
        ls(store)
            .iter()
            .map(|l| {
                (
                    l["id"].as_str().unwrap().to_owned(),
                    l["created_turn"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        ids(to),
        [("alpha".to_owned(), 1), ("support/42".to_owned(), 3)]
    );
    assert_eq!(ids(from), ids(to));
    for id in ["alpha", "support/42"] {
        // Byte for byte the same snapshot, key order included.
        assert_eq!(show(from, id), show(to, id));
    }
    // Importing again refuses to overwrite, and says how to.
    let again = import(to, &bundle, &[]);
    assert_error(&again, &["already exists"]);
    let forced = import(to, &bundle, &["--overwrite"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
}

#[test]
fn sessions_move_between_two_file_system_stores_unchanged() {
    let (dir, a) = seeded_store();
    let b = dir.path().join("b");
    let shown = show(a.to_str().unwrap(), "support/42");
    let parsed = snapshot::from_slice::<Value>(shown.as_bytes()).unwrap();
    assert_eq!(parsed.created_turn, 3);
    assert_eq!(parsed.label.as_deref(), Some("seed"));
    let keys: Vec<_> = parsed
        .payload
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["history", "zeta", "alpha"]);
    // A plain directory on one side, a file:// URL on the other.
    round_trip(
        a.to_str().unwrap(),
        &format!("file://{}", b.display()),
        dir.path(),
    );
}

#[test]
fn sessions_commands_report_bad_input_with_status_2() {
    let (dir, a) = seeded_store();
    let store = a.to_str().unwrap();
    let missing = show_output(store, "nope");
    assert_error(&missing, &["no session \"nope\""]);
    let no_dir = ls_output(dir.path().join("absent"));
    assert_eq!(no_dir.status.code(), Some(2));
    let scheme = ls_output("s3://x");
    assert_eq!(scheme.status.code(), Some(2));
    // A bundle with one bad line imports nothing.
    let bundle = dir.path().join("bad.jsonl");
    let good = r#"{"id":"ok","snapshot":{"format":"chef-snapshot","format_version":1,"created_turn":0,"payload":1}}"#;
    std::fs::write(
        &bundle,
        format!("{good}\n{{\"id\":\"../x\",\"snapshot\":{{}}}}\n"),
    )
    .unwrap();
    let b = dir.path().join("b");
    let out = import(b.to_str().unwrap(), &bundle, &[]);
    assert_error(&out, &["bad.jsonl: line 2: "]);
    assert!(!b.exists(), "no store created, nothing written");
}

/// A run refused with exit status 2, nothing on stdout and one line on stderr, which is
/// returned.
#[track_caller]
fn refusal(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(stdout(out).is_empty(), "{}", stdout(out));
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// A bundle that must import nothing: its [`refusal`], and nothing written.
fn refused_import(bundle_text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bad2.jsonl");
    std::fs::write(&bundle, bundle_text).unwrap();
    let b = dir.path().join("b");
    let err = refusal(&import(b.to_str().unwrap(), &bundle, &[]));
    assert!(!b.exists(), "no store created, nothing written");
    err
}

const GOOD_LINE: &str = r#"{"id":"ok","snapshot":{"format":"chef-snapshot","format_version":1,"created_turn":0,"payload":1}}"#;

/// A bundle line that is not JSON names one position; a snapshot whose checksum does not
/// match says so; one session twice names both lines. Each imports nothing.
#[test]
fn a_bad_bundle_imports_nothing_and_says_where_and_why() {
    let corrupt = r#"{"id":"ok","snapshot":{"format":"chef-snapshot","format_version":2,"created_turn":0,"payload":1,"checksum":"crc32:00000000"}}"#;
    let other = GOOD_LINE.replace("\"ok\"", "\"other\"");
    // Each error is one line, so a needle ending in its newline ends the error.
    let cases = [
        (
            format!("{GOOD_LINE}\n\n{{1:2}}\n"),
            &["bad2.jsonl: line 3: not valid JSON at column 2: key must be a string\n"][..],
        ),
        (
            format!("{corrupt}\n"),
            &[
                "bad2.jsonl: line 1: the snapshot data is corrupt: ",
                "checksum",
            ],
        ),
        (
            format!("{GOOD_LINE}\n{other}\n\n{GOOD_LINE}\n"),
            &["bad2.jsonl: line 4: session \"ok\" is also on line 1"],
        ),
    ];
    for (bundle, needles) in cases {
        let err = refused_import(&bundle);
        for needle in needles {
            assert!(err.contains(needle), "{needle:?} is not in: {err}");
        }
    }
}

#[test]
fn a_corrupt_stored_snapshot_is_neither_shown_nor_exported_and_said() {
    let (dir, a) = seeded_store();
    let store = a.to_str().unwrap();
    // One byte of the stored snapshot changes: its checksum no longer matches.
    let file = a.join("sessions").join("alpha.json");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("hello from alpha"), "{text}");
    std::fs::write(&file, text.replace("hello from alpha", "hello from alphA")).unwrap();

    let refused = |out: std::process::Output| {
        let err = refusal(&out);
        assert!(
            err.contains("session \"alpha\" is corrupt: ") && err.contains("checksum mismatch"),
            "{err}"
        );
    };
    refused(show_output(store, "alpha"));
    // Export writes the intact session, names the corrupt one and exits 2.
    let bundle = dir.path().join("bundle.jsonl");
    let out = export_output(store, &["--out".as_ref(), bundle.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("session \"alpha\" is corrupt: ") && err.contains("checksum mismatch"),
        "{err}"
    );
    assert!(
        err.contains("1 damaged session(s) left out of the bundle: \"alpha\""),
        "{err}"
    );
    assert_eq!(bundle_ids(&bundle), ["support/42"]);
    // The intact session still shows.
    assert!(show(store, "support/42").contains("hello from support/42"));
    // `ls` does not list it as whole either (session 38's CLI audit: it did).
    let out = ls_output(store);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stdout(&out).contains("\"alpha\""), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("1 damaged session(s) not listed: \"alpha\""),
        "{}",
        stderr(&out)
    );
}

/// The ids of a bundle's lines, in order.
fn bundle_ids(bundle: &Path) -> Vec<String> {
    std::fs::read_to_string(bundle)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// A session whose store entry is cut short: `ls` and `export` go on with the others, name
/// it on stderr with the reason and exit 2 (found by session 33's CLI audit: both printed
/// nothing and exited 2).
#[test]
fn a_damaged_entry_is_named_and_the_other_sessions_listed_and_exported() {
    let (dir, a) = seeded_store();
    let store = a.to_str().unwrap();
    let file = a.join("sessions").join("alpha.json");
    let text = std::fs::read(&file).unwrap();
    std::fs::write(&file, &text[..50]).unwrap();

    let out = ls_output(store);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let listed: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], "support/42");
    let err = stderr(&out);
    assert!(err.contains("session \"alpha\" is corrupt: "), "{err}");
    assert!(
        err.contains("alpha.json"),
        "the reason names the file: {err}"
    );
    assert!(
        err.contains("1 damaged session(s) not listed: \"alpha\""),
        "{err}"
    );

    let bundle = dir.path().join("bundle.jsonl");
    let out = export_output(store, &["--out".as_ref(), bundle.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("left out of the bundle: \"alpha\""),
        "{}",
        stderr(&out)
    );
    assert_eq!(bundle_ids(&bundle), ["support/42"]);
    // What was written is a whole bundle: it imports.
    let b = dir.path().join("b");
    let imported = import(b.to_str().unwrap(), &bundle, &[]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    // To stdout too, the same lines.
    let out = export_output(store, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), std::fs::read_to_string(&bundle).unwrap());
}

/// A session named twice is exported once; a store entry that is not JSON at all stops
/// `ls` with exit status 2 naming the file, as damaged data, not as a failure of chef.
#[test]
fn export_names_each_session_once_and_a_damaged_entry_is_bad_input() {
    let (dir, a) = seeded_store();
    let store = a.to_str().unwrap();
    let bundle = dir.path().join("twice.jsonl");
    let out = export_output(
        store,
        &[
            "alpha".as_ref(),
            "support/42".as_ref(),
            "alpha".as_ref(),
            "--out".as_ref(),
            bundle.as_os_str(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(bundle_ids(&bundle), ["alpha", "support/42"]);
    let b = dir.path().join("b");
    assert!(import(b.to_str().unwrap(), &bundle, &[]).status.success());

    std::fs::write(a.join("sessions").join("alpha.json"), "").unwrap();
    let out = ls_output(store);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is corrupt"), "{}", stderr(&out));
}

/// An import that fails after writing some sessions says how many are in the store.
#[cfg(unix)]
#[test]
fn an_import_that_fails_part_way_says_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("two.jsonl");
    let other = GOOD_LINE.replace("\"ok\"", "\"z\"");
    std::fs::write(&bundle, format!("{GOOD_LINE}\n{other}\n")).unwrap();
    let b = dir.path().join("b");
    std::fs::create_dir_all(b.join("sessions")).unwrap();
    // The store refuses to write through a symbolic link: the second write fails.
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.json"),
        b.join("sessions").join("z.json"),
    )
    .unwrap();
    let out = import(b.to_str().unwrap(), &bundle, &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("1 session(s) of the bundle were imported before \"z\" failed"),
        "{err}"
    );
}

/// A journal whose only record is damaged replays to nothing: `ls` says so on stderr
/// instead of leaving the session out silently, and `show` calls it corrupt (exit 2), not
/// absent.
#[test]
fn a_journal_with_no_intact_record_is_reported_not_hidden() {
    use std::sync::Arc;

    use chef::ir::{Message, Target};
    use chef::snapshot::journal::Journal;
    use chef::{Chef, ChefConfig};

    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let store: Arc<dyn StorageBackend> = Arc::new(FsBackend::open(&a).unwrap());
    runtime().block_on(async {
        let mut live = Chef::new(ChefConfig::default());
        let mut journal = Journal::new(Arc::clone(&store), StoreKey::new("j3").unwrap());
        live.push(Message::user("only"));
        live.compile(Target::Anthropic).unwrap();
        journal.save(&live).await.unwrap();
    });
    // Damage the record's bytes on disk (its one file under the journal namespace).
    let mut records = Vec::new();
    let mut dirs = vec![a.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().contains("journal") {
                records.push(path);
            }
        }
    }
    assert_eq!(records.len(), 1, "{records:?}");
    let text = std::fs::read_to_string(&records[0]).unwrap();
    std::fs::write(&records[0], text.replacen("only", "onlY", 1)).unwrap();

    let store_arg = a.to_str().unwrap();
    let out = ls_output(store_arg);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("session \"j3\": its journal has records, but none that replays"),
        "{}",
        stderr(&out)
    );
    let err = refusal(&show_output(store_arg, "j3"));
    assert!(err.contains("session \"j3\" is corrupt"), "{err}");
}

#[cfg(not(feature = "postgres"))]
#[test]
fn a_postgres_store_needs_the_feature() {
    let out = ls_output("postgres://chef@127.0.0.1:1/x");
    assert_error(&out, &["--features postgres"]);
}

/// A connection URL that does not parse is bad input (exit 2, as the gateway reads it), not
/// a store failure, and its password is never printed; a store given as a file that is not
/// a directory is named so.
#[cfg(feature = "postgres")]
#[test]
fn a_malformed_postgres_url_and_a_file_for_a_store_are_bad_input() {
    let out = ls_output("postgres://chef:s3cret@[bad");
    assert_error(&out, &["not a PostgreSQL connection URL"]);
    assert!(!stderr(&out).contains("s3cret"), "{}", stderr(&out));
    let (_dir, file) = crate::temp_file("store.json", "{}");
    assert_error(&ls_output(&file), &["not a directory"]);
}

#[cfg(feature = "postgres")]
#[test]
fn sessions_move_from_the_file_system_to_postgres_and_back() {
    use std::io::Write as _;
    let Some(url) = std::env::var("CHEF_PG_URL").ok().filter(|u| !u.is_empty()) else {
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED: no PostgreSQL (CHEF_PG_URL unset; .ci/run sets it) ***\n"
        );
        assert!(
            std::env::var("CHEF_PG_REQUIRED").map_or(true, |v| v != "1"),
            "CHEF_PG_REQUIRED=1 but CHEF_PG_URL is unset"
        );
        return;
    };
    // A schema of our own, created (with chef's tables) through the library.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let schema = format!("cli_test_{}_{nanos}", std::process::id());
    runtime().block_on(async {
        chef::store::PgBackend::connect_with(
            &url,
            chef::store::PgOptions::new().with_schema(schema.clone()),
        )
        .await
        .unwrap();
    });
    let sep = if url.contains('?') { '&' } else { '?' };
    let pg = format!("{url}{sep}options=-csearch_path%3D{schema}");
    let (dir, a) = seeded_store();
    let c = dir.path().join("c");
    round_trip(a.to_str().unwrap(), &pg, dir.path());
    round_trip(&pg, c.to_str().unwrap(), dir.path());
}

/// A session saved as a journal is listed, shown as its replayed snapshot, exported and
/// imported as a plain snapshot that restores the same session.
#[test]
fn journaled_sessions_are_listed_shown_and_exported() {
    use std::sync::Arc;

    use chef::ir::{Message, Target};
    use chef::snapshot::journal::Journal;
    use chef::{Chef, ChefConfig};

    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let store: Arc<dyn StorageBackend> = Arc::new(FsBackend::open(&a).unwrap());
    let mut live = Chef::new(ChefConfig::default());
    runtime().block_on(async {
        let mut journal = Journal::new(Arc::clone(&store), StoreKey::new("worker/7").unwrap());
        for text in ["first", "second", "third"] {
            live.push(Message::user(text));
            live.compile(Target::Anthropic).unwrap();
            journal.save(&live).await.unwrap();
        }
    });
    let store_arg = a.to_str().unwrap();
    let listed = ls(store_arg);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], "worker/7");
    assert_eq!(listed[0]["created_turn"], 3);
    assert_eq!(
        listed[0]["journal"],
        json!({"seq": 3, "full_seq": 1, "records": 3})
    );
    // `show` prints the state a snapshot of the live session holds, byte for byte.
    let shown = show(store_arg, "worker/7");
    let want = snapshot::to_vec(&live.snapshot(None)).unwrap();
    assert_eq!(shown.as_bytes(), want.as_slice());
    // Exported and imported elsewhere, it is a plain snapshot that resumes the session.
    let bundle = dir.path().join("bundle.jsonl");
    export(store_arg, &bundle);
    let b = dir.path().join("b");
    let out = import(b.to_str().unwrap(), &bundle, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(show(b.to_str().unwrap(), "worker/7"), shown);
    let mut resumed = Chef::new(ChefConfig::default());
    runtime().block_on(async {
        let backend = FsBackend::open(&b).unwrap();
        resumed
            .load_from_store(&backend, &StoreKey::new("worker/7").unwrap())
            .await
            .unwrap();
    });
    assert_eq!(
        resumed.compile(Target::Gemini).unwrap().body,
        live.compile(Target::Gemini).unwrap().body
    );
}

/// `--out` through a symbolic link writes the file it points to and keeps the link; a FIFO
/// at `--out` gets the bundle written into it and stays a FIFO (found by session 33's CLI
/// audit: both were replaced by a regular file).
#[cfg(unix)]
#[test]
fn export_out_follows_a_symlink_and_writes_into_a_fifo() {
    let (dir, a) = seeded_store();
    let store = a.to_str().unwrap();
    let target = dir.path().join("target.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("target.jsonl", &link).unwrap();
    export(store, &link);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let exported = std::fs::read_to_string(&target).unwrap();
    assert!(exported.contains("hello from alpha"), "{exported}");

    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    export(store, &fifo);
    assert_eq!(reader.join().unwrap(), exported);
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &std::fs::symlink_metadata(&fifo).unwrap().file_type()
    ));
}

/// An import whose bundle is missing or bad creates no store directory (found by session
/// 33's CLI audit: an empty store was left behind).
#[test]
fn an_import_that_cannot_read_its_bundle_creates_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st9");
    let missing = dir.path().join("nosuch.jsonl");
    let out = import(store.to_str().unwrap(), &missing, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("nosuch.jsonl"), "{}", stderr(&out));
    assert!(!store.exists(), "no store created");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{not json\n").unwrap();
    let out = import(store.to_str().unwrap(), &bad, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!store.exists(), "no store created");
}

/// An import that waits for a store lock another process holds says so on stderr, then
/// finishes once the lock is released (found by session 33's CLI audit: it blocked with no
/// message).
#[test]
fn an_import_waiting_for_the_store_lock_says_so_and_then_finishes() {
    use std::io::{BufRead as _, BufReader};

    let (dir, a) = seeded_store();
    let bundle = dir.path().join("bundle.jsonl");
    export(a.to_str().unwrap(), &bundle);
    let b = dir.path().join("b");
    // Create the store, then hold every one of its lock files, as another writer would.
    assert!(import(b.to_str().unwrap(), &bundle, &[]).status.success());
    let held: Vec<std::fs::File> = std::fs::read_dir(b.join(".locks"))
        .unwrap()
        .map(|e| {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(e.unwrap().path())
                .unwrap();
            file.lock().unwrap();
            file
        })
        .collect();
    assert!(!held.is_empty());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_chef"))
        .args(["sessions", "import"])
        .arg(&bundle)
        .arg("--store")
        .arg(&b)
        .arg("--overwrite")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = err.read_line(&mut line);
        let _ = tx.send(line);
    });
    let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(30)) else {
        child.kill().unwrap();
        panic!("import said nothing in 30 s while waiting for the lock");
    };
    assert!(
        line.contains("waiting for the store") && line.contains("holds its lock"),
        "{line}"
    );
    drop(held);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{line}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        r#"{"imported":2}"#
    );
}

/// `ls` and `export` of an empty store directory leave it empty (found by session 33's
/// CLI audit: `ls` created `.locks/`).
#[test]
fn reading_an_empty_store_writes_nothing_into_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().to_str().unwrap();
    assert!(ls(store).is_empty());
    let out = export_output(store, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
