use chef_ir::{
    LoadError, ToolDefinition, ToolLocation, ToolShape, for_each_tool, load_tools,
    load_tools_from_str,
};
use serde_json::{Value, json};

use crate::fixture;

fn corpus() -> Vec<ToolDefinition> {
    let text = std::fs::read_to_string(fixture("real-mcp-tools.json")).unwrap();
    let loaded = load_tools_from_str(&text).unwrap();
    assert_eq!(loaded.tools.len(), 149);
    assert!(loaded.shapes.iter().all(|s| *s == ToolShape::Anthropic));
    loaded.tools
}

fn rewrite(tools: &[ToolDefinition], shape: ToolShape) -> Value {
    let entries: Vec<Value> = tools
        .iter()
        .map(|t| match shape {
            ToolShape::Mcp => json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}),
            ToolShape::Anthropic => json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}),
            ToolShape::OpenAiChat => json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}),
            ToolShape::OpenAiResponses => json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema, "strict": false}),
            ToolShape::Bare | ToolShape::Gemini => json!({"name": t.name, "description": t.description, "parameters": t.input_schema}),
        })
        .collect();
    match shape {
        // Gemini: wrapped as a request's `tools`, declarations split over two tool objects.
        ToolShape::Gemini => {
            let (a, b) = entries.split_at(entries.len() / 2);
            json!({"tools": [{"functionDeclarations": a}, {"functionDeclarations": b}]})
        }
        // OpenAI Chat: as a request body's `tools`.
        ToolShape::OpenAiChat => json!({"model": "x", "tools": entries}),
        _ => Value::Array(entries),
    }
}

#[test]
fn the_corpus_in_every_shape_loads_to_identical_definitions() {
    let tools = corpus();
    for shape in ToolShape::ALL {
        let loaded = load_tools(&rewrite(&tools, shape)).unwrap();
        assert_eq!(loaded.tools, tools, "shape {shape}");
        assert!(loaded.shapes.iter().all(|s| *s == shape), "shape {shape}");
        assert_eq!(loaded.shape_counts(), vec![(shape, 149)]);
    }
}

/// A leading UTF-8 byte order mark is read past, for an array and for any other document;
/// one anywhere else is still not JSON.
#[test]
fn a_byte_order_mark_at_the_start_is_skipped() {
    for text in [
        r#"[{"name": "a", "inputSchema": {"type": "object"}}]"#,
        r#"{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}"#,
    ] {
        let with_bom = format!("\u{feff}{text}");
        assert_eq!(
            load_tools_from_str(&with_bom).unwrap().tools,
            load_tools_from_str(text).unwrap().tools
        );
    }
    assert!(load_tools_from_str("[\u{feff}]").is_err());
}

#[test]
fn one_file_may_mix_shapes() {
    let loaded = load_tools(&json!([
        {"name": "a", "inputSchema": {"type": "object"}},
        {"name": "b", "input_schema": {"type": "object"}},
        {"type": "function", "function": {"name": "c"}},
        {"type": "function", "name": "d", "parameters": {"type": "object"}},
        {"functionDeclarations": [{"name": "e"}, {"name": "f"}]},
        {"name": "g", "description": "bare"},
    ]))
    .unwrap();
    let names: Vec<&str> = loaded.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g"]);
    use ToolShape::*;
    assert_eq!(
        loaded.shapes,
        [
            Mcp,
            Anthropic,
            OpenAiChat,
            OpenAiResponses,
            Gemini,
            Gemini,
            Bare
        ]
    );
    assert_eq!(loaded.tools[2].input_schema, json!({"type": "object"}));
}

