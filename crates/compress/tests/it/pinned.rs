//! `Options::with_pinned_codes`: a catalogue that changes keeps the codes of the tools that
//! stayed, and a code once issued never reaches another tool.

use std::collections::BTreeMap;

use chef_compress::{Compressed, Level, MapStyle, Options, Resolution, ResolveError, compress};
use chef_ir::ToolDefinition;
use proptest::prelude::*;
use serde_json::json;

use crate::{real_tools, tool};

fn codes(c: &Compressed) -> BTreeMap<String, String> {
    c.codes()
        .map(|(name, code)| (name.to_owned(), code.to_owned()))
        .collect()
}

fn named(names: &[&str]) -> Vec<ToolDefinition> {
    names
        .iter()
        .map(|n| tool(n, &format!("Does {n}."), json!({"type": "object"})))
        .collect()
}

fn level3(pins: &BTreeMap<String, String>) -> Options {
    Options::new()
        .with_level(Level::Three)
        .with_pinned_codes(pins.clone())
}

/// Pins from `(tool, code)` pairs.
fn pin_map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|&(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Asserts that calling `code` through the dispatcher is refused as an unknown code.
#[track_caller]
fn assert_unknown_code(c: &Compressed, code: &str) {
    match c.resolve("t", &json!({"f": code, "a": {}})) {
        Resolution::Error(ResolveError::UnknownCode { .. }) => {}
        other => panic!("{code}: {other:?}"),
    }
}

#[test]
fn added_and_removed_tools_leave_the_other_codes_where_they_were() {
    let before = compress(
        &named(&["files_read", "files_write", "git_push", "git_status"]),
        &level3(&BTreeMap::new()),
    )
    .unwrap();
    let old = codes(&before);
    assert_eq!(old["files_read"], "a0");
    assert_eq!(old["git_status"], "b1");

    // `files_delete` sorts first and `aws` is a namespace before both: without pins every
    // code would move.
    let after_tools = named(&["aws_list", "files_delete", "files_read", "git_status"]);
    let unpinned = codes(&compress(&after_tools, &level3(&BTreeMap::new())).unwrap());
    assert_ne!(unpinned["files_read"], "a0");

    let after = compress(&after_tools, &level3(&old)).unwrap();
    let new = codes(&after);
    assert_eq!(new["files_read"], "a0");
    assert_eq!(new["git_status"], "b1");
    // New tools take fresh codes: after the reserved ones, a new letter for a new namespace.
    assert_eq!(new["files_delete"], "a2");
    assert_eq!(new["aws_list"], "c0");
    // The removed tools' codes reach nothing now.
    for gone in ["a1", "b0"] {
        assert_unknown_code(&after, gone);
    }
    match after.resolve("t", &json!({"f": "a2", "a": {}})) {
        Resolution::Call { name, .. } => assert_eq!(name, "files_delete"),
        other => panic!("{other:?}"),
    }
    // The map lists the live tools in code order and nothing for the holes.
    assert_eq!(
        after
            .system()
            .lines()
            .filter(|l| l.starts_with(['a', 'b', 'c']) && l.contains('_'))
            .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>(),
        [
            "a0 files_read",
            "a2 files_delete",
            "b1 git_status",
            "c0 aws_list"
        ]
    );
}

#[test]
fn a_code_stays_reserved_while_its_tool_is_away_and_returns_with_it() {
    let tools = named(&["files_read", "files_write"]);
    let mut pins = codes(&compress(&tools, &level3(&BTreeMap::new())).unwrap());
    // files_write leaves; files_zap arrives: it must not take a1.
    let c = compress(&named(&["files_read", "files_zap"]), &level3(&pins)).unwrap();
    assert_eq!(c.code_for("files_zap").unwrap(), "a2");
    pins.extend(codes(&c));
    // files_write comes back: a1 again.
    let c = compress(
        &named(&["files_read", "files_write", "files_zap"]),
        &level3(&pins),
    )
    .unwrap();
    assert_eq!(codes(&c), pins);
}

#[test]
fn pins_that_cannot_hold_are_ignored_not_obeyed() {
    let tools = named(&["files_read", "git_push"]);
    let pins = pin_map(&[
        ("files_read", "not a code"),
        // A huge code: ignored rather than allocating a billion holes.
        ("git_push", "a999999999"),
    ]);
    let c = compress(&tools, &level3(&pins)).unwrap();
    assert_eq!(codes(&c)["files_read"], "a0");
    assert_eq!(codes(&c)["git_push"], "b0");

    // Two namespaces claiming one letter: the first (in sorted order) keeps it.
    let clash = pin_map(&[("files_read", "a0"), ("git_push", "a1")]);
    let c = compress(&tools, &level3(&clash)).unwrap();
    assert_eq!(codes(&c)["files_read"], "a0");
    assert_eq!(codes(&c)["git_push"], "b0");
    // git_push's pin a1 is reserved all the same: a new files tool does not take it.
    let c = compress(
        &named(&["files_read", "files_x", "git_push"]),
        &level3(&clash),
    )
    .unwrap();
    assert_eq!(codes(&c)["files_x"], "a2");
}

#[test]
fn a_pin_too_far_out_to_apply_is_still_never_given_to_another_tool() {
    // Three tools and two pins bound applied pins at 5: `a5` is not applied, but the
    // fresh codes after the reserved `a0`–`a4` would reach it, and must step over it.
    let tools = named(&["a_x", "a_y", "a_z"]);
    let pins = pin_map(&[("a_old1", "a4"), ("a_old2", "a5")]);
    let c = compress(&tools, &level3(&pins)).unwrap();
    let got = codes(&c);
    assert!(got.values().all(|code| code != "a5"), "{got:?}");
    assert_eq!(got["a_x"], "a6");
    assert_unknown_code(&c, "a5");
}

#[test]
fn pins_are_ignored_below_level_three_and_change_nothing_when_they_match() {
    let tools = real_tools();
    for style in [
        MapStyle::NameRequired,
        MapStyle::Distinct,
        MapStyle::Signature,
    ] {
        let plain = Options::new()
            .with_level(Level::Three)
            .with_map_style(style);
        let a = compress(&tools, &plain).unwrap();
        let b = compress(&tools, &plain.clone().with_pinned_codes(codes(&a))).unwrap();
        assert_eq!(a.tools(), b.tools());
        assert_eq!(a.system(), b.system());
    }
    let one = Options::new().with_level(Level::One);
    let a = compress(&tools, &one).unwrap();
    let pins = [("github_create_issue", "zz9")];
    let b = compress(&tools, &one.with_pinned_codes(pins)).unwrap();
    assert_eq!(a.tools(), b.tools());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sequence of catalogue changes, pinning every code ever issued: a tool's code never
    /// changes, and no code ever names two tools.
    #[test]
    fn codes_never_move_and_never_change_owner(
        steps in proptest::collection::vec(proptest::collection::btree_set(0usize..24, 0..12), 1..6)
    ) {
        let all = real_tools();
        let mut issued: BTreeMap<String, String> = BTreeMap::new();
        for step in steps {
            let tools: Vec<ToolDefinition> = step.iter().filter_map(|&i| all.get(i * 5).cloned()).collect();
            let c = compress(&tools, &level3(&issued)).unwrap();
            let now = codes(&c);
            prop_assert_eq!(now.len(), tools.len());
            for (name, code) in &now {
                if let Some(before) = issued.get(name) {
                    prop_assert_eq!(before, code);
                }
                prop_assert!(
                    issued.iter().all(|(other, c2)| other == name || c2 != code),
                    "{} took {}'s code {}", name, code, code
                );
                match c.resolve("t", &json!({"f": code, "a": {}})) {
                    Resolution::Call { name: got, .. } => prop_assert_eq!(&got, name),
                    Resolution::Error(ResolveError::InvalidArguments(e)) => prop_assert_eq!(e.tool.as_str(), name.as_str()),
                    other => prop_assert!(false, "{code}: {other:?}"),
                }
            }
            issued.extend(now);
        }
    }
}
