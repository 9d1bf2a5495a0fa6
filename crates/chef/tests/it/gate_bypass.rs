//! The gate holds on every route a model can take to a blocked tool (issue 8).

use chef::{Chef, ChefConfig, Routed, ToolGroup};
use chef_compress::Level;
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::{Value, json};

use crate::support::asked_at;

const BLOCKED: &str = "fs_delete_file";

fn tools() -> Vec<ToolDefinition> {
    let path =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    vec![
        ToolDefinition::new("fs_read_file", path.clone()).with_description("Read a file."),
        ToolDefinition::new(BLOCKED, path.clone()).with_description("Delete a file."),
        ToolDefinition::new("fs_list_dir", path).with_description("List a directory."),
        ToolDefinition::new(
            "web_search",
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        )
        .with_description("Search the web."),
    ]
}

fn chef(level: Level) -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_level(level));
    chef.register_tools(tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You manage files.")]);
    chef.push(Message::user("Clean up the temp directory."));
    chef.tools_mut().set_blocked([BLOCKED]);
    chef
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("c1", name, args)
}

#[track_caller]
fn assert_blocked(chef: &mut Chef, call: &ToolCall) {
    match chef.route(call) {
        Routed::Blocked { name, reply, .. } => {
            assert!(reply.contains("is currently blocked"), "{reply}");
            assert!(!name.is_empty());
        }
        other => panic!("{call:?} got through the gate: {other:?}"),
    }
}

#[track_caller]
fn assert_not_dispatched(chef: &mut Chef, call: &ToolCall) {
    let routed = chef.route(call);
    assert!(
        !matches!(routed, Routed::Call(_)),
        "{call:?} was dispatched: {routed:?}"
    );
}

fn args() -> Value {
    json!({"path": "/tmp/x"})
}

#[test]
fn route_01_exact_name_at_levels_0_and_1() {
    for level in [Level::Zero, Level::One] {
        assert_blocked(&mut chef(level), &call(BLOCKED, args()));
    }
}

#[test]
fn route_02_other_letter_case() {
    for level in [Level::Zero, Level::One, Level::Three] {
        assert_blocked(&mut chef(level), &call("FS_DELETE_FILE", args()));
        assert_blocked(&mut chef(level), &call("Fs_Delete_File", args()));
    }
}

#[test]
fn route_03_surrounding_whitespace() {
    for level in [Level::Zero, Level::One, Level::Three] {
        assert_blocked(&mut chef(level), &call("  fs_delete_file\n", args()));
    }
}

#[test]
fn route_04_dotted_dashed_and_camel_aliases() {
    for level in [Level::One, Level::Three] {
        for alias in [
            "fs.delete_file",
            "fs-delete-file",
            "fs/delete_file",
            "fsDeleteFile",
            "fs delete file",
        ] {
            assert_blocked(&mut chef(level), &call(alias, args()));
        }
    }
}

#[test]
fn route_05_level_3_dispatcher_code() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for(BLOCKED).unwrap();
    assert_blocked(&mut chef, &call("t", json!({"f": code, "a": args()})));
}

#[test]
fn route_06_level_3_code_used_as_the_tool_name() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for(BLOCKED).unwrap();
    assert_blocked(&mut chef, &call(&code, args()));
}

#[test]
fn route_07_level_3_real_name_and_drifted_name_in_f() {
    let mut chef = chef(Level::Three);
    for f in [BLOCKED, "FS.Delete-File", "fsdeletefile"] {
        assert_blocked(&mut chef, &call("t", json!({"f": f, "a": args()})));
    }
}

#[test]
fn route_08_q_then_t() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for(BLOCKED).unwrap();
    // A search never lists a blocked tool, and a code lookup does not describe it…
    match chef.route(&call("q", json!({"s": "delete"}))) {
        Routed::Lookup { reply, .. } => assert!(!reply.contains(&code), "{reply}"),
        other => panic!("{other:?}"),
    }
    assert_blocked(&mut chef, &call("q", json!({"c": code})));
    assert_blocked(&mut chef, &call("q", json!({"c": BLOCKED})));
    // …and a code known from elsewhere is still refused by the gate.
    assert_blocked(&mut chef, &call("t", json!({"f": code, "a": args()})));
    // A look-alike spelling asked of `q` is refused as blocked too, as through `t` (it
    // was "No map code"; found by session 41's library audit): a Cyrillic `е`, an `ï`,
    // full-width letters.
    for spelling in [
        "fs_delete_filе",
        "fs_delete_fïle",
        "ｆｓ_ｄｅｌｅｔｅ_ｆｉｌｅ",
    ] {
        assert_blocked(&mut chef, &call("q", json!({"c": spelling})));
    }
    // Under discovery the map holds the ranked tools only: the exact name asked of `q` is
    // refused as blocked, not "No map code".
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_level(Level::Three)
            .with_prune(chef::PrunePolicy::discover(2)),
    );
    chef.register_tools(tools()).unwrap();
    chef.push(Message::user("Search the web for rust."));
    chef.tools_mut().set_blocked([BLOCKED]);
    chef.compile(Target::OpenAiChat).unwrap();
    assert_blocked(&mut chef, &call("q", json!({"c": BLOCKED})));
}

