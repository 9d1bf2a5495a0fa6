//! Integration tests for the `chef` binary: each runs the real executable.
#![cfg(test)]

mod compile_map;
mod compress;
mod demo;
mod eval;
mod inspect;
mod mcp;
mod mcp_promises;
mod mcp_serve;
mod recommend;
mod resolve;
mod scripted_http;
mod search;
mod sessions;

use std::{
    path::PathBuf,
    process::{Command, Output},
};

#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../../../../tests/support/recommend.rs"]
mod recommend_support;

pub(crate) use fixtures::fixture;

/// Runs `chef <command> <the 149-tool corpus> <flags>`.
pub(crate) fn on_corpus(command: &str, flags: &[&str]) -> Output {
    let mut args = vec![
        command.into(),
        fixture("real-mcp-tools.json").into_os_string(),
    ];
    args.extend(flags.iter().map(Into::<std::ffi::OsString>::into));
    chef(args)
}

/// Runs `chef` with arguments.
pub(crate) fn chef<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_chef"))
        .args(args)
        .output()
        .expect("chef runs")
}

/// stdout as UTF-8.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

/// stderr as UTF-8.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("utf-8 stderr")
}

/// stderr of a run that must fail with exit status 2 and a one-line message.
#[track_caller]
pub(crate) fn one_line_error(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(output);
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// Asserts the run failed with exit status 2 and a one-line message that contains every
/// one of `needles`.
#[track_caller]
pub(crate) fn assert_one_line_error(output: &Output, needles: &[&str]) {
    let err = one_line_error(output);
    assert!(needles.iter().all(|n| err.contains(n)), "{err}");
}

/// Asserts the run failed with exit status 2 and a stderr that contains every one of
/// `needles`.
#[track_caller]
pub(crate) fn assert_error(output: &Output, needles: &[&str]) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} is not in: {err}");
    }
}

/// A new temporary directory holding the file `name` with `contents`; returns the directory
/// (keep it alive) and the file's path.
pub(crate) fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), name, contents);
    (dir, path)
}

/// Writes `contents` to the file `name` in `dir`; returns its path.
pub(crate) fn write_file(dir: &std::path::Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}
