//! Skills from SKILL.md files: a directory loaded with one broken file beside it, the
//! listing in the system prompt, the model loading a skill through the `load_skill` tool,
//! the skill's `allowed-tools` narrowing the tools (opted in), and a snapshot that a fresh
//! session resumes byte for byte.
//!
//! Run with `cargo run -p chef-examples --example skills`. Offline: the "model" is
//! scripted. `cargo test -p chef-examples` runs it too and fails if anything it shows stops
//! holding. The skills are in `examples/skills/` (three folders, one `SKILL.md` each).
//!
//! What it shows, each step checked:
//! 1. `skills::load_dirs`: the example's skills first, then a second directory holding a
//!    broken file and an older copy of one skill: the broken file is reported with its
//!    path and line, the older copy as hidden, and the rest load.
//! 2. `skills().listing()` goes into the system prompt once; `load_skill` is on the tool list
//!    from the first turn (a setting), with a schema that names no skill.
//! 3. The model asks for a skill that does not exist and is told which ones do; then it
//!    loads `release-notes`: its instructions go into the tail, the payload names it, and
//!    the tools narrow to its `allowed-tools` (announced).
//! 4. The host activates the same skill with arguments filled in (`Skill::invoked`); a
//!    snapshot restored into a fresh session compiles the same next request on every
//!    target.

#[macro_use]
mod common;

use std::path::Path;

use chef::{
    Chef, ChefConfig, Payload, Routed,
    skills::{self, SkillPlacement},
};
use chef_ir::{Message, Target, ToolCall, ToolDefinition};
use serde_json::json;

use common::{Error, ensure};

fn tools() -> Vec<ToolDefinition> {
    [
        ("git_log", "List commits between two refs."),
        ("read_file", "Read a file of the repository."),
        ("grep", "Search the repository."),
        ("run_tests", "Run the test suite."),
        ("deploy", "Deploy a version to production."),
    ]
    .into_iter()
    .map(|(name, description)| {
        ToolDefinition::new(
            name,
            json!({"type": "object", "properties": {"arg": {"type": "string"}}}),
        )
        .with_description(description)
    })
    .collect()
}

fn config() -> ChefConfig {
    ChefConfig::default()
        .with_skill_tool(true)
        .with_skill_pruning(true)
        .with_skill_placement(SkillPlacement::Tail)
        .with_tool_change_announcements(true)
}