#[test]
fn route_09_dispatcher_nested_in_itself_and_flat_bags() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for(BLOCKED).unwrap();
    assert_blocked(
        &mut chef,
        &call("t", json!({"f": "t", "a": {"f": code, "a": args()}})),
    );
    assert_blocked(&mut chef, &call("t", json!({"f": code, "path": "/tmp/x"})));
}

#[test]
fn route_10_whole_arguments_as_a_json_string() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for(BLOCKED).unwrap();
    let text = json!({"f": code, "a": args()}).to_string();
    assert_blocked(&mut chef, &call("t", Value::String(text)));
}

#[test]
fn route_11_level_2_compound_op() {
    let mut chef = chef(Level::Two);
    let encoded = chef.tools().encode_call(BLOCKED, args()).unwrap();
    assert_eq!(encoded.name.as_str(), "fs");
    assert_blocked(&mut chef, &encoded);
    assert_blocked(
        &mut chef,
        &call("fs", json!({"op": "delete_file", "args": args()})),
    );
}

fn namespaced(level: Level, blocked: &str) -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_level(level));
    let all = tools();
    chef.tools_mut()
        .register_namespaces(vec![ToolGroup::new(
            "file_ops",
            "File operations",
            all.iter()
                .filter(|t| t.name.as_str().starts_with("fs_"))
                .cloned()
                .collect(),
        )])
        .unwrap();
    chef.tools_mut()
        .register_toolkits(vec![ToolGroup::new(
            "Web",
            "Web access",
            all.iter()
                .filter(|t| t.name == "web_search")
                .cloned()
                .collect(),
        )])
        .unwrap();
    chef.push(Message::user("go"));
    chef.tools_mut().set_blocked([blocked]);
    chef
}

#[test]
fn route_12_namespace_action() {
    for level in [Level::Zero, Level::One, Level::Three] {
        let mut chef = namespaced(level, BLOCKED);
        let ns_call = call("file_ops", json!({"action": BLOCKED, "args": args()}));
        let routed = if level == Level::Three {
            let code = chef.tools().code_for("file_ops").unwrap();
            call(
                "t",
                json!({"f": code, "a": {"action": BLOCKED, "args": args()}}),
            )
        } else {
            ns_call.clone()
        };
        assert_blocked(&mut chef, &ns_call);
        assert_blocked(&mut chef, &routed);
        // Flat arguments beside the action, and the action in another case.
        assert_blocked(
            &mut chef,
            &call("file_ops", json!({"action": BLOCKED, "path": "/x"})),
        );
        assert_blocked(
            &mut chef,
            &call(
                "file_ops",
                json!({"action": "FS_DELETE_FILE", "args": args()}),
            ),
        );
        // Other actions of the namespace still work.
        assert!(matches!(
            chef.route(&call(
                "file_ops",
                json!({"action": "fs_read_file", "args": args()})
            )),
            Routed::Call(_)
        ));
    }
}

#[test]
fn route_13_a_blocked_namespace_blocks_every_action() {
    let mut chef = namespaced(Level::One, "file_ops");
    assert_blocked(
        &mut chef,
        &call(
            "file_ops",
            json!({"action": "fs_read_file", "args": args()}),
        ),
    );
}

#[test]
fn route_14_toolkit_tool_after_load_toolkit() {
    let mut chef = namespaced(Level::One, "web_search");
    match chef.route(&call("load_toolkit", json!({"toolkit_name": "Web"}))) {
        Routed::ToolkitLoaded { toolkit, .. } => assert_eq!(toolkit, "Web"),
        other => panic!("{other:?}"),
    }
    chef.compile(Target::Anthropic).unwrap();
    assert_blocked(&mut chef, &call("web_search", json!({"q": "x"})));
}

