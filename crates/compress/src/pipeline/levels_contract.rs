//! The levels' contract, on what the pipeline renders: every level reads back the calls
//! it encodes, and every level-3 map style is registered and writes its own lines.

use chef_ir::ToolDefinition;
use serde_json::{Value, json};

use super::compress;
use crate::{
    levels::{codec, styles},
    options::{Level, MapStyle, Options},
    resolve::{Resolution, ResolveError},
};

/// Three namespaces, required and optional parameters, a dotted name, a tool without
/// parameters, and a parameter that is no Python identifier.
fn catalogue() -> Vec<ToolDefinition> {
    let object = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    vec![
        ToolDefinition::new(
            "github_create_issue",
            object(
                json!({"repo": {"type": "string"}, "title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}}),
                json!(["repo", "title"]),
            ),
        )
        .with_description("Open an issue. Needs write access."),
        ToolDefinition::new(
            "github_list_issues",
            object(json!({"repo": {"type": "string"}}), json!(["repo"])),
        )
        .with_description("List the open issues of a repository."),
        ToolDefinition::new("stripe.get_balance", json!({"type": "object"}))
            .with_description("The account balance."),
        ToolDefinition::new(
            "mail_send",
            object(
                json!({"to": {"type": "string"}, "from": {"type": "string"}}),
                json!(["to"]),
            ),
        )
        .with_description("Send an e-mail."),
    ]
}

/// Arguments each tool of [`catalogue`] accepts.
fn valid_args(name: &str) -> Value {
    match name {
        "github_create_issue" => json!({"repo": "chef", "title": "levels", "labels": ["x"]}),
        "github_list_issues" => json!({"repo": "chef"}),
        "mail_send" => json!({"to": "a@b.c", "from": "d@e.f"}),
        _ => json!({}),
    }
}

/// Options that `level` compresses [`catalogue`] with (level 4 needs compiled lines).
fn options(level: Level) -> Options {
    let compiled = [
        (
            "github_create_issue",
            r#"def github_create_issue(repo,title,labels=None):"open issue""#,
        ),
        (
            "github_list_issues",
            r#"def github_list_issues(repo):"open issues""#,
        ),
        (
            "mail_send",
            r#"def mail_send(to,**{"from":None}):"send mail""#,
        ),
    ];
    let options = Options::new().with_level(level);
    if level == Level::Four {
        options.with_compiled(compiled)
    } else {
        options
    }
}

#[test]
fn every_level_round_trips_its_own_calls() {
    let tools = catalogue();
    for level in Level::ALL {
        let c = compress(&tools, &options(level)).unwrap();
        let codec = codec(level);
        let wire: Vec<&str> = c.tools().iter().map(|t| t.name.as_str()).collect();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        let mut sorted_wire = wire.clone();
        sorted_wire.sort_unstable();
        assert_eq!(
            level.sends_each_tool(),
            sorted_wire == names,
            "level {level}"
        );
        if level == Level::Four {
            let stats = c.stats();
            // The dotted name has no line (no Python def can carry it): it is rendered
            // uncompiled, and called like the others.
            assert_eq!(
                stats.uncompiled_tools,
                Some(1),
                "{:?}",
                stats.stale_compiled_tools
            );
        }
        for tool in &tools {
            let name = tool.name.as_str();
            let args = valid_args(name);
            let entry = c.entry_by_name(name).unwrap();
            let call = codec.encode_call(&c, entry, args.clone());
            assert!(
                wire.contains(&call.name.as_str()),
                "level {level}: {name} is called as {}, not on the wire {wire:?}",
                call.name
            );
            let expected = Resolution::Call {
                name: name.to_owned(),
                args: args.clone(),
            };
            assert_eq!(
                codec.resolve(&c, &call.name, &call.args, &|_| false),
                expected,
                "level {level}: {call:?}"
            );
            // The public entry points go through the same codec.
            assert_eq!(c.resolve(&call.name, &call.args), expected);
            assert_eq!(c.encode_call(name, args).unwrap(), call);
            // A call that names one tool reaches it; one that names the dispatcher or a
            // namespace reaches none.
            match codec.tool_for_name(&c, &call.name) {
                Some(e) => assert_eq!(e.name, name, "level {level}"),
                None => assert!(matches!(
                    call.name.as_str(),
                    "t" | "github" | "mail" | "stripe"
                )),
            }
        }
        // A name no level puts on the wire is a typed error naming the level's way in.
        let Resolution::Error(error) = codec.resolve(&c, "no_such_tool", &json!({}), &|_| false)
        else {
            panic!("level {level}: an unknown tool resolved");
        };
        assert_eq!(
            error,
            ResolveError::UnknownTool {
                name: "no_such_tool".to_owned(),
                level
            }
        );
        assert!(error.message().ends_with(codec.unknown_tool_hint()));
        // Arguments that are no object are read as `{}` and judged, never a panic.
        for garbage in [json!("not json"), json!([1, 2]), Value::Null] {
            let call =
                codec.encode_call(&c, c.entry_by_name("github_create_issue").unwrap(), garbage);
            assert!(
                matches!(
                    c.resolve(&call.name, &call.args),
                    Resolution::Error(ResolveError::InvalidArguments(_))
                ),
                "level {level}"
            );
        }
    }
}

#[test]
fn every_map_style_is_registered_and_round_trips() {
    let tools = catalogue();
    // What each style writes for a tool with required parameters and one without.
    let table = [
        (
            MapStyle::NameRequired,
            "a0 github_create_issue repo,title",
            "c0 stripe.get_balance\n",
        ),
        (
            MapStyle::Explicit,
            "a0 github_create_issue repo,title",
            "c0 stripe.get_balance ()",
        ),
        (
            MapStyle::Signature,
            "a0 github_create_issue(repo,title,labels?:string[])",
            "c0 stripe.get_balance()",
        ),
        (
            MapStyle::Distinct,
            "a0 github_create_issue repo,title",
            "c0 stripe.get_balance\n",
        ),
    ];
    assert_eq!(table.map(|(style, ..)| style), MapStyle::ALL);
    let mut legends = Vec::new();
    for (map_style, with_required, without) in table {
        let line_style = styles::style(map_style);
        legends.push(line_style.legend());
        let c = compress(
            &tools,
            &Options::new()
                .with_level(Level::Three)
                .with_map_style(map_style),
        )
        .unwrap();
        let system = c.system();
        assert_eq!(c.stats().map_style, map_style);
        assert!(
            system.contains(&format!("\n{with_required}\n")),
            "{map_style}: {system}"
        );
        assert!(system.contains(without), "{map_style}: {system}");
        assert!(
            system.contains(line_style.legend()),
            "{map_style}: {system}"
        );
        for tool in &tools {
            let name = tool.name.as_str();
            // The tool's line is its code, its name and the style's body.
            let mut body = String::new();
            line_style.push_body(
                c.entry_by_name(name).unwrap(),
                &tool.input_schema,
                &mut body,
            );
            let line = format!("\n{} {name}{body}\n", c.code_for(name).unwrap());
            assert!(system.contains(&line), "{map_style}: {line:?} in {system}");
            let call = c.encode_call(name, valid_args(name)).unwrap();
            assert_eq!(
                c.resolve(&call.name, &call.args),
                Resolution::Call {
                    name: name.to_owned(),
                    args: valid_args(name)
                }
            );
        }
    }
    legends.sort_unstable();
    legends.dedup();
    assert_eq!(
        legends.len(),
        MapStyle::ALL.len(),
        "each style has its own legend"
    );
}
