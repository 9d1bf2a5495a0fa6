//! What ranked pruning ranks on (issue 23, the query side): the request as the conversation
//! states it — the latest user message with text, read with what it answers when it is a
//! short reply, and unchanged while tool results come in (also in user messages).

use chef::{Chef, ChefConfig, PrunePolicy};
use chef_ir::{Content, Message, Role, Target, ToolCall, ToolResult};
use serde_json::json;

use crate::fixtures::real_tools;

fn session() -> Chef {
    let mut chef = Chef::new(ChefConfig::default().with_prune(PrunePolicy::ranked(3)));
    chef.register_tools(real_tools()).unwrap();
    chef
}

fn kept(chef: &mut Chef) -> Vec<String> {
    chef.compile(Target::Anthropic)
        .unwrap()
        .meta
        .kept
        .into_iter()
        .map(|(name, _)| name.as_str().to_owned())
        .collect()
}

#[test]
fn a_short_reply_is_read_with_the_question_it_answers() {
    let mut chef = session();
    chef.push(Message::user(
        "Order 4417: the customer changed their mind about the delivery.",
    ));
    chef.push(Message::assistant(
        "Should I cancel order 4417 and add a note?",
    ));
    chef.push(Message::user("yes please"));
    assert_eq!(
        chef.tools().pruning_task(),
        "Order 4417: the customer changed their mind about the delivery.\n\
         Should I cancel order 4417 and add a note?\nyes please"
    );
    // As a whole the three lines abstain (the request's and the reply's words count
    // against the question's); line by line, the question's best tool comes first.
    assert!(
        chef.tools()
            .pruner()
            .index()
            .search(&chef.tools().pruning_task(), 3)
            .abstained
    );
    let kept = kept(&mut chef);
    assert_eq!(
        kept.first().map(String::as_str),
        Some("cancel_order"),
        "{kept:?}"
    );
    assert_eq!(kept.len(), 3, "{kept:?}");
    // A reply of five words or more stands on its own.
    chef.push(Message::user("What is the diesel price in Ohio today?"));
    assert_eq!(
        chef.tools().pruning_task(),
        "What is the diesel price in Ohio today?"
    );
    assert!(kept_has(&mut chef, "get_diesel_price"));
}

fn kept_has(chef: &mut Chef, name: &str) -> bool {
    kept(chef).iter().any(|n| n == name)
}

#[test]
fn tool_results_never_replace_the_request() {
    for role in [Role::Tool, Role::User] {
        let mut chef = session();
        chef.push(Message::user("What is the diesel price in Ohio today?"));
        let before = kept(&mut chef);
        assert!(before.iter().any(|n| n == "get_diesel_price"), "{before:?}");
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            ToolCall::new("c1", "get_diesel_price", json!({"state": "OH"})),
        )]));
        // Anthropic carries tool results in a user message: it has no text of its own.
        chef.push(Message::new(
            role,
            vec![Content::ToolResult(ToolResult::text(
                "c1",
                "$3.89 per gallon",
            ))],
        ));
        assert_eq!(
            chef.tools().pruning_task(),
            "What is the diesel price in Ohio today?"
        );
        // The same tools while the model works through its calls: the list does not move.
        assert_eq!(kept(&mut chef), before, "{role:?}");
    }
}

#[test]
fn the_override_and_an_empty_conversation() {
    let mut chef = session();
    assert_eq!(chef.tools().pruning_task(), "");
    chef.push(Message::user("ok"));
    // A short reply with nothing before it is the task alone.
    assert_eq!(chef.tools().pruning_task(), "ok");
    // A short message after an answer (not a question) is a request of its own.
    chef.push(Message::user("Geocode 1 Main St, Springfield"));
    chef.push(Message::assistant("Done: 39.78, -89.65."));
    chef.push(Message::user("now the diesel price"));
    assert_eq!(chef.tools().pruning_task(), "now the diesel price");
    chef.push(Message::assistant("For which state?"));
    chef.push(Message::user("Ohio"));
    assert_eq!(
        chef.tools().pruning_task(),
        "now the diesel price\nFor which state?\nOhio"
    );
    chef.tools_mut().set_task(Some("geocode an address"));
    assert_eq!(chef.tools().pruning_task(), "geocode an address");
}
