//! Generated from docs/eval/runs.json and the run files it lists by
//! `CHEF_BLESS=1 cargo test -p chef-cli measured_table`. Do not edit by hand.

use crate::{
    measured::Measured,
    options::{Level, MapStyle},
};

#[rustfmt::skip]
pub(crate) const MEASURED: &[Measured] = &[
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=3", level: Level::Three, map_style: None, ranked_top: None, compiled_map: false, constrained: true, n: 18, right: 5, args_valid: 8, prompt_tokens: Some(1734), source: "docs/eval/session11-1.5b.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=3,style=distinct", level: Level::Three, map_style: Some(MapStyle::Distinct), ranked_top: None, compiled_map: false, constrained: true, n: 18, right: 4, args_valid: 8, prompt_tokens: Some(2069), source: "docs/eval/session11-1.5b.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=1", level: Level::One, map_style: None, ranked_top: None, compiled_map: false, constrained: true, n: 18, right: 14, args_valid: 17, prompt_tokens: Some(27494), source: "docs/eval/session14-1.5b-level1.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=1,prune=ranked:10", level: Level::One, map_style: None, ranked_top: Some(10), compiled_map: false, constrained: true, n: 18, right: 18, args_valid: 18, prompt_tokens: Some(2325), source: "docs/eval/session14-1.5b-ranked.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=1,prune=ranked:5", level: Level::One, map_style: None, ranked_top: Some(5), compiled_map: false, constrained: true, n: 18, right: 17, args_valid: 18, prompt_tokens: Some(1198), source: "docs/eval/session14-1.5b-ranked.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=1,prune=ranked:20", level: Level::One, map_style: None, ranked_top: Some(20), compiled_map: false, constrained: true, n: 18, right: 16, args_valid: 16, prompt_tokens: Some(4424), source: "docs/eval/session14-1.5b-ranked.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=1,prune=ranked:10", level: Level::One, map_style: None, ranked_top: Some(10), compiled_map: false, constrained: false, n: 18, right: 18, args_valid: 18, prompt_tokens: Some(2325), source: "docs/eval/session14-1.5b-ranked10-unconstrained.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=3,prune=ranked:10", level: Level::Three, map_style: None, ranked_top: Some(10), compiled_map: false, constrained: true, n: 18, right: 7, args_valid: 13, prompt_tokens: Some(476), source: "docs/eval/session14-1.5b-level3-level4.jsonl" },
    Measured { model: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", scenarios: "tool-selection scenarios", catalogue: "the 149 real MCP tools", context: 32768, setting: "level=4,compiled=tests/fixtures/real-mcp-tools.compiled-map.json", level: Level::Four, map_style: None, ranked_top: None, compiled_map: true, constrained: true, n: 18, right: 11, args_valid: 14, prompt_tokens: Some(7280), source: "docs/eval/session14-1.5b-level3-level4.jsonl" },
];