#[test]
fn a_seventh_entry_without_a_name_names_index_6_and_the_field() {
    let mut entries: Vec<Value> = (0..10)
        .map(|i| json!({"name": format!("tool_{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    entries[6] = json!({"description": "no name here", "inputSchema": {"type": "object"}});
    let err = load_tools(&Value::Array(entries)).unwrap_err();
    assert_eq!(
        err,
        LoadError::InvalidEntry {
            at: ToolLocation {
                index: 6,
                declaration: None
            },
            field: "name".into(),
            problem: "is missing".into(),
        }
    );
    let message = err.to_string();
    assert!(message.contains("index 6"), "{message}");
    assert!(message.contains("`name`"), "{message}");
}

#[test]
fn duplicate_names_name_both_indices() {
    let err = load_tools(&json!([{"name": "a"}, {"name": "b"}, {"name": "a"}])).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"duplicate tool name "a" at index 0 and index 2"#
    );
}

#[test]
fn unusable_entries_give_typed_errors_naming_the_field() {
    let cases: &[(Value, &str)] = &[
        (
            json!([{"name": ""}]),
            "invalid tool at index 0: `name` is empty",
        ),
        (
            json!([{"name": 3}]),
            "invalid tool at index 0: `name` must be a string, found a number",
        ),
        (
            json!([{"name": "a", "description": ["x"]}]),
            "invalid tool at index 0: `description` must be a string, found an array",
        ),
        (
            json!([{"name": "a", "inputSchema": "object"}]),
            "invalid tool at index 0: `inputSchema` must be a JSON Schema object, found a string",
        ),
        (
            json!([{"type": "function", "function": {"description": "x"}}]),
            "invalid tool at index 0: `function.name` is missing",
        ),
        (
            json!([{"type": "function", "function": "f"}]),
            "invalid tool at index 0: `function` must be an object, found a string",
        ),
        (
            json!([{"functionDeclarations": [{"name": "a"}, {"parameters": {}}]}]),
            "invalid tool at index 0 (functionDeclarations[1]): `name` is missing",
        ),
        (
            json!([{"functionDeclarations": {"name": "a"}}]),
            "invalid tool at index 0: `functionDeclarations` must be an array",
        ),
        (
            json!([{"name": "a", "tags": "x"}]),
            "invalid tool at index 0: `tags` must be an array of strings, found a string",
        ),
        (
            json!([{"name": "a", "defer_loading": "yes"}]),
            "invalid tool at index 0: `defer_loading` must be a boolean, found a string",
        ),
        (
            json!([{"name": "a", "inputSchema": {"type": "object"}, "input_schema": {}}]),
            "invalid tool at index 0: `input_schema` differs from `inputSchema`; give the schema once",
        ),
        (
            json!([{"type": "web_search_20250305", "name": "web_search"}]),
            "invalid tool at index 0: `type` is \"web_search_20250305\", not a function tool (provider-native tools are passed as native tools, not loaded)",
        ),
        (
            json!(["a"]),
            "invalid tool at index 0: expected an object, found a string",
        ),
        (
            json!({"tools": 1}),
            "expected a JSON array of tools or an object with a `tools` array, found a number",
        ),
        (
            json!({"name": "a"}),
            "expected a JSON array of tools or an object with a `tools` array, found object",
        ),
        (
            json!(null),
            "expected a JSON array of tools or an object with a `tools` array, found null",
        ),
    ];
    for (doc, expected) in cases {
        assert_eq!(load_tools(doc).unwrap_err().to_string(), *expected, "{doc}");
        // Text is read entry by entry (an array) or whole (anything else): same error.
        let from_text = load_tools_from_str(&doc.to_string()).unwrap_err();
        assert_eq!(from_text, load_tools(doc).unwrap_err(), "{doc}");
    }
}

/// Text read one entry at a time gives what the parsed document gives, in every shape.
#[test]
fn text_loads_to_what_its_parsed_document_loads_to() {
    let tools = corpus();
    for shape in ToolShape::ALL {
        let doc = rewrite(&tools, shape);
        for text in [doc.to_string(), serde_json::to_string_pretty(&doc).unwrap()] {
            assert_eq!(
                load_tools_from_str(&text).unwrap(),
                load_tools(&doc).unwrap()
            );
            let mut streamed = Vec::new();
            for_each_tool(&text, |tool, shape| streamed.push((tool, shape))).unwrap();
            let loaded = load_tools(&doc).unwrap();
            assert!(
                streamed
                    .into_iter()
                    .eq(loaded.tools.into_iter().zip(loaded.shapes)),
                "shape {shape}"
            );
        }
    }
}

/// Reading an array entry by entry keeps the whole parse's order of errors: a syntax error
/// anywhere wins over an unusable entry before it, and an unusable entry over a duplicate
/// name before it.
#[test]
fn errors_in_text_come_in_the_order_of_a_whole_parse() {
    let syntax = "not valid JSON at line 1, column ";
    let cases: &[(&str, &str)] = &[
        (r#"[{"name": 3}, {"name": "b"} x]"#, syntax),
        (r#"[{"name": "a"}, {"name": "a"}, {"#, syntax),
        (r#"[{"name": 3}] ]"#, syntax),
        (
            r#"[{"name": "a"}, {"name": "a"}, {"name": ""}]"#,
            "invalid tool at index 2: `name` is empty",
        ),
        (
            r#"[{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "b"}]"#,
            r#"duplicate tool name "a" at index 0 and index 2"#,
        ),
        (
            r#"  [{"functionDeclarations": [{"name": "a"}]}, {"name": "a"}]"#,
            r#"duplicate tool name "a" at index 0 (functionDeclarations[0]) and index 1"#,
        ),
        (
            "",
            "not valid JSON at line 1, column 0: EOF while parsing a value",
        ),
        (
            "[",
            "not valid JSON at line 1, column 1: EOF while parsing a list",
        ),
    ];
    for (text, expected) in cases {
        let err = load_tools_from_str(text).unwrap_err();
        assert!(err.to_string().starts_with(expected), "{text}: {err}");
        if let Ok(doc) = serde_json::from_str::<Value>(text) {
            assert_eq!(err, load_tools(&doc).unwrap_err(), "{text}");
        }
    }
}

#[test]
fn json_syntax_errors_report_line_and_column() {
    let err = load_tools_from_str("[\n  {\"name\": }\n]").unwrap_err();
    assert!(matches!(err, LoadError::Json { line: 2, .. }), "{err:?}");
}

#[test]
fn tags_defer_loading_and_annotations_are_read() {
    let loaded = load_tools(&json!([{
        "name": "rm",
        "inputSchema": {"type": "object"},
        "tags": ["fs"],
        "deferLoading": true,
        "annotations": {"destructiveHint": true, "title": "Remove"},
        "server": "files"
    }]))
    .unwrap();
    let tool = &loaded.tools[0];
    assert_eq!(tool.tags, ["fs"]);
    assert!(tool.defer_loading);
    assert_eq!(tool.annotations.destructive_hint, Some(true));
    assert_eq!(tool.annotations.title.as_deref(), Some("Remove"));
}

#[test]
fn a_single_gemini_tool_object_is_a_document() {
    let loaded = load_tools(&json!({"function_declarations": [{"name": "x"}]})).unwrap();
    assert_eq!(loaded.shapes, [ToolShape::Gemini]);
}
