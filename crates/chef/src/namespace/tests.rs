use serde_json::json;

use super::*;

fn tool(name: &str, description: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, schema).with_description(description)
}

fn file_ops() -> ToolGroup {
    ToolGroup::new(
        "file_ops",
        "File system operations",
        vec![
            tool(
                "read_file",
                "Read a file",
                json!({"path": {"type": "string", "description": "File path"}}),
            ),
            tool(
                "write_file",
                "Write a file",
                json!({"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string", "description": "Content"}}, "required": ["path"]}),
            ),
            tool("search_files", "Search", json!({"type": "object"})),
        ],
    )
}

#[test]
fn namespace_tool_lists_actions_and_documents_parameters() {
    let t = namespace_tool(&file_ops());
    assert_eq!(t.name, "file_ops");
    assert_eq!(
        t.input_schema["properties"]["action"]["enum"],
        json!(["read_file", "write_file", "search_files"])
    );
    // `args` is not required: flat arguments beside the action are accepted too.
    assert_eq!(t.input_schema["required"], json!(["action"]));
    assert_eq!(t.input_schema["properties"]["args"]["type"], "object");
    assert_eq!(
        t.description,
        "File system operations\n\nAvailable actions:\n\
         - read_file: Read a file\n    - path (string): File path\n\
         - write_file: Write a file\n    - path (string, required)\n    - text (string): Content\n\
         - search_files: Search"
    );
    assert!(!t.defer_loading && t.tags.is_empty());
}

#[test]
fn an_empty_namespace_has_an_empty_enum() {
    let t = namespace_tool(&ToolGroup::new("empty", "Nothing", vec![]));
    assert_eq!(t.input_schema["properties"]["action"]["enum"], json!([]));
    assert!(t.description.ends_with("Available actions:\n"));
}

#[test]
fn load_toolkit_and_directory() {
    let kits = vec![
        ToolGroup::new(
            "Weather",
            "Weather forecast and climate data",
            vec![
                tool("get_weather", "", json!({})),
                tool("get_forecast", "", json!({})),
            ],
        ),
        ToolGroup::new(
            "Database",
            "SQL query and schema inspection",
            vec![tool("run_sql", "", json!({}))],
        ),
    ];
    let t = load_toolkit_tool(&kits);
    assert_eq!(t.name, LOAD_TOOLKIT);
    assert_eq!(
        t.input_schema["properties"]["toolkit_name"]["enum"],
        json!(["Weather", "Database"])
    );
    assert_eq!(t.input_schema["required"], json!(["toolkit_name"]));
    assert_eq!(
        directory_xml(&kits),
        "<available_toolkits>\n  <toolkit name=\"Weather\" tools=\"get_weather, get_forecast\">Weather forecast and climate data</toolkit>\n  <toolkit name=\"Database\" tools=\"run_sql\">SQL query and schema inspection</toolkit>\n</available_toolkits>"
    );
    assert_eq!(directory_xml(&[]), "");
}

#[test]
fn the_directory_escapes_markup_unlike_the_reference() {
    let kits = vec![ToolGroup::new("A&B", "</toolkit><evil attr=\"x\">", vec![])];
    assert_eq!(
        directory_xml(&kits),
        "<available_toolkits>\n  <toolkit name=\"A&amp;B\" tools=\"\">&lt;/toolkit&gt;&lt;evil attr=&quot;x&quot;&gt;</toolkit>\n</available_toolkits>"
    );
}

