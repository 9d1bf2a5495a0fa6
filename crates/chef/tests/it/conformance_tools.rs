//! Conformance of the tool-management half (issue 8) against the reference's checklist for
//! the registry and pruner, the blocklist, namespaces and toolkits, and the library-owned
//! tools (items 1–78 of the checklist that closes the chef spec), through the API of the
//! pruner/announcements seed in Rust form.
//!
//! One test per item, named after it, each opening with a comment giving the item's number
//! and a short title. Where chef deliberately differs from the reference, the test pins
//! chef's behaviour and its comment says why (`DIFFERS:`). Items whose input cannot be
//! written in Rust's types (a name that is a number, mutating a list after handing it over)
//! say so and test what the types leave.

use std::sync::{Arc, Mutex};

use chef::{
    Chef, ChefConfig, ChefError, ChefEvent, CompiledGroups, KeepReason, NamespaceError, OwnedCall,
    OwnedReply, PruneResult, Pruner, RegistryError, RestoreOptions, RouteError, Routed, Strategy,
    ToolGroup, ToolsMode,
    gate::MALFORMED_CALL_REASON,
    memory::{Memory, SetOptions},
    snapshot,
};
use chef_compress::Level;
use chef_ir::{Message, Target, ToolCall, ToolDefinition, ToolName};
use serde_json::{Value, json};

use crate::support::{asked_at, handoff_config, wire_names};

// ---- helpers ------------------------------------------------------------------------------

fn tool(name: &str, tags: &[&str]) -> ToolDefinition {
    ToolDefinition::new(name, json!({"type": "object", "properties": {}}))
        .with_description(format!("The {name} tool."))
        .with_tags(tags.iter().copied())
}

fn kept(result: &PruneResult) -> Vec<&str> {
    result.tools.iter().map(|t| t.name.as_str()).collect()
}

fn removed(result: &PruneResult) -> Vec<&str> {
    result.removed.iter().map(ToolName::as_str).collect()
}

/// `read_file{file,read}`, `run_bash{shell}`, `get_time{}`: the checklist's registry.
fn seed_tools() -> Vec<ToolDefinition> {
    vec![
        tool("read_file", &["file", "read"]),
        tool("run_bash", &["shell"]),
        tool("get_time", &[]),
    ]
}

fn pruner(tools: Vec<ToolDefinition>, strategy: Strategy) -> Pruner {
    let mut pruner = Pruner::new(strategy);
    pruner.register_tools(tools).unwrap();
    pruner
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("c1", name, args)
}

fn body(chef: &mut Chef, target: Target) -> Value {
    serde_json::from_slice(&chef.compile(target).unwrap().body).unwrap()
}

/// A sub-tool in the reference's convention: `parameters` as a flat map.
fn sub(name: &str, description: &str, params: Value) -> ToolDefinition {
    ToolDefinition::new(name, params).with_description(description)
}

fn path_param() -> Value {
    json!({"path": {"type": "string", "description": "File path"}})
}

/// `file_ops` (read_file, write_file, search_files) and `terminal` (run_bash,
/// kill_process).
fn namespaces() -> Vec<ToolGroup> {
    vec![
        ToolGroup::new(
            "file_ops",
            "File system operations",
            vec![
                sub("read_file", "Read a file", path_param()),
                sub(
                    "write_file",
                    "Write to a file",
                    json!({"path": {"type": "string"}, "content": {"type": "string"}}),
                ),
                sub(
                    "search_files",
                    "Search files",
                    json!({"query": {"type": "string"}}),
                ),
            ],
        ),
        ToolGroup::new(
            "terminal",
            "Shell command execution",
            vec![
                sub(
                    "run_bash",
                    "Execute a command",
                    json!({"command": {"type": "string"}}),
                ),
                sub(
                    "kill_process",
                    "Stop a process",
                    json!({"pid": {"type": "integer"}}),
                ),
            ],
        ),
    ]
}

/// `Weather` (get_weather, get_forecast) and `Database` (run_sql).
fn toolkits() -> Vec<ToolGroup> {
    vec![
        ToolGroup::new(
            "Weather",
            "Weather forecast and climate data",
            vec![
                sub(
                    "get_weather",
                    "Current weather",
                    json!({"city": {"type": "string"}}),
                ),
                sub(
                    "get_forecast",
                    "Forecast",
                    json!({"city": {"type": "string"}}),
                ),
            ],
        ),
        ToolGroup::new(
            "Database",
            "SQL query and schema inspection",
            vec![sub(
                "run_sql",
                "Run SQL",
                json!({"sql": {"type": "string"}}),
            )],
        ),
    ]
}

fn group_names(compiled: &CompiledGroups) -> Vec<&str> {
    compiled.tools.iter().map(|t| t.name.as_str()).collect()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// Runs an owned tool directly (`handle_tool`, no gate).
fn handle(chef: &mut Chef, name: &str, arguments: Value) -> Result<OwnedReply, ChefError> {
    let call = OwnedCall {
        id: "c1".into(),
        name: name.to_owned(),
        arguments,
    };
    rt().block_on(chef.handle_tool(&call))
}

/// Runs an owned tool through the dispatch entry point, as the agent loop does.
fn owned(chef: &mut Chef, name: &str, arguments: Value) -> String {
    match chef.route(&call(name, arguments)) {
        Routed::Owned(call) => rt().block_on(chef.handle_tool(&call)).unwrap().text,
        other => panic!("{name} was not routed to the owned tool: {other:?}"),
    }
}

fn context(chef: &mut Chef, arguments: Value) -> String {
    owned(chef, "context", arguments)
}

/// `context create` of `path`, holding `text`.
fn create(chef: &mut Chef, path: &str, text: &str) -> String {
    context(
        chef,
        json!({"command": "create", "path": path, "file_text": text}),
    )
}

/// `context view` of `path`.
fn view(chef: &mut Chef, path: &str) -> String {
    context(chef, json!({"command": "view", "path": path}))
}

/// `context str_replace` of `old` by `new` in `path`.
fn str_replace(chef: &mut Chef, path: &str, old: &str, new: &str) -> String {
    context(
        chef,
        json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new}),
    )
}

/// `context rename` of `path` to `new_path`.
fn rename(chef: &mut Chef, path: &str, new_path: &str) -> String {
    context(
        chef,
        json!({"command": "rename", "path": path, "new_path": new_path}),
    )
}

fn unified() -> Chef {
    Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified)).with_memory(Memory::new())
}

/// [`unified`] holding `notes/plan.md`: three lines.
fn planned() -> Chef {
    let mut chef = unified();
    let reply = create(&mut chef, "notes/plan.md", "line1\nline2\nline3");
    assert_eq!(reply, "Created context://notes/plan.md.");
    chef
}

fn events(chef: &mut Chef) -> Arc<Mutex<Vec<ChefEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    chef.subscribe(move |e| sink.lock().unwrap().push(e.clone()));
    seen
}

