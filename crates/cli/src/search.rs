//! `chef search TOOLS --queries QUERIES.jsonl [--top K]`.
//!
//! # Format
//!
//! Input: a JSON Lines file, one object per line with a string `query` (other keys are
//! ignored, so a labelled evaluation file can be fed as it is; blank lines are skipped):
//!
//! ```json
//! {"query":"add three rows to the tracker spreadsheet"}
//! ```
//!
//! Output: one JSON line per request, in input order, with up to `K` tool names (default
//! 5), best first, and `[]` when the index abstains (no tool fits well enough):
//!
//! ```json
//! {"query":"add three rows to the tracker spreadsheet","tools":["gdrive_sheets_append_rows","gdrive_sheets_update_range"]}
//! {"query":"bake a chocolate cake","tools":[]}
//! ```
//!
//! The whole request file is checked before anything is printed: a line that is not a JSON
//! object with a string `query` stops the command with exit status 2 and one line on
//! stderr naming the file and the line.
//!
//! # Hybrid ranking (`--model DIR`)
//!
//! With `--model`, tools are ranked by the min-max mix of BM25F and the model's cosine
//! (`chef_compress::search::dense`), and the command abstains when no tool's cosine reaches
//! `--min-cosine`. The output format is the same. Tool vectors are cached on disk
//! (`--cache`, `--no-cache`). `--calibrate IRRELEVANT.jsonl` prints, instead of rankings,
//! one JSON object with the threshold that abstains on `--abstain-share` of those requests:
//!
//! ```json
//! {"model":"minilm-mean-256:99f704468154fc61","kind":"contextual","tools":149,"irrelevant":60,"abstain_share":0.9,"min_cosine":0.373}
//! ```

use std::{
    io::{self, BufWriter, Write},
    path::Path,
};

use std::sync::Arc;

use chef_compress::search::{
    CatalogIndex,
    dense::{self, Embedder, HybridIndex, HybridOptions},
};
use chef_ir::ToolDefinition;
use serde::Serialize;
use serde_json::Value;

use crate::{
    error::CliError,
    flags::{DenseFlags, SearchArgs},
};

enum Ranker {
    Lexical(CatalogIndex),
    Hybrid(HybridIndex),
}

/// The hybrid index over `tools` with the model in `dir` and the cache the flags name.
fn hybrid(
    tools: &[ToolDefinition],
    dir: &Path,
    flags: &DenseFlags,
) -> Result<HybridIndex, CliError> {
    let model = chef_dense::load(dir)?;
    let mut options = HybridOptions::for_kind(model.kind());
    if let Some(w) = flags.dense_weight {
        if !(0.0..=1.0).contains(&w) {
            return Err(CliError::Usage(format!(
                "--dense-weight must be between 0 and 1, not {w}"
            )));
        }
        options.dense_weight = w;
    }
    if let Some(t) = flags.min_cosine {
        if !t.is_finite() {
            return Err(CliError::Usage(format!(
                "--min-cosine must be a number, not {t}"
            )));
        }
        options.min_cosine = t;
    }
    let cache_dir = if flags.no_cache {
        None
    } else {
        flags.cache.clone().or_else(default_cache_dir)
    };
    let embedder: Arc<dyn Embedder> = match cache_dir {
        Some(dir) => Arc::new(chef_dense::CachedEmbedder::new(
            model,
            chef_dense::VectorCache::new(dir),
        )),
        None => model,
    };
    Ok(HybridIndex::build(tools, embedder, options)?)
}

/// `$XDG_CACHE_HOME/chef/vectors`, else `$HOME/.cache/chef/vectors`, else none.
fn default_cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| Path::new(&home).join(".cache"))
        })?;
    Some(base.join("chef").join("vectors"))
}

#[derive(Debug, Serialize)]
struct Calibration<'a> {
    model: &'a str,
    kind: &'a str,
    tools: usize,
    irrelevant: usize,
    abstain_share: f32,
    min_cosine: f32,
}

/// Prints the threshold that abstains on `share` of the irrelevant `queries`.
fn calibrate(index: &HybridIndex, queries: &[String], share: f32) -> Result<(), CliError> {
    if !(0.0..=1.0).contains(&share) {
        return Err(CliError::Usage(format!(
            "--abstain-share must be between 0 and 1, not {share}"
        )));
    }
    let mut best = Vec::with_capacity(queries.len());
    for query in queries {
        best.push(index.best_cosine(query)?);
    }
    let line = Calibration {
        model: index.embedder().model_id(),
        kind: index.embedder().kind().as_str(),
        tools: index.len(),
        irrelevant: queries.len(),
        abstain_share: share,
        min_cosine: dense::calibrate_min_cosine(&best, share),
    };
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, &line).map_err(|e| write_error(e.into()))?;
    out.write_all(b"\n").map_err(write_error)
}

#[derive(Debug, Serialize)]
struct Answer<'a> {
    query: &'a str,
    tools: Vec<&'a str>,
}

pub(crate) fn run(args: &SearchArgs) -> Result<(), CliError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })
    };
    let tools = chef_ir::load_tools_from_str(&read(&args.tools)?)
        .map_err(|source| CliError::Tools {
            path: args.tools.clone(),
            source,
        })?
        .tools;
    let requests = match (&args.dense.calibrate, &args.queries) {
        (Some(path), _) | (None, Some(path)) => path,
        (None, None) => return Err(CliError::Usage("--queries is required".to_owned())),
    };
    let queries = parse_queries(requests, &read(requests)?)?;

    let ranker = match &args.dense.model {
        Some(dir) => Ranker::Hybrid(hybrid(&tools, dir, &args.dense)?),
        None => Ranker::Lexical(CatalogIndex::build(&tools)),
    };
    if let (Some(_), Ranker::Hybrid(index)) = (&args.dense.calibrate, &ranker) {
        return calibrate(index, &queries, args.dense.abstain_share);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    for query in &queries {
        let found = match &ranker {
            Ranker::Lexical(index) => index.search(query, usize::from(args.top)),
            Ranker::Hybrid(index) => index.search(query, usize::from(args.top))?,
        };
        let answer = Answer {
            query,
            tools: found.hits.iter().map(|hit| hit.tool.as_str()).collect(),
        };
        serde_json::to_writer(&mut out, &answer).map_err(|e| write_error(e.into()))?;
        out.write_all(b"\n").map_err(write_error)?;
    }
    out.flush().map_err(write_error)
}

/// The `query` of every non-blank line, in order.
fn parse_queries(path: &Path, text: &str) -> Result<Vec<String>, CliError> {
    let mut queries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let problem = |problem: String| CliError::Queries {
            path: path.to_owned(),
            line: i + 1,
            problem,
        };
        let value: Value = serde_json::from_str(line)
            .map_err(|e| problem(format!("not valid JSON at column {}", e.column())))?;
        match value.get("query") {
            Some(Value::String(query)) => queries.push(query.clone()),
            Some(_) => return Err(problem("`query` is not a string".to_owned())),
            None if value.is_object() => return Err(problem("`query` is missing".to_owned())),
            None => {
                return Err(problem(
                    "expected an object like {\"query\":\"…\"}".to_owned(),
                ));
            }
        }
    }
    Ok(queries)
}

fn write_error(e: io::Error) -> CliError {
    match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
        _ => CliError::Write(e),
    }
}
