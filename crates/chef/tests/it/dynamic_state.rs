//! Dynamic state and injected context through the whole pipeline: spec `providers.md`
//! checklist items 8–13, 15 and 20 (named after them), plus what chef adds — typed errors,
//! schema checks, snapshots, the history-prefix reuse and the cache audit. Items 6, 7, 14
//! (memory) are `conformance_session`'s 95–97; skills and guardrails (items 5, 16–18) are
//! not part of chef.

use chef::{
    ANCHOR_LINE, Chef, ChefConfig, ChefError, MemoryPlacement,
    dynamic::{InjectionView, Injections, Placement},
    memory::{Memory, SetOptions},
    snapshot,
};
use chef_ir::{Message, Role, Target};
use serde::Serialize;
use serde_json::{Value, json};

use crate::support::{chef, chef_with_user, inject_lines, push_tool_round};

fn texts(chef: &mut Chef, target: Target) -> Vec<(Role, String)> {
    chef.request(target)
        .unwrap()
        .messages
        .iter()
        .map(|m| (m.role, m.text()))
        .collect()
}

fn body(chef: &mut Chef, target: Target) -> Value {
    serde_json::from_slice(&chef.compile(target).unwrap().body).unwrap()
}

const A1: &str = "<dynamic_state>\n  <a>1</a>\n</dynamic_state>";

/// Sets the state `{"a": "1"}` (rendered [`A1`]) at `placement`.
fn set_a1(chef: &mut Chef, placement: Placement) {
    chef.layers_mut()
        .set_dynamic_state(&json!({"a": "1"}), placement)
        .unwrap();
}

/// A session with system prompt `S`, a user turn `q` and the state [`A1`] placed in the
/// system layer.
fn system_state_after_q() -> Chef {
    let mut chef = chef();
    chef.set_system_prompt(vec![Message::system("S")]);
    chef.push(Message::user("q"));
    set_a1(&mut chef, Placement::System);
    chef
}

#[test]
fn item_8_last_user_state_is_stitched_with_the_anchor() {
    let mut chef = chef_with_user("q");
    set_a1(&mut chef, Placement::LastUser);
    let body = body(&mut chef, Target::OpenAiChat);
    assert_eq!(
        body["messages"][0]["content"],
        format!("q\n\n{A1}\n\n{ANCHOR_LINE}")
    );
}

#[test]
fn item_9_memory_then_state_then_anchor() {
    let mut memory = Memory::new();
    memory.set("k", "v", SetOptions::new()).unwrap();
    let mut chef = Chef::new(
        ChefConfig::default()
            .with_cache(false)
            .with_memory_placement(MemoryPlacement::BeforeHistoryTail),
    )
    .with_memory(memory);
    chef.push(Message::user("q"));
    set_a1(&mut chef, Placement::LastUser);
    let messages = texts(&mut chef, Target::OpenAiChat);
    let last = &messages.last().unwrap().1;
    let at = |needle: &str| last.find(needle).unwrap();
    assert!(at("q") < at("<memory>"));
    assert!(at("<memory>") < at("<dynamic_state>"));
    assert!(at("<dynamic_state>") < at(ANCHOR_LINE));
}

#[test]
fn item_10_system_placement_folds_injected_context_into_its_message() {
    let mut chef = system_state_after_q();
    inject_lines(&mut chef, "rag", &["RAG"]);
    let body = body(&mut chef, Target::OpenAiChat);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "q"}),
        "no anchor"
    );
    assert_eq!(messages[2]["role"], "system");
    assert_eq!(
        messages[2]["content"],
        format!("CURRENT TASK STATE:\n{A1}\n<implicit_context>\nRAG\n</implicit_context>")
    );
}

#[test]
fn item_11_injections_alone_bring_the_anchor() {
    let mut chef = chef_with_user("q");
    inject_lines(&mut chef, "one", &["A", "", "B"]);
    inject_lines(&mut chef, "two", &["C"]);
    let messages = texts(&mut chef, Target::OpenAiChat);
    assert_eq!(
        messages[0].1,
        format!("q\n\n<implicit_context>\nA\n\nB\n\nC\n</implicit_context>\n\n{ANCHOR_LINE}")
    );
}

#[test]
fn item_12_after_tool_results_the_state_is_a_new_user_turn() {
    let mut chef = chef_with_user("q");
    push_tool_round(&mut chef, "c", "f");
    set_a1(&mut chef, Placement::LastUser);
    // The IR gets a new user turn after the tool results…
    let roles: Vec<Role> = texts(&mut chef, Target::Anthropic)
        .into_iter()
        .map(|m| m.0)
        .collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::User]);
    // …which the Anthropic crate merges into the user turn holding the results (the API
    // wants roles to alternate): results first, then the stitch.
    let body = body(&mut chef, Target::Anthropic);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    let content = messages[2]["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "tool_result");
    let stitch = content[1]["text"].as_str().unwrap();
    assert!(stitch.starts_with("<dynamic_state>"), "{stitch}");
}

