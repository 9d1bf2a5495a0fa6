//! Compare-and-set on the file-system store between concurrent processes.
//!
//! Several copies of this test binary (re-executed with `CHEF_CAS_CHILD_DIR` set, filtered
//! to the ignored `cas_child_process` entry point) increment one counter at the same time,
//! each retrying on conflict. Every increment must survive: the lock files' `flock` excludes
//! the other processes during each read-check-write.

use std::process::Stdio;

use chef::store::{FsBackend, Namespace, StorageBackend};

use crate::child::assert_succeeded;
use crate::support::{bare_runtime, child_dir, child_test, increment_retrying, key};

const CHILD_ENV: &str = "CHEF_CAS_CHILD_DIR";
/// The store key of the counter the child processes increment.
const COUNTER: &str = "shared/counter";
const PROCESSES: u64 = 3;
const INCREMENTS: u64 = 10;

/// The child's entry point; a no-op unless the parent test started this process.
#[test]
#[ignore = "entry point of the writer processes that store_processes::concurrent_processes_lose_no_update spawns"]
fn cas_child_process() {
    let Some(dir) = child_dir(CHILD_ENV) else {
        return;
    };
    let store = FsBackend::open(dir).unwrap();
    bare_runtime().block_on(async {
        for _ in 0..INCREMENTS {
            increment_retrying(&store, &key(COUNTER)).await;
        }
    });
}

#[test]
fn concurrent_processes_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            child_test("store_processes::cas_child_process", CHILD_ENV, dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        assert_succeeded(&child.wait_with_output().unwrap());
    }
    let runtime = bare_runtime();
    let store = FsBackend::open(dir.path()).unwrap();
    let got = runtime
        .block_on(store.get(&Namespace::MEMORY, &key(COUNTER)))
        .unwrap()
        .unwrap();
    assert_eq!(got.value.content(), (PROCESSES * INCREMENTS).to_string());
}
