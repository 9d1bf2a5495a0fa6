//! Lookalike diagnostics (spec §3.4.5, checklist 66–71).

use std::collections::HashMap;

use chef_compress::{Level, MapStyle};
use serde_json::json;

use crate::{at, real_tools, styled, tool};

fn manage(n: usize) -> Vec<chef_ir::ToolDefinition> {
    (0..n)
        .map(|i| {
            tool(
                &format!("manage_thing{i}"),
                "Manage a thing.",
                json!({"type": "object", "properties": {"operation": {"type": "string", "enum": [format!("op{i}")]}}, "required": ["operation"]}),
            )
        })
        .collect()
}

#[test]
fn identical_required_lists_are_counted_as_lookalikes() {
    let c = at(&manage(15), Level::Three);
    assert_eq!(c.stats().ambiguous_map_lines, Some(15));
    assert_eq!(c.stats().largest_lookalike_group, Some(15));
}

#[test]
fn distinct_required_lists_are_not() {
    let tools: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|p| {
            tool(
                &format!("x_{p}"),
                "",
                json!({"properties": {*p: {}}, "required": [*p]}),
            )
        })
        .collect();
    let c = at(&tools, Level::Three);
    assert_eq!(c.stats().ambiguous_map_lines, Some(0));
    assert_eq!(c.stats().largest_lookalike_group, Some(1));
}

#[test]
fn lookalike_stats_are_absent_below_level_3() {
    for level in [Level::Zero, Level::One, Level::Two] {
        let c = at(&manage(3), level);
        assert_eq!(c.stats().ambiguous_map_lines, None);
        assert_eq!(c.stats().largest_lookalike_group, None);
        let json = serde_json::to_value(c.stats()).unwrap();
        assert!(json.get("ambiguous_map_lines").is_none());
    }
}

#[test]
fn the_signature_style_tells_enum_values_apart() {
    let tools = manage(3);
    let named = at(&tools, Level::Three);
    let sig = styled(&tools, MapStyle::Signature);
    assert_eq!(named.stats().ambiguous_map_lines, Some(3));
    assert_eq!(sig.stats().ambiguous_map_lines, Some(0));
}

#[test]
fn lookalike_stats_match_a_recount_from_the_rendered_map() {
    for style in MapStyle::ALL {
        let c = styled(&real_tools(), style);
        let mut groups: HashMap<String, usize> = HashMap::new();
        let body_of = |line: &str| -> String {
            match style {
                MapStyle::Signature => line[line.find('(').unwrap()..].to_owned(),
                _ => line.splitn(3, ' ').nth(2).unwrap_or("").to_owned(),
            }
        };
        for line in c
            .system()
            .lines()
            .skip(1)
            .take_while(|l| *l != "</toolmap>")
        {
            *groups.entry(body_of(line)).or_default() += 1;
        }
        let ambiguous: usize = groups.values().filter(|&&n| n >= 2).sum();
        let largest = groups
            .values()
            .copied()
            .filter(|&n| n >= 2)
            .max()
            .unwrap_or(1);
        assert_eq!(c.stats().ambiguous_map_lines, Some(ambiguous), "{style}");
        assert_eq!(c.stats().largest_lookalike_group, Some(largest), "{style}");
    }
}

#[test]
fn real_corpus_lookalikes_match_the_reference_figures() {
    let c = at(&real_tools(), Level::Three);
    assert_eq!(c.stats().ambiguous_map_lines, Some(101));
    assert_eq!(c.stats().largest_lookalike_group, Some(66));
    let sig = styled(&real_tools(), MapStyle::Signature);
    assert_eq!(sig.stats().ambiguous_map_lines, Some(56));
    assert_eq!(sig.stats().largest_lookalike_group, Some(12));
}