fn blocked_events(seen: &Arc<Mutex<Vec<ChefEvent>>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ChefEvent::ToolBlocked { name } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

// ---- pruner, flat mode (items 1–16) -------------------------------------------------------

#[test]
fn item_01_prune_by_task_keeps_tag_matches_and_universal_tools() {
    // 1. pruneByTask("Read the auth.ts file") on the three-tool registry.
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(seed_tools()).unwrap();
    let result = chef.tools().pruner().prune_by_task("Read the auth.ts file");
    assert_eq!(kept(&result), ["read_file", "get_time"]);
    assert_eq!(removed(&result), ["run_bash"]);
    assert_eq!((result.kept, result.total), (2, 3));
    // Each kept tool says why (chef's addition).
    assert_eq!(
        result.reasons,
        [
            KeepReason::TagInTask { tag: "file".into() },
            KeepReason::Universal
        ]
    );
}

#[test]
fn item_02_untagged_tools_are_always_kept() {
    // 2. Untagged tools (absent or empty tags) are kept for any task.
    // Rust has no absent-versus-empty distinction: `tags` is a Vec, empty when absent.
    let p = pruner(seed_tools(), Strategy::Union);
    assert_eq!(kept(&p.prune_by_task("paint a picture")), ["get_time"]);
    let p = pruner(vec![tool("empty_tags", &[])], Strategy::Union);
    assert_eq!(kept(&p.prune_by_task("anything")), ["empty_tags"]);
}

#[test]
fn item_03_an_empty_tag_matches_every_task() {
    // 3. tags [""] is kept for every task, including "".
    let p = pruner(vec![tool("x", &[""]), tool("y", &["z"])], Strategy::Union);
    for task in ["", "anything", "z"] {
        assert!(kept(&p.prune_by_task(task)).contains(&"x"), "{task:?}");
    }
    assert_eq!(kept(&p.prune_by_task("")), ["x"]);
}

#[test]
fn item_04_name_match_is_case_insensitive() {
    // 4. "please use RUN_BASH now" keeps run_bash by name.
    let p = pruner(seed_tools(), Strategy::Union);
    let result = p.prune_by_task("please use RUN_BASH now");
    let at = kept(&result).iter().position(|n| *n == "run_bash").unwrap();
    assert_eq!(result.reasons[at], KeepReason::NameInTask);
}

#[test]
fn item_05_tags_match_as_substrings() {
    // 5. Tag "read" matches "already done" (no word boundaries).
    let p = pruner(seed_tools(), Strategy::Union);
    let result = p.prune_by_task("already done");
    assert_eq!(kept(&result), ["read_file", "get_time"]);
    assert_eq!(
        result.reasons[0],
        KeepReason::TagInTask { tag: "read".into() }
    );
}

#[test]
fn item_06_allow_only_is_case_insensitive() {
    // 6. allowOnly(["READ_FILE", "SEARCH_WEB"]) keeps both.
    let p = pruner(
        vec![
            tool("read_file", &["file"]),
            tool("search_web", &["web"]),
            tool("run_bash", &[]),
        ],
        Strategy::Union,
    );
    let result = p.allow_only(&["READ_FILE", "SEARCH_WEB"]);
    assert_eq!(result.kept, 2);
    assert_eq!(kept(&result), ["read_file", "search_web"]);
    assert!(result.reasons.iter().all(|r| *r == KeepReason::Allowlisted));
}

#[test]
fn item_07_allow_only_with_no_match_removes_everything() {
    // 7. allowOnly(["missing"]) keeps nothing and lists every name as removed.
    let p = pruner(seed_tools(), Strategy::Union);
    let result = p.allow_only(&["missing"]);
    assert!(result.tools.is_empty());
    assert_eq!(removed(&result), ["read_file", "run_bash", "get_time"]);
    assert_eq!(result.kept, 0);
}

#[test]
fn item_08_union_keeps_relevant_or_allowlisted() {
    // 8. Union (default) of task relevance and the allowlist.
    let p = pruner(
        vec![
            tool("run_bash", &["bash"]),
            tool("read_file", &["file"]),
            tool("get_time", &[]),
        ],
        Strategy::Union,
    );
    assert_eq!(Pruner::default().strategy(), Strategy::Union);
    let result = p.prune_by_task_and_allowlist("execute a bash script", &["read_file"]);
    assert_eq!(kept(&result), ["run_bash", "read_file", "get_time"]);
}

#[test]
fn item_09_intersection_needs_both() {
    // 9. Intersection: relevant and allowlisted; a universal tool must be allowlisted too.
    let mut chef = Chef::new(ChefConfig::default().with_strategy(Strategy::Intersection));
    chef.register_tools(vec![
        tool("run_bash", &["bash"]),
        tool("read_file", &["file"]),
        tool("get_time", &[]),
    ])
    .unwrap();
    let result = chef
        .tools()
        .pruner()
        .prune_by_task_and_allowlist("read a file", &["read_file"]);
    assert_eq!(kept(&result), ["read_file"]);
    assert!(removed(&result).contains(&"get_time"));
}

#[test]
fn item_10_duplicate_names_are_refused() {
    // 10. Two tools named `dup`.
    // DIFFERS: the reference registers both and reports kept 1, removed [], total 2. Two
    // tools with one name make dispatch ambiguous (which one does a call reach, which one
    // does the gate block?), so chef refuses the registration with a typed error and leaves
    // the registry as it was.
    let mut p = pruner(seed_tools(), Strategy::Union);
    let err = p
        .register_tools(vec![tool("dup", &["x"]), tool("dup", &["y"])])
        .unwrap_err();
    assert_eq!(
        err,
        RegistryError::DuplicateTool {
            name: ToolName::from("dup")
        }
    );
    assert_eq!(p.all_tools().len(), 3);
    let mut chef = Chef::new(ChefConfig::default());
    assert!(matches!(
        chef.register_tools(vec![tool("dup", &["x"]), tool("dup", &["y"])]),
        Err(ChefError::Registry(RegistryError::DuplicateTool { .. }))
    ));
}

#[test]
fn item_11_register_replaces_and_filters_never_mutate() {
    // 11. registerTools replaces; the registry is a copy; filtering changes nothing.
    let mut p = pruner(seed_tools(), Strategy::Union);
    let mut b = vec![tool("only_b", &["b"])];
    p.register_tools(b.clone()).unwrap();
    assert_eq!(p.all_tools(), b.as_slice());
    // The registry owns its copy: changing the caller's list afterwards changes nothing.
    b.push(tool("later", &[]));
    assert_eq!(p.all_tools().len(), 1);
    let before = p.all_tools().to_vec();
    let _ = p.prune_by_task("b");
    let _ = p.allow_only(&["nothing"]);
    let _ = p.prune_by_task_and_allowlist("x", &["y"]);
    let _ = p.rank_by_task("b", 3);
    assert_eq!(p.all_tools(), before.as_slice());
}

#[test]
fn item_12_compile_sends_every_flat_tool_unpruned() {
    // 12. With only flat tools, compile sends all of them, even ones a task prune drops.
    // DIFFERS (order): compile sends the tools sorted by name, not in registration order,
    // so the bytes of the request do not depend on registration order (a shuffled
    // registration compiles to the same cached prefix).
    for level in [Level::Zero, Level::One] {
        let mut chef = asked_at(level, seed_tools(), "Read the auth.ts file");
        assert_eq!(
            chef.tools()
                .pruner()
                .prune_by_task("Read the auth.ts file")
                .removed
                .len(),
            1
        );
        assert_eq!(
            wire_names(&mut chef, Target::Anthropic),
            ["get_time", "read_file", "run_bash"]
        );
    }
}

#[test]
fn item_13_namespaces_sit_beside_the_flat_tools() {
    // 13. Flat tools plus a namespace: the reference sends no flat tool.
    // DIFFERS (deliberate, docs/ARCHITECTURE.md): a user who registers both means both, so
    // the flat tools stay beside the namespace tools and `load_toolkit`: dropping 149 flat
    // tools in silence because one toolkit was registered is never what was meant.
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(seed_tools()).unwrap();
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    // (Compression puts the compiled list in name order, as for flat tools alone.)
    assert_eq!(
        wire_names(&mut chef, Target::Anthropic),
        ["file_ops", "get_time", "read_file", "run_bash", "terminal"]
    );
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    assert_eq!(
        wire_names(&mut chef, Target::Anthropic),
        [
            "file_ops",
            "get_time",
            "load_toolkit",
            "read_file",
            "run_bash",
            "terminal"
        ]
    );
    // Every kind of tool still routes.
    assert!(matches!(
        chef.route(&call("get_time", json!({}))),
        Routed::Call(c) if c.via.is_none()
    ));
    assert!(matches!(
        chef.route(&call("file_ops", json!({"action": "read_file", "args": {"path": "a"}}))),
        Routed::Call(c) if c.via.as_deref() == Some("file_ops")
    ));
    assert!(matches!(
        chef.route(&call("load_toolkit", json!({"toolkit_name": "Weather"}))),
        Routed::ToolkitLoaded { .. }
    ));
}

#[test]
fn item_14_no_namespaces_leaves_the_flat_tools() {
    // 14. registerNamespaces([]) after namespaces (no toolkits): only the flat tools.
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(vec![tool("get_time", &[])]).unwrap();
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    assert_eq!(
        wire_names(&mut chef, Target::Anthropic),
        ["file_ops", "get_time", "terminal"]
    );
    chef.tools_mut().register_namespaces(Vec::new()).unwrap();
    assert_eq!(wire_names(&mut chef, Target::Anthropic), ["get_time"]);
}

#[test]
fn item_15_no_tools_means_no_tools_key() {
    // 15. Nothing registered and no library tools: the payload has no tools key.
    for target in Target::ALL {
        let mut chef = Chef::new(ChefConfig::default());
        chef.push(Message::user("hi"));
        let body = body(&mut chef, target);
        assert!(body.get("tools").is_none(), "{target:?}: {body}");
    }
}

#[test]
fn item_16_tags_and_defer_loading_on_the_wire() {
    // 16. tags and deferLoading of flat tools in the payload, per target.
    // DIFFERS: the reference copies both fields verbatim into every target's tool list and
    // leaves conversion to the caller. chef compiles to each provider's wire format itself:
    // `defer_loading: true` is sent on the Anthropic target (its deferred tool loading),
    // never sent where the API has no such field (OpenAI, Gemini), and `tags` — routing
    // hints for pruning, not a provider field — never reach a provider.
    for level in [Level::Zero, Level::One] {
        let tools = vec![
            tool("read_file", &["file"]).with_defer_loading(true),
            tool("run_bash", &["shell"]),
        ];
        let mut chef = asked_at(level, tools, "hi");
        let anthropic = body(&mut chef, Target::Anthropic);
        let wire = anthropic["tools"].as_array().unwrap();
        let read = wire.iter().find(|t| t["name"] == "read_file").unwrap();
        let bash = wire.iter().find(|t| t["name"] == "run_bash").unwrap();
        assert_eq!(read["defer_loading"], json!(true), "{level:?}: {read}");
        assert!(bash.get("defer_loading").is_none(), "{bash}");
        for target in Target::ALL {
            let text = String::from_utf8(chef.compile(target).unwrap().body).unwrap();
            assert!(!text.contains("\"tags\""), "{target:?}");
            assert!(!text.contains("\"shell\""), "{target:?}");
            if target != Target::Anthropic {
                assert!(!text.contains("defer_loading"), "{target:?}");
            }
        }
    }
}

// ---- blocklist (items 17–29) --------------------------------------------------------------

fn gated(level: Level) -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_level(level));
    chef.register_tools(vec![
        tool("read_file", &[]),
        tool("write_file", &[]),
        tool("delete_file", &[]),
        tool("anything", &[]),
    ])
    .unwrap();
    chef.push(Message::user("tidy up"));
    chef
}

#[test]
fn item_17_fresh_blocklist_is_empty_and_allows() {
    // 17. Fresh: blocked_tools() is empty and a call is allowed.
    // DIFFERS: check_tool_call classifies the whole call (as route does, without side
    // effects), so "allowed" is Routed::Call with the resolved tool; a name that is no
    // registered tool is an Error for the model, not "allowed".
    let chef = gated(Level::One);
    assert!(chef.tools().pruner().blocked_tools().is_empty());
    assert!(Pruner::default().blocked_tools().is_empty());
    match chef.check_tool_call(&call("anything", json!({}))) {
        Routed::Call(c) => assert_eq!(c.name.as_str(), "anything"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        chef.check_tool_call(&call("never_registered", json!({}))),
        Routed::Error {
            error: RouteError::Resolve(_),
            ..
        }
    ));
}