#[test]
fn route_15_blocked_toolkit_and_blocked_loader() {
    let mut chef = namespaced(Level::One, "Web");
    assert_blocked(
        &mut chef,
        &call("load_toolkit", json!({"toolkit_name": "Web"})),
    );
    let mut chef = namespaced(Level::One, "load_toolkit");
    assert_blocked(
        &mut chef,
        &call("load_toolkit", json!({"toolkit_name": "Web"})),
    );
}

#[test]
fn route_16_owned_tools_are_gated_too() {
    let mut chef = Chef::new(ChefConfig::default().with_tools_mode(chef::ToolsMode::Unified));
    chef.tools_mut().set_blocked(["context"]);
    assert_blocked(
        &mut chef,
        &call("context", json!({"command": "view", "path": "notes/"})),
    );
}

#[test]
fn route_17_unknown_names_are_not_dispatched() {
    let mut chef = chef(Level::Three);
    assert_not_dispatched(&mut chef, &call("zz9", args()));
    assert_not_dispatched(&mut chef, &call("", args()));
    assert_not_dispatched(&mut chef, &call("t", json!({"f": "zz9"})));
}

#[test]
fn allowed_tools_still_route_on_every_path() {
    let mut chef = chef(Level::Three);
    let code = chef.tools().code_for("fs_read_file").unwrap();
    match chef.route(&call("t", json!({"f": code, "a": args()}))) {
        Routed::Call(c) => {
            assert_eq!(c.name, "fs_read_file");
            assert_eq!(c.arguments, args());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn blocking_never_changes_the_compiled_request() {
    for target in Target::ALL {
        for level in [Level::Zero, Level::One, Level::Three] {
            let mut chef = chef(level);
            chef.tools_mut().set_blocked(Vec::<String>::new());
            let before = chef.compile(target).unwrap().body;
            chef.tools_mut().set_blocked([BLOCKED, "web_search"]);
            let after = chef.compile(target).unwrap().body;
            assert_eq!(before, after, "{target} level {level:?}");
        }
    }
}

#[test]
fn check_tool_call_gates_like_route_but_changes_nothing() {
    let mut chef = namespaced(Level::One, BLOCKED);
    assert_blocked_check(
        &mut chef,
        &call("file_ops", json!({"action": BLOCKED, "args": args()})),
    );
    let checked = chef.check_tool_call(&call("load_toolkit", json!({"toolkit_name": "Web"})));
    assert!(
        matches!(checked, Routed::ToolkitLoaded { .. }),
        "{checked:?}"
    );
    assert!(
        chef.tools().loaded_toolkits().is_empty(),
        "a check never loads a toolkit"
    );
    chef.route(&call("load_toolkit", json!({"toolkit_name": "Web"})));
    assert_eq!(chef.tools().loaded_toolkits(), ["Web"]);
}

#[track_caller]
fn assert_blocked_check(chef: &mut Chef, call: &ToolCall) {
    assert!(matches!(chef.check_tool_call(call), Routed::Blocked { .. }));
}

/// Issue 47, item 1 (the library's side): an entry matches the way a call resolves,
/// ignoring case and separators (`_ - .`, spaces), at every level and on every route to the
/// tool (its name, a level-2 op, a level-3 code, a namespace action); an entry that names
/// nothing registered — a typo, or a tool's name without the prefix it is registered under
/// — is listed by `Tools::unmatched_blocked`, which follows the registry as it changes.
#[test]
fn blocklist_entries_match_with_drift_and_unmatched_ones_are_listed() {
    let drop_table = ToolDefinition::new(
        "office_db_drop_table",
        json!({"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]}),
    );
    for entry in [
        "Office-DB-Drop-Table",
        "office.db.drop.table",
        "OFFICE DB DROP TABLE",
        "officeDbDropTable",
    ] {
        for level in [Level::Zero, Level::One, Level::Two, Level::Three] {
            let mut chef = asked_at(level, vec![drop_table.clone()], "go");
            let report = chef.tools_mut().set_blocked([entry]);
            assert!(report.unmatched.is_empty(), "{entry}: {report:?}");
            assert!(
                chef.tools()
                    .pruner()
                    .blocklist()
                    .blocks("office_db_drop_table")
            );
            chef.compile(Target::Anthropic).unwrap();
            let encoded = chef
                .tools()
                .encode_call("office_db_drop_table", json!({"table": "t"}))
                .unwrap();
            assert_blocked(&mut chef, &encoded);
            // Bad arguments too: the gate comes first.
            let bad = chef
                .tools()
                .encode_call("office_db_drop_table", json!({"table": 5}))
                .unwrap();
            assert_blocked(&mut chef, &bad);
        }
    }

    // A namespace member by its own name, in any spelling; the namespace by its name.
    for entry in ["FS-Delete-File", "file_ops"] {
        let mut chef = namespaced(Level::One, entry);
        assert!(chef.tools().unmatched_blocked().is_empty(), "{entry}");
        assert_blocked(
            &mut chef,
            &call("file_ops", json!({"action": BLOCKED, "args": args()})),
        );
    }

    // Entries that name nothing registered are listed, in order, each once — and stop
    // being listed once a tool of that name is registered.
    let mut chef = chef(Level::One);
    let report =
        chef.tools_mut()
            .set_blocked(["delete_file", "fs_delete_fiel", "delete_file", BLOCKED]);
    assert_eq!(report.unmatched, ["delete_file", "fs_delete_fiel"]);
    assert_eq!(chef.tools().unmatched_blocked(), report.unmatched);
    let mut more = tools();
    more.push(ToolDefinition::new(
        "Delete-File",
        json!({"type": "object"}),
    ));
    chef.register_tools(more).unwrap();
    assert_eq!(chef.tools().unmatched_blocked(), ["fs_delete_fiel"]);
}

/// The branches of a constrained reply's format, by the name each fixes.
fn format_branches(chef: &mut Chef) -> Vec<Value> {
    chef.compile(Target::OpenAiChat).unwrap();
    let format = serde_json::to_value(chef.response_format().unwrap()).unwrap();
    let schema = &format["json_schema"]["schema"];
    // One branch is the schema itself; more are its `anyOf`.
    schema["anyOf"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![schema.clone()])
}

fn branch<'a>(branches: &'a [Value], name: &str) -> Option<&'a Value> {
    branches
        .iter()
        .find(|b| b["properties"]["name"]["const"] == name)
}

#[test]
fn route_15_a_constrained_model_has_no_branch_for_a_blocked_tool() {
    // Flat tools: the blocked tool stays in the compiled list (the cached prefix never
    // moves), but the format gives a constrained model no way to write its call.
    for level in [Level::Zero, Level::One] {
        let mut chef = chef(level);
        let payload = chef.compile(Target::OpenAiChat).unwrap();
        assert!(payload.meta.wire_tools.iter().any(|n| n == BLOCKED));
        let branches = format_branches(&mut chef);
        assert!(branch(&branches, BLOCKED).is_none(), "{level:?}");
        assert!(branch(&branches, "fs_read_file").is_some(), "{level:?}");
    }
    // Level 2: the blocked tool's op leaves its alias's enum; the others stay.
    let mut chef = chef(Level::Two);
    let branches = format_branches(&mut chef);
    let fs = branch(&branches, "fs").unwrap();
    let ops = &fs["properties"]["arguments"]["properties"]["op"]["enum"];
    assert!(!ops.as_array().unwrap().is_empty(), "{fs}");
    assert!(
        !ops.as_array().unwrap().contains(&json!("delete_file")),
        "{ops}"
    );
    assert!(
        ops.as_array().unwrap().contains(&json!("read_file")),
        "{ops}"
    );

    // A namespace: the blocked member leaves the `action` enum.
    let mut chef = namespaced(Level::One, BLOCKED);
    let branches = format_branches(&mut chef);
    let actions = &branch(&branches, "file_ops").unwrap()["properties"]["arguments"]["properties"]
        ["action"]["enum"];
    assert_eq!(actions, &json!(["fs_read_file", "fs_list_dir"]));
    // A blocked toolkit leaves `load_toolkit`'s enum, and with none left, its branch goes.
    let mut chef = namespaced(Level::One, "Web");
    let branches = format_branches(&mut chef);
    assert!(branch(&branches, "load_toolkit").is_none());
    assert!(branch(&branches, "file_ops").is_some());
    // A blocked namespace has no branch at all.
    let mut chef = namespaced(Level::One, "file_ops");
    let branches = format_branches(&mut chef);
    assert!(branch(&branches, "file_ops").is_none());
}
