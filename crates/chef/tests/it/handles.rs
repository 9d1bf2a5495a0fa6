//! The session's handles (`tools`, `layers`, `offloads`, `skills` and their `_mut`
//! twins): reads that outlive the handle, setters that chain, and the deprecated flat
//! methods they replaced, which must keep doing exactly what the handles do.

use chef::{
    Chef, ChefConfig, PrunePolicy, ToolsMode, dynamic::Placement, guardrail::Guardrail,
    offload::OffloadPolicy, skills::Skill,
};
use chef_ir::{Message, Target, ToolDefinition};
use serde_json::json;

fn tools() -> Vec<ToolDefinition> {
    ["read_file", "delete_file", "list_dir"]
        .into_iter()
        .map(|n| ToolDefinition::new(n, json!({"type": "object"})))
        .collect()
}

#[test]
fn a_read_outlives_its_handle_and_setters_chain() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(tools()).unwrap();
    chef.tools_mut()
        .set_prune_policy(PrunePolicy::ranked(2))
        .set_allowlist(Some(["read_file", "list_dir"]))
        .set_task(Some("list the files"));
    // Each read borrows the session, not the handle it came from.
    let policy = chef.tools().prune_policy();
    let allowlist = chef.tools().allowlist();
    let task = chef.tools().pruning_task();
    assert_eq!(policy, &PrunePolicy::ranked(2));
    assert_eq!(
        allowlist,
        Some(&["read_file".to_owned(), "list_dir".to_owned()][..])
    );
    assert_eq!(task, "list the files");

    chef.layers_mut()
        .set_guardrail(Some(Guardrail::tag("answer").unwrap()))
        .set_prefill(Some("<answer>"));
    let layers = chef.layers();
    assert_eq!(layers.prefill(), Some("<answer>"));
    assert!(layers.guardrail().is_some());
}

#[test]
fn a_blocklist_set_through_the_handle_is_the_gates() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.register_tools(tools()).unwrap();
    let report = chef.tools_mut().set_blocked(["Delete_File", "delete_fiel"]);
    assert_eq!(report.unmatched, ["delete_fiel"]);
    assert_eq!(chef.tools().unmatched_blocked(), ["delete_fiel"]);
    assert!(chef.tools().pruner().blocklist().blocks("delete_file"));
    chef.push(Message::user("remove a.txt"));
    chef.compile(Target::Anthropic).unwrap();
    let call = chef_ir::ToolCall::new("c1", "delete_file", json!({}));
    assert!(matches!(
        chef.check_tool_call(&call),
        chef::Routed::Blocked { .. }
    ));
}

/// Two sessions, one set up through the deprecated flat methods and one through the
/// handles, compile to the same bytes and read back the same state.
#[test]
#[allow(deprecated)]
fn the_deprecated_flat_methods_do_what_the_handles_do() {
    let skill = || {
        Skill::new("notes", "Write them.")
            .unwrap()
            .with_description("Write release notes.")
    };
    let mut flat = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified));
    let mut handled = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified));
    for chef in [&mut flat, &mut handled] {
        chef.register_tools(tools()).unwrap();
        chef.push(Message::user("list the files"));
    }

    let report = flat.set_blocked_tools(["delete_file", "nope"]);
    flat.set_allowlist(Some(["read_file", "list_dir", "delete_file"]))
        .set_prune_policy(PrunePolicy::ranked(2));
    flat.set_dynamic_state(&json!({"step": 1}), Placement::LastUser)
        .unwrap();
    flat.set_guardrail(Some(Guardrail::tag("answer").unwrap()))
        .set_prefill(Some("<answer>"));
    flat.set_offload_policy(Some(OffloadPolicy::chars(4_000)));
    flat.register_skills([skill()]);
    flat.activate_skill("notes").unwrap();

    let handled_report = handled.tools_mut().set_blocked(["delete_file", "nope"]);
    handled
        .tools_mut()
        .set_allowlist(Some(["read_file", "list_dir", "delete_file"]))
        .set_prune_policy(PrunePolicy::ranked(2));
    handled
        .layers_mut()
        .set_dynamic_state(&json!({"step": 1}), Placement::LastUser)
        .unwrap()
        .set_guardrail(Some(Guardrail::tag("answer").unwrap()))
        .set_prefill(Some("<answer>"));
    handled
        .offloads_mut()
        .set_policy(Some(OffloadPolicy::chars(4_000)));
    handled.skills_mut().register([skill()]);
    handled.skills_mut().activate("notes").unwrap();

    assert_eq!(report.unmatched, handled_report.unmatched);
    assert_eq!(
        flat.unmatched_blocked_tools(),
        handled.tools().unmatched_blocked()
    );
    assert_eq!(flat.prune_policy(), handled.tools().prune_policy());
    assert_eq!(flat.allowlist(), handled.tools().allowlist());
    assert_eq!(flat.pruning_task(), handled.tools().pruning_task());
    assert_eq!(
        flat.dynamic_state_xml(),
        handled.layers().dynamic_state_xml()
    );
    assert_eq!(flat.prefill(), handled.layers().prefill());
    assert_eq!(flat.offload_policy(), handled.offloads().policy());
    assert_eq!(
        flat.active_skill().map(Skill::name),
        handled.skills().active().map(Skill::name)
    );
    assert_eq!(flat.skill_listing(), handled.skills().listing());
    for target in [
        Target::Anthropic,
        Target::OpenAiChat,
        Target::OpenAiResponses,
        Target::Gemini,
    ] {
        assert_eq!(
            flat.compile(target).unwrap().body,
            handled.compile(target).unwrap().body,
            "{target:?}"
        );
    }
}

