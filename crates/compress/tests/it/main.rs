//! Integration tests for chef-compress: levels, resolve, validation, stats, recommendation,
//! goldens.
#![cfg(test)]

mod catalogue;
mod contract;
mod determinism;
mod distinct;
mod error_tool;
mod goldens;
mod level4;
mod levels;
mod lookalike;
mod pinned;
mod properties;
mod q_sentences;
mod recommend;
mod resolve;
mod search;
mod second_stage;
mod selection;
mod similarity;
mod stats;
mod validate;
mod validation;
mod wild;
mod wire_names;

#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../../../../tests/support/recommend.rs"]
mod recommend_support;

use chef_compress::{Compressed, Level, MapStyle, Options, Resolution, compress};
use chef_ir::ToolDefinition;
use serde_json::{Value, json};

pub(crate) use fixtures::{fixture, real_tools};

/// The synthetic 100-tool catalogue, in file order.
pub(crate) fn synthetic_tools() -> Vec<ToolDefinition> {
    chef_ir::load_tools_from_str(&fixtures::fixture_text("synthetic-100-tools.json"))
        .unwrap()
        .tools
}

/// A tool from a name, description and schema.
pub(crate) fn tool(name: &str, description: &str, schema: Value) -> ToolDefinition {
    ToolDefinition::new(name, schema).with_description(description)
}

/// The spec's TOOLS3: verbose, with `$schema` and `additionalProperties:false`.
pub(crate) fn tools3() -> Vec<ToolDefinition> {
    vec![
        tool(
            "github_create_issue",
            "Create a new issue in a GitHub repository. The issue will be created by the authenticated user.",
            draft07(
                json!({
                    "owner": {"type": "string", "description": "Repository owner (user or organisation)."},
                    "repo": {"type": "string", "description": "Repository name."},
                    "title": {"type": "string", "description": "Issue title."},
                    "body": {"type": "string", "description": "Issue body in Markdown."},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels to apply."}
                }),
                &["owner", "repo", "title"],
            ),
        ),
        tool(
            "github_search_issues",
            "Search issues and pull requests across all of GitHub using a query string.",
            draft07(
                json!({
                    "q": {"type": "string", "description": "Search query using GitHub search syntax."},
                    "sort": {"type": "string", "enum": ["comments", "created", "updated"], "description": "Sort field."},
                    "per_page": {"type": "integer", "description": "Results per page (max 100)."}
                }),
                &["q"],
            ),
        ),
        tool(
            "slack_post_message",
            "Post a message to a Slack channel on behalf of the app.",
            draft07(
                json!({
                    "channel": {"type": "string", "description": "Channel id."},
                    "text": {"type": "string", "description": "Message text."},
                    "thread_ts": {"type": "string", "description": "Thread timestamp to reply in."}
                }),
                &["channel", "text"],
            ),
        ),
    ]
}

/// A TOOLS3 schema: draft-07's `$schema`, `properties`, the `required` ones and no others
/// (`additionalProperties: false`), in that order.
fn draft07(properties: Value, required: &[&str]) -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// `svc_search`: required string `q`, optional typed parameters.
pub(crate) fn svc_search() -> ToolDefinition {
    tool(
        "svc_search",
        "Search the service.",
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"type": "integer"},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "tags": {"type": "array"},
                "opts": {"type": "object"},
                "mode": {"type": "string", "enum": ["FAST", "SLOW"]}
            },
            "required": ["q"]
        }),
    )
}

/// Every level with a text map (level 4 needs a compiled one).
pub(crate) const LEVELS: [Level; 4] = [Level::Zero, Level::One, Level::Two, Level::Three];

/// What resolving the model's call of `name(args)` gives: the call encoded as the model
/// writes it at `c`'s level, then resolved.
pub(crate) fn resolve_encoded(c: &Compressed, name: &str, args: Value) -> Resolution {
    let e = c.encode_call(name, args).unwrap();
    c.resolve(&e.name, &e.args)
}

/// Level 3 options, otherwise the defaults.
pub(crate) fn three() -> Options {
    Options::new().with_level(Level::Three)
}

/// Compresses at level 3 with map style `style`.
pub(crate) fn styled(tools: &[ToolDefinition], style: MapStyle) -> Compressed {
    compress(tools, &three().with_map_style(style)).unwrap()
}

/// `github_create_review`: a required `event`, one of three upper-case values.
pub(crate) fn review_tool(description: &str) -> ToolDefinition {
    tool(
        "github_create_review",
        description,
        json!({"type": "object", "properties": {"event": {"type": "string", "enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}}, "required": ["event"]}),
    )
}

/// Compresses at a level with default options.
pub(crate) fn at(tools: &[ToolDefinition], level: Level) -> Compressed {
    compress(tools, &Options::new().with_level(level)).unwrap()
}

/// The wire output as one string: JSON of the tools, then the preamble.
pub(crate) fn wire(c: &Compressed) -> String {
    format!(
        "{}\n{}",
        serde_json::to_string(c.tools()).unwrap(),
        c.system()
    )
}

/// Asserts a resolution is a call to `name` and returns its args.
#[track_caller]
pub(crate) fn expect_call(r: Resolution, name: &str) -> Value {
    match r {
        Resolution::Call { name: got, args } => {
            assert_eq!(got, name);
            args
        }
        other => panic!("expected a call to {name}, got {other:?}"),
    }
}

/// Asserts a resolution is a meta answer and returns its text.
#[track_caller]
pub(crate) fn expect_meta(r: Resolution) -> String {
    match r {
        Resolution::Meta { result, .. } => result,
        other => panic!("expected meta, got {other:?}"),
    }
}

/// Asserts a resolution is a recoverable error and returns its message.
#[track_caller]
pub(crate) fn expect_error(r: Resolution) -> String {
    match r {
        Resolution::Error(e) => {
            assert!(e.recoverable());
            assert_eq!(e.to_string(), e.message());
            e.message()
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A fixed permutation (no randomness: the same "shuffle" on every run).
pub(crate) fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    let mut state = seed | 1;
    for i in (1..out.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let j = usize::try_from(state >> 33).unwrap() % (i + 1);
        out.swap(i, j);
    }
    out
}
