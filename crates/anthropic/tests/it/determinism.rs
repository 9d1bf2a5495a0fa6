//! Identical input gives identical bytes: twice in one process, and across processes.

use chef_ir::{NameRule, ToolName, WireNames};

use crate::{
    child::{child_output, print_for_parent},
    compiled, conversation, real_tools,
};

fn fixture_bytes() -> Vec<u8> {
    let mut request = conversation();
    request.tools.extend(real_tools());
    compiled(&request).to_vec().unwrap()
}

#[test]
fn the_same_request_compiled_twice_gives_identical_bytes() {
    assert_eq!(fixture_bytes(), fixture_bytes());
}

const CHILD: &str = "CHEF_ANTHROPIC_DETERMINISM_CHILD";

/// Run by `two_processes_give_identical_bytes` in a child process.
#[test]
#[ignore = "child half of two_processes_give_identical_bytes"]
fn child_prints_fixture_bytes() {
    print_for_parent(CHILD, &String::from_utf8(fixture_bytes()).unwrap());
}

fn child_bytes() -> String {
    child_output("determinism::child_prints_fixture_bytes", CHILD)
}

#[test]
fn two_processes_give_identical_bytes() {
    let here = String::from_utf8(fixture_bytes()).unwrap();
    let first = child_bytes();
    let second = child_bytes();
    assert_eq!(first, here);
    assert_eq!(second, here);
}

#[test]
fn wire_names_do_not_depend_on_tool_order() {
    let tools = real_tools();
    let mut names: Vec<ToolName> = tools.iter().map(|t| t.name.clone()).collect();
    names.push("triangle_properties.get".into());
    names.push("triangle properties get".into());
    names.push("triangle_properties_get".into());
    let forward = WireNames::new(&names, NameRule::ANTHROPIC);
    names.reverse();
    let mid = names.len() / 2;
    names.rotate_left(mid);
    let shuffled = WireNames::new(&names, NameRule::ANTHROPIC);
    assert_eq!(forward, shuffled);
    assert!(!forward.is_identity());
}
