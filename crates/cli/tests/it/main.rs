//! Integration tests for the `chef` binary: each runs the real executable.
#![cfg(test)]

mod compile_map;
mod compress;
mod demo;
mod inspect;
mod mcp;
mod recommend;
mod resolve;
mod search;
mod sessions;

use std::{
    path::PathBuf,
    process::{Command, Output},
};

/// A file under the workspace's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
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
