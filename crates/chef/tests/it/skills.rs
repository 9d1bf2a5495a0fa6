//! Skills (issue 21, part 2): SKILL.md directories with a broken file, argument rendering,
//! the active skill in both placements on every target, the `load_skill` tool and its
//! static schema, allowed-tools pruning on and off, and snapshots and the journal.

use std::{path::Path, sync::Arc};

use chef::{
    Chef, ChefConfig, ChefError, Routed,
    memory::Memory,
    skills::{self, Skill, SkillErrorKind, SkillPlacement},
};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::{Value, json};

use crate::support::{assert_notice, block_on, memory_journal, replayed, wire_names};

const REVIEW: &str = "---\nname: code-review\ndescription: Review a change for bugs.\n\
    when-to-use: When asked to review a diff or pull request.\n\
    allowed-tools: read_file, grep\n---\nRead every changed file with read_file before judging.\n";
const RELEASE: &str = "---\nname: release-notes\ndescription: Write release notes.\n\
    argument-hint: \"[version]\"\nallowed-tools:\n  - git_log\n---\nSummarise the changes of $0.\n";

fn write(root: &Path, folder: &str, text: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

fn tools() -> Vec<ToolDefinition> {
    ["read_file", "grep", "git_log", "deploy"]
        .into_iter()
        .map(|n| {
            ToolDefinition::new(
                n,
                json!({"type": "object", "properties": {"arg": {"type": "string"}}}),
            )
            .with_description(format!("The {n} tool."))
        })
        .collect()
}

fn registered() -> Vec<Skill> {
    vec![
        Skill::parse("skills/code-review/SKILL.md", REVIEW).unwrap(),
        Skill::parse("skills/release-notes/SKILL.md", RELEASE).unwrap(),
    ]
}

fn session(config: ChefConfig) -> Chef {
    let mut chef = Chef::new(config);
    chef.register_tools(tools()).unwrap();
    chef.skills_mut().register(registered());
    let listing = chef.skills().listing();
    chef.set_system_prompt(vec![Message::system(format!(
        "You are a careful engineer.\n\n{listing}"
    ))]);
    chef
}

fn body(chef: &mut Chef, target: Target) -> String {
    String::from_utf8(chef.compile(target).unwrap().body).unwrap()
}

/// The compiled tool list: the bytes of the body's `tools` member.
/// The `release-notes` skill registered in `chef`, invoked for `version`.
fn release_notes(chef: &Chef, version: &str) -> Skill {
    chef.skills()
        .get("release-notes")
        .unwrap()
        .invoked(&[version])
}

/// `into` with `snapshot` restored, whose active skill must read `instructions`.
#[track_caller]
fn restored(
    mut into: Chef,
    snapshot: &chef::snapshot::Snapshot<chef::SessionState>,
    instructions: &str,
) -> Chef {
    into.restore(snapshot).unwrap();
    assert_eq!(into.skills().active().unwrap().instructions(), instructions);
    into
}

/// Routes `call` (a `load_skill` call, which is owned) and answers it.
fn load_skill(chef: &mut Chef, call: &ToolCall) -> chef::OwnedReply {
    let Routed::Owned(owned) = chef.route(call) else {
        panic!("load_skill is owned");
    };
    block_on(chef.handle_tool(&owned)).unwrap()
}

fn tool_bytes(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap();
    let tools = value
        .get("tools")
        .unwrap_or_else(|| panic!("no tools: {body}"));
    serde_json::to_string(tools).unwrap()
}

#[test]
fn a_directory_with_one_broken_skill_loads_the_rest_and_names_the_bad_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    write(root.path(), "code-review", REVIEW);
    write(root.path(), "release-notes", RELEASE);
    // Line 3 of the file holds the YAML error (line 1 is the fence).
    write(
        root.path(),
        "broken",
        "---\nname: broken\ndescription: \"unterminated\nwhen-to-use: never\n---\nbody\n",
    );
    write(
        root.path(),
        "bad-tools",
        "---\ndescription: x\nallowed-tools: {a: 1}\n---\nbody\n",
    );
    std::fs::write(root.path().join("README.md"), "not a skill folder").unwrap();

    let loaded = skills::load_dir(root.path());
    let names: Vec<&str> = loaded.skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["code-review", "release-notes"]);
    assert_eq!(loaded.problems.len(), 2, "{:?}", loaded.problems);
    let bad_tools = &loaded.problems[0];
    assert!(bad_tools.path().ends_with("bad-tools/SKILL.md"));
    assert_eq!(bad_tools.line(), Some(3));
    assert!(
        matches!(bad_tools.kind(), SkillErrorKind::InvalidField { field, .. } if field == "allowed-tools")
    );
    let broken = &loaded.problems[1];
    assert!(broken.path().ends_with("broken/SKILL.md"));
    assert!(
        matches!(broken.kind(), SkillErrorKind::Yaml { .. }),
        "{broken}"
    );
    assert_eq!(broken.line(), Some(3), "{broken}");
    let shown = broken.to_string();
    assert!(shown.contains("broken/SKILL.md:"), "{shown}");

    // The good ones are usable as loaded.
    let review = &loaded.skills[0];
    assert_eq!(
        review.when_to_use(),
        Some("When asked to review a diff or pull request.")
    );
    assert_eq!(review.allowed_tools(), ["read_file", "grep"]);
    assert_eq!(loaded.skills[1].arguments()[0].name, "version");
}

