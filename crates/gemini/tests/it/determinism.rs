//! The same request gives the same bytes: twice in one process, and in two processes.

use std::process::Command;

use crate::{compile, conversation, corpus, text};

fn big_request() -> chef_ir::Request {
    let mut request = conversation();
    request.tools.extend(corpus());
    request
}

#[test]
fn compiling_twice_gives_identical_bytes() {
    let request = big_request();
    assert_eq!(text(&compile(&request)), text(&compile(&request)));
    let cloned = request.clone();
    assert_eq!(text(&compile(&request)), text(&compile(&cloned)));
}

const CHILD: &str = "CHEF_GEMINI_DETERMINISM_OUT";

/// Helper for `compiling_in_two_processes_gives_identical_bytes`: when the parent sets the
/// variable, write this process's bytes there. Without it there is nothing to do.
#[test]
fn child_process_writes_its_bytes() {
    if let Some(path) = std::env::var_os(CHILD) {
        std::fs::write(path, text(&compile(&big_request()))).unwrap();
    }
}

#[test]
fn compiling_in_two_processes_gives_identical_bytes() {
    let out = std::env::temp_dir().join(format!(
        "chef-gemini-determinism-{}.json",
        std::process::id()
    ));
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "determinism::child_process_writes_its_bytes",
            "--test-threads=1",
        ])
        .env(CHILD, &out)
        .status()
        .unwrap();
    assert!(status.success());
    let theirs = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(theirs, text(&compile(&big_request())));
}
