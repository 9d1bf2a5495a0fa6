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

/// `to_vec` writes the body's members itself (to report where `tools` goes); its bytes
/// must be those of the wire type's own `Serialize`, and the tools of a full compile must
/// sit exactly where a `ToolPass::Skip` compile says they go.
#[test]
fn written_bodies_equal_the_wire_serialisation_and_tools_go_where_reported() {
    use chef_gemini::{ToolPass, compile_with, to_vec_with_tools_at};
    use chef_ir::{Message, NativeTool, Request, Target};
    let options = chef_gemini::CompileOptions::default();
    let native = NativeTool {
        targets: vec![Target::Gemini],
        value: serde_json::json!({"googleSearch": {}}),
    };
    let mut without_system = big_request();
    without_system
        .messages
        .retain(|m| m.role != chef_ir::Role::System);
    let requests = [
        big_request(),
        without_system,
        Request::new(vec![Message::user("hi")]),
        Request::new(vec![Message::system("s"), Message::user("hi")])
            .with_native_tools(vec![native.clone()]),
        Request::new(vec![Message::user("hi")]).with_native_tools(vec![native]),
    ];
    for request in &requests {
        let full = compile_with(request, &options, ToolPass::Convert).unwrap();
        let (bytes, at) = to_vec_with_tools_at(&full).unwrap();
        assert_eq!(bytes, serde_json::to_vec(&full.body).unwrap());
        let skipped = compile_with(request, &options, ToolPass::Skip).unwrap();
        let (without, at_skipped) = to_vec_with_tools_at(&skipped).unwrap();
        assert_eq!(without, serde_json::to_vec(&skipped.body).unwrap());
        assert_eq!(at, at_skipped);
        if full.body.tools.is_empty() {
            assert_eq!(bytes, without);
        } else {
            let mut spliced = without[..at].to_vec();
            spliced.extend_from_slice(b"\"tools\":");
            spliced.extend(serde_json::to_vec(&full.body.tools).unwrap());
            spliced.push(b',');
            spliced.extend_from_slice(&without[at..]);
            assert_eq!(String::from_utf8(spliced), String::from_utf8(bytes));
        }
    }
}
