//! The `distinct` map style (issue 5): no two map lines alike, words from the tool itself.

use std::collections::{HashMap, HashSet};

use chef_compress::{MapStyle, compress};
use chef_ir::ToolDefinition;
use serde_json::{Value, json};

use crate::{real_tools, shuffled, styled, synthetic_tools, three, tool};

fn distinct(tools: &[ToolDefinition]) -> chef_compress::Compressed {
    styled(tools, MapStyle::Distinct)
}

fn map_lines(system: &str) -> Vec<&str> {
    system
        .lines()
        .skip(1)
        .take_while(|l| *l != "</toolmap>")
        .collect()
}

/// Every word a tool could honestly carry, collected independently of the crate: the
/// description's alphanumeric runs (lowercased), and, anywhere in the schema, property
/// names, string enum values and type names.
fn own_words(t: &ToolDefinition) -> HashSet<String> {
    fn walk(v: &Value, out: &mut HashSet<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                for key in ["enum", "type"] {
                    match map.get(key) {
                        Some(Value::String(s)) => {
                            out.insert(s.clone());
                        }
                        Some(Value::Array(items)) => {
                            out.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
                        }
                        _ => {}
                    }
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out: HashSet<String> = t
        .description
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
        .collect();
    walk(&t.input_schema, &mut out);
    out
}

fn assert_traceable(tools: &[ToolDefinition]) -> usize {
    let c = distinct(tools);
    let by_name: HashMap<&str, &ToolDefinition> =
        tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut added = 0;
    for line in map_lines(c.system()) {
        let name = line.split(' ').nth(1).unwrap();
        let t = by_name[name];
        let Some((_, words)) = line.split_once(" ~ ") else {
            continue;
        };
        let own = own_words(t);
        for word in words.split(' ') {
            assert!(
                own.contains(word),
                "{word:?} on {line:?} is not from {name}'s own text"
            );
            added += 1;
        }
    }
    added
}

#[test]
fn every_added_word_comes_from_the_tools_own_description_or_schema() {
    assert!(assert_traceable(&real_tools()) > 0);
    assert!(assert_traceable(&synthetic_tools()) > 0);
}

#[test]
fn no_map_line_is_ambiguous_on_the_real_and_synthetic_corpora() {
    for tools in [real_tools(), synthetic_tools()] {
        let c = distinct(&tools);
        assert_eq!(c.stats().ambiguous_map_lines, Some(0));
        assert_eq!(c.stats().largest_lookalike_group, Some(1));
        assert_eq!(c.stats().map_style, MapStyle::Distinct);
    }
}

#[test]
fn lines_start_from_the_default_style_and_only_lookalikes_grow() {
    let tools = real_tools();
    let plain = compress(&tools, &three()).unwrap();
    let c = distinct(&tools);
    let (plain_lines, lines) = (map_lines(plain.system()), map_lines(c.system()));
    assert_eq!(plain_lines.len(), lines.len());
    let mut bodies: HashMap<&str, usize> = HashMap::new();
    for line in &plain_lines {
        *bodies
            .entry(line.splitn(3, ' ').nth(2).unwrap_or(""))
            .or_default() += 1;
    }
    for (before, after) in plain_lines.iter().zip(&lines) {
        let body = before.splitn(3, ' ').nth(2).unwrap_or("");
        if bodies[body] == 1 {
            assert_eq!(before, after, "a unique line is left alone");
        } else {
            let words = after
                .strip_prefix(before)
                .unwrap()
                .strip_prefix(" ~ ")
                .unwrap();
            assert!(!words.is_empty(), "{after}");
        }
    }
}

#[test]
fn shuffled_input_gives_the_same_distinct_map() {
    for tools in [real_tools(), synthetic_tools()] {
        let reference = distinct(&tools).system().to_owned();
        for seed in [3, 11, 99] {
            assert_eq!(
                distinct(&shuffled(&tools, seed)).system(),
                reference,
                "seed {seed}"
            );
        }
    }
}

#[test]
fn lookalikes_get_the_words_that_set_them_apart() {
    let tools = [
        tool("mail_list", "List unread messages in the inbox.", json!({})),
        tool("mail_archive", "Archive old messages.", json!({})),
        tool(
            "mail_send",
            "Send a message.",
            json!({"properties": {"to": {}}, "required": ["to"]}),
        ),
    ];
    let c = distinct(&tools);
    assert_eq!(
        map_lines(c.system()),
        [
            "a0 mail_archive ~ old",
            "a1 mail_list ~ unread",
            "a2 mail_send to"
        ]
    );
    assert!(
        c.system()
            .contains("after ~, words from the tool's own description")
    );
}

#[test]
fn the_style_parses_and_prints_as_distinct() {
    assert_eq!("distinct".parse::<MapStyle>().unwrap(), MapStyle::Distinct);
    assert_eq!(MapStyle::Distinct.to_string(), "distinct");
    assert!(MapStyle::ALL.contains(&MapStyle::Distinct));
}

#[cfg(feature = "tokens")]
#[test]
fn the_real_corpus_distinct_map_stays_under_2000_o200k_tokens() {
    let c = compress(
        &real_tools(),
        &three()
            .with_map_style(MapStyle::Distinct)
            .with_token_counts(true),
    )
    .unwrap();
    let tokens = c.stats().compressed_tokens.unwrap();
    assert!(tokens <= 2000, "{tokens}");
}