/// Two skill directories: a project's, with `code-review`, and a user's, with
/// `release-notes` and an older `code-review` (in folder `review`).
fn project_and_user() -> (tempfile::TempDir, tempfile::TempDir) {
    let (project, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(project.path(), "code-review", REVIEW);
    write(user.path(), "release-notes", RELEASE);
    write(
        user.path(),
        "review",
        "---\nname: code-review\ndescription: older\n---\nx",
    );
    (project, user)
}

#[test]
fn several_directories_rank_first_listed_first_and_report_the_hidden_skill() {
    let (project, user) = project_and_user();
    let loaded = skills::load_dirs([project.path(), user.path()]);
    let names: Vec<&str> = loaded.skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["code-review", "release-notes"]);
    assert_eq!(loaded.skills[0].description(), "Review a change for bugs.");
    assert_eq!(loaded.shadowed.len(), 1);
    assert_eq!(loaded.shadowed[0].name, "code-review");
    assert!(loaded.shadowed[0].hidden.starts_with(user.path()));
    assert!(loaded.shadowed[0].kept.starts_with(project.path()));
}

#[test]
fn paths_mix_skill_files_and_directories_first_listed_first() {
    let (project, user) = project_and_user();
    let file = project.path().join("code-review").join(skills::SKILL_FILE);
    let missing = project.path().join("gone").join(skills::SKILL_FILE);
    let loaded = skills::load_paths([file.as_path(), user.path(), missing.as_path()]);
    let names: Vec<&str> = loaded.skills.iter().map(Skill::name).collect();
    assert_eq!(names, ["code-review", "release-notes"]);
    assert_eq!(loaded.skills[0].description(), "Review a change for bugs.");
    assert_eq!(loaded.shadowed.len(), 1);
    assert!(loaded.shadowed[0].hidden.starts_with(user.path()));
    assert_eq!(loaded.problems.len(), 1);
    assert!(loaded.problems[0].path().starts_with(project.path()));
}

#[test]
fn arguments_render_positional_named_and_all_and_missing_ones_are_listed() {
    let skill = Skill::parse(
        "s/fix/SKILL.md",
        "---\narguments: [issue, branch]\n---\nFix #$0 on ${branch} ($ARGUMENTS). Cost: $$5. Keep $HOME and ${PATH}.",
    )
    .unwrap();
    let out = skill.render(&["42", "main"]);
    assert_eq!(
        out.text,
        "Fix #42 on main (42 main). Cost: $5. Keep $HOME and ${PATH}."
    );
    assert!(out.missing.is_empty());
    let out = skill.render(&["42"]);
    assert_eq!(
        out.text,
        "Fix #42 on  (42). Cost: $5. Keep $HOME and ${PATH}."
    );
    assert_eq!(out.missing, ["${branch}"]);
    assert_eq!(
        skill.invoked(&["1", "dev"]).instructions(),
        skill.render(&["1", "dev"]).text
    );
}