#[test]
fn resolve_namespace_reads_string_and_object_arguments() {
    let ns = vec![file_ops()];
    let expected = NamespaceCall {
        group: "file_ops".into(),
        tool_name: "read_file".into(),
        args: json!({"path": "auth.ts"}),
    };
    let text = json!(r#"{"action":"read_file","args":{"path":"auth.ts"}}"#);
    assert_eq!(resolve_namespace(&ns, "file_ops", &text).unwrap(), expected);
    let object = json!({"action": "read_file", "args": {"path": "auth.ts"}});
    assert_eq!(
        resolve_namespace(&ns, "file_ops", &object).unwrap(),
        expected
    );
    // Flat arguments beside the action are accepted when `args` is absent.
    let flat = json!({"action": "read_file", "path": "auth.ts"});
    assert_eq!(resolve_namespace(&ns, "file_ops", &flat).unwrap(), expected);
    // `args` as a JSON string.
    let nested = json!({"action": "read_file", "args": "{\"path\":\"auth.ts\"}"});
    assert_eq!(
        resolve_namespace(&ns, "file_ops", &nested).unwrap(),
        expected
    );
}

/// The reference reads an `args` it cannot use as `{}`, which runs the action without what
/// the model wrote; chef refuses it, and reads the empty spellings as no arguments.
#[test]
fn unreadable_args_are_refused_and_empty_ones_mean_none() {
    let ns = vec![file_ops()];
    for (args, received) in [
        (json!([1]), "an array"),
        (json!("s"), "a string that is not one"),
        (json!("{path: auth.ts"), "a string that is not one"),
        (json!(3), "a number"),
        (json!(true), "a boolean"),
    ] {
        let e = resolve_namespace(
            &ns,
            "file_ops",
            &json!({"action": "read_file", "args": args}),
        )
        .unwrap_err();
        let NamespaceError::BadArguments { problem, .. } = &e else {
            panic!("{e:?}")
        };
        assert!(problem.ends_with(received), "{args}: {problem}");
    }
    for args in [json!(null), json!(""), json!([]), json!({})] {
        let call = resolve_namespace(
            &ns,
            "file_ops",
            &json!({"action": "read_file", "args": args}),
        )
        .unwrap();
        assert_eq!(call.args, json!({}), "{args}");
    }
}

/// Keys written beside `args` are the action's arguments too (a `dry_run` beside it must
/// not be dropped); the same key inside and beside with different values is refused.
#[test]
fn keys_beside_args_are_merged_and_a_conflict_is_refused() {
    let ns = vec![file_ops()];
    let call = resolve_namespace(
        &ns,
        "file_ops",
        &json!({"action": "read_file", "args": {"path": "auth.ts"}, "encoding": "utf-8"}),
    )
    .unwrap();
    assert_eq!(call.args, json!({"path": "auth.ts", "encoding": "utf-8"}));
    let e = resolve_namespace(
        &ns,
        "file_ops",
        &json!({"action": "read_file", "args": {"path": "a.ts"}, "path": "b.ts"}),
    )
    .unwrap_err();
    assert!(e.to_string().contains("\"path\" was given twice"), "{e}");
}

#[test]
fn namespace_errors_are_written_for_the_model() {
    let ns = vec![file_ops(), ToolGroup::new("terminal", "", vec![])];
    let e = resolve_namespace(&ns, "unknown", &json!({})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "\"unknown\" is not a registered namespace. Available: file_ops, terminal"
    );
    let e = resolve_namespace(&[], "unknown", &json!({})).unwrap_err();
    assert!(e.to_string().ends_with("Available: (none)"));
    let e = resolve_namespace(&ns, "file_ops", &json!({"action": "delete_file"})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Unknown action \"delete_file\" in namespace \"file_ops\". Available: read_file, write_file, search_files"
    );
    let e = resolve_namespace(&ns, "file_ops", &json!({"action": 5})).unwrap_err();
    assert!(e.to_string().contains("Unknown action \"\""));
    let e = resolve_namespace(&ns, "file_ops", &json!({"action": "READ_FILE"})).unwrap_err();
    assert!(matches!(e, NamespaceError::UnknownAction { .. }));
    let e = resolve_namespace(&ns, "file_ops", &json!("not json")).unwrap_err();
    assert!(matches!(e, NamespaceError::BadArguments { .. }), "{e}");
}

#[test]
fn extract_toolkit_is_case_insensitive() {
    let kits = vec![ToolGroup::new(
        "Weather",
        "",
        vec![tool("get_weather", "", json!({}))],
    )];
    assert_eq!(extract_toolkit(&kits, "weather").unwrap().tools.len(), 1);
    let e = extract_toolkit(&kits, "NonExistent").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Unknown toolkit: \"NonExistent\". Available:")
    );
    assert!(
        extract_toolkit(&[], "x")
            .unwrap_err()
            .to_string()
            .ends_with("Available: (none)")
    );
}
