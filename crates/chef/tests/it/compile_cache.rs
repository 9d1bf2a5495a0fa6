//! Compile caches (the tool selection, the lent wire tool list) never change a byte: over
//! 50 turns with changing announcements, memory, blocklist and history, each compile of a
//! long-lived session equals the compile of a fresh session restored from the same state.

#[path = "../../benches/support/session200.rs"]
#[allow(dead_code, reason = "shared with the bench and the example")]
mod support;

use chef::{Channel, Chef, ChefConfig, MemoryPlacement, memory::SetOptions};
use chef_ir::{Message, Target};

fn fresh_compile(chef: &Chef, config: ChefConfig, target: Target) -> Vec<u8> {
    let mut fresh = Chef::new(config).with_memory(support::memory());
    fresh.restore(&chef.snapshot(None)).unwrap();
    fresh.compile(target).unwrap().body
}

fn turns(config: ChefConfig, turns: usize) {
    for target in Target::ALL {
        let mut chef = support::session(config.clone());
        for turn in 0..turns {
            chef.push(Message::user(format!("Turn {turn}: and the next partner?")));
            match turn % 5 {
                0 => {
                    chef.announce("clock", format!("Turn {turn} clock."), Channel::Auto);
                }
                1 => {
                    chef.memory_mut()
                        .unwrap()
                        .set(
                            &format!("turn/{turn}"),
                            format!("noted at turn {turn}"),
                            SetOptions::new(),
                        )
                        .unwrap();
                }
                2 => {
                    chef.retract_announcement("env");
                    chef.set_blocked_tools([format!("tool_{turn}")]);
                }
                3 => {
                    chef.announce("env", format!("cwd {turn}"), Channel::System);
                }
                _ => {}
            }
            let expected = fresh_compile(&chef, config.clone(), target);
            let body = chef.compile(target).unwrap().body;
            assert!(
                body == expected,
                "{target:?} turn {turn}: cached compile differs from a fresh one"
            );
            chef.push(Message::assistant(format!("Turn {turn} answered.")));
        }
    }
}

#[test]
fn cached_compiles_equal_fresh_compiles_over_50_turns() {
    turns(ChefConfig::default(), 50);
}

#[test]
fn cached_compiles_equal_fresh_compiles_with_tail_memory_and_tool_announcements_over_10_turns() {
    turns(
        ChefConfig::default()
            .with_memory_placement(MemoryPlacement::BeforeHistoryTail)
            .with_tool_change_announcements(true),
        10,
    );
}