#[test]
fn activation_places_the_instructions_after_the_system_layers_on_every_target() {
    for target in Target::ALL {
        let mut chef = session(ChefConfig::default()).with_memory(Memory::new());
        chef.push(Message::user("Please review my change."));
        let plain = chef.compile(target).unwrap();
        assert_eq!(plain.meta.active_skill, None);
        chef.skills_mut().activate("code-review").unwrap();
        let payload = chef.compile(target).unwrap();
        assert_eq!(payload.meta.active_skill.as_deref(), Some("code-review"));
        let text = String::from_utf8(payload.body).unwrap();
        let skill_at = text
            .find("Active skill: code-review. Follow its instructions:")
            .unwrap_or_else(|| panic!("{target:?}: {text}"));
        let system_at = text.find("You are a careful engineer.").unwrap();
        let memory_at = text.find("You have a memory").unwrap();
        let user_at = text.find("Please review my change.").unwrap();
        assert!(
            system_at < skill_at && skill_at < memory_at,
            "{target:?}: {text}"
        );
        assert!(skill_at < user_at, "{target:?}: {text}");
        assert!(!text.contains("<skill_instructions"), "{target:?}");
        // Deactivated: gone.
        assert_eq!(
            chef.skills_mut().deactivate().unwrap().name(),
            "code-review"
        );
        let after = chef.compile(target).unwrap();
        assert_eq!(after.meta.active_skill, None);
        assert!(
            !String::from_utf8(after.body)
                .unwrap()
                .contains("Active skill")
        );
    }
}

#[test]
fn activation_in_the_tail_stitch_keeps_everything_before_the_last_user_turn() {
    let config = ChefConfig::default().with_skill_placement(SkillPlacement::Tail);
    for target in Target::ALL {
        let mut chef = session(config.clone());
        chef.push(Message::user("Notes for 2.0 please."));
        let before = body(&mut chef, target);
        let skill = release_notes(&chef, "2.0");
        chef.skills_mut().activate(skill).unwrap();
        let with = body(&mut chef, target);
        let stitched = "Notes for 2.0 please.\\n\\n<skill_instructions skill=\\\"release-notes\\\">\\nSummarise the changes of 2.0.\\n</skill_instructions>";
        assert!(with.contains(stitched), "{target:?}: {with}");
        // Only the tail changed: everything up to the user's text is the same bytes.
        let cut = before.find("Notes for 2.0 please.").unwrap();
        assert_eq!(with.get(..cut), before.get(..cut), "{target:?}");
        // Deterministic: a second session, the same bytes.
        let mut twin = session(config.clone());
        twin.push(Message::user("Notes for 2.0 please."));
        body(&mut twin, target);
        twin.skills_mut()
            .activate(chef.skills().active().unwrap().clone())
            .unwrap();
        assert_eq!(
            body(&mut twin, target),
            body(&mut chef, target),
            "{target:?}"
        );
    }
}

#[test]
fn an_unknown_skill_name_is_refused_with_the_registered_ones() {
    let mut chef = session(ChefConfig::default());
    match chef.skills_mut().activate("deploy") {
        Err(ChefError::UnknownSkill { name, available }) => {
            assert_eq!(name, "deploy");
            assert_eq!(available, ["code-review", "release-notes"]);
        }
        other => panic!("{other:?}"),
    }
    assert!(chef.skills().active().is_none());
}

#[test]
fn the_tool_list_is_byte_identical_before_and_after_registering_and_activating_skills() {
    for placement in [SkillPlacement::AfterSystem, SkillPlacement::Tail] {
        let config = ChefConfig::default()
            .with_skill_tool(true)
            .with_skill_placement(placement);
        for target in Target::ALL {
            let mut chef = Chef::new(config.clone());
            chef.register_tools(tools()).unwrap();
            chef.push(Message::user("hi"));
            let bare = tool_bytes(&body(&mut chef, target));
            assert!(bare.contains("load_skill"), "{target:?}: {bare}");
            chef.skills_mut().register(registered());
            let registered_tools = tool_bytes(&body(&mut chef, target));
            chef.skills_mut().activate("code-review").unwrap();
            let active = tool_bytes(&body(&mut chef, target));
            chef.skills_mut()
                .register(vec![Skill::new("other", "x").unwrap()]);
            chef.skills_mut().activate("other").unwrap();
            let replaced = tool_bytes(&body(&mut chef, target));
            assert_eq!(bare, registered_tools, "{target:?}");
            assert_eq!(bare, active, "{target:?}");
            assert_eq!(bare, replaced, "{target:?}");
            // The names live in the listing, never in the schema.
            assert!(!active.contains("code-review"), "{target:?}");
        }
    }
    // Off by default.
    let mut chef = session(ChefConfig::default());
    chef.push(Message::user("hi"));
    assert!(!tool_bytes(&body(&mut chef, Target::Anthropic)).contains("load_skill"));
    assert!(!chef.skills().listing().contains("load_skill"));
}