#[test]
fn the_skills_handle_reads_as_the_registry() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.skills_mut()
        .register([Skill::new("notes", "Write them.")
            .unwrap()
            .with_description("Write release notes.")]);
    assert_eq!(chef.skills().names(), ["notes"]);
    assert!(chef.skills().get("notes").is_some());
    assert!(chef.skills().active().is_none());
    chef.skills_mut().activate("notes").unwrap();
    assert_eq!(chef.skills().active().map(Skill::name), Some("notes"));
    let was = chef.skills_mut().deactivate();
    assert_eq!(was.as_deref().map(Skill::name), Some("notes"));
    assert!(chef.skills_mut().activate("missing").is_err());
}

#[test]
fn skill_reads_outlive_the_handle() {
    let mut chef = Chef::new(ChefConfig::default());
    chef.skills_mut()
        .register([Skill::new("notes", "Write them.").unwrap()]);
    let names = chef.skills().names();
    let registry = chef.skills().registry();
    let first = chef.skills().iter().next();
    assert_eq!(names, ["notes"]);
    assert_eq!(registry.len(), 1);
    assert_eq!(first.map(Skill::name), Some("notes"));
    assert_eq!((chef.skills().len(), chef.skills().is_empty()), (1, false));
}

/// An async method's future borrows the session, not the temporary handle, so it can be
/// handed to a combinator; and the deprecated async shims write what the handles write.
#[tokio::test]
#[allow(deprecated)]
async fn offload_futures_borrow_the_session_and_the_shims_match() {
    let big: String = (0..3_000)
        .map(|i| format!("{i} GET /health 200\n"))
        .collect();
    let mut results = Vec::new();
    for flat in [false, true] {
        let mut chef = Chef::new(ChefConfig::default().with_tools_mode(ToolsMode::Unified));
        if flat {
            chef.set_offload_policy(Some(OffloadPolicy::chars(2_000)));
        } else {
            chef.offloads_mut()
                .set_policy(Some(OffloadPolicy::chars(2_000)));
        }
        chef.push(Message::assistant_with(vec![chef_ir::Content::ToolCall(
            chef_ir::ToolCall::new("c1", "read_log", json!({})),
        )]));
        chef.push(Message::tool_results(vec![chef_ir::ToolResult::text(
            "c1",
            big.clone(),
        )]));
        assert_eq!(chef.offloads().pending().len(), 1);
        let flushed = if flat {
            chef.flush_offloads().await.unwrap()
        } else {
            let future = chef.offloads_mut().flush();
            tokio::time::timeout(std::time::Duration::from_secs(30), future)
                .await
                .unwrap()
                .unwrap()
        };
        assert!(chef.offloads().pending().is_empty());
        let stored = if flat {
            chef.offload("held outside a result").await.unwrap()
        } else {
            chef.offloads_mut()
                .store("held outside a result")
                .await
                .unwrap()
        };
        let reconciled = if flat {
            chef.reconcile_offloads().await.unwrap()
        } else {
            chef.offloads_mut().reconcile().await.unwrap()
        };
        results.push((flushed.stored, stored.uri, reconciled.entries));
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0].2, 2);
}

#[test]
#[allow(deprecated)]
fn the_deprecated_reads_of_a_compiled_session_match_the_handles() {
    use chef_compress::Level;
    let mut chef = Chef::new(ChefConfig::default().with_level(Level::Three));
    chef.register_tools(tools()).unwrap();
    chef.push(Message::user("list the files"));
    chef.compile(Target::Anthropic).unwrap();
    assert_eq!(chef.code_for("list_dir"), chef.tools().code_for("list_dir"));
    assert!(chef.tools().code_for("list_dir").is_some());
    assert_eq!(
        chef.encode_call("list_dir", json!({})),
        chef.tools().encode_call("list_dir", json!({}))
    );
    assert_eq!(chef.owns_tool("context"), chef.tools().owns("context"));
    assert_eq!(chef.directory_xml(), chef.tools().directory_xml());
    assert_eq!(chef.loaded_toolkits(), chef.tools().loaded_toolkits());
    assert_eq!(chef.found_tools().len(), chef.tools().found().len());
    assert_eq!(chef.tools().blocked(), chef.pruner().blocked_tools());

    let schema = json!({"type": "object", "properties": {"step": {"type": "integer"}}});
    assert!(
        chef.set_dynamic_state_checked(&schema, &json!({"step": "one"}), Placement::LastUser)
            .is_err()
    );
    assert!(
        chef.layers_mut()
            .set_dynamic_state_checked(&schema, &json!({"step": "one"}), Placement::LastUser)
            .is_err()
    );
    chef.add_injector(
        "clock",
        |_: &chef::dynamic::InjectionView<'_>, out: &mut chef::dynamic::Injections| {
            out.push("noon");
            Ok(())
        },
    );
    assert_eq!(chef.injectors().collect::<Vec<_>>(), ["clock"]);
    assert_eq!(chef.layers().injectors().collect::<Vec<_>>(), ["clock"]);
    assert!(chef.remove_injector("clock"));
    assert!(!chef.layers_mut().remove_injector("clock"));
}
