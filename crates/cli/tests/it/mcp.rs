//! `chef mcp inspect` against real MCP servers: the `mcp_test_server` example, started
//! by chef as a child process over stdio.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::{chef, stderr, stdout};

/// The MCP test server example. `cargo test` builds a package's examples next to its
/// binaries, but not when given a test-name filter: then an edited example is not rebuilt,
/// which this catches rather than testing a stale server.
pub(crate) fn test_server() -> String {
    let path = built_example("mcp_test_server");
    let rebuild = "run `cargo build -p chef-cli --example mcp_test_server`, or `cargo test -p chef-cli` without a filter";
    let built = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}: {rebuild}", path.display()));
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/mcp_test_server.rs");
    let edited = std::fs::metadata(&source).unwrap().modified().unwrap();
    assert!(
        built >= edited,
        "{} is older than its source: {rebuild}",
        path.display()
    );
    let path = path.to_str().unwrap();
    assert!(!path.contains(['\'', '"', '\\']), "{path}");
    format!("'{path}'")
}

/// Where `cargo test` builds the package's example `name`: next to the chef binary.
fn built_example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chef"))
        .parent()
        .unwrap()
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Checks the report's first server failed and its second answered; returns the first
/// one's error.
fn first_failed_second_ok(report: &Value) -> &Value {
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers[0]["status"], "failed", "{report}");
    assert_eq!(servers[1]["status"], "ok", "{report}");
    &servers[0]["error"]
}

/// `--server` for a command other than the test server, `NAME=COMMAND`.
fn command_server(spec: &str) -> String {
    format!("--server={spec}")
}

fn server(name: &str, flags: &str) -> String {
    format!("--server={name}={} {flags}", test_server())
}

fn inspect(args: &[String]) -> (Option<i32>, Value, String) {
    let out = chef(
        ["mcp".to_owned(), "inspect".to_owned()]
            .into_iter()
            .chain(args.iter().cloned()),
    );
    let report = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON report ({e}): {}\nstderr: {}",
            stdout(&out),
            stderr(&out)
        )
    });
    (out.status.code(), report, stderr(&out))
}

