//! Issue 47, item 12: did-you-mean never teaches a blocked tool. Over every level (0–4),
//! every route a misspelt name can take (a bare call, `t(f=…)`, `q(c=…)`, `q` through the
//! dispatcher, a level-2 op, a namespace action, a toolkit load; `route` and
//! `check_tool_call` alike) and a set of misspellings of each blocked name (case and
//! separator drift, a letter more, a letter less, two letters swapped, a prefix dropped,
//! a code with a character more), no error text names a blocked tool, its code or a
//! blocked toolkit. A call that only drifts in case or separators is refused as blocked,
//! which names what was blocked: that is the gate's answer, not a suggestion.

use chef::{Chef, ChefConfig, OwnedCall, Routed, ToolGroup, ToolsMode};
use chef_compress::Level;
use chef_ir::{Message, Target, ToolCall};
use serde_json::{Value, json};

use crate::{
    fixtures::real_tools,
    support::{block_on, corpus_options},
};

/// Blocked in every session: two catalogue tools and an owned tool.
const BLOCKED: [&str; 3] = ["gdrive_upload_file", "gdrive_download_file", "context"];

fn config(level: Level) -> ChefConfig {
    ChefConfig::default()
        .with_compress(corpus_options(level))
        .with_tools_mode(ToolsMode::Unified)
}

/// Every catalogue tool flat.
fn flat(level: Level) -> Chef {
    let mut chef = Chef::new(config(level));
    chef.register_tools(real_tools()).unwrap();
    chef.push(Message::user("Put the report on the drive."));
    chef.tools_mut().set_blocked(BLOCKED);
    chef.compile(Target::OpenAiChat).unwrap();
    chef
}

/// The Drive tools behind a namespace `drive`, the Sheets tools in a blocked toolkit
/// `sheets`, the rest flat.
fn grouped(level: Level) -> Chef {
    let (gdrive, rest): (Vec<_>, Vec<_>) = real_tools()
        .into_iter()
        .partition(|t| t.name.as_str().starts_with("gdrive_"));
    let (sheets, drive): (Vec<_>, Vec<_>) = gdrive
        .into_iter()
        .partition(|t| t.name.as_str().starts_with("gdrive_sheets_"));
    let mut chef = Chef::new(config(level));
    chef.register_tools(rest).unwrap();
    chef.tools_mut()
        .register_namespaces(vec![ToolGroup::new("drive", "Google Drive.", drive)])
        .unwrap();
    chef.tools_mut()
        .register_toolkits(vec![
            ToolGroup::new("sheets", "Spreadsheets.", sheets),
            ToolGroup::new("shelf", "Nothing much.", Vec::new()),
        ])
        .unwrap();
    chef.push(Message::user("Put the report on the drive."));
    let mut blocked = BLOCKED.to_vec();
    blocked.push("Sheets");
    chef.tools_mut().set_blocked(blocked);
    chef.compile(Target::OpenAiChat).unwrap();
    chef
}

/// Misspellings of `name`: drift in case and separators, a letter more, a letter less, two
/// letters swapped, the first word dropped, and drift with a letter more.
fn misspellings(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mid = chars.len() / 2;
    let without = |i: usize| {
        chars
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, c)| *c)
            .collect::<String>()
    };
    let mut swapped = chars.clone();
    swapped.swap(mid, mid + 1);
    let mut doubled = chars.clone();
    doubled.insert(mid, chars[mid]);
    let title: String = name
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-");
    let mut out = vec![
        name.to_uppercase(),
        title.clone(),
        name.replace('_', "."),
        name.replace('_', " "),
        format!("{name}s"),
        format!("{title}s"),
        doubled.into_iter().collect(),
        without(chars.len() - 1),
        without(mid),
        swapped.into_iter().collect(),
    ];
    if let Some((_, tail)) = name.split_once('_') {
        out.push(tail.to_owned());
    }
    out.retain(|m| m != name);
    out
}

/// The words of a reply that could name a tool: runs of letters, digits, `_`, `-` and `.`,
/// without a trailing `.`.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Letters and digits, lower-cased: two spellings with the same key differ only in case
/// and separators.
fn key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Fails when `routed` is an error (or a lookup) whose text names one of `forbidden`,
/// leaving out the model's own words `written`. A lookup `q(c=…)` of a name that only
/// drifts from a blocked one is that tool's entry, as the map shows it (blocking never
/// edits the tool list): not a suggestion.
#[track_caller]
fn assert_not_taught(routed: &Routed, written: &str, forbidden: &[String], what: &str) {
    let text = match routed {
        Routed::Error { reply, .. } => reply,
        Routed::Lookup { reply, .. } if !forbidden.iter().any(|f| key(f) == key(written)) => reply,
        _ => return,
    };
    let rest = text.replace(written, "");
    for word in words(&rest) {
        assert!(
            !forbidden.contains(&word),
            "{what}: {written:?} was answered naming blocked {word:?}: {text}"
        );
    }
}

/// Routes `call` through `route` and `check_tool_call`; both must not teach.
#[track_caller]
fn check(chef: &mut Chef, call: &ToolCall, written: &str, forbidden: &[String], what: &str) {
    let checked = chef.check_tool_call(call);
    assert_not_taught(&checked, written, forbidden, what);
    let routed = chef.route(call);
    assert_not_taught(&routed, written, forbidden, what);
    assert!(
        !matches!(routed, Routed::Call(ref c) if BLOCKED.contains(&c.name.as_str())),
        "{what}: dispatched {routed:?}"
    );
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("c1", name, args)
}