#[test]
fn item_13_a_trailing_assistant_stays_last() {
    let mut chef = chef_with_user("q");
    chef.push(Message::assistant("answer"));
    set_a1(&mut chef, Placement::LastUser);
    let messages = texts(&mut chef, Target::Anthropic);
    assert_eq!(messages.len(), 2);
    assert!(messages[0].1.starts_with("q\n\n<dynamic_state>"));
    assert_eq!(messages[1], (Role::Assistant, "answer".to_owned()));
}

#[test]
fn item_15_an_empty_user_turn_gets_a_leading_blank_line() {
    let mut chef = chef_with_user("");
    set_a1(&mut chef, Placement::LastUser);
    let messages = texts(&mut chef, Target::OpenAiChat);
    assert!(messages[0].1.starts_with("\n\n<dynamic_state>"));
}

#[test]
fn item_20_a_state_change_leaves_every_earlier_message_identical() {
    let mut chef = chef();
    chef.set_system_prompt(vec![Message::system("S")]);
    for i in 0..5 {
        chef.push(Message::user(format!("u{i}")));
        chef.push(Message::assistant(format!("a{i}")));
    }
    chef.push(Message::user("last"));
    chef.layers_mut()
        .set_dynamic_state(&json!({"step": 1}), Placement::LastUser)
        .unwrap();
    let one = body(&mut chef, Target::OpenAiChat);
    chef.layers_mut()
        .set_dynamic_state(&json!({"step": 2, "note": "x"}), Placement::LastUser)
        .unwrap();
    let two = body(&mut chef, Target::OpenAiChat);
    let (one, two) = (
        one["messages"].as_array().unwrap(),
        two["messages"].as_array().unwrap(),
    );
    assert_eq!(one.len(), two.len());
    assert_eq!(one[..one.len() - 1], two[..two.len() - 1]);
    assert_ne!(one.last(), two.last());
}

#[test]
fn struct_fields_keep_their_declared_order() {
    #[derive(Serialize)]
    struct Task {
        zeta: &'static str,
        alpha: u32,
        files: Vec<&'static str>,
    }
    let mut chef = chef();
    chef.layers_mut()
        .set_dynamic_state(
            &Task {
                zeta: "first",
                alpha: 2,
                files: vec!["a.rs"],
            },
            Placement::LastUser,
        )
        .unwrap();
    assert_eq!(
        chef.layers().dynamic_state_xml(),
        "<dynamic_state>\n  <zeta>first</zeta>\n  <alpha>2</alpha>\n  <files>\n  <item>a.rs</item>\n</files>\n</dynamic_state>"
    );
}

#[test]
fn null_clears_and_clearing_removes_the_block() {
    let mut chef = chef_with_user("q");
    set_a1(&mut chef, Placement::LastUser);
    assert!(chef.layers_mut().clear_dynamic_state());
    assert!(!chef.layers_mut().clear_dynamic_state());
    assert_eq!(texts(&mut chef, Target::OpenAiChat)[0].1, "q");
    set_a1(&mut chef, Placement::LastUser);
    chef.layers_mut()
        .set_dynamic_state(&Value::Null, Placement::LastUser)
        .unwrap();
    assert!(chef.layers().dynamic_state().is_none());
    assert_eq!(chef.layers().dynamic_state_xml(), "");
}

#[test]
fn a_state_that_is_not_json_is_refused_and_the_old_one_kept() {
    let mut chef = chef();
    set_a1(&mut chef, Placement::LastUser);
    // A map with non-string keys cannot be a JSON object.
    let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into_iter().collect();
    let err = chef
        .layers_mut()
        .set_dynamic_state(&bad, Placement::LastUser)
        .unwrap_err();
    assert!(matches!(err, ChefError::DynamicState(_)), "{err}");
    assert_eq!(chef.layers().dynamic_state_xml(), A1);
}

#[test]
fn a_schema_checks_the_state_before_it_is_set() {
    let schema = json!({
        "type": "object",
        "properties": {"step": {"type": "integer"}, "file": {"type": "string"}},
        "required": ["step"],
    });
    let mut chef = chef();
    chef.layers_mut()
        .set_dynamic_state_checked(&schema, &json!({"step": 1}), Placement::LastUser)
        .unwrap();
    let err = chef
        .layers_mut()
        .set_dynamic_state_checked(&schema, &json!({"file": "x"}), Placement::LastUser)
        .unwrap_err();
    assert!(err.to_string().contains("step"), "{err}");
    let err = chef
        .layers_mut()
        .set_dynamic_state_checked(&schema, &json!({"step": "two"}), Placement::LastUser)
        .unwrap_err();
    assert!(matches!(err, ChefError::DynamicState(_)), "{err}");
    assert_eq!(
        chef.layers().dynamic_state_xml(),
        "<dynamic_state>\n  <step>1</step>\n</dynamic_state>",
        "refused states leave the old one"
    );
    let err = chef
        .layers_mut()
        .set_dynamic_state_checked(&json!({"type": "string"}), &json!({}), Placement::LastUser)
        .unwrap_err();
    assert!(matches!(err, ChefError::DynamicState(_)), "{err}");
}