/// Session 40's context audit: with the tool off (not offered), a model that named it
/// anyway activated a skill. It is answered as `new_context` without a handoff is.
#[test]
fn load_skill_not_offered_loads_nothing() {
    let mut chef = session(ChefConfig::default());
    chef.push(Message::user("Review this."));
    body(&mut chef, Target::OpenAiChat);
    let call = ToolCall::new("c1", "load_skill", json!({"name": "code-review"}));
    let reply = load_skill(&mut chef, &call);
    assert!(reply.is_error);
    assert_eq!(
        reply.text,
        "Error: load_skill is not available: this session does not offer skills as a tool."
    );
    assert!(chef.skills().active().is_none());
}

#[test]
fn load_skill_activates_and_an_unknown_name_is_answered_with_the_available_ones() {
    let mut chef = session(ChefConfig::default().with_skill_tool(true));
    assert!(
        chef.skills()
            .listing()
            .contains("call load_skill with its name")
    );
    assert!(
        chef.skills()
            .listing()
            .contains("<skill name=\"code-review\">")
    );
    chef.push(Message::user("Review this."));
    body(&mut chef, Target::OpenAiChat);
    let call = ToolCall::new("c1", "load_skill", json!({"name": "nope"}));
    let reply = load_skill(&mut chef, &call);
    assert!(reply.is_error);
    assert_eq!(
        reply.text,
        "Error: there is no skill named \"nope\". Available skills: code-review, release-notes."
    );
    assert!(chef.skills().active().is_none());
    // Arguments as a JSON string, as some providers send them.
    let call = ToolCall::new("c2", "load_skill", json!("{\"name\": \"code-review\"}"));
    let reply = load_skill(&mut chef, &call);
    assert!(!reply.is_error, "{}", reply.text);
    assert_eq!(chef.skills().active().map(Skill::name), Some("code-review"));
    let missing = ToolCall::new("c3", "load_skill", json!({}));
    let reply = load_skill(&mut chef, &missing);
    assert!(reply.is_error && reply.text.contains("Available skills: code-review"));
    // A user tool cannot take the name.
    let mut other = Chef::new(ChefConfig::default());
    assert!(
        other
            .register_tools(vec![ToolDefinition::new(
                "load_skill",
                json!({"type": "object"})
            )])
            .is_err()
    );
}

#[test]
fn allowed_tools_prune_only_when_opted_in_and_the_change_is_announced() {
    for target in Target::ALL {
        // Off (the default): the skill's tools are information only.
        let mut off = session(ChefConfig::default());
        off.push(Message::user("Review it."));
        let all = wire_names(&mut off, target);
        off.skills_mut().activate("code-review").unwrap();
        assert_eq!(wire_names(&mut off, target), all, "{target:?}");

        // On: narrowed to read_file and grep, announced, and widened again on deactivation.
        let config = ChefConfig::default()
            .with_skill_pruning(true)
            .with_tool_change_announcements(true);
        let mut on = session(config);
        on.push(Message::user("Review it."));
        assert_eq!(wire_names(&mut on, target), all);
        on.skills_mut().activate("code-review").unwrap();
        let payload = on.compile(target).unwrap();
        let mut narrowed: Vec<&str> = payload.meta.wire_tools.iter().map(|n| n.as_str()).collect();
        narrowed.sort_unstable();
        assert_eq!(narrowed, ["grep", "read_file"], "{target:?}");
        let text = String::from_utf8(payload.body).unwrap();
        assert!(
            text.contains("Tools no longer available: deploy, git_log."),
            "{target:?}: {text}"
        );
        // Within the allowlist when both are set.
        on.tools_mut().set_allowlist(Some(["grep", "deploy"]));
        assert_eq!(wire_names(&mut on, target), ["grep"], "{target:?}");
        on.tools_mut().set_allowlist(None::<Vec<String>>);
        on.skills_mut().deactivate();
        let payload = on.compile(target).unwrap();
        assert_eq!(payload.meta.wire_tools.len(), all.len(), "{target:?}");
        assert!(
            String::from_utf8(payload.body)
                .unwrap()
                .contains("Tools now available: deploy, git_log, read_file.")
        );
    }
}