/// The call of `name` with `args` as the model sends it at the session's level: encoded
/// where the level encodes it, else as is.
fn as_sent(chef: &Chef, name: &str, args: Value) -> ToolCall {
    chef.tools()
        .encode_call(name, args.clone())
        .unwrap_or_else(|| call(name, args))
}

/// [`check`] on the call of `name` with `args` as the model sends it ([`as_sent`]), then
/// as is.
fn check_sent_and_raw(
    chef: &mut Chef,
    name: &str,
    args: Value,
    written: &str,
    forbidden: &[String],
    what: &str,
) {
    let sent = as_sent(chef, name, args.clone());
    check(chef, &sent, written, forbidden, what);
    check(chef, &call(name, args), written, forbidden, what);
}

/// The names and codes no error may teach in `chef`.
fn forbidden(chef: &Chef, extra: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = BLOCKED
        .iter()
        .chain(extra)
        .map(|n| n.to_lowercase())
        .collect();
    for name in BLOCKED {
        if let Some(code) = chef.tools().code_for(name) {
            out.push(code.to_lowercase());
        }
    }
    out
}

#[test]
fn no_error_suggests_a_blocked_tool_at_any_level_on_any_route() {
    for level in Level::ALL {
        let mut chef = flat(level);
        let forbidden = forbidden(&chef, &[]);
        let mut written: Vec<String> = BLOCKED.iter().flat_map(|n| misspellings(n)).collect();
        // Codes with a character more, around a blocked tool's code (levels 3–4).
        for name in BLOCKED {
            if let Some(code) = chef.tools().code_for(name) {
                written.extend([format!("{code}x"), format!("{code}0"), format!("x{code}")]);
            }
        }
        for w in &written {
            let what = format!("{level:?}");
            check(&mut chef, &call(w, json!({})), w, &forbidden, &what);
            check(
                &mut chef,
                &call(w, json!({"path": "/a"})),
                w,
                &forbidden,
                &what,
            );
            if level.is_dispatcher() {
                for (name, args) in [
                    ("t", json!({"f": w, "a": {"file_name": "a"}})),
                    ("t", json!({"f": w})),
                    ("q", json!({"c": w})),
                    ("t", json!({"f": "q", "a": {"c": w}})),
                ] {
                    check(&mut chef, &call(name, args), w, &forbidden, &what);
                }
            }
            if level == Level::Two {
                // The op of the blocked tool's namespace, misspelt.
                for name in BLOCKED {
                    let Some(encoded) = chef.tools().encode_call(name, json!({})) else {
                        continue;
                    };
                    let mut args = encoded.arguments.clone();
                    if let Some(op) = args.get("op").and_then(Value::as_str).map(str::to_owned) {
                        for m in misspellings(&op) {
                            args["op"] = json!(m);
                            check(
                                &mut chef,
                                &call(encoded.name.as_str(), args.clone()),
                                &m,
                                &forbidden,
                                &what,
                            );
                        }
                    }
                }
            }
        }
        // The owned-tool entry point refuses a name it does not own without naming others.
        for w in misspellings("context") {
            let owned = OwnedCall {
                id: "c1".into(),
                name: w.clone(),
                arguments: json!({"command": "view", "path": "notes/"}),
            };
            match block_on(chef.handle_tool(&owned)) {
                Err(e) => {
                    let text = e.to_string().replace(&w, "");
                    assert!(!words(&text).contains(&"context".to_owned()), "{e}");
                }
                Ok(reply) => assert!(reply.is_error, "{level:?} {w:?}: {}", reply.text),
            }
        }
    }
}

#[test]
fn no_error_suggests_a_blocked_action_or_toolkit_at_any_level() {
    for level in Level::ALL {
        let mut chef = grouped(level);
        let forbidden = forbidden(&chef, &["sheets"]);
        let what = format!("{level:?} grouped");
        for name in BLOCKED {
            for m in misspellings(name) {
                let action = json!({"action": m, "args": {"file_name": "a"}});
                check_sent_and_raw(&mut chef, "drive", action, &m, &forbidden, &what);
                // Flat arguments beside the action.
                let flat_args = json!({"action": m, "file_name": "a"});
                check(&mut chef, &call("drive", flat_args), &m, &forbidden, &what);
            }
        }
        for m in misspellings("sheets")
            .into_iter()
            .chain(["sheet".to_owned(), "Sheetz".to_owned()])
        {
            let load = json!({"toolkit_name": m});
            check_sent_and_raw(&mut chef, "load_toolkit", load, &m, &forbidden, &what);
        }
    }
}

/// The gate comes before argument validation on every route, at every level, also for a
/// blocked namespace action and a blocked owned tool: never a lesson in a blocked tool's
/// parameters.
#[test]
fn a_blocked_tool_with_bad_arguments_is_refused_as_blocked_on_every_route() {
    for level in Level::ALL {
        let mut chef = grouped(level);
        for args in [json!({}), json!({"file_name": 5}), json!({"nope": true})] {
            let action = json!({"action": "gdrive_upload_file", "args": args});
            let via_ns = as_sent(&chef, "drive", action);
            let owned = call("context", json!({"command": 5}));
            for c in [via_ns, owned] {
                for routed in [chef.check_tool_call(&c), chef.route(&c)] {
                    assert!(
                        matches!(routed, Routed::Blocked { .. }),
                        "{level:?} {c:?}: {routed:?}"
                    );
                }
            }
        }
    }
}
