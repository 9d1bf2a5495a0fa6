//! What the binaries of chef-devtools share: the repository's test fixtures, read the same
//! way by every profiler and evaluator (`crates/devtools/src/bin/`).
//!
//! - `real-mcp-tools.json` (149 real tools) and `synthetic-100-tools.json`: catalogues.
//! - `retrieval-149.jsonl`: requests for the 149-tool corpus with their expected tools,
//!   plus requests no tool answers; each carries a `split`, `calibrate` or `heldout`.
//! - `toolgz-scenarios.json`: the reference benchmark's prompts, each against its corpus
//!   (`real-149`, `synthetic-100`, or `synthetic-100-subset`: the listed `toolNames` of
//!   the synthetic catalogue).

use std::path::{Path, PathBuf};

use chef_compress::search::eval::{LabelledQuery, Metrics};
use chef_ir::{Target, ToolDefinition};
use serde_json::Value;

/// The binaries' error: anything, reported by `main`.
pub type Error = Box<dyn std::error::Error>;

/// The path of a file of the repository's `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

/// The tools of a fixture catalogue, in its order.
///
/// # Errors
/// The file cannot be read, or its tools cannot be loaded.
pub fn load_tools(name: &str) -> Result<Vec<ToolDefinition>, Error> {
    let text = std::fs::read_to_string(fixture(name))?;
    Ok(chef_ir::load_tools_from_str(&text)?.tools)
}

/// `n` tools cycling through `base`, each named by `rename(pass, name)` (`pass` 0 for the
/// first time through `base`) where that gives a name; names must stay unique.
pub fn cycled(
    base: &[ToolDefinition],
    n: usize,
    rename: impl Fn(usize, &str) -> Option<String>,
) -> Vec<ToolDefinition> {
    base.iter()
        .cycle()
        .take(if base.is_empty() { 0 } else { n })
        .enumerate()
        .map(|(i, tool)| {
            let mut tool = tool.clone();
            if let Some(name) = rename(i / base.len(), tool.name.as_str()) {
                tool.name = name.into();
            }
            tool
        })
        .collect()
}

/// The labelled requests of a JSON-lines fixture (blank lines skipped), in file order.
///
/// # Errors
/// The file cannot be read, or a line is not a labelled request.
pub fn load_labelled(name: &str) -> Result<Vec<LabelledQuery>, Error> {
    let text = std::fs::read_to_string(fixture(name))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push(serde_json::from_str(line)?);
    }
    Ok(out)
}

/// The requests of `labelled` whose `split` is `split`, in order.
pub fn split(labelled: &[LabelledQuery], split: &str) -> Vec<LabelledQuery> {
    labelled
        .iter()
        .filter(|q| q.split.as_deref() == Some(split))
        .cloned()
        .collect()
}

/// The target a profiler's TARGET argument names: `anthropic`, `openai-chat`,
/// `openai-responses` or `gemini`.
///
/// # Errors
/// Any other name.
pub fn target(name: &str) -> Result<Target, Error> {
    Ok(match name {
        "anthropic" => Target::Anthropic,
        "openai-chat" => Target::OpenAiChat,
        "openai-responses" => Target::OpenAiResponses,
        "gemini" => Target::Gemini,
        other => return Err(format!("unknown target {other:?}").into()),
    })
}

/// The evaluators' table cells for `m`: relevant requests, recall@1, recall@5, MRR,
/// false abstention, and true abstention (`n/a` without irrelevant requests), joined by
/// ` | ` (the row's own cells go around them).
pub fn metrics_cells(m: &Metrics) -> String {
    let abstain = if m.irrelevant == 0 {
        "n/a".to_owned()
    } else {
        format!("{:.1}% of {}", 100.0 * m.true_abstention, m.irrelevant)
    };
    format!(
        "{} | {:.3} | {:.3} | {:.3} | {:.1}% | {abstain}",
        m.relevant,
        m.recall_at_1,
        m.recall_at_5,
        m.mrr,
        100.0 * m.false_abstention,
    )
}

/// One scenario of `toolgz-scenarios.json`: its corpus label, the tools it is asked
/// against, and its request with the expected tools.
pub struct Scenario {
    /// `real-149`, `synthetic-100` or `synthetic-100-subset`.
    pub corpus: String,
    /// The corpus's tools (for a subset, the listed ones found in `synthetic`).
    pub tools: Vec<ToolDefinition>,
    /// The prompt and the names of its expected tools.
    pub query: LabelledQuery,
}

/// The scenarios of `toolgz-scenarios.json`, in file order, each with its tools taken
/// from `real` (`real-mcp-tools.json`) or `synthetic` (`synthetic-100-tools.json`).
///
/// # Errors
/// The file cannot be read or parsed, or a scenario names an unknown corpus.
pub fn toolgz_scenarios(
    real: &[ToolDefinition],
    synthetic: &[ToolDefinition],
) -> Result<Vec<Scenario>, Error> {
    let text = std::fs::read_to_string(fixture("toolgz-scenarios.json"))?;
    let scenarios: Value = serde_json::from_str(&text)?;
    let str_at = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let array_at = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for scenario in array_at(&scenarios, "scenarios") {
        let prompt = str_at(&scenario, "prompt").unwrap_or_default();
        let expected: Vec<String> = array_at(&scenario, "expected")
            .iter()
            .filter_map(|e| str_at(e, "name"))
            .collect();
        let corpus = str_at(&scenario, "corpus").unwrap_or_default();
        let tools = match corpus.as_str() {
            "real-149" => real.to_vec(),
            "synthetic-100" => synthetic.to_vec(),
            "synthetic-100-subset" => array_at(&scenario, "toolNames")
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|n| synthetic.iter().find(|t| t.name == *n).cloned())
                .collect(),
            other => return Err(format!("unknown corpus {other:?}").into()),
        };
        out.push(Scenario {
            corpus,
            tools,
            query: LabelledQuery::new(prompt, expected),
        });
    }
    Ok(out)
}

/// The request's words minus a short list of English function words: a keyword form of
/// the same need.
pub fn keywords(query: &str) -> String {
    const STOP: &[&str] = &[
        "a", "an", "the", "to", "of", "for", "in", "on", "at", "by", "with", "from", "and", "or",
        "my", "me", "i", "you", "your", "our", "we", "is", "are", "be", "it", "this", "that",
        "these", "those", "please", "can", "could", "would", "should", "will", "do", "does",
        "what", "which", "who", "how", "all", "some", "any", "into", "about", "up", "then",
        "after", "there", "their", "its", "as", "us", "s", "want", "need", "like",
    ];
    query
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The labelled requests of a JSON-lines file outside the fixtures (blank lines skipped).
///
/// # Errors
/// The file cannot be read (the message says to run the pool script), or a line is not a
/// labelled request.
pub fn read_jsonl(path: &str) -> Result<Vec<LabelledQuery>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{path}: {e} (run python3 scripts/retrieval-sets/pool.py first)"))?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push(serde_json::from_str(line)?);
    }
    Ok(out)
}
