//! Property: compile → snapshot → save → load → restore → compile gives byte-identical
//! requests, whatever the session went through (history, announcements, blocklist, memory,
//! tool-change announcements, overflow bookkeeping, dynamic state), for every target.

use chef::{
    Channel, Chef, ChefConfig, HandoffBudget, OverflowConfig, ToolsMode,
    dynamic::Placement,
    memory::{Memory, SetOptions},
};
use chef_ir::{Message, Target, ToolDefinition};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Assistant(String),
    Announce(u8, String, u8),
    Retract(u8),
    Block(Vec<u8>),
    Remember(u8, String),
    Forget(u8),
    Usage(u64),
    State(String, bool),
    Compile(u8),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => ".{0,30}".prop_map(Op::User),
        3 => ".{0,30}".prop_map(Op::Assistant),
        1 => (0u8..4, ".{1,20}", 0u8..3).prop_map(|(i, t, c)| Op::Announce(i, t, c)),
        1 => (0u8..4).prop_map(Op::Retract),
        1 => proptest::collection::vec(0u8..6, 0..3).prop_map(Op::Block),
        1 => (0u8..4, ".{1,20}").prop_map(|(k, v)| Op::Remember(k, v)),
        1 => (0u8..4).prop_map(Op::Forget),
        1 => (0u64..5_000).prop_map(Op::Usage),
        1 => (".{0,20}", any::<bool>()).prop_map(|(t, s)| Op::State(t, s)),
        2 => (0u8..4).prop_map(Op::Compile),
        1 => Just(Op::Clear),
    ]
}

fn tools() -> Vec<ToolDefinition> {
    (0..6)
        .map(|i| {
            ToolDefinition::new(
                format!("tool_{i}"),
                json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
            )
            .with_description(format!("Tool number {i}."))
        })
        .collect()
}

fn config() -> ChefConfig {
    ChefConfig::default()
        .with_tools_mode(ToolsMode::Unified)
        .with_tool_change_announcements(true)
        .with_overflow(
            OverflowConfig::default()
                .with_context_window(3_000)
                .with_handoff(HandoffBudget::new(1_500).unwrap()),
        )
}

fn session() -> Chef {
    let mut chef = Chef::new(config()).with_memory(Memory::new());
    chef.register_tools(tools()).unwrap();
    chef.set_system_prompt(vec![Message::system("You help.")]);
    chef
}

fn target(i: u8) -> Target {
    Target::ALL[usize::from(i) % Target::ALL.len()]
}

fn apply(chef: &mut Chef, op: &Op) {
    match op {
        Op::User(t) => {
            chef.push(Message::user(t.clone()));
        }
        Op::Assistant(t) => {
            chef.push(Message::assistant(t.clone()));
        }
        Op::Announce(i, t, c) => {
            let channel = [Channel::UserTail, Channel::System, Channel::Auto][usize::from(*c)];
            chef.announce(format!("a{i}"), t.clone(), channel);
        }
        Op::Retract(i) => {
            chef.retract_announcement(&format!("a{i}"));
        }
        Op::Block(names) => {
            chef.tools_mut()
                .set_blocked(names.iter().map(|n| format!("tool_{n}")));
        }
        Op::Remember(k, v) => {
            let _ = chef
                .memory_mut()
                .unwrap()
                .set(&format!("k{k}"), v.clone(), SetOptions::new());
        }
        Op::Forget(k) => {
            chef.memory_mut().unwrap().delete(&format!("k{k}"));
        }
        Op::Usage(n) => {
            chef.report_token_usage(*n);
        }
        Op::State(t, system) => {
            let placement = if *system {
                Placement::System
            } else {
                Placement::LastUser
            };
            chef.layers_mut()
                .set_dynamic_state(&json!({"note": t, "n": t.len()}), placement)
                .unwrap();
        }
        Op::Compile(t) => {
            chef.compile(target(*t)).unwrap();
        }
        Op::Clear => {
            chef.clear_history();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn save_load_restore_gives_the_same_next_request(
        ops in proptest::collection::vec(op(), 0..30),
        last in 0u8..4,
    ) {
        let mut chef = session();
        for op in &ops {
            apply(&mut chef, op);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json");
        chef.save(&path, Some("prop")).unwrap();
        // `save` writes from the live session without copying it: the same bytes as the
        // owned snapshot.
        let owned = chef::snapshot::to_vec(&chef.snapshot(Some("prop"))).unwrap();
        prop_assert_eq!(std::fs::read(&path).unwrap(), owned);
        // A fresh session parses the snapshot's tools; one with the same tools registered
        // keeps its own (the bytes match) and parses nothing.
        let mut other = Chef::new(config()).with_memory(Memory::new());
        other.load(&path).unwrap();
        let mut warm = session();
        warm.load(&path).unwrap();
        let target = target(last);
        let a = chef.compile(target).unwrap().body;
        let b = other.compile(target).unwrap().body;
        prop_assert!(a == b, "{}\n!=\n{}", String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        prop_assert_eq!(&warm.compile(target).unwrap().body, &a);
        // And the turn after, too.
        chef.push(Message::user("again"));
        other.push(Message::user("again"));
        prop_assert_eq!(chef.compile(target).unwrap().body, other.compile(target).unwrap().body);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The journal replays to the state a snapshot of the live session holds, whatever ran
    /// between saves (appends, rewrites, registry-free state changes, compactions every few
    /// records), and the resumed session compiles the live session's next request.
    #[test]
    fn a_journal_replays_to_the_live_state_after_every_save(
        ops in proptest::collection::vec((op(), any::<bool>()), 0..30),
        max_records in 0u64..4,
        last in 0u8..4,
    ) {
        use std::sync::Arc;
        use chef::snapshot::{self, journal::{self, CompactPolicy, Journal}};
        use chef::store::{MemoryBackend, StorageBackend, StoreKey};

        let backend: Arc<dyn StorageBackend> = Arc::new(MemoryBackend::new());
        let id = StoreKey::new("prop/session").unwrap();
        let policy = CompactPolicy::default().with_max_records(max_records);
        let mut journal = Journal::new(Arc::clone(&backend), id.clone()).with_policy(policy);
        let mut chef = session();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        for (op, save) in &ops {
            apply(&mut chef, op);
            if *save {
                rt.block_on(journal.save(&chef)).unwrap();
                let replayed = rt.block_on(journal::read(backend.as_ref(), &id)).unwrap().unwrap();
                let want = snapshot::to_vec(&chef.snapshot(None)).unwrap();
                let got = snapshot::to_vec(&replayed.snapshot).unwrap();
                prop_assert!(want == got, "{}\n!=\n{}", String::from_utf8_lossy(&want), String::from_utf8_lossy(&got));
            }
        }
        rt.block_on(journal.save(&chef)).unwrap();
        let mut other = Chef::new(config()).with_memory(Memory::new());
        rt.block_on(Journal::new(Arc::clone(&backend), id.clone()).load(&mut other)).unwrap().unwrap();
        let target = target(last);
        prop_assert_eq!(chef.compile(target).unwrap().body, other.compile(target).unwrap().body);
        chef.push(Message::user("again"));
        other.push(Message::user("again"));
        prop_assert_eq!(chef.compile(target).unwrap().body, other.compile(target).unwrap().body);
    }
}