fn names(report_or_tools: &[Value]) -> Vec<&str> {
    report_or_tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// `--out /dev/stdout` when stdout is a pipe (as here, and under `| cat`): the catalogue is
/// written into the pipe, and is all stdout holds: the report goes to stderr.
/// `/dev/stdout` then ends at `/proc/self/fd/1`, whose link text (`pipe:[…]`) names no
/// file.
#[test]
fn out_to_dev_stdout_on_a_pipe_is_written_in_place() {
    let out = chef([
        "mcp".to_owned(),
        "inspect".to_owned(),
        server("files", "--set files"),
        "--out".to_owned(),
        "/dev/stdout".to_owned(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let catalogue: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        catalogue["tools"].as_array().map(Vec::len),
        Some(3),
        "{text}"
    );
    let report: Value = serde_json::from_str(&stderr(&out)).unwrap();
    assert_eq!(report["tools"], 3);
}

/// `--out /dev/stdout > tools.json`: standard output is a regular file. The catalogue is
/// written through stdout and the report goes to stderr. Before, the atomic write replaced
/// `tools.json` and the report went into the unlinked copy the shell's descriptor still
/// held. Found by session 41's README audit. A directory is a usage error (exit 2), said
/// before any server starts.
#[test]
fn out_to_dev_stdout_redirected_to_a_file_holds_the_catalogue_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chef"))
        .args(["mcp", "inspect"])
        .arg(server("files", "--set files"))
        .args(["--out", "/dev/stdout"])
        .stdout(std::fs::File::create(&path).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let catalogue: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(catalogue["tools"].as_array().map(Vec::len), Some(3));
    let report: Value = serde_json::from_str(&stderr(&out)).unwrap();
    assert_eq!(report["tools"], 3);

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chef"))
        .args(["mcp", "inspect"])
        .arg(server("files", "--set files"))
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
}

#[test]
fn two_servers_are_combined_namespaced_and_written_for_the_other_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("catalogue.json");
    let (code, report, err) = inspect(&[
        // One tool per page: the client must follow nextCursor to list all three.
        server("files", "--set files --page-size 1"),
        server("git", "--set git"),
        "--out".into(),
        out_file.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");

    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0]["name"], "files");
    assert_eq!(servers[0]["status"], "ok");
    assert_eq!(servers[0]["tools"], 3);
    assert_eq!(servers[1]["name"], "git");
    assert_eq!(servers[1]["tools"], 4);
    assert_eq!(
        servers[0]["server"],
        json!({"name": "chef-mcp-test-server", "version": "0.1.0"})
    );
    assert!(servers[0].get("error").is_none());
    assert_eq!(report["tools"], 7);
    assert_eq!(report["shapes"], json!({"mcp": 7}));
    assert!(report["chars"].as_u64().unwrap() > 300);
    assert!(report.get("o200k_tokens").is_none());
    // chef-compress's advice and sizes for the combined catalogue.
    assert_eq!(report["recommend"]["tool_count"], 7);
    assert_eq!(report["recommend"]["namespace_count"], 2);
    assert!(
        [0, 1, 3].contains(&report["recommend"]["level"].as_u64().unwrap()),
        "{report}"
    );
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(
        levels
            .iter()
            .map(|l| l["level"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert!(levels.iter().all(|l| l["chars"].as_u64().unwrap() > 0));
    assert!(levels.iter().all(|l| l.get("o200k_tokens").is_none()));
    // Level 3 replaces seven tools by a dispatcher and a map: smaller than passthrough.
    assert!(levels[3]["chars"].as_u64() < levels[0]["chars"].as_u64());

    let text = std::fs::read_to_string(&out_file).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        names(document["tools"].as_array().unwrap()),
        [
            "files_read_file",
            "files_write_file",
            "files_search",
            "git_status",
            "git_commit",
            "git_push",
            "git_search"
        ]
    );
    // The catalogue is compact MCP JSON: what `chars` measured, plus the wrapper.
    assert_eq!(
        report["bytes"].as_u64().unwrap() as usize,
        document["tools"].to_string().len()
    );

    let loaded = chef_ir::load_tools_from_str(&text).unwrap();
    assert_eq!(loaded.tools.len(), 7);
    assert!(loaded.shapes.iter().all(|s| *s == chef_ir::ToolShape::Mcp));
    let read = &loaded.tools[0];
    assert_eq!(read.name, "files_read_file");
    assert_eq!(read.description, "Read a text file.");
    assert_eq!(read.annotations.read_only_hint, Some(true));
    assert_eq!(read.annotations.title.as_deref(), Some("Read file"));
    let write = &loaded.tools[1];
    assert_eq!(write.annotations.destructive_hint, Some(true));
    assert_eq!(write.annotations.idempotent_hint, Some(true));
    assert_eq!(
        write.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["path", "text"]
    );
    let push = &loaded.tools[5];
    assert_eq!(push.annotations.open_world_hint, Some(true));

    // What the catalogue holds converts on to the agent stacks' own types.
    let tool = rmcp::model::Tool::try_from(read).unwrap();
    assert_eq!(tool.annotations.unwrap().read_only_hint, Some(true));
    let call = chef_ir::ToolCall::new("c1", "files_read_file", json!({"path": "README.md"}));
    let params = chef_ir::interop::rmcp3::call_tool_params("read_file", &call.arguments).unwrap();
    assert_eq!(params.name, "read_file");
}

#[test]
fn tokens_and_prefix_format_are_honoured() {
    let (code, report, err) = inspect(&[
        server("files", "--set files"),
        "--prefix-format".into(),
        "{server}-{tool}".into(),
        "--tokens".into(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(report["tools"], 3);
    let tokens = report["o200k_tokens"].as_u64().unwrap();
    assert!((20..2_000).contains(&tokens), "{tokens}");
    for level in report["levels"].as_array().unwrap() {
        assert!(level["o200k_tokens"].as_u64().unwrap() > 0, "{level}");
    }

    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("t.json");
    let (code, _, err) = inspect(&[
        server("files", "--set files"),
        "--prefix-format".into(),
        "{server}-{tool}".into(),
        "--out".into(),
        out_file.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let loaded =
        chef_ir::load_tools_from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(loaded.tools[0].name, "files-read_file");
}

#[test]
fn without_prefixes_a_name_clash_fails_the_second_server_and_names_both() {
    let (code, report, err) = inspect(&[
        server("files", "--set files"),
        server("git", "--set git"),
        "--no-prefix".into(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers[0]["status"], "ok");
    assert_eq!(servers[1]["status"], "failed");
    let error = servers[1]["error"].as_str().unwrap();
    assert!(
        error.contains("\"search\"") && error.contains("\"files\""),
        "{error}"
    );
    // Only the first server's tools are in the catalogue, under their own names.
    assert_eq!(report["tools"], 3);
    assert!(err.contains("mcp server \"git\""), "{err}");
}

#[test]
fn a_command_that_does_not_exist_is_named_and_the_others_still_report() {
    let (code, report, err) = inspect(&[
        command_server("ghost=/definitely/not/an/mcp-server --flag"),
        server("files", "--set files"),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(report["servers"][0]["name"], "ghost");
    let error = first_failed_second_ok(&report).as_str().unwrap();
    assert!(
        error.contains("cannot start `/definitely/not/an/mcp-server`"),
        "{report}"
    );
    assert_eq!(report["tools"], 3);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("chef: mcp server \"ghost\": cannot start"),
        "{err}"
    );
    assert_eq!(lines[1], "chef: 1 of 2 MCP servers failed: ghost");
}

#[test]
fn a_catalogue_that_cannot_be_compressed_still_gets_its_report() {
    // More tools than --max-tools: the report prints, the compression figures are null.
    let (code, report, err) = inspect(&[server("files", "--set files"), "--max-tools=2".into()]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(report["servers"][0]["status"], "ok", "{report}");
    assert_eq!(report["tools"], 3);
    assert!(report["chars"].as_u64().unwrap() > 0);
    assert!(report["recommend"].is_null(), "{report}");
    assert!(report["levels"].is_null(), "{report}");
    let error = report["compress_error"].as_str().unwrap();
    assert!(error.contains("3 tools exceed the limit of 2"), "{report}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("chef: the combined MCP tool catalogue cannot be compressed: 3 tools")
            && err.contains("--max-tools N"),
        "{err}"
    );

    // A refused input schema, and a server that failed: both are named, the report prints.
    let (code, report, err) = inspect(&[
        command_server("ghost=/definitely/not/an/mcp-server"),
        server("files", "--set files --bad-schema"),
    ]);
    assert_eq!(code, Some(2), "{err}");
    first_failed_second_ok(&report);
    assert_eq!(report["tools"], 4, "{report}");
    assert!(report["recommend"].is_null(), "{report}");
    assert!(report["levels"].is_null(), "{report}");
    let error = report["compress_error"].as_str().unwrap();
    assert!(error.contains("files_broken"), "{report}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with("chef: mcp server \"ghost\""), "{err}");
    assert!(
        lines[1].starts_with("chef: the combined MCP tool catalogue cannot be compressed: ")
            && lines[1].contains("files_broken"),
        "{err}"
    );
    assert_eq!(lines[2], "chef: 1 of 2 MCP servers failed: ghost");

    // A catalogue that compresses has no compress_error.
    let (code, report, err) = inspect(&[server("files", "--set files"), "--max-tools=3".into()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(report.get("compress_error").is_none(), "{report}");
    assert_eq!(report["levels"].as_array().unwrap().len(), 4);
}

#[test]
fn a_server_that_hangs_hits_the_timeout_and_is_named() {
    let (code, report, err) = inspect(&[
        command_server("slow=sleep 100"),
        server("files", "--set files"),
        "--timeout".into(),
        "1".into(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(
        first_failed_second_ok(&report),
        "no answer within 1s during the MCP handshake"
    );
    assert!(
        err.contains("mcp server \"slow\": no answer within 1s"),
        "{err}"
    );
}

/// One malformed tool in a list (no name, a schema that is a string) is left out and
/// named; the server's other tools are kept (rmcp alone reads such a list as no list).
#[test]
fn a_malformed_tool_is_left_out_and_named_and_its_server_kept() {
    let (code, report, err) =
        inspect(&[server("broken", "--malformed"), server("git", "--set git")]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(report["servers"][0]["status"], "ok", "{report}");
    assert_eq!(report["tools"], 5, "{report}");
    assert!(
        err.contains("tools/list: tool 1 (no name) is not an MCP tool"),
        "{err}"
    );
}

#[test]
fn pages_that_loop_are_named_instead_of_listed_forever() {
    let (code, report, err) = inspect(&[server("loops", "--set git --page-size 1 --loop-cursor")]);
    assert_eq!(code, Some(2));
    assert_eq!(
        report["servers"][0]["error"],
        "tools/list failed: the server sent nextCursor \"0\" twice: its pages loop"
    );
    assert!(err.contains("mcp server \"loops\""), "{err}");
}

#[test]
fn a_server_that_prints_garbage_is_named() {
    let (code, report, err) = inspect(&[
        command_server("noise=sh -c 'echo this is not JSON-RPC; echo neither is this; sleep 3'"),
        "--timeout".into(),
        "1".into(),
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(report["servers"][0]["status"], "failed");
    assert_eq!(report["tools"], 0);
    assert_eq!(report["recommend"]["tool_count"], 0);
    assert!(err.contains("mcp server \"noise\""), "{err}");
}

#[test]
fn a_server_that_dies_is_named_with_its_last_stderr_line() {
    let (code, report, err) = inspect(&[server("dies", "--crash 'config file not found'")]);
    assert_eq!(code, Some(2));
    let error = report["servers"][0]["error"].as_str().unwrap();
    assert!(error.starts_with("the MCP handshake failed"), "{error}");
    assert!(error.contains("exit status: 3"), "{error}");
    assert!(
        error.ends_with("its stderr: config file not found)"),
        "{error}"
    );
    assert!(err.contains("mcp server \"dies\""), "{err}");
}

#[test]
fn usage_errors_exit_2_before_starting_anything() {
    for args in [
        vec!["mcp", "inspect"],
        vec!["mcp", "inspect", "--server", "no-equals-sign"],
        vec!["mcp", "inspect", "--server", "a=x", "--server", "a=y"],
        vec![
            "mcp",
            "inspect",
            "--server",
            "a=x",
            "--prefix-format",
            "{server}",
        ],
        vec!["mcp", "inspect", "--server", "a=x", "--timeout", "0"],
        vec![
            "mcp",
            "inspect",
            "--server",
            "a=x",
            "--no-prefix",
            "--prefix-format",
            "{tool}",
        ],
    ] {
        let out = chef(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stdout(&out).is_empty(), "{args:?}");
        assert!(!stderr(&out).is_empty(), "{args:?}");
    }
    let help = chef(["mcp", "inspect", "--help"]);
    assert!(help.status.success());
    let text = stdout(&help);
    assert!(text.contains("NAME=COMMAND"), "{text}");
    assert!(text.contains("Exit status"), "{text}");
}

#[test]
fn the_mcp_agent_loop_example_dispatches_to_the_server_and_refuses_the_destructive_tool() {
    let example = built_example("mcp_agent_loop");
    let out = std::process::Command::new(&example)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}: run `cargo build -p chef-cli --example mcp_agent_loop`",
                example.display()
            )
        });
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("files_read_file → dispatched: read_file ran on the MCP server"),
        "{text}"
    );
    assert!(
        text.contains("files_delete_file → Tool \"files_delete_file\" is currently blocked."),
        "{text}"
    );
}
