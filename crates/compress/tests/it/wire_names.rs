//! Issue 26: `resolve_wire` accepts the names a target put on the wire (a dotted or
//! slashed real name sent sanitised) and maps them back to the real tool, unambiguously.

use chef_compress::{Level, Resolution, ResolveError};
use chef_ir::{NameRule, Target, ToolDefinition, ToolName, WireNames};
use serde_json::json;

use crate::{at, expect_call, expect_error, tool};

/// Three tools whose names OpenAI and Anthropic refuse (a dot, a slash, a space) and one
/// every target accepts.
fn odd_names() -> Vec<ToolDefinition> {
    let tz =
        json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]});
    vec![
        tool(
            "timezone.convert",
            "Convert a time between zones.",
            tz.clone(),
        ),
        tool(
            "files/read",
            "Read a file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        tool("weather now", "Current weather.", json!({"type": "object"})),
        tool("search", "Search the web.", json!({"type": "object"})),
    ]
}

#[test]
fn every_target_s_wire_name_resolves_to_the_real_tool_at_levels_0_and_1() {
    for level in [Level::Zero, Level::One] {
        let c = at(&odd_names(), level);
        for target in Target::ALL {
            let names = c.wire_names(target);
            for real in ["timezone.convert", "files/read", "weather now", "search"] {
                let wire = names.to_wire(real);
                assert!(target.name_rule().accepts(wire), "{wire:?} for {target}");
                let args = if real == "timezone.convert" {
                    json!({"tz": "UTC"})
                } else if real == "files/read" {
                    json!({"path": "/etc/hosts"})
                } else {
                    json!({})
                };
                let got = expect_call(c.resolve_wire(wire, &args, &names), real);
                assert_eq!(got, args, "{level} {target} {wire}");
                // The real name still resolves as it is.
                expect_call(c.resolve_wire(real, &args, &names), real);
            }
        }
    }
}

#[test]
fn openai_sends_dotted_and_slashed_names_sanitised_and_resolve_wire_reads_them_back() {
    let c = at(&odd_names(), Level::One);
    let names = c.wire_names(Target::OpenAiChat);
    assert_eq!(names.to_wire("timezone.convert"), "timezone_convert");
    assert_eq!(names.to_wire("files/read"), "files_read");
    // Plain resolve matches names exactly at level 1: the wire name is unknown there.
    assert_eq!(
        expect_error(c.resolve("timezone_convert", &json!({"tz": "UTC"}))),
        "No tool named \"timezone_convert\"."
    );
    expect_call(
        c.resolve_wire("timezone_convert", &json!({"tz": "UTC"}), &names),
        "timezone.convert",
    );
    // Arguments are still validated against the real tool's schema, which the error names.
    let Resolution::Error(e) = c.resolve_wire("timezone_convert", &json!({}), &names) else {
        panic!("expected an argument error")
    };
    assert!(matches!(e, ResolveError::InvalidArguments(_)), "{e:?}");
    assert_eq!(e.tool(), Some("timezone.convert"));
    // Gemini accepts dots, so it sends `timezone.convert` as it is; the slash is renamed.
    let gemini = c.wire_names(Target::Gemini);
    assert_eq!(gemini.to_wire("timezone.convert"), "timezone.convert");
    assert_eq!(gemini.to_wire("files/read"), "files_read");
    // A name no table knows is resolved as written (and refused as an unknown tool).
    assert_eq!(
        expect_error(c.resolve_wire("nope", &json!({}), &names)),
        "No tool named \"nope\"."
    );
}

#[test]
fn a_wire_name_that_also_names_another_tool_is_refused_naming_both() {
    // The table of a compile that did not hold `a_b` sends `a.b` as `a_b`; this set holds
    // both, so `a_b` could mean either.
    let tools = vec![
        tool("a.b", "Dotted.", json!({"type": "object"})),
        tool("a_b", "Underscored.", json!({"type": "object"})),
    ];
    let older = WireNames::new(&[ToolName::from("a.b")], NameRule::OPENAI);
    assert_eq!(older.to_wire("a.b"), "a_b");
    for level in [Level::Zero, Level::One] {
        let c = at(&tools, level);
        let Resolution::Error(e) = c.resolve_wire("a_b", &json!({}), &older) else {
            panic!("expected an ambiguity error at {level}")
        };
        assert_eq!(
            e,
            ResolveError::AmbiguousWireName {
                name: "a_b".to_owned(),
                wire_of: "a.b".to_owned(),
                reaches: "a_b".to_owned(),
            }
        );
        assert!(e.recoverable());
        assert_eq!(e.tool(), None);
        assert!(e.message().contains("\"a.b\"") && e.message().contains("\"a_b\""));
        // The set's own table never sends a name that collides: `a.b` gets a hashed name.
        let own = c.wire_names(Target::OpenAiChat);
        assert_eq!(own.to_wire("a_b"), "a_b");
        let hashed = own.to_wire("a.b");
        assert!(hashed.starts_with("a_b_"), "{hashed}");
        expect_call(c.resolve_wire(hashed, &json!({}), &own), "a.b");
        expect_call(c.resolve_wire("a_b", &json!({}), &own), "a_b");
    }
}

#[test]
fn at_level_3_only_the_dispatcher_is_on_the_wire_and_sanitised_names_are_drift() {
    let c = at(&odd_names(), Level::Three);
    for target in Target::ALL {
        let names = c.wire_names(target);
        assert!(names.is_identity(), "{target}: t and q are always accepted");
        // A sanitised real name used as the tool name, and in `f`.
        expect_call(
            c.resolve_wire("timezone_convert", &json!({"tz": "UTC"}), &names),
            "timezone.convert",
        );
        expect_call(
            c.resolve_wire("t", &json!({"f": "files_read", "a": {"path": "x"}}), &names),
            "files/read",
        );
    }
}

#[test]
fn tool_for_name_says_which_tool_a_written_name_reaches() {
    let l1 = at(&odd_names(), Level::One);
    assert_eq!(
        l1.tool_for_name("timezone.convert"),
        Some("timezone.convert")
    );
    assert_eq!(
        l1.tool_for_name("timezone_convert"),
        None,
        "exact names at level 1"
    );
    let l3 = at(&odd_names(), Level::Three);
    let code = l3.code_for("files/read").unwrap().to_owned();
    assert_eq!(l3.tool_for_name(&code), Some("files/read"));
    assert_eq!(
        l3.tool_for_name("Timezone-Convert"),
        Some("timezone.convert")
    );
    assert_eq!(l3.tool_for_name("t"), None);
    assert_eq!(l3.tool_for_name("q"), None);
    assert_eq!(l3.tool_for_name("nothing_like_it"), None);
    assert_eq!(at(&odd_names(), Level::Two).tool_for_name("search"), None);
}
