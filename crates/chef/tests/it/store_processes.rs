//! Compare-and-set on the file-system store between concurrent processes.
//!
//! Several copies of this test binary (re-executed with `CHEF_CAS_CHILD_DIR` set, filtered
//! to the ignored `cas_child_process` entry point) increment one counter at the same time,
//! each retrying on conflict. Every increment must survive: the lock files' `flock` excludes
//! the other processes during each read-check-write.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use chef::store::{Entry, Expect, FsBackend, Namespace, StorageBackend, StoreKey};

const CHILD_ENV: &str = "CHEF_CAS_CHILD_DIR";
const PROCESSES: u64 = 3;
const INCREMENTS: u64 = 10;

fn counter_key() -> StoreKey {
    StoreKey::new("shared/counter").unwrap()
}

/// The child's entry point; a no-op unless the parent test started this process.
#[test]
#[ignore = "entry point of the writer processes that store_processes::concurrent_processes_lose_no_update spawns"]
fn cas_child_process() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = FsBackend::open(PathBuf::from(dir)).unwrap();
    runtime.block_on(async {
        for _ in 0..INCREMENTS {
            loop {
                let read = store.get(&Namespace::MEMORY, &counter_key()).await.unwrap();
                let n: u64 = read
                    .as_ref()
                    .map_or(0, |r| r.value.content().parse().unwrap());
                let entry = Entry::new((n + 1).to_string());
                match store
                    .put(
                        &Namespace::MEMORY,
                        &counter_key(),
                        entry,
                        Expect::from_read(read.as_ref()),
                    )
                    .await
                {
                    Ok(_) => break,
                    Err(e) if e.is_conflict() => {}
                    Err(e) => panic!("{e}"),
                }
            }
        }
    });
}

#[test]
fn concurrent_processes_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "store_processes::cas_child_process",
                    "--exact",
                    "--ignored",
                    "--test-threads=1",
                ])
                .env(CHILD_ENV, dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = FsBackend::open(dir.path()).unwrap();
    let got = runtime
        .block_on(store.get(&Namespace::MEMORY, &counter_key()))
        .unwrap()
        .unwrap();
    assert_eq!(got.value.content(), (PROCESSES * INCREMENTS).to_string());
}