#[test]
fn snapshots_and_the_journal_carry_the_active_skill_and_a_fresh_session_compiles_the_same_bytes() {
    let config = ChefConfig::default().with_skill_pruning(true);
    for placement in [SkillPlacement::AfterSystem, SkillPlacement::Tail] {
        let config = config.clone().with_skill_placement(placement);
        for target in Target::ALL {
            let mut live = session(config.clone());
            live.push(Message::user("Notes for 3.1."));
            let invoked = release_notes(&live, "3.1");
            live.skills_mut().activate(invoked).unwrap();
            let (store, id, mut journal) = memory_journal("skills");
            for i in 0..3 {
                live.push(Message::assistant(format!("step {i}")));
                live.push(Message::user(format!("go on {i}")));
                body(&mut live, target);
                block_on(journal.save(&live)).unwrap();
                let snapshot = live.snapshot(None);

                // Registered in the receiving session: the rendering as it was activated
                // (arguments filled in) is kept, not the registered template.
                restored(
                    session(config.clone()),
                    &snapshot,
                    "Summarise the changes of 3.1.",
                );
                // Not registered: a stub with the persisted (rendered) instructions, and the
                // same next request as the live session.
                let mut fresh = restored(
                    Chef::new(config.clone()),
                    &snapshot,
                    "Summarise the changes of 3.1.",
                );
                let mut twin = live.fork();
                assert_eq!(
                    body(&mut fresh, target),
                    body(&mut twin, target),
                    "{target:?} {i}"
                );
                // Activating it again by name, though no skill of that name is registered
                // there, keeps it as it is; another name is still unknown.
                fresh.skills_mut().activate("release-notes").unwrap();
                assert!(fresh.skills_mut().activate("other").is_err());
                assert_eq!(
                    body(&mut fresh, target),
                    body(&mut twin, target),
                    "{target:?} {i}"
                );
            }
            let mut resumed = block_on(replayed(&store, &id, Chef::new(config.clone())));
            assert_eq!(
                resumed.skills().active().map(Skill::name),
                Some("release-notes")
            );
            assert_eq!(
                body(&mut resumed, target),
                body(&mut live, target),
                "{target:?}"
            );
            // Deactivation is journalled too.
            live.skills_mut().deactivate();
            block_on(journal.save(&live)).unwrap();
            let again = block_on(replayed(&store, &id, Chef::new(config.clone())));
            assert!(again.skills().active().is_none());
        }
    }
}

#[test]
fn snapshots_without_a_skill_say_nothing_and_old_ones_load() {
    let mut chef = session(ChefConfig::default());
    let text = String::from_utf8(chef::snapshot::to_vec(&chef.snapshot(None)).unwrap()).unwrap();
    assert!(!text.contains("\"skill\""), "{text}");
    chef.skills_mut().activate("code-review").unwrap();
    let text = String::from_utf8(chef::snapshot::to_vec(&chef.snapshot(None)).unwrap()).unwrap();
    assert!(
        text.contains(r#""skill":{"name":"code-review","instructions":"Read every changed file with read_file before judging.","allowed_tools":["read_file","grep"]}"#),
        "{text}"
    );
    // A snapshot of an earlier version has no such field: it restores with no skill.
    let mut other = session(ChefConfig::default());
    other.skills_mut().activate("release-notes").unwrap();
    let old = session(ChefConfig::default()).snapshot(None);
    other.restore(&old).unwrap();
    assert!(other.skills().active().is_none());
}

#[test]
fn an_unchanged_skill_keeps_the_cached_prefix_turn_after_turn() {
    for placement in [SkillPlacement::AfterSystem, SkillPlacement::Tail] {
        let mut chef = session(ChefConfig::default().with_skill_placement(placement));
        chef.skills_mut().activate("code-review").unwrap();
        let mut reused = false;
        for i in 0..12 {
            chef.push(Message::user(format!("turn {i}")));
            chef.push(Message::assistant(format!("answer {i}")));
            chef.push(Message::user(format!("more {i}")));
            let payload = chef.compile(Target::Anthropic).unwrap();
            reused |= payload.meta.reused_prefix;
            // Anthropic: the skill sits after the cached system text (after_system) or in the
            // tail, never before the first breakpoint.
            let text = String::from_utf8(payload.body).unwrap();
            let breakpoint = text.find("cache_control").unwrap();
            let skill = text.find("Read every changed file").unwrap();
            assert!(skill > breakpoint, "{placement:?}: {text}");
        }
        assert!(reused, "{placement:?}: the history prefix was never reused");
    }
}

#[test]
fn activation_is_an_event_and_a_bound_matching_no_tool_is_said_once() {
    let config = ChefConfig::default().with_skill_pruning(true);
    let mut chef = session(config);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let events = Arc::clone(&seen);
    let _sub = chef.subscribe(move |e| match e {
        chef::ChefEvent::SkillActivated { name } => {
            events.lock().unwrap().push(format!("+{name}"));
        }
        chef::ChefEvent::SkillDeactivated { name } => {
            events.lock().unwrap().push(format!("-{name}"));
        }
        _ => {}
    });
    chef.skills_mut().activate("code-review").unwrap();
    chef.skills_mut().activate("release-notes").unwrap();
    chef.skills_mut().deactivate();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "+code-review",
            "-code-review",
            "+release-notes",
            "-release-notes"
        ]
    );

    // A skill whose allowed tools name nothing registered prunes every flat tool: said once.
    let stray = Skill::new("stray", "Use the Bash tool.")
        .unwrap()
        .with_allowed_tools(["Bash(git status:*)"]);
    chef.skills_mut().activate(stray).unwrap();
    chef.push(Message::user("status?"));
    let payload = chef.compile(Target::Anthropic).unwrap();
    assert_notice(
        &payload,
        "skill \"stray\" allows only Bash, which name no registered tool",
    );
    let again = chef.compile(Target::Anthropic).unwrap();
    assert!(!again.notices.iter().any(|n| n.contains("stray")));
}