/// Sends a `load_skill` call through the router and the owned-tool handler.
fn call_load_skill(chef: &mut Chef, id: &str, name: &str) -> Result<(String, bool), Error> {
    let call = ToolCall::new(id, "load_skill", json!({ "name": name }));
    let Routed::Owned(owned) = chef.route(&call) else {
        return Err("load_skill is answered by chef".into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let reply = runtime.block_on(chef.handle_tool(&owned))?;
    chef.push(Message::assistant_with(vec![chef_ir::Content::ToolCall(
        call,
    )]));
    chef.push(Message::tool_results(vec![if reply.is_error {
        chef_ir::ToolResult::error(id, reply.text.clone())
    } else {
        chef_ir::ToolResult::text(id, reply.text.clone())
    }]));
    Ok((reply.text, reply.is_error))
}

/// Runs the example; returns what it printed.
/// The names of the tools a compile sent.
fn wire_names(payload: &Payload) -> Vec<String> {
    payload
        .meta
        .wire_tools
        .iter()
        .map(|n| n.to_string())
        .collect()
}

fn run() -> Result<Vec<String>, Error> {
    let mut log = Vec::new();

    // 1. Two directories: ours first (it wins a name clash), then one with problems.
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let theirs = tempfile::tempdir()?;
    for (folder, text) in [
        (
            "code-review",
            "---\nname: code-review\ndescription: An older review skill.\n---\nLook it over.",
        ),
        (
            "broken",
            "---\nname: broken\ndescription: \"never closed\nallowed-tools: grep\n---\nbody",
        ),
    ] {
        std::fs::create_dir_all(theirs.path().join(folder))?;
        std::fs::write(theirs.path().join(folder).join("SKILL.md"), text)?;
    }
    let loaded = skills::load_dirs([ours.as_path(), theirs.path()]);
    let names: Vec<&str> = loaded.skills.iter().map(|s| s.name()).collect();
    log.push(format!("loaded: {}", names.join(", ")));
    ensure(
        names == ["code-review", "incident-triage", "release-notes"],
        "three skills load",
    )?;
    for problem in &loaded.problems {
        log.push(format!("problem: {problem}"));
    }
    ensure(
        loaded.problems.len() == 1 && loaded.problems.first().and_then(|p| p.line()) == Some(3),
        "the broken file is reported at line 3",
    )?;
    for hidden in &loaded.shadowed {
        log.push(format!(
            "hidden: {} at {} (kept {})",
            hidden.name,
            hidden.hidden.display(),
            hidden.kept.display()
        ));
    }
    ensure(
        loaded.shadowed.len() == 1,
        "the older code-review is hidden",
    )?;

    // 2. The session: the listing in the system prompt, load_skill on from the start.
    let mut chef = Chef::new(config());
    chef.register_tools(tools())?;
    chef.skills_mut().register(loaded.skills);
    let system = format!(
        "You maintain a Rust service.\n\n{}",
        chef.skills().listing()
    );
    chef.set_system_prompt(vec![Message::system(system.clone())]);
    chef.push(Message::user("Write the release notes for 2.4."));
    let first = chef.compile(Target::Anthropic)?;
    let first_names = wire_names(&first);
    log.push(format!("turn 1 tools: {}", first_names.join(", ")));
    ensure(
        first_names.iter().any(|n| n == "load_skill"),
        "load_skill is on",
    )?;

    // 3. The model asks for a skill by a wrong name, then the right one.
    let (reply, is_error) = call_load_skill(&mut chef, "c1", "changelog")?;
    log.push(format!("load_skill(changelog): {reply}"));
    ensure(
        is_error && reply.contains("code-review, incident-triage, release-notes"),
        "an unknown name is answered with the names there are",
    )?;
    let (reply, is_error) = call_load_skill(&mut chef, "c2", "release-notes")?;
    log.push(format!("load_skill(release-notes): {reply}"));
    ensure(!is_error, "release-notes loads")?;
    let second = chef.compile(Target::Anthropic)?;
    let second_names = wire_names(&second);
    log.push(format!(
        "turn 2: active skill {:?}, tools {}",
        second.meta.active_skill,
        second_names.join(", ")
    ));
    ensure(
        second.meta.active_skill.as_deref() == Some("release-notes"),
        "the payload names the skill",
    )?;
    ensure(
        !second_names.iter().any(|n| n == "deploy"),
        "allowed-tools narrowed the tools",
    )?;
    let body = String::from_utf8(second.body)?;
    ensure(
        body.contains("<skill_instructions skill=\\\"release-notes\\\">"),
        "the instructions are in the tail",
    )?;
    ensure(
        body.contains("Tools no longer available: deploy, grep, run_tests."),
        "the narrowing is announced",
    )?;

    // 4. The host fills the arguments in; a snapshot resumes in a fresh session.
    let invoked = chef
        .skills()
        .get("release-notes")
        .ok_or("registered")?
        .invoked(&["2.4", "end-user"]);
    ensure(
        invoked
            .instructions()
            .starts_with("# Release notes for 2.4"),
        "arguments are filled in",
    )?;
    chef.skills_mut().activate(invoked)?;
    for target in Target::ALL {
        let mut fresh = Chef::new(config());
        fresh.restore(&chef.snapshot(None))?;
        let mut live = chef.fork();
        let (a, b) = (live.compile(target)?.body, fresh.compile(target)?.body);
        ensure(
            a == b,
            format!("{target:?}: the fresh session sends the same bytes"),
        )?;
        log.push(format!(
            "{target:?}: resumed from a snapshot, same {} bytes",
            a.len()
        ));
    }
    Ok(log)
}

fn main() -> Result<(), Error> {
    common::print_log(&run()?);
    Ok(())
}

log_test!(
    skills_load_activate_narrow_and_resume,
    [
        "loaded: code-review, incident-triage, release-notes",
        "problem: ",
        "Gemini: resumed from a snapshot",
    ]
);
