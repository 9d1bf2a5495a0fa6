//! Issue 21's features together across a process boundary: a session with an offload
//! policy (one result written, one still pending), an active skill (in the tail, pruning
//! to its allowed tools, with `load_skill` offered), an output guardrail, a prefill, memory,
//! announcements and subscribed hooks is saved — to a snapshot file and to a journal in a
//! file-system store — and a new process resumes each and compiles the next request on
//! every target: byte for byte the request the first process compiles.
//!
//! The child is this test binary again, filtered to the ignored `resume_all_child` entry
//! point, with `CHEF_RESUME_ALL_DIR` naming the directory the parent wrote.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use chef::{
    Chef, ChefConfig, ToolsMode,
    guardrail::Guardrail,
    memory::{Memory, SetOptions},
    offload::{Keep, OffloadPolicy},
    skills::{Skill, SkillPlacement},
    snapshot::journal::Journal,
    store::{FsBackend, StorageBackend},
};
use chef_ir::{Content, Message, Target, ToolCall, ToolResult};
use serde_json::json;

use crate::child::assert_succeeded;
use crate::support::{bare_runtime, child_dir, child_test, key, two_tools};

const CHILD_ENV: &str = "CHEF_RESUME_ALL_DIR";

fn config() -> ChefConfig {
    ChefConfig::default()
        .with_tools_mode(ToolsMode::Unified)
        .with_skill_placement(SkillPlacement::Tail)
        .with_skill_tool(true)
        .with_skill_pruning(true)
}

/// The skills both processes register (from a directory the parent wrote).
fn skills(dir: &Path) -> Vec<Skill> {
    let loaded = chef::skills::load_dir(dir.join("skills"));
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    loaded.skills
}

fn store(dir: &Path) -> Arc<dyn StorageBackend> {
    Arc::new(FsBackend::open(dir.join("store")).unwrap())
}

fn log(tag: &str) -> String {
    (0..4_000)
        .map(|i| format!("{tag} {i} GET /items/{i} 200\n"))
        .collect()
}

/// What both processes do after the resume: one more user turn.
fn next_turn(chef: &mut Chef) {
    chef.push(Message::user("So which pool was exhausted?"));
}

fn body_file(dir: &Path, how: &str, target: Target) -> std::path::PathBuf {
    dir.join(format!("{how}-{target:?}.bin"))
}

/// The child's entry point; a no-op unless the parent test started this process.
#[test]
#[ignore = "entry point of the process that resume_all::everything_active_resumes_byte_identical_in_a_new_process spawns"]
fn resume_all_child() {
    let Some(dir) = child_dir(CHILD_ENV) else {
        return;
    };
    bare_runtime().block_on(async {
        for how in ["file", "journal"] {
            for target in Target::ALL {
                let mut chef = Chef::new(config()).with_store(store(&dir));
                chef.skills_mut().register(skills(&dir));
                if how == "file" {
                    chef.load(dir.join("session.json")).unwrap();
                } else {
                    Journal::new(store(&dir), key("s1"))
                        .load(&mut chef)
                        .await
                        .unwrap()
                        .unwrap();
                }
                assert!(chef.offloads().policy().is_some());
                assert_eq!(chef.offloads().pending().len(), 1);
                assert!(chef.layers().guardrail().is_some());
                assert_eq!(chef.layers().prefill(), Some("{"));
                assert_eq!(chef.skills().active().map(Skill::name), Some("triage"));
                next_turn(&mut chef);
                let payload = chef.compile_async(target).await.unwrap();
                let expected = std::fs::read(body_file(&dir, how, target)).unwrap();
                assert!(
                    payload.body == expected,
                    "{how} {target:?}: the resumed request differs\n{}\n{}",
                    String::from_utf8_lossy(&payload.body),
                    String::from_utf8_lossy(&expected)
                );
                // The pending result was written by this process and reads back.
                assert!(chef.offloads().pending().is_empty());
            }
        }
    });
}

#[test]
fn everything_active_resumes_byte_identical_in_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let skill_dir = dir.path().join("skills/triage");
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(
        skill_dir.join("SKILL.md"),
        "---\nname: triage\ndescription: Triage an incident.\nallowed-tools: weather_now\n---\n\
         Read the newest log first; name the failing component.\n",
    )
    .unwrap();
    let runtime = bare_runtime();
    runtime.block_on(async {
        let mut memory = Memory::new();
        memory
            .set("oncall", "pager rotation: dana", SetOptions::new())
            .unwrap();
        let mut chef = Chef::new(config())
            .with_store(store(dir.path()))
            .with_memory(memory);
        let compiles = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&compiles);
        let _hook = chef.on_compiled(move |_| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
        chef.register_tools(two_tools()).unwrap();
        chef.skills_mut().register(skills(dir.path()));
        chef.set_system_prompt(vec![Message::system(format!(
            "You are on call.\n\n{}",
            chef.skills().listing()
        ))]);
        chef.skills_mut().activate("triage").unwrap();
        chef.offloads_mut()
            .set_policy(Some(OffloadPolicy::chars(4_000).with_keep(
                Keep::HeadTail {
                    head: 400,
                    tail: 200,
                },
            )));
        chef.layers_mut()
            .set_guardrail(Some(
                Guardrail::json(json!({
                    "type": "object",
                    "properties": {"pool": {"type": "string"}},
                    "required": ["pool"]
                }))
                .unwrap(),
            ))
            .set_prefill(Some("{"));
        chef.announce("deploy", "A deploy is running.", chef::Channel::UserTail);
        chef.push(Message::user("Why is the API slow?"));
        for (i, tag) in ["first", "second"].into_iter().enumerate() {
            let id = format!("c{i}");
            chef.push(Message::assistant_with(vec![Content::ToolCall(
                ToolCall::new(id.as_str(), "weather_now", json!({})),
            )]));
            chef.push(Message::tool_results(vec![ToolResult::text(
                id.as_str(),
                log(tag),
            )]));
            if i == 0 {
                // The first result is written; the second stays pending in the saves.
                chef.compile_async(Target::Anthropic).await.unwrap();
            }
        }
        assert_eq!(chef.offloads().pending().len(), 1);
        chef.save(dir.path().join("session.json"), None).unwrap();
        Journal::new(store(dir.path()), key("s1"))
            .save(&chef)
            .await
            .unwrap();
        // The next request in this process, for each resume path and target.
        for how in ["file", "journal"] {
            for target in Target::ALL {
                let mut live = chef.fork();
                next_turn(&mut live);
                let payload = live.compile_async(target).await.unwrap();
                let text = String::from_utf8_lossy(&payload.body);
                assert!(text.contains("name the failing component"), "{target:?}");
                assert!(text.contains("Tool result offloaded"), "{target:?}");
                assert_eq!(payload.meta.active_skill.as_deref(), Some("triage"));
                std::fs::write(body_file(dir.path(), how, target), &payload.body).unwrap();
            }
        }
        assert!(compiles.load(std::sync::atomic::Ordering::Relaxed) >= 1);
    });
    let out = child_test("resume_all::resume_all_child", CHILD_ENV, dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_succeeded(&out);
}
