//! Integration tests for chef-gemini: the spec checklist, golden files, determinism,
//! response and request parsing, round trips and the schema repairs.
#![cfg(test)]

mod checklist;
mod determinism;
mod golden;
mod parse;
mod roundtrip;
mod schema;

#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../../../../tests/support/messages.rs"]
mod messages;

use chef_gemini::{CompileOptions, Compiled, Notice};
use chef_ir::Request;
use serde_json::Value;

pub(crate) use fixtures::{conversation, real_tools as corpus};

/// Compiles with default options.
pub(crate) fn compile(request: &Request) -> Compiled<'_> {
    chef_gemini::compile(request, &CompileOptions::default()).unwrap()
}

/// The compiled body as a JSON value.
pub(crate) fn body(request: &Request) -> Value {
    serde_json::to_value(&compile(request).body).unwrap()
}

/// The compiled body as compact JSON text.
pub(crate) fn text(compiled: &Compiled<'_>) -> String {
    String::from_utf8(chef_gemini::to_vec(compiled).unwrap()).unwrap()
}

/// Asserts the compile reported `notice`.
#[track_caller]
pub(crate) fn assert_notice(compiled: &Compiled<'_>, notice: &Notice) {
    assert!(compiled.notices.contains(notice), "{:?}", compiled.notices);
}