#[test]
fn item_18_a_blocked_call_is_refused_with_the_reason() {
    // 18. Blocked with reason `Tool "delete_file" is currently blocked.`.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked(["write_file", "delete_file"]);
    match chef.check_tool_call(&call("delete_file", json!({}))) {
        Routed::Blocked { name, reply, .. } => {
            assert_eq!(name, "delete_file");
            assert_eq!(reply, "Tool \"delete_file\" is currently blocked.");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn item_19_an_allowed_call_carries_no_reason() {
    // 19. Same blocklist; read_file is allowed and carries no reason.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked(["write_file", "delete_file"]);
    let routed = chef.check_tool_call(&call("read_file", json!({})));
    assert!(matches!(routed, Routed::Call(_)), "{routed:?}");
    assert_eq!(routed.reply(), None);
    assert!(!routed.is_error());
}

#[test]
fn item_20_set_blocked_tools_replaces() {
    // 20. setBlockedTools replaces, [] clears.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked(["a"]);
    chef.tools_mut().set_blocked(["b", "c"]);
    assert_eq!(chef.tools().pruner().blocked_tools(), ["b", "c"]);
    chef.tools_mut().set_blocked(["delete_file"]);
    chef.tools_mut().set_blocked(Vec::<String>::new());
    assert!(matches!(
        chef.check_tool_call(&call("delete_file", json!({}))),
        Routed::Call(_)
    ));
}

#[test]
fn item_21_entries_match_any_case_and_separators() {
    // 21. The reference: blocklist ["Delete_File"] leaves delete_file allowed.
    // DIFFERS (deliberate): entries match real names the way route matches what a model
    // writes, ignoring case and separators, so a differently cased entry never leaves the
    // tool open. The reply names the real tool the call reached.
    let mut chef = gated(Level::One);
    let report = chef.tools_mut().set_blocked(["Delete_File"]);
    assert!(report.unmatched.is_empty(), "{report:?}");
    for spelling in ["delete_file", "Delete_File", "DELETE_FILE", "delete-file"] {
        match chef.check_tool_call(&call(spelling, json!({}))) {
            Routed::Blocked { reply, .. } => {
                assert!(reply.to_lowercase().contains("delete_file"), "{reply}");
            }
            other => panic!("{spelling}: {other:?}"),
        }
    }
    // An entry that names nothing is reported, not silently kept.
    let report = chef.tools_mut().set_blocked(["Delete_Fiel"]);
    assert_eq!(report.unmatched, ["Delete_Fiel"]);
    assert!(matches!(
        chef.check_tool_call(&call("delete_file", json!({}))),
        Routed::Call(_)
    ));
}

#[test]
fn item_22_entries_are_kept_verbatim() {
    // 22. ["x","x"] comes back as ["x","x"]; the stored list is a copy.
    // The caller's list is moved or copied in, and blocked_tools() lends a read-only
    // slice, so neither side can change the other (the reference needs defensive copies).
    let mut chef = gated(Level::One);
    let mut given = vec!["x".to_owned(), "x".to_owned()];
    chef.tools_mut().set_blocked(given.clone());
    given.push("y".to_owned());
    assert_eq!(chef.tools().pruner().blocked_tools(), ["x", "x"]);
}

#[test]
fn item_23_a_missing_or_empty_name_is_malformed_without_an_event() {
    // 23. Empty name: rejected as malformed, no blocked event.
    // A name that is missing or a number cannot be written: `ToolCall::name` is a string.
    // chef also trims it, so whitespace only is malformed as well.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked([""]);
    let seen = events(&mut chef);
    for name in ["", "   ", "\n"] {
        match chef.check_tool_call(&call(name, json!({}))) {
            Routed::Error { error, reply, .. } => {
                assert_eq!(error, RouteError::Malformed);
                assert_eq!(reply, MALFORMED_CALL_REASON);
                assert_eq!(reply, "Tool call rejected: missing or empty tool name.");
            }
            other => panic!("{name:?}: {other:?}"),
        }
    }
    assert!(blocked_events(&seen).is_empty());
}

#[test]
fn item_24_one_event_per_blocked_check() {
    // 24. A blocked check emits one tool-blocked event with the name; an allowed one none.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked(["delete_file"]);
    let seen = events(&mut chef);
    let _ = chef.check_tool_call(&call("read_file", json!({})));
    assert!(blocked_events(&seen).is_empty());
    let _ = chef.check_tool_call(&call("delete_file", json!({})));
    assert_eq!(blocked_events(&seen), ["delete_file"]);
}

#[test]
fn item_25_blocking_never_changes_the_compiled_tools() {
    // 25. Blocking namespaces leaves pruner.compile() unchanged — and, in chef, the bytes
    // of the whole compiled request too (compile, block, compile, compare).
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    chef.set_system_prompt(vec![Message::system("You are an agent.")]);
    chef.push(Message::user("hi"));
    let before = chef.tools().pruner().compile();
    let bytes_before = chef.compile(Target::Anthropic).unwrap().body;
    chef.tools_mut().set_blocked(["file_ops", "terminal"]);
    assert_eq!(chef.tools().pruner().compile(), before);
    assert_eq!(group_names(&before), ["file_ops", "terminal"]);
    assert_eq!(chef.compile(Target::Anthropic).unwrap().body, bytes_before);
}

#[test]
fn item_26_a_blocked_action_is_blocked_through_its_namespace() {
    // 26. Blocklist ["read_file"], read_file an action of file_ops.
    // DIFFERS (issue 8): the reference gates only the outer name, so file_ops is allowed
    // and reaches read_file. chef resolves the action first and gates the real tool, so
    // file_ops(action=read_file) is blocked while the group's other actions pass.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    chef.tools_mut().set_blocked(["read_file"]);
    let blocked = chef.check_tool_call(&call(
        "file_ops",
        json!({"action": "read_file", "args": {"path": "auth.ts"}}),
    ));
    assert!(
        matches!(&blocked, Routed::Blocked { name, .. } if name == "read_file"),
        "{blocked:?}"
    );
    match chef.check_tool_call(&call(
        "file_ops",
        json!({"action": "search_files", "args": {"query": "x"}}),
    )) {
        Routed::Call(c) => {
            assert_eq!(c.name.as_str(), "search_files");
            assert_eq!(c.via.as_deref(), Some("file_ops"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn item_27_blocking_an_owned_tool_gates_the_call_and_handle_tool() {
    // 27. Blocklist ["context"] under unified: the check blocks; the reference's
    // handle_tool still runs.
    // DIFFERS (deliberate): handle_tool is gated too, so an owned call built by hand never
    // runs a blocked tool.
    let mut chef = unified();
    chef.tools_mut().set_blocked(["context"]);
    let args = json!({"command": "view", "path": "notes/"});
    assert!(matches!(
        chef.check_tool_call(&call("context", args.clone())),
        Routed::Blocked { .. }
    ));
    assert!(matches!(
        chef.route(&call("context", args.clone())),
        Routed::Blocked { .. }
    ));
    let reply = handle(&mut chef, "context", args.clone()).unwrap();
    assert!(reply.is_error);
    assert_eq!(reply.text, "Tool \"context\" is currently blocked.");
    chef.tools_mut().set_blocked(Vec::<String>::new());
    let reply = handle(&mut chef, "context", args).unwrap();
    assert_eq!(reply.text, "context://notes/ is empty.");
}

#[test]
fn item_28_the_blocklist_rides_snapshots() {
    // 28. The blocklist survives snapshot/restore; an older snapshot restores the older list.
    let mut chef = gated(Level::One);
    chef.tools_mut().set_blocked(["delete_file"]);
    let early = chef.snapshot(None);
    chef.tools_mut().set_blocked(["write_file", "read_file"]);
    let late = chef.snapshot(None);

    let mut fresh = gated(Level::One);
    fresh.restore(&late).unwrap();
    assert_eq!(
        fresh.tools().pruner().blocked_tools(),
        ["write_file", "read_file"]
    );
    assert!(matches!(
        fresh.check_tool_call(&call("write_file", json!({}))),
        Routed::Blocked { .. }
    ));
    // DIFFERS (deliberate): resuming never loosens policy. Restoring the older snapshot
    // adds its entries to the blocklist in force; the snapshot's list alone only when
    // asked for.
    fresh.restore(&early).unwrap();
    assert_eq!(
        fresh.tools().pruner().blocked_tools(),
        ["delete_file", "write_file", "read_file"]
    );
    fresh
        .restore_with(&early, RestoreOptions::default().with_snapshot_blocklist())
        .unwrap();
    assert_eq!(fresh.tools().pruner().blocked_tools(), ["delete_file"]);
    // Through the on-disk bytes as well.
    let bytes = snapshot::to_vec(&late).unwrap();
    let mut from_disk = gated(Level::One);
    from_disk
        .restore(&snapshot::from_slice(&bytes).unwrap())
        .unwrap();
    assert_eq!(
        from_disk.tools().pruner().blocked_tools(),
        ["write_file", "read_file"]
    );
}

#[test]
fn item_29_a_snapshot_without_a_blocklist_clears_it_only_when_asked() {
    // 29. Restoring a snapshot with no blocklist field over ["stale"] gives [].
    // DIFFERS (deliberate): only with the snapshot's policy asked for; by default the
    // blocklist in force stays.
    let mut chef = gated(Level::One);
    let bytes = snapshot::to_vec(&chef.snapshot(None)).unwrap();
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    let payload = doc["payload"].as_object_mut().unwrap();
    assert!(payload.remove("blocked").is_some());
    let bytes = crate::support::resealed(&serde_json::to_vec(&doc).unwrap());
    chef.tools_mut().set_blocked(["stale"]);
    let old = snapshot::from_slice(&bytes).unwrap();
    chef.restore(&old).unwrap();
    assert_eq!(chef.tools().pruner().blocked_tools(), ["stale"]);
    chef.restore_with(&old, RestoreOptions::default().with_snapshot_blocklist())
        .unwrap();
    assert!(chef.tools().pruner().blocked_tools().is_empty());
}

/// The allowlist rides snapshots and journals like the blocklist, and a restore never
/// loosens it: a fresh session restoring a bounded one stays bounded, two lists give the
/// names on both, the snapshot's alone only when asked for.
#[tokio::test]
async fn the_allowlist_rides_snapshots_and_a_restore_never_loosens_it() {
    let refused = |chef: &Chef, name: &str| {
        !matches!(
            chef.check_tool_call(&call(name, json!({}))),
            Routed::Call(_)
        )
    };
    let mut chef = gated(Level::One);
    chef.tools_mut()
        .set_allowlist(Some(["read_file", "WRITE_FILE"]));
    assert!(refused(&chef, "delete_file"));
    let saved = chef.snapshot(None);
    // A fresh session, through the on-disk bytes: the bound holds.
    let bytes = snapshot::to_vec(&saved).unwrap();
    let mut fresh = gated(Level::One);
    fresh
        .restore(&snapshot::from_slice(&bytes).unwrap())
        .unwrap();
    assert_eq!(
        fresh.tools().allowlist(),
        Some(&["read_file".to_owned(), "WRITE_FILE".to_owned()][..])
    );
    assert!(refused(&fresh, "delete_file"));
    assert!(!refused(&fresh, "read_file"));
    // Both sides bounded: the names on both, ignoring case, in the snapshot's order.
    let mut other = gated(Level::One);
    other
        .tools_mut()
        .set_allowlist(Some(["write_file", "delete_file"]));
    other.restore(&saved).unwrap();
    assert_eq!(
        other.tools().allowlist(),
        Some(&["WRITE_FILE".to_owned()][..])
    );
    assert!(refused(&other, "delete_file") && refused(&other, "read_file"));
    // The snapshot's list alone, when asked for; a snapshot without one then lifts it.
    other
        .restore_with(&saved, RestoreOptions::default().with_snapshot_allowlist())
        .unwrap();
    assert_eq!(other.tools().allowlist().map(<[_]>::len), Some(2));
    let unbounded = gated(Level::One).snapshot(None);
    other.restore(&unbounded).unwrap();
    assert_eq!(other.tools().allowlist().map(<[_]>::len), Some(2));
    other
        .restore_with(
            &unbounded,
            RestoreOptions::default().with_snapshot_allowlist(),
        )
        .unwrap();
    assert_eq!(other.tools().allowlist(), None);
    // A snapshot without an allowlist writes no member for it.
    let text = String::from_utf8(snapshot::to_vec(&unbounded).unwrap()).unwrap();
    assert!(!text.contains("\"allowlist\""));
    // A journal's delta record carries a change of the list.
    let (store, id, mut journal) = crate::support::memory_journal("allow");
    let mut live = gated(Level::One);
    journal.save(&live).await.unwrap();
    live.tools_mut().set_allowlist(Some(["anything"]));
    journal.save(&live).await.unwrap();
    let resumed = crate::support::replayed(&store, &id, gated(Level::One)).await;
    assert_eq!(
        resumed.tools().allowlist(),
        Some(&["anything".to_owned()][..])
    );
    assert!(refused(&resumed, "read_file"));
}

// ---- namespaces and toolkits (items 30–49) ------------------------------------------------

fn grouped() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    chef
}

/// The error resolving a `file_ops` call with `arguments` in [`grouped`], which must fail.
fn file_ops_error(arguments: &Value) -> NamespaceError {
    grouped()
        .tools()
        .pruner()
        .resolve_namespace("file_ops", arguments)
        .unwrap_err()
}

fn namespace_tool(chef: &Chef, name: &str) -> ToolDefinition {
    chef.tools()
        .pruner()
        .compile()
        .tools
        .into_iter()
        .find(|t| t.name.as_str() == name)
        .unwrap()
}

#[test]
fn item_30_one_tool_per_namespace_and_no_directory() {
    // 30. Namespaces file_ops (3 tools) and terminal (2): two tools, empty directory.
    let chef = grouped();
    let compiled = chef.tools().pruner().compile();
    assert_eq!(group_names(&compiled), ["file_ops", "terminal"]);
    assert_eq!(compiled.directory_xml, "");
}

#[test]
fn item_31_the_namespace_tool_schema() {
    // 31. action enum = sub-tool names in order; args is an object.
    // DIFFERS: `required` is ["action"], not ["action","args"]: an action without
    // arguments needs no `args`, and a model that writes the arguments beside `action`
    // (`{"action":"read_file","path":"a"}`) is understood too, so `args` is optional and
    // `additionalProperties` is allowed.
    let t = namespace_tool(&grouped(), "file_ops");
    let props = &t.input_schema["properties"];
    assert_eq!(
        props["action"]["enum"],
        json!(["read_file", "write_file", "search_files"])
    );
    assert_eq!(props["args"]["type"], json!("object"));
    assert_eq!(t.input_schema["required"], json!(["action"]));
    assert!(t.tags.is_empty() && !t.defer_loading);
}

#[test]
fn item_32_sub_tool_parameters_are_documented() {
    // 32. A flat parameter map renders `    - path (string): File path`.
    let t = namespace_tool(&grouped(), "file_ops");
    assert!(
        t.description
            .contains("- read_file: Read a file\n    - path (string): File path\n- write_file"),
        "{}",
        t.description
    );
    assert!(
        t.description
            .starts_with("File system operations\n\nAvailable actions:\n")
    );
}

#[test]
fn item_33_a_full_json_schema_is_documented_from_its_properties() {
    // 33. A sub-tool whose parameters are a full JSON Schema.
    // DIFFERS: the reference reads the top level as a flat map and writes the useless
    // lines `type (any)`, `properties (any)`, `required (any)`. chef reads `properties`
    // (and marks required ones), since MCP tools always carry a full JSON Schema.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_namespaces(vec![ToolGroup::new(
        "search",
        "Search",
        vec![sub(
            "find",
            "Find things",
            json!({"type": "object", "properties": {"q": {"type": "string", "description": "Query"}, "limit": {"type": "integer"}}, "required": ["q"]}),
        )],
    )])
    .unwrap();
    let t = namespace_tool(&chef, "search");
    assert!(
        t.description.ends_with(
            "- find: Find things\n    - q (string, required): Query\n    - limit (integer)"
        ),
        "{}",
        t.description
    );
    assert!(!t.description.contains("properties (any)"));
}

#[test]
fn item_34_an_empty_namespace() {
    // 34. A namespace with no tools: enum [] and the description ends with the header.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut()
        .register_namespaces(vec![ToolGroup::new("empty", "Nothing here", Vec::new())])
        .unwrap();
    let t = namespace_tool(&chef, "empty");
    assert_eq!(t.input_schema["properties"]["action"]["enum"], json!([]));
    assert!(
        t.description.ends_with("Available actions:\n"),
        "{:?}",
        t.description
    );
}

#[test]
fn item_35_the_load_toolkit_tool() {
    // 35. Toolkits Weather (2) and Database (1): tools [load_toolkit] with the kit enum.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    let compiled = chef.tools().pruner().compile();
    assert_eq!(group_names(&compiled), ["load_toolkit"]);
    let schema = &compiled.tools[0].input_schema;
    assert_eq!(
        schema["properties"]["toolkit_name"]["enum"],
        json!(["Weather", "Database"])
    );
    assert_eq!(schema["required"], json!(["toolkit_name"]));
    assert!(Pruner::is_toolkit_loader(compiled.tools[0].name.as_str()));
}

#[test]
fn item_36_the_toolkit_directory() {
    // 36. The directory XML, byte for byte.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    assert_eq!(
        chef.tools().pruner().compile().directory_xml,
        "<available_toolkits>\n  <toolkit name=\"Weather\" tools=\"get_weather, get_forecast\">Weather forecast and climate data</toolkit>\n  <toolkit name=\"Database\" tools=\"run_sql\">SQL query and schema inspection</toolkit>\n</available_toolkits>"
    );
}

#[test]
fn item_37_directory_text_is_escaped_and_empty_kits_render() {
    // 37. Special characters in a description; an empty toolkit renders tools="".
    // DIFFERS (issue 8): the reference inserts names and descriptions unescaped, so a
    // description can close the element or inject markup into the system prompt. chef
    // escapes the XML specials.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut()
        .register_toolkits(vec![
            ToolGroup::new("Odd", "a <b> & \"c\"", vec![sub("x1", "x", json!({}))]),
            ToolGroup::new("Empty", "nothing", Vec::new()),
        ])
        .unwrap();
    let xml = chef.tools().pruner().directory_xml();
    assert!(
        xml.contains(
            "<toolkit name=\"Odd\" tools=\"x1\">a &lt;b&gt; &amp; &quot;c&quot;</toolkit>"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<toolkit name=\"Empty\" tools=\"\">nothing</toolkit>"),
        "{xml}"
    );
}

#[test]
fn item_38_namespaces_then_the_loader() {
    // 38. Namespaces and toolkits: [file_ops, terminal, load_toolkit]; the directory names
    // no namespace.
    let mut chef = grouped();
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    let compiled = chef.tools().pruner().compile();
    assert_eq!(
        group_names(&compiled),
        ["file_ops", "terminal", "load_toolkit"]
    );
    assert!(!compiled.directory_xml.contains("file_ops"));
    assert!(!compiled.directory_xml.contains("terminal"));
}

#[test]
fn item_39_group_compile_is_stable() {
    // 39. directory_xml() equals compile().directory_xml; compile is repeatable and not
    // changed by extracting or loading toolkits.
    let mut chef = grouped();
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    let first = chef.tools().pruner().compile();
    assert_eq!(chef.tools().pruner().directory_xml(), first.directory_xml);
    assert_eq!(chef.tools().directory_xml(), first.directory_xml);
    assert_eq!(chef.tools().pruner().compile(), first);
    let _ = chef.tools().pruner().extract_toolkit("weather").unwrap();
    let _ = chef.tools().pruner().extract_toolkit("Database").unwrap();
    assert_eq!(chef.tools().pruner().compile(), first);
    chef.push(Message::user("weather?"));
    chef.compile(Target::Anthropic).unwrap();
    let loaded = chef.route(&call("load_toolkit", json!({"toolkit_name": "Weather"})));
    assert!(matches!(loaded, Routed::ToolkitLoaded { .. }), "{loaded:?}");
    assert_eq!(chef.tools().pruner().compile(), first);
}

#[test]
fn item_40_namespace_and_loader_predicates() {
    // 40. is_namespace_call is exact; is_toolkit_loader needs no toolkits.
    let chef = grouped();
    assert!(chef.tools().pruner().is_namespace_call("file_ops"));
    assert!(!chef.tools().pruner().is_namespace_call("FILE_OPS"));
    assert!(!chef.tools().pruner().is_namespace_call("load_toolkit"));
    assert!(Pruner::default().toolkits().is_empty());
    assert!(Pruner::is_toolkit_loader("load_toolkit"));
    assert!(!Pruner::is_toolkit_loader("Load_Toolkit"));
}

#[test]
fn item_41_resolve_namespace_from_text_or_object() {
    // 41. resolveNamespace with JSON text or an object gives the same call.
    let chef = grouped();
    let expected = chef::NamespaceCall {
        group: "file_ops".into(),
        tool_name: "read_file".into(),
        args: json!({"path": "auth.ts"}),
    };
    let text = json!(r#"{"action":"read_file","args":{"path":"auth.ts"}}"#);
    assert_eq!(
        chef.tools()
            .pruner()
            .resolve_namespace("file_ops", &text)
            .unwrap(),
        expected
    );
    let object = json!({"action": "read_file", "args": {"path": "auth.ts"}});
    assert_eq!(
        chef.tools()
            .pruner()
            .resolve_namespace("file_ops", &object)
            .unwrap(),
        expected
    );
}

#[test]
fn item_42_missing_args_give_an_empty_object_and_unreadable_ones_are_refused() {
    // 42. Missing args give {}. The reference also reads `args: [1]` or `args: "s"` as {},
    // which runs the action without what the model wrote (a `kill_process` with its pid
    // dropped); chef refuses them instead, deliberately, as it refuses an unreadable
    // argument bag at every level.
    let chef = grouped();
    let resolved = chef
        .tools()
        .pruner()
        .resolve_namespace("terminal", &json!({"action": "kill_process"}))
        .unwrap();
    assert_eq!(resolved.tool_name.as_str(), "kill_process");
    assert_eq!(resolved.args, json!({}));
    for arguments in [
        json!({"action": "kill_process", "args": [1]}),
        json!({"action": "kill_process", "args": "s"}),
    ] {
        let e = chef
            .tools()
            .pruner()
            .resolve_namespace("terminal", &arguments)
            .unwrap_err();
        assert!(
            e.to_string().contains("must be a JSON object"),
            "{arguments}: {e}"
        );
    }
}

#[test]
fn item_43_unknown_namespace() {
    // 43. An unknown namespace lists the registered ones, or (none).
    let err = grouped()
        .tools()
        .pruner()
        .resolve_namespace("unknown", &json!({}))
        .unwrap_err();
    assert!(matches!(err, NamespaceError::NotANamespace { .. }));
    assert!(
        err.to_string()
            .contains("\"unknown\" is not a registered namespace. Available: file_ops, terminal")
    );
    let err = Pruner::default()
        .resolve_namespace("unknown", &json!({}))
        .unwrap_err();
    assert!(err.to_string().ends_with("Available: (none)"), "{err}");
}

#[test]
fn item_44_unknown_action() {
    // 44. An unknown action lists the namespace's actions.
    let err = file_ops_error(&json!({"action": "delete_file"}));
    assert_eq!(
        err.to_string(),
        "Unknown action \"delete_file\" in namespace \"file_ops\". Available: read_file, write_file, search_files"
    );
}

#[test]
fn item_45_a_non_string_action_is_empty() {
    // 45. {action: 5} reports Unknown action "".
    let err = file_ops_error(&json!({"action": 5}));
    assert!(err.to_string().contains("Unknown action \"\""), "{err}");
}

#[test]
fn item_46_actions_match_case_sensitively() {
    // 46. {action: "READ_FILE"} fails at the pruner.
    // (The dispatch entry point, Chef::route, still gates such a call by the real name;
    // see gate_bypass.rs.)
    let err = file_ops_error(&json!({"action": "READ_FILE"}));
    assert!(matches!(err, NamespaceError::UnknownAction { .. }), "{err}");
}

#[test]
fn item_47_malformed_argument_text() {
    // 47. arguments "not json".
    // DIFFERS: the reference lets the JSON parser's exception escape. chef returns a typed
    // NamespaceError::BadArguments whose text (for the model) says the JSON is invalid.
    let err = file_ops_error(&json!("not json"));
    assert!(matches!(err, NamespaceError::BadArguments { .. }), "{err}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
}

#[test]
fn item_48_extract_toolkit_is_case_insensitive() {
    // 48. extractToolkit("weather") gives both Weather tools; unknown lists the kits.
    // "Two calls return distinct lists": extract_toolkit lends the registered group
    // read-only, so a caller cannot change the registry through it (the point of the
    // reference's copies); an owned copy is a .clone() away.
    let mut chef = Chef::new(ChefConfig::default());
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    let kit = chef.tools().pruner().extract_toolkit("weather").unwrap();
    let names: Vec<&str> = kit.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "get_forecast"]);
    let err = chef
        .tools()
        .pruner()
        .extract_toolkit("NonExistent")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unknown toolkit: \"NonExistent\". Available: Weather, Database"
    );
    // Through the dispatch entry point, `toolkit_name` is checked against the loader's
    // enum like any argument: another case is refused with the exact name to use.
    chef.push(Message::user("weather?"));
    let routed = chef.route(&call("load_toolkit", json!({"toolkit_name": "weather"})));
    assert!(
        routed
            .reply()
            .is_some_and(|r| r.contains("Use exactly \"Weather\"")),
        "{routed:?}"
    );
    assert!(chef.tools().loaded_toolkits().is_empty());
    let err = Pruner::default()
        .extract_toolkit("NonExistent")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unknown toolkit: \"NonExistent\". Available: (none)"
    );
}

#[test]
fn item_49_the_directory_in_the_compiled_request() {
    // 49. Whether compile puts the directory into the messages.
    // DIFFERS: the reference leaves placing the directory to the caller. chef puts it into
    // its own stable system layer, so the agent loop has nothing to merge by hand and the
    // directory sits inside the cached prefix (it depends only on the registered
    // toolkits). It appears exactly once.
    let mut chef = grouped();
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    chef.set_system_prompt(vec![Message::system("You are an agent.")]);
    chef.push(Message::user("hi"));
    let text = String::from_utf8(chef.compile(Target::Anthropic).unwrap().body).unwrap();
    // The directory's opening line (the load_toolkit description names the element too).
    let opening = "<available_toolkits>\\n  <toolkit name=\\\"Weather\\\"";
    assert_eq!(text.matches(opening).count(), 1, "{text}");
}

// ---- library-owned tools (items 50–78) ----------------------------------------------------

fn owned_names(chef: &mut Chef) -> Vec<String> {
    wire_names(chef, Target::Anthropic)
        .into_iter()
        .filter(|n| chef.tools().owns(n))
        .collect()
}

#[test]
fn item_50_memory_tools_come_last() {
    // 50. With memory, the payload ends with create_memory, modify_memory.
    for namespaced in [false, true] {
        let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
        chef.register_tools(seed_tools()).unwrap();
        if namespaced {
            chef.tools_mut().register_namespaces(namespaces()).unwrap();
            chef.tools_mut().register_toolkits(toolkits()).unwrap();
        }
        let names = wire_names(&mut chef, Target::Anthropic);
        assert_eq!(names[names.len() - 2..], ["create_memory", "modify_memory"]);
        // Three flat tools (then two namespaces and the loader); then the memory tools.
        assert_eq!(names.len(), if namespaced { 8 } else { 5 });
    }
}

fn wire_tool(chef: &mut Chef, name: &str) -> ToolDefinition {
    chef.request(Target::Anthropic)
        .unwrap()
        .tools
        .into_iter()
        .find(|t| t.name.as_str() == name)
        .unwrap()
}

#[test]
fn item_51_allowed_keys_become_the_key_enum() {
    // 51. allowedKeys ["a","b"] is create_memory's key enum; [] or none gives no enum;
    // modify_memory's key never has one; its action enum is update, delete.
    let mut chef =
        Chef::new(ChefConfig::default()).with_memory(Memory::new().with_allowed_keys(["a", "b"]));
    let create = wire_tool(&mut chef, "create_memory");
    assert_eq!(
        create.input_schema["properties"]["key"]["enum"],
        json!(["a", "b"])
    );
    for memory in [
        Memory::new(),
        Memory::new().with_allowed_keys(Vec::<String>::new()),
    ] {
        let mut chef = Chef::new(ChefConfig::default()).with_memory(memory);
        let create = wire_tool(&mut chef, "create_memory");
        assert!(
            create.input_schema["properties"]["key"]
                .get("enum")
                .is_none()
        );
        let modify = wire_tool(&mut chef, "modify_memory");
        assert!(
            modify.input_schema["properties"]["key"]
                .get("enum")
                .is_none()
        );
        assert_eq!(
            modify.input_schema["properties"]["action"]["enum"],
            json!(["update", "delete"])
        );
    }
}

#[test]
fn item_52_tools_mode_decides_the_owned_tools() {
    // 52. unified: [context] (+ new_context with handoff), never the legacy pair;
    // legacy without memory: none; new_context's parameters.
    let mut chef = unified();
    assert_eq!(owned_names(&mut chef), ["context"]);
    let mut chef = Chef::new(handoff_config()).with_memory(Memory::new());
    assert_eq!(owned_names(&mut chef), ["context", "new_context"]);
    let mut chef = Chef::new(ChefConfig::default());
    assert!(owned_names(&mut chef).is_empty());
    // DIFFERS: the reference's new_context has no `parameters` at all. Every provider
    // requires a parameter schema on a function tool, so chef sends the empty object
    // schema, which asks for nothing.
    let mut chef = Chef::new(handoff_config());
    let new_context = wire_tool(&mut chef, "new_context");
    assert_eq!(
        new_context.input_schema,
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn item_53_owned_schemas_do_not_move_with_memory() {
    // 53. Two compiles with memory changes between them: the same tools.
    for mode in [ToolsMode::Legacy, ToolsMode::Unified] {
        let mut chef = Chef::new(ChefConfig::default().with_tools_mode(mode))
            .with_memory(Memory::new().with_allowed_keys(["a", "b"]));
        chef.push(Message::user("hi"));
        let before = body(&mut chef, Target::Anthropic)["tools"].clone();
        chef.memory_mut()
            .unwrap()
            .set("a", "one", SetOptions::new())
            .unwrap();
        chef.memory_mut()
            .unwrap()
            .set("b", "two", SetOptions::new())
            .unwrap();
        chef.push(Message::assistant("ok"));
        chef.push(Message::user("again"));
        assert_eq!(
            body(&mut chef, Target::Anthropic)["tools"],
            before,
            "{mode:?}"
        );
    }
}

#[test]
fn item_54_owns_tool_is_exact() {
    // 54. The five owned names; not load_toolkit, not "Context". (A non-string name cannot
    // be written in Rust.)
    let chef = Chef::new(ChefConfig::default());
    for name in [
        "context",
        "new_context",
        "create_memory",
        "modify_memory",
        "recall_context",
    ] {
        assert!(chef.tools().owns(name), "{name}");
    }
    for name in ["load_toolkit", "Context", "", " context"] {
        assert!(!chef.tools().owns(name), "{name:?}");
    }
}

#[test]
fn item_55_handle_tool_refuses_a_tool_it_does_not_own() {
    // 55. handleTool("unknown_tool") is a programmer error, not an "Error:" reply.
    let mut chef = unified();
    let err = handle(&mut chef, "unknown_tool", json!({})).unwrap_err();
    assert!(
        matches!(err, ChefError::NotOwned(ref n) if n == "unknown_tool"),
        "{err}"
    );
}

#[test]
fn item_56_argument_errors_of_the_context_tool() {
    // 56. Bad JSON, a non-object, a missing command, an unknown command.
    let mut chef = unified();
    let cases = [
        (
            json!("{bad json"),
            "Error: the tool arguments were not valid JSON.",
        ),
        (
            json!("[1,2]"),
            "Error: the tool arguments must be a JSON object.",
        ),
        (
            json!({"path": "notes/a"}),
            "Error: the \"command\" argument is required and must be a non-empty string.",
        ),
        (
            json!({"command": "frob", "path": "notes/a"}),
            "Error: unknown command \"frob\". Use one of: view, create, str_replace, insert, delete, rename, search.",
        ),
    ];
    for (arguments, expected) in cases {
        let reply = handle(&mut chef, "context", arguments).unwrap();
        assert_eq!(reply.text, expected);
        assert!(reply.is_error);
    }
}

#[test]
fn item_57_create_then_view_with_line_numbers() {
    // 57. create notes/plan.md, view with numbers, every address form alike.
    let mut chef = unified();
    let reply = create(&mut chef, "notes/plan.md", "line1\nline2");
    assert_eq!(reply, "Created context://notes/plan.md.");
    for path in [
        "notes/plan.md",
        "context://notes/plan.md",
        "/notes/plan.md",
        "  notes/plan.md  ",
    ] {
        assert_eq!(
            view(&mut chef, path),
            "     1\tline1\n     2\tline2",
            "{path:?}"
        );
    }
}

#[test]
fn item_58_create_never_overwrites() {
    // 58. create on an existing path.
    let mut chef = planned();
    let reply = create(&mut chef, "notes/plan.md", "x");
    assert_eq!(
        reply,
        "Error: context://notes/plan.md already exists. Use str_replace to edit it, or delete it first."
    );
}

#[test]
fn item_59_str_replace_is_unique_and_literal() {
    // 59. An old_str found twice is refused; "$&X" is inserted literally.
    let mut chef = unified();
    create(&mut chef, "notes/t", "ab ab cd");
    let reply = str_replace(&mut chef, "notes/t", "ab", "x");
    assert!(
        reply.starts_with("Error: old_str appears more than once in context://notes/t."),
        "{reply}"
    );
    let reply = str_replace(&mut chef, "notes/t", "cd", "$&X");
    assert_eq!(reply, "Edited context://notes/t.");
    assert_eq!(view(&mut chef, "notes/t"), "     1\tab ab $&X");
}

#[test]
fn item_60_insert_line_range_and_type() {
    // 60. insert_line out of range, "" and "1.5".
    let mut chef = planned();
    let insert = |line: Value| json!({"command": "insert", "path": "notes/plan.md", "insert_line": line, "insert_text": "new"});
    assert_eq!(
        context(&mut chef, insert(json!(9))),
        "Error: insert_line 9 is out of range for context://notes/plan.md, which has 3 lines. Use 0 to 3."
    );
    assert_eq!(
        context(&mut chef, insert(json!("1.5"))),
        "Error: the \"insert_line\" argument is required and must be an integer."
    );
    // DIFFERS: the reference reads "" as 0 (JavaScript's Number("")) and inserts at the
    // top. chef refuses an empty or blank string: an insert position the model did not
    // state should not silently become "the top". A numeric string still counts.
    assert_eq!(
        context(&mut chef, insert(json!(""))),
        "Error: the \"insert_line\" argument is required and must be an integer."
    );
    assert_eq!(
        context(&mut chef, insert(json!("0"))),
        "Inserted into context://notes/plan.md."
    );
    assert_eq!(
        view(&mut chef, "notes/plan.md"),
        "     1\tnew\n     2\tline1\n     3\tline2\n     4\tline3"
    );
}

#[test]
fn item_61_search_with_snippets() {
    // 61. search notes/ "MID": one match with a snippet; no hit.
    let mut chef = unified();
    create(&mut chef, "notes/a.md", "start mid end");
    let reply = context(
        &mut chef,
        json!({"command": "search", "path": "notes/", "query": "MID"}),
    );
    assert_eq!(
        reply,
        "1 match for \"MID\" under context://notes/:\n- context://notes/a.md: start mid end"
    );
    let reply = context(
        &mut chef,
        json!({"command": "search", "path": "notes/", "query": "zzz"}),
    );
    assert_eq!(reply, "No matches for \"zzz\" under context://notes/.");
}

#[test]
fn item_62_rename_and_directory_views() {
    // 62. rename into a sub-directory; view lists it; a directory path without slash lists.
    let mut chef = planned();
    let reply = rename(&mut chef, "notes/plan.md", "notes/sub/plan2.md");
    assert_eq!(
        reply,
        "Renamed context://notes/plan.md to context://notes/sub/plan2.md."
    );
    let listing = view(&mut chef, "notes");
    assert!(
        listing.contains("- context://notes/sub/plan2.md"),
        "{listing}"
    );
    assert!(
        !listing.contains("plan.md\n") && !listing.ends_with("/plan.md"),
        "{listing}"
    );
    let listing = view(&mut chef, "notes/sub");
    assert_eq!(
        listing,
        "context://notes/sub/ (1 entry):\n- context://notes/sub/plan2.md"
    );
}

#[test]
fn item_63_rename_stays_in_its_namespace() {
    // 63. rename into another namespace.
    let mut chef = planned();
    let reply = rename(&mut chef, "notes/plan.md", "memory/plan");
    assert_eq!(
        reply,
        "Error: rename cannot move context://notes/plan.md into another namespace (context://memory/plan)."
    );
}

#[test]
fn item_64_read_only_namespaces() {
    // 64. create vfs/x is refused and names the writable namespaces.
    let mut chef = unified();
    let reply = create(&mut chef, "vfs/x", "x");
    assert_eq!(
        reply,
        "Error: context://vfs/x is read-only. This tool may write to: context://memory/, context://notes/."
    );
}

#[test]
fn item_65_unsafe_paths_are_refused() {
    // 65. Escaping or malformed paths; a directory path for create.
    let mut chef = unified();
    for raw in ["../x", "notes/../x", "notes//x", "mem:x/y", "notes\\x"] {
        let reply = create(&mut chef, raw, "x");
        let expected = format!("Error: \"{raw}\" is not a context path: ");
        assert!(reply.starts_with(&expected), "{raw:?}: {reply}");
    }
    let reply = create(&mut chef, "notes/x/", "x");
    assert_eq!(
        reply,
        "Error: context://notes/x/ is a directory. Name an entry to create."
    );
}

#[test]
fn item_66_deleting_nothing() {
    // 66. delete notes/nothing.
    let mut chef = unified();
    let reply = context(
        &mut chef,
        json!({"command": "delete", "path": "notes/nothing"}),
    );
    assert_eq!(
        reply,
        "Error: nothing is stored at context://notes/nothing."
    );
}

#[test]
fn item_67_an_empty_vfs() {
    // 67. view context://vfs/ on an empty store.
    let mut chef = unified();
    let reply = view(&mut chef, "context://vfs/");
    assert_eq!(reply, "context://vfs/ is empty.");
}

#[test]
fn item_68_memory_through_the_context_tool() {
    // 68. create memory/lang with a description; view without line numbers; listing.
    let mut chef = unified();
    let reply = context(
        &mut chef,
        json!({"command": "create", "path": "memory/lang", "file_text": "TypeScript", "description": "main language"}),
    );
    assert_eq!(reply, "Created context://memory/lang.");
    assert_eq!(view(&mut chef, "memory/lang"), "TypeScript");
    assert_eq!(
        view(&mut chef, "memory"),
        "context://memory/ (1 entry):\n- context://memory/lang — main language"
    );
}

#[test]
fn item_69_the_access_policy_covers_every_memory_write() {
    // 69. writable ["notes"]: memory writes refused through both vocabularies; reads fine.
    // chef goes further than the checklist: updates and deletes through modify_memory are
    // refused too (the reference's order checks the policy there as well).
    let mut config = ChefConfig::default().with_tools_mode(ToolsMode::Unified);
    config.writable = vec!["notes".to_owned()];
    let mut memory = Memory::new();
    memory.set("kept", "v", SetOptions::new()).unwrap();
    let mut chef = Chef::new(config).with_memory(memory);
    assert_eq!(
        create(&mut chef, "memory/zz", "x"),
        "Error: context://memory/zz is read-only. This tool may write to: context://notes/."
    );
    assert_eq!(
        owned(
            &mut chef,
            "create_memory",
            json!({"key": "zz", "value": "x"})
        ),
        "Error: context://memory/zz is read-only."
    );
    for action in [
        json!({"action": "update", "key": "kept", "value": "changed"}),
        json!({"action": "delete", "key": "kept"}),
    ] {
        assert_eq!(
            owned(&mut chef, "modify_memory", action),
            "Error: context://memory/kept is read-only."
        );
    }
    assert_eq!(chef.memory().unwrap().get("kept").unwrap().value(), "v");
    assert_eq!(
        view(&mut chef, "memory/zz"),
        "Error: nothing is stored at context://memory/zz."
    );
}

#[test]
fn item_70_allowed_keys_refuse_other_keys() {
    // 70. allowedKeys [a,b,c] refuses zz and lists them; [] refuses everything.
    let mut chef = Chef::new(ChefConfig::default())
        .with_memory(Memory::new().with_allowed_keys(["a", "b", "c"]));
    assert_eq!(
        owned(
            &mut chef,
            "create_memory",
            json!({"key": "zz", "value": "x"})
        ),
        "Error: context://memory/zz is not an allowed memory key. Allowed keys: a, b, c."
    );
    let mut chef = Chef::new(ChefConfig::default())
        .with_memory(Memory::new().with_allowed_keys(Vec::<String>::new()));
    assert_eq!(
        owned(
            &mut chef,
            "create_memory",
            json!({"key": "zz", "value": "x"})
        ),
        "Error: context://memory/zz cannot be written: no memory keys are allowed."
    );
}

#[test]
fn item_71_memory_tools_without_memory() {
    // 71. create_memory on a chef without memory.
    let mut chef = Chef::new(ChefConfig::default());
    let reply = owned(
        &mut chef,
        "create_memory",
        json!({"key": "zz", "value": "x"}),
    );
    assert!(
        reply.starts_with("Error: context://memory/ is not available: "),
        "{reply}"
    );
}

#[test]
fn item_72_a_vetoed_write() {
    // 72. The validation hook refuses: "rejected by the host".
    // DIFFERS (addition): the hook returns a reason, and the reply carries it after the
    // reference's sentence, so the model can tell what to change.
    let memory = Memory::new().with_validator(|_| Err("values must be short".to_owned()));
    let mut chef = Chef::new(ChefConfig::default()).with_memory(memory);
    let reply = owned(
        &mut chef,
        "create_memory",
        json!({"key": "zz", "value": "x"}),
    );
    assert_eq!(
        reply,
        "Error: the write to context://memory/zz was rejected by the host: values must be short"
    );
    assert!(chef.memory().unwrap().get("zz").is_none());
}

#[test]
fn item_73_create_memory_never_overwrites() {
    // 73. create_memory twice with one key.
    let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    let args = json!({"key": "k", "value": "v"});
    assert_eq!(
        owned(&mut chef, "create_memory", args.clone()),
        "Created context://memory/k."
    );
    assert_eq!(
        owned(&mut chef, "create_memory", args),
        "Error: context://memory/k already exists. Use modify_memory to update or delete it."
    );
}

#[test]
fn item_74_modify_memory_action_errors() {
    // 74. An unknown action on an existing key; on a missing key, not-found wins.
    let mut memory = Memory::new();
    memory.set("k", "v", SetOptions::new()).unwrap();
    let mut chef = Chef::new(ChefConfig::default()).with_memory(memory);
    assert_eq!(
        owned(
            &mut chef,
            "modify_memory",
            json!({"action": "frob", "key": "k"})
        ),
        "Error: action must be \"update\" or \"delete\", got \"frob\"."
    );
    assert_eq!(
        owned(
            &mut chef,
            "modify_memory",
            json!({"action": "frob", "key": "missing"})
        ),
        "Error: nothing is stored at context://memory/missing."
    );
}

#[test]
fn item_75_modify_memory_update() {
    // 75. update: "Updated", update count +1, description kept.
    let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    owned(
        &mut chef,
        "create_memory",
        json!({"key": "k", "value": "v1", "description": "why"}),
    );
    let before = chef.memory().unwrap().get("k").unwrap().update_count();
    assert_eq!(
        owned(
            &mut chef,
            "modify_memory",
            json!({"action": "update", "key": "k", "value": "v2"})
        ),
        "Updated context://memory/k."
    );
    let entry = chef.memory().unwrap().get("k").unwrap();
    assert_eq!(entry.value(), "v2");
    assert_eq!(entry.update_count(), before + 1);
    assert_eq!(entry.description(), Some("why"));
}

#[test]
fn item_76_a_renamed_memory_is_a_new_entry() {
    // 76. Memory rename: the destination starts with update count 1.
    let mut chef = unified();
    create(&mut chef, "memory/old", "v");
    owned(
        &mut chef,
        "modify_memory",
        json!({"action": "update", "key": "old", "value": "v2"}),
    );
    assert_eq!(chef.memory().unwrap().get("old").unwrap().update_count(), 2);
    assert_eq!(
        rename(&mut chef, "memory/old", "memory/new"),
        "Renamed context://memory/old to context://memory/new."
    );
    let memory = chef.memory().unwrap();
    assert!(memory.get("old").is_none());
    assert_eq!(memory.get("new").unwrap().update_count(), 1);
    assert_eq!(memory.get("new").unwrap().value(), "v2");
}

#[test]
fn item_77_new_context_requests_a_fresh_window() {
    // 77. new_context: the reply, and the request the next compile acts on; bad JSON
    // requests nothing.
    // The overflow step that consumes the request lands with the session's overflow
    // handling; here the pending request is checked (and request_new_context, the
    // host's way to ask, sets the same flag).
    let mut chef = Chef::new(handoff_config());
    assert_eq!(
        owned(&mut chef, "new_context", json!("{bad")),
        "Error: the tool arguments were not valid JSON."
    );
    assert!(!chef.new_context_requested());
    assert_eq!(
        owned(&mut chef, "new_context", Value::Null),
        "Starting a new context window."
    );
    assert!(chef.new_context_requested());
    let mut host = Chef::new(ChefConfig::default());
    assert!(!host.new_context_requested());
    // DIFFERS (a deliberate guard): a session without a handoff never offered the tool, so
    // a model that names it anyway ends no window.
    let reply = owned(&mut host, "new_context", json!({}));
    assert!(
        reply.starts_with("Error: new_context is not available"),
        "{reply}"
    );
    assert!(!host.new_context_requested());
    host.request_new_context();
    assert!(host.new_context_requested());
}

#[test]
fn item_78_recall_context_is_a_view() {
    // 78. recall_context{uri} gives the same text as context view.
    let mut chef = unified();
    create(&mut chef, "notes/x", "a\nb");
    let viewed = view(&mut chef, "notes/x");
    assert_eq!(
        owned(
            &mut chef,
            "recall_context",
            json!({"uri": "context://notes/x"})
        ),
        viewed
    );
}

// ---- the seed's agent loop as one match ---------------------------------------------------

#[test]
fn seed_agent_loop_is_one_match_over_the_dispatch_entry_point() {
    // The seed's loop (gate, namespace routing, toolkit loading, owned tools) written
    // against Chef::route: every outcome is one arm.
    let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    chef.tools_mut().register_namespaces(namespaces()).unwrap();
    chef.tools_mut().register_toolkits(toolkits()).unwrap();
    chef.tools_mut().set_blocked(["delete_file", "run_bash"]);
    chef.push(Message::user("check the weather and remember it"));
    chef.compile(Target::Anthropic).unwrap();
    let calls = [
        call(
            "terminal",
            json!({"action": "run_bash", "args": {"command": "rm -rf /"}}),
        ),
        call(
            "file_ops",
            json!({"action": "read_file", "args": {"path": "a.ts"}}),
        ),
        call("load_toolkit", json!({"toolkit_name": "Weather"})),
        call("create_memory", json!({"key": "city", "value": "Oslo"})),
    ];
    let mut outcomes = Vec::new();
    for c in &calls {
        let outcome = match chef.route(c) {
            Routed::Call(real) => format!("run {}", real.name),
            Routed::Owned(owned) => rt().block_on(chef.handle_tool(&owned)).unwrap().text,
            Routed::ToolkitLoaded { toolkit, .. } => format!("loaded {toolkit}"),
            Routed::Lookup { reply, .. }
            | Routed::Blocked { reply, .. }
            | Routed::Error { reply, .. } => reply,
        };
        outcomes.push(outcome);
    }
    assert_eq!(
        outcomes,
        [
            "Tool \"run_bash\" is currently blocked.",
            "run read_file",
            "loaded Weather",
            "Created context://memory/city.",
        ]
    );
    // The loaded toolkit's tools are offered from the next compile on, after the stable
    // tools and the owned tools.
    let names = wire_names(&mut chef, Target::Anthropic);
    assert_eq!(
        names,
        [
            "file_ops",
            "load_toolkit",
            "terminal",
            "create_memory",
            "modify_memory",
            "get_forecast",
            "get_weather"
        ]
    );
}

/// A namespace or toolkit with an empty or blank name, or a member without a name, is
/// refused at registration (before, it was accepted and every later compile failed with
/// "tool is missing a name").
#[test]
fn groups_and_members_without_names_are_refused_at_registration() {
    let member = || sub("w", "Writes.", json!({}));
    for kind in ["namespace", "toolkit"] {
        for (group, want) in [
            (
                ToolGroup::new("", "A group.", vec![member()]),
                "needs a name",
            ),
            (
                ToolGroup::new("  ", "A group.", vec![member()]),
                "needs a name",
            ),
            (
                ToolGroup::new("files", "Files.", vec![sub(" ", "Nameless.", json!({}))]),
                "lists a tool without a name",
            ),
        ] {
            let mut chef = Chef::new(ChefConfig::default());
            let result = if kind == "namespace" {
                chef.tools_mut()
                    .register_namespaces(vec![group])
                    .map(|_| ())
            } else {
                chef.tools_mut().register_toolkits(vec![group]).map(|_| ())
            };
            let error = result.unwrap_err().to_string();
            assert!(error.contains(want), "{kind}: {error}");
            assert!(error.contains(kind), "{kind}: {error}");
            chef.push(Message::user("hi"));
            assert!(chef.compile(Target::OpenAiChat).is_ok(), "left unchanged");
        }
    }
}

#[test]
fn a_memory_value_over_the_limit_is_refused_and_a_host_write_or_a_rename_is_not() {
    use chef::memory::DEFAULT_MAX_VALUE_CHARS;
    let long = "é".repeat(DEFAULT_MAX_VALUE_CHARS + 1);
    let at_limit = format!("x{}", "é".repeat(DEFAULT_MAX_VALUE_CHARS - 1));

    // The unified `context` tool: create, then a str_replace that grows past the limit.
    let mut chef = unified();
    let reply = create(&mut chef, "memory/notes", &long);
    assert_eq!(
        reply,
        "Error: the value for context://memory/notes is 8,001 characters long; a memory entry \
         holds at most 8,000 (every entry is shown in every request). Store a shorter value: \
         a summary, or only what later turns need."
    );
    assert!(
        chef.memory().unwrap().get("notes").is_none(),
        "nothing stored"
    );
    assert_eq!(
        create(&mut chef, "memory/notes", &at_limit),
        "Created context://memory/notes."
    );
    let grown = str_replace(&mut chef, "memory/notes", "x", "xy");
    assert!(grown.contains("8,001 characters long"), "{grown}");
    assert_eq!(
        chef.memory().unwrap().get("notes").unwrap().value(),
        at_limit,
        "the refused edit changed nothing"
    );

    // The host writes what it wants; a rename moves it without adding anything.
    chef.memory_mut()
        .unwrap()
        .set("big", &*long, chef::memory::SetOptions::new())
        .unwrap();
    assert_eq!(
        rename(&mut chef, "memory/big", "memory/moved"),
        "Renamed context://memory/big to context://memory/moved."
    );
    assert_eq!(chef.memory().unwrap().get("moved").unwrap().value(), long);

    // The legacy memory tools, and a description over the limit.
    let mut legacy = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    let reply = owned(
        &mut legacy,
        "create_memory",
        json!({"key": "k", "value": "v", "description": "d".repeat(DEFAULT_MAX_VALUE_CHARS + 5)}),
    );
    assert!(
        reply.starts_with("Error: the description for context://memory/k is 8,005 characters long"),
        "{reply}"
    );
    assert!(legacy.memory().unwrap().is_empty());

    // `None` removes the limit; another limit is kept to.
    let mut open =
        Chef::new(ChefConfig::default()).with_memory(Memory::new().with_max_value_chars(None));
    let reply = owned(
        &mut open,
        "create_memory",
        json!({"key": "k", "value": long}),
    );
    assert!(!reply.starts_with("Error"), "{reply}");
    let mut tight =
        Chef::new(ChefConfig::default()).with_memory(Memory::new().with_max_value_chars(Some(3)));
    let reply = owned(
        &mut tight,
        "create_memory",
        json!({"key": "k", "value": "abcd"}),
    );
    assert!(
        reply.contains("is 4 characters long; a memory entry holds at most 3"),
        "{reply}"
    );
}

#[test]
fn a_key_or_path_the_model_writes_with_an_invisible_character_is_refused() {
    // A right-to-left override makes "notes\u{202e}txt.exe" read as another key.
    let mut legacy = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    let reply = owned(
        &mut legacy,
        "create_memory",
        json!({"key": "user\u{200b}_timezone", "value": "UTC"}),
    );
    assert_eq!(
        reply,
        "Error: \"user\\u{200b}_timezone\" is not a usable memory key: the key contains an \
         invisible formatting character (zero-width or bidirectional)."
    );
    assert!(legacy.memory().unwrap().is_empty());

    let mut chef = unified();
    for path in ["memory/notes\u{202e}txt", "notes/a\u{feff}b.md"] {
        let reply = create(&mut chef, path, "x");
        assert!(
            reply.contains(
                "invisible formatting characters (zero-width, bidirectional) are not allowed"
            ),
            "{path:?}: {reply}"
        );
    }
    assert!(chef.memory().unwrap().is_empty());

    // The host may still store such a key, and the model may read and delete it.
    chef.memory_mut()
        .unwrap()
        .set("a\u{200d}b", "joined", chef::memory::SetOptions::new())
        .unwrap();
    let mut legacy = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    legacy
        .memory_mut()
        .unwrap()
        .set("a\u{200d}b", "joined", chef::memory::SetOptions::new())
        .unwrap();
    let reply = owned(
        &mut legacy,
        "modify_memory",
        json!({"action": "update", "key": "a\u{200d}b", "value": "changed"}),
    );
    assert!(!reply.starts_with("Error"), "{reply}");
    assert_eq!(
        legacy.memory().unwrap().get("a\u{200d}b").unwrap().value(),
        "changed"
    );
}

/// A key the model makes that is blank or padded with whitespace (`" "`, `"x "`, `" x"`) is
/// refused: each was stored as a key of its own, reading as another or as none (found by
/// session 41's library audit). The host may still store one.
#[test]
fn a_blank_or_padded_key_the_model_writes_is_refused() {
    let mut chef = Chef::new(ChefConfig::default()).with_memory(Memory::new());
    for key in [" ", "x ", " x", "notes/ a", "a /b"] {
        let reply = owned(
            &mut chef,
            "create_memory",
            json!({"key": key, "value": "v"}),
        );
        assert!(
            reply.contains("is blank, or a segment of it begins or ends with whitespace"),
            "{key:?}: {reply}"
        );
    }
    assert!(chef.memory().unwrap().is_empty());
    let reply = owned(
        &mut chef,
        "create_memory",
        json!({"key": "a b/c d", "value": "v"}),
    );
    assert!(
        !reply.starts_with("Error"),
        "inner spaces are fine: {reply}"
    );
    chef.memory_mut()
        .unwrap()
        .set("x ", "host", chef::memory::SetOptions::new())
        .unwrap();
}

/// Session 40's context audit: `search` of an address nothing is stored under answered
/// "No matches", as if the entry existed; `view` of it says nothing is stored.
#[test]
fn search_of_an_address_with_nothing_stored_says_so() {
    let mut chef = planned();
    for (path, uri) in [
        ("memory/nothing", "context://memory/nothing"),
        ("notes/missing.md", "context://notes/missing.md"),
    ] {
        let reply = context(
            &mut chef,
            json!({"command": "search", "path": path, "query": "x"}),
        );
        assert_eq!(reply, format!("Error: nothing is stored at {uri}."));
    }
    // An entry that is there and does not match is still "no matches".
    let reply = context(
        &mut chef,
        json!({"command": "search", "path": "notes/plan.md", "query": "zzz"}),
    );
    assert!(reply.starts_with("No matches for \"zzz\""), "{reply}");
}
