//! History repair (spec providers.md §4, checklist I).

use chef_anthropic::{PH_CONTINUES, PH_NO_RESULT, Repair, repair_history};
use chef_ir::{Content, Message, Role, ToolResult};

use crate::messages::assistant_calls;

fn result(id: &str) -> Message {
    Message::tool_results(vec![ToolResult::text(id, "r")])
}

#[test]
fn empty_and_valid_histories_come_back_unchanged() {
    assert_eq!(repair_history(vec![]), (vec![], vec![]));
    let valid = vec![
        Message::user("q"),
        assistant_calls(&[("c1", "a")]),
        result("c1"),
        Message::assistant("done"),
    ];
    assert_eq!(repair_history(valid.clone()), (valid, vec![]));
}

#[test]
fn orphan_results_are_removed() {
    let (out, repairs) = repair_history(vec![
        Message::user("q"),
        result("c_nonexistent"),
        Message::assistant("a"),
    ]);
    assert_eq!(out, vec![Message::user("q"), Message::assistant("a")]);
    assert_eq!(
        repairs,
        vec![Repair::OrphanResultRemoved {
            tool_call_id: "c_nonexistent".into()
        }]
    );

    let (out, _) = repair_history(vec![result("c1")]);
    assert_eq!(out, vec![Message::user(PH_CONTINUES)]);
}

#[test]
fn missing_results_get_named_placeholders_right_after_the_call() {
    let (out, repairs) = repair_history(vec![
        Message::user("q"),
        assistant_calls(&[("c1", "a"), ("c2", "b")]),
        result("c1"),
    ]);
    assert_eq!(out.len(), 4);
    assert_eq!(
        out[2],
        Message::tool_results(vec![ToolResult::text("c2", PH_NO_RESULT).with_name("b")])
    );
    assert_eq!(out[3], result("c1"));
    assert_eq!(
        repairs,
        vec![Repair::MissingResultInserted {
            tool_call_id: "c2".into()
        }]
    );
}

#[test]
fn a_result_after_the_next_user_turn_does_not_count_and_is_kept() {
    let (out, _) = repair_history(vec![
        Message::user("q"),
        assistant_calls(&[("c1", "a")]),
        Message::user("x"),
        result("c1"),
    ]);
    assert_eq!(out.len(), 5);
    assert_eq!(
        out[2].tool_results_iter().next().unwrap().content,
        vec![Content::text(PH_NO_RESULT)]
    );
    assert_eq!(out[4], result("c1"));
}

#[test]
fn a_result_before_its_call_is_an_orphan_and_the_call_gets_a_placeholder() {
    let (out, _) = repair_history(vec![
        Message::user("q"),
        result("c1"),
        assistant_calls(&[("c1", "a")]),
    ]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[1].role, Role::Assistant);
    assert_eq!(
        out[2]
            .tool_results_iter()
            .next()
            .unwrap()
            .tool_call_id
            .as_str(),
        "c1"
    );
}

#[test]
fn duplicate_call_ids_get_one_placeholder() {
    let (out, repairs) = repair_history(vec![
        Message::user("q"),
        assistant_calls(&[("c1", "a"), ("c1", "a")]),
    ]);
    assert_eq!(out[2].tool_results_iter().count(), 1);
    assert_eq!(repairs.len(), 1);
}

#[test]
fn the_first_non_system_message_must_be_a_user_turn() {
    let (out, repairs) = repair_history(vec![
        Message::system("s"),
        Message::assistant("hello"),
        Message::user("hi"),
    ]);
    assert_eq!(
        out,
        vec![
            Message::system("s"),
            Message::user(PH_CONTINUES),
            Message::assistant("hello"),
            Message::user("hi")
        ]
    );
    assert_eq!(repairs, vec![Repair::ContinuationInserted]);
}

#[test]
fn results_without_an_id_and_system_messages_between_call_and_result_are_fine() {
    let no_id = vec![Message::user("q"), result("")];
    assert_eq!(repair_history(no_id.clone()).0, no_id);
    let between = vec![
        Message::user("q"),
        assistant_calls(&[("c", "a")]),
        Message::system("s"),
        result("c"),
    ];
    assert_eq!(repair_history(between.clone()), (between, vec![]));
}
