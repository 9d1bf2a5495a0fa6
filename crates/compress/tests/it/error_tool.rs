//! Issue 26: an error about one tool names it as a field (`ResolveError::tool`), whatever
//! sentence its message uses, at every level; errors that reached no tool name none.

use chef_compress::{Level, Resolution, ResolveError};
use serde_json::{Value, json};

use crate::{LEVELS, at, resolve_encoded, tools3};

#[track_caller]
fn error(r: Resolution) -> ResolveError {
    match r {
        Resolution::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn argument_errors_name_their_tool_in_a_field_at_every_level() {
    // Four problems, four sentence shapes in the message; one field.
    let bad: [(&str, Value); 4] = [
        ("github_create_issue", json!({"owner": "o", "repo": "r"})),
        (
            "github_create_issue",
            json!({"owner": "o", "repo": "r", "title": "t", "bogus": 1}),
        ),
        ("github_search_issues", json!({"q": "x", "per_page": "ten"})),
        ("github_search_issues", json!({"q": "x", "sort": "stars"})),
    ];
    for level in LEVELS {
        let c = at(&tools3(), level);
        let mut messages = Vec::new();
        for (tool, args) in &bad {
            let e = error(resolve_encoded(&c, tool, args.clone()));
            assert!(
                matches!(e, ResolveError::InvalidArguments(_)),
                "{level}: {e:?}"
            );
            assert_eq!(e.tool(), Some(*tool), "{level}: {e}");
            // The message still reads as before, for the model.
            assert!(e.message().contains(tool), "{level}: {e}");
            messages.push(e.message());
        }
        messages.dedup();
        assert_eq!(messages.len(), 4);
    }
}

#[test]
fn errors_that_reach_no_tool_name_none() {
    let l1 = at(&tools3(), Level::One);
    assert_eq!(error(l1.resolve("nope", &json!({}))).tool(), None);
    let l2 = at(&tools3(), Level::Two);
    assert_eq!(
        error(l2.resolve("nope", &json!({"op": "x", "args": {}}))).tool(),
        None
    );
    assert_eq!(
        error(l2.resolve("describe_op", &json!({"ns": "nope", "op": "x"}))).tool(),
        None
    );
    let l3 = at(&tools3(), Level::Three);
    assert_eq!(error(l3.resolve("t", &json!({"f": "zz9"}))).tool(), None);
    assert_eq!(error(l3.resolve("q", &json!({"c": "zz9"}))).tool(), None);
    assert_eq!(error(l3.resolve("T", &json!({"f": "a0"}))).tool(), None);
}