#[test]
fn the_state_rides_snapshot_files_and_old_files_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    let mut chef = chef_with_user("q");
    set_a1(&mut chef, Placement::System);
    chef.save(&path, None).unwrap();
    let expected = chef.request(Target::Gemini).unwrap();

    let mut other = Chef::new(ChefConfig::default().with_cache(false));
    other.load(&path).unwrap();
    assert_eq!(other.request(Target::Gemini).unwrap(), expected);
    assert_eq!(other.layers().dynamic_state_xml(), A1);

    // A file without the field (an older writer) restores to no state.
    let mut json: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    json["payload"]
        .as_object_mut()
        .unwrap()
        .remove("dynamic_state");
    let snap: snapshot::Snapshot<chef::SessionState> = snapshot::from_slice(
        &crate::support::resealed(&serde_json::to_vec(&json).unwrap()),
    )
    .unwrap();
    other.restore(&snap).unwrap();
    assert!(other.layers().dynamic_state().is_none());
}

#[test]
fn every_target_places_system_state_after_the_history() {
    let mut chef = system_state_after_q();
    let state = format!("CURRENT TASK STATE:\n{A1}");
    // Anthropic hoists it into `system` (a cache hazard the audit reports).
    let anthropic = body(&mut chef, Target::Anthropic);
    assert_eq!(anthropic["system"][1]["text"], state.as_str());
    // Responses joins it into the instructions.
    let responses = body(&mut chef, Target::OpenAiResponses);
    assert!(
        responses["instructions"]
            .as_str()
            .unwrap()
            .ends_with(&state),
        "{responses}"
    );
    // Gemini puts it in the system instruction.
    let gemini = body(&mut chef, Target::Gemini);
    assert!(
        gemini["systemInstruction"]
            .to_string()
            .contains("CURRENT TASK STATE")
    );
}

#[test]
fn the_cache_audit_reports_system_placed_state_on_anthropic() {
    let mut chef = Chef::new(ChefConfig::default().with_cache_audit(true));
    chef.push(Message::user("q"));
    set_a1(&mut chef, Placement::System);
    let payload = chef.compile(Target::Anthropic).unwrap();
    assert!(
        !payload.meta.cache_issues.is_empty(),
        "{:?}",
        payload.notices
    );
    set_a1(&mut chef, Placement::LastUser);
    let payload = chef.compile(Target::Anthropic).unwrap();
    assert!(
        payload.meta.cache_issues.is_empty(),
        "{:?}",
        payload.meta.cache_issues
    );
}

/// A long conversation, compiled turn after turn with the state and the injected context
/// changing each turn, gives the same bytes as a fresh session compiling it in full: the
/// history-prefix reuse stays correct under both placements.
#[test]
fn turns_that_reuse_the_history_prefix_match_a_full_compile() {
    for placement in [Placement::LastUser, Placement::System] {
        for target in [
            Target::Anthropic,
            Target::OpenAiChat,
            Target::OpenAiResponses,
            Target::Gemini,
        ] {
            let config = ChefConfig::default();
            let mut chef = Chef::new(config.clone());
            chef.set_system_prompt(vec![Message::system("S")]);
            let mut reused = 0;
            for turn in 0..40u32 {
                chef.push(Message::user(format!("question {turn}")));
                chef.layers_mut()
                    .set_dynamic_state(&json!({"turn": turn}), placement)
                    .unwrap();
                chef.layers_mut().add_injector(
                    "n",
                    move |_: &InjectionView<'_>, out: &mut Injections| {
                        out.push(format!("doc {turn}"));
                        Ok(())
                    },
                );
                let mut fresh = Chef::new(config.clone());
                fresh.restore(&chef.snapshot(None)).unwrap();
                fresh.layers_mut().add_injector(
                    "n",
                    move |_: &InjectionView<'_>, out: &mut Injections| {
                        out.push(format!("doc {turn}"));
                        Ok(())
                    },
                );
                let payload = chef.compile(target).unwrap();
                reused += usize::from(payload.meta.reused_prefix);
                let full = fresh.compile(target).unwrap();
                assert!(!full.meta.reused_prefix);
                assert_eq!(
                    String::from_utf8_lossy(&payload.body),
                    String::from_utf8_lossy(&full.body),
                    "{target:?} {placement:?} turn {turn}"
                );
                chef.push(Message::assistant(format!("answer {turn}")));
            }
            assert!(
                reused > 0,
                "{target:?} {placement:?}: the prefix was never reused"
            );
        }
    }
}