/// Issue 47, item 10: README's own example — a registered skill activated with arguments —
/// then a snapshot restore or a journal replay into a session that registers the same skill:
/// the next request is byte-identical to the live one on every target, in both placements
/// (the registered template `… of $0.` must not replace the saved rendering).
#[test]
fn an_invoked_skill_keeps_its_arguments_on_restore_and_replay_into_a_session_that_registers_it() {
    for placement in [SkillPlacement::AfterSystem, SkillPlacement::Tail] {
        let config = ChefConfig::default()
            .with_skill_pruning(true)
            .with_skill_placement(placement);
        for target in Target::ALL {
            let mut live = session(config.clone());
            live.push(Message::user("Release notes, please."));
            let invoked = release_notes(&live, "2.4");
            live.skills_mut().activate(invoked).unwrap();
            let (store, id, mut journal) = memory_journal("invoked");
            live.push(Message::assistant("Reading the log."));
            live.push(Message::user("Go on."));
            let before = body(&mut live, target);
            assert!(before.contains("Summarise the changes of 2.4."), "{before}");
            block_on(journal.save(&live)).unwrap();
            let snapshot = live.snapshot(None);

            let mut restored = restored(
                session(config.clone()),
                &snapshot,
                "Summarise the changes of 2.4.",
            );
            assert_eq!(
                body(&mut restored, target),
                before,
                "restore {placement:?} {target:?}"
            );

            let mut replayed = block_on(replayed(&store, &id, session(config.clone())));
            assert_eq!(
                body(&mut replayed, target),
                before,
                "replay {placement:?} {target:?}"
            );
            // The registered skill's own fields still describe it.
            assert_eq!(
                replayed.skills().active().unwrap().description(),
                "Write release notes."
            );
        }
    }
}

/// A path that is not a regular file is reported, not read: `/dev/zero` grew without end
/// and a FIFO with no writer blocked for ever; a file over the limit is refused unread.
#[cfg(unix)]
#[test]
fn devices_fifos_and_oversized_files_are_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = dir.path().join("big.md");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(skills::MAX_SKILL_FILE_BYTES + 1)
        .unwrap();
    let good = dir.path().join("good.md");
    std::fs::write(&good, REVIEW).unwrap();
    let loaded = skills::load_paths([
        Path::new("/dev/zero"),
        fifo.as_path(),
        big.as_path(),
        good.as_path(),
    ]);
    assert_eq!(loaded.skills.len(), 1, "{:?}", loaded.problems);
    assert_eq!(loaded.problems.len(), 3, "{:?}", loaded.problems);
    for problem in &loaded.problems {
        assert!(
            matches!(problem.kind(), SkillErrorKind::Io(e)
                if matches!(e.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData)),
            "{problem:?}"
        );
    }
}
