//! Output guardrails and prefill at the session level (issue 21, part 3): placed last on
//! every target, replaced as a whole, cleared with `None`, carried by snapshots and the
//! journal, and cache-safe (a session compiling with prefix reuse gives the bytes a fresh
//! session restored from its snapshot gives).

use chef::{
    Chef, ChefConfig,
    guardrail::{Guardrail, Problem, Verdict},
};
use chef_ir::{Message, Target, ToolCall, ToolResult};
use serde_json::json;

use crate::support::{block_on, memory_journal, replayed, two_tools};

fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(two_tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You are terse.")]);
    chef
}

/// [`session`] with one user turn, `text`, under `guardrail` and `prefill`.
fn guarded(text: &str, guardrail: Guardrail, prefill: &str) -> Chef {
    let mut chef = session();
    chef.push(Message::user(text));
    chef.layers_mut()
        .set_guardrail(Some(guardrail))
        .set_prefill(Some(prefill));
    chef
}

fn body(chef: &mut Chef, target: Target) -> String {
    String::from_utf8(chef.compile(target).unwrap().body).unwrap()
}

fn json_guardrail() -> Guardrail {
    Guardrail::json(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"]
    }))
    .unwrap()
}

#[test]
fn the_guardrail_is_the_last_instruction_and_the_prefill_is_honoured_on_every_target() {
    for target in Target::ALL {
        let mut chef = guarded(
            "Where is the Louvre?",
            Guardrail::tag("answer").unwrap(),
            "<answer>",
        );
        let payload = chef.compile(target).unwrap();
        let text = String::from_utf8(payload.body.clone()).unwrap();
        let instruction = "Put your final answer inside <answer> and </answer>";
        let at = text
            .find(instruction)
            .unwrap_or_else(|| panic!("{target:?}: {text}"));
        // Nothing of the conversation comes after it.
        assert!(
            text.find("Where is the Louvre?").unwrap() < at,
            "{target:?}"
        );
        if target == Target::Anthropic {
            // Native prefill: the reply's start is the last turn.
            assert!(
                text.contains(
                    r#"{"role":"assistant","content":[{"type":"text","text":"<answer>"}]}]"#
                ),
                "{text}"
            );
            assert!(payload.notices.is_empty(), "{:?}", payload.notices);
        } else {
            // No prefill on these APIs: the crate's enforcement text, after the guardrail,
            // and a notice that says so.
            let enforcement = text
                .find("prefill_enforcement")
                .unwrap_or_else(|| panic!("{target:?}: {text}"));
            assert!(enforcement > at, "{target:?}");
            assert!(
                payload.notices.iter().any(|n| n.contains("prefill")),
                "{target:?}: {:?}",
                payload.notices
            );
        }
        // Replaced as a whole; cleared with None.
        chef.layers_mut().set_guardrail(Some(json_guardrail()));
        let replaced = body(&mut chef, target);
        assert!(!replaced.contains(instruction));
        assert!(replaced.contains("valid against this JSON Schema"));
        chef.layers_mut()
            .set_guardrail(None)
            .set_prefill(None::<String>);
        let cleared = body(&mut chef, target);
        assert!(!cleared.contains("JSON Schema") && !cleared.contains("prefill_enforcement"));
    }
}

#[test]
fn check_reply_uses_the_guardrail_in_force() {
    let mut chef = session();
    assert_eq!(chef.check_reply("anything"), None);
    chef.layers_mut().set_guardrail(Some(json_guardrail()));
    assert!(matches!(
        chef.check_reply("{\"city\": \"Paris\"}"),
        Some(Verdict::Pass { .. })
    ));
    match chef.check_reply("{\"town\": \"Paris\"}") {
        Some(Verdict::Fail {
            problem: Problem::Schema { message },
            retry,
        }) => {
            assert!(message.contains("city"), "{message}");
            assert!(retry.contains("city"));
        }
        other => panic!("{other:?}"),
    }
}

/// A tool round and a user turn, so prefix reuse has a history to reuse.
fn turn(chef: &mut Chef, i: usize) {
    let id = format!("call_{i}");
    chef.push(Message::assistant_with(vec![chef_ir::Content::ToolCall(
        ToolCall::new(
            id.as_str(),
            "weather_now",
            json!({"q": format!("query {i}")}),
        ),
    )]));
    chef.push(Message::tool_results(vec![ToolResult::text(
        id.as_str(),
        format!("result {i}"),
    )]));
    chef.push(Message::user(format!("and now step {i}")));
}

#[test]
fn snapshots_and_the_journal_carry_them_and_reuse_changes_no_byte() {
    for target in Target::ALL {
        let mut live = guarded("start", json_guardrail(), "{\"city\":");
        let (store, id, mut journal) = memory_journal("output");
        for i in 0..6 {
            turn(&mut live, i);
            let live_body = body(&mut live, target);
            // A fresh session restored from the snapshot compiles the same bytes.
            let mut fresh = session();
            fresh.restore(&live.snapshot(None)).unwrap();
            assert_eq!(fresh.layers().guardrail(), live.layers().guardrail());
            assert_eq!(fresh.layers().prefill(), live.layers().prefill());
            // The fresh session compiles the turn `live` just compiled: roll its counter back
            // by comparing the next compile of both instead.
            block_on(journal.save(&live)).unwrap();
            let next_live = body(&mut live, target);
            let next_fresh = body(&mut fresh, target);
            assert_eq!(next_fresh, next_live, "{target:?} turn {i}");
            assert!(live_body.contains("valid against this JSON Schema"));
        }
        // The journal replays them.
        let mut resumed = block_on(replayed(&store, &id, session()));
        assert_eq!(resumed.layers().guardrail(), live.layers().guardrail());
        assert_eq!(resumed.layers().prefill(), Some("{\"city\":"));
        assert_eq!(
            body(&mut resumed, target),
            body(&mut live, target),
            "{target:?}"
        );
        // And a cleared guardrail is journalled as cleared.
        live.layers_mut().set_guardrail(None);
        block_on(journal.save(&live)).unwrap();
        let again = block_on(replayed(&store, &id, session()));
        assert_eq!(again.layers().guardrail(), None);
    }
}

#[test]
fn a_snapshot_with_a_broken_guardrail_schema_is_refused_not_half_loaded() {
    let mut chef = session();
    chef.layers_mut()
        .set_guardrail(Some(Guardrail::tag("answer").unwrap()));
    let bytes = chef::snapshot::to_vec(&chef.snapshot(None)).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains(r#""guardrail":{"tag":"answer"}"#), "{text}");
    let broken = text.replace(r#"{"tag":"answer"}"#, r#"{"tag":"not a tag"}"#);
    assert!(chef::snapshot::from_slice::<chef::SessionState>(broken.as_bytes()).is_err());
}
