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
//! # Ranking: hybrid by default (`--model DIR`, `--lexical`)
//!
//! Tools are ranked by the min-max mix of BM25F and an embedding model's cosine
//! (`chef_compress::search::dense`), and the command abstains when no tool's cosine reaches
//! `--min-cosine` and BM25F's own rule abstains too (joint abstention; `--cosine-only`
//! abstains on the cosine alone). The model is the static one bundled in chef (`BundledStatic`), or the one
//! `--model` names, whose tool vectors are cached on disk (`--cache`, `--no-cache`).
//! `--lexical` ranks with BM25F alone and its own abstention rule. The output format is the
//! same either way. `--calibrate IRRELEVANT.jsonl` prints, instead of rankings,
//! one JSON object with the lowest threshold that abstains on `--abstain-share` of those
//! requests under the rule in use; `abstains` is the share it reaches, less than asked when
//! BM25F answers more of them than joint abstention may leave:
//!
//! ```json
//! {"model":"static-bundled:af5e7e5211d02a98","kind":"static","tools":149,"irrelevant":60,"abstain_share":0.9,"joint":true,"min_cosine":0.575,"abstains":0.9}
//! ```
//!
//! With the bundled model the best ten are then re-ordered by the second stage
//! (`chef_compress::search::dense::SecondStage`: a relevance model learned from public
//! labelled data and compiled in): ranks 1-5 among themselves and ranks 6-10 among
//! themselves, so the tools in the best five and ten, and abstention, stay the hybrid's.
//! `--first-stage` keeps the hybrid's own order. `--second-stage` goes further: it re-ranks
//! the hybrid's best 30 tools by that probability and abstains when its probability for
//! the request's catalogue words is below `--min-relevance` (default 0.256). That is
//! opt-in: on held-out data it ranks better but abstains worse than the default
//! (docs/PERFORMANCE.md).
//!
//! # Measuring (`--eval LABELS.jsonl`)
//!
//! `--eval` reads labelled requests, one per line, in the form of
//! `tests/fixtures/retrieval-149.jsonl` (`chef_compress::search::eval::LabelledQuery`; other
//! keys are ignored):
//!
//! ```json
//! {"query":"which files are in my drive folder","expected":["gdrive_list_files"],"split":"heldout"}
//! {"query":"bake a chocolate cake","expected":[]}
//! ```
//!
//! and prints one JSON object with the figures the evaluators of this repository report
//! (`chef_compress::search::eval` has the definitions): recall@1, recall@5, MRR to depth 10,
//! false abstention over the answerable requests and true abstention over the others (each
//! null when its requests are none), at the ranker's abstention setting (the default,
//! `--min-cosine`, or none with `--never-abstain`). `--split NAME` keeps only the lines of
//! that split. A label naming a tool the catalogue does not have, or a file (or split) with
//! no line to measure, stops the command (exit status 2):
//!
//! ```json
//! {"ranker":"lexical","abstention":"default","tools":149,"requests":105,"relevant":75,"irrelevant":30,"recall_at_1":0.8,"recall_at_5":0.82,"mrr":0.815,"false_abstention":0.16,"true_abstention":0.9}
//! ```
//!
//! With the bundled model the hybrid's line says `"order":"second-stage"`: its best ten
//! are re-ordered by the second stage (below); `--first-stage` measures the hybrid's own
//! order. With `--second-stage` a second line follows, `"ranker":"second-stage"`,
//! measured on the same requests at `--min-relevance` (or never abstaining with
//! `--never-abstain`).

use std::{
    io::{self, BufWriter, Write},
    path::{Path, PathBuf},
};

use std::sync::Arc;

use chef_compress::search::{
    Abstention, CatalogBuilder, CatalogIndex, IndexOptions,
    dense::{self, Embedder, HybridBuilder, HybridIndex, HybridOptions, SecondStage},
    eval::{self, LabelledQuery, Metrics},
};
use chef_ir::ToolName;
use serde::Serialize;
use serde_json::Value;

use clap::Args;

use crate::error::CliError;

enum Ranker {
    Lexical(CatalogIndex),
    Hybrid(HybridIndex),
}

/// The ranker being built, fed the tools as they are read (each builder boxed: they differ
/// in size, and there is one).
enum Building {
    Lexical(Box<CatalogBuilder>),
    Hybrid(Box<HybridBuilder>),
}

impl Building {
    fn push(&mut self, tool: chef_ir::ToolDefinition) {
        match self {
            Self::Lexical(builder) => builder.push(tool),
            Self::Hybrid(builder) => builder.push(tool),
        }
    }

    fn finish(self) -> Result<Ranker, CliError> {
        Ok(match self {
            Self::Lexical(builder) => Ranker::Lexical(builder.finish()),
            Self::Hybrid(builder) => Ranker::Hybrid(builder.finish()?),
        })
    }
}

/// A builder of the hybrid index with the model in `dir` (and the cache the flags name),
/// or without one the bundled static model.
fn hybrid(dir: Option<&Path>, flags: &DenseFlags) -> Result<HybridBuilder, CliError> {
    let model: Arc<dyn Embedder> = match dir {
        Some(dir) => chef_dense::load(dir)?,
        None => dense::BundledStatic::shared().map_err(|source| dense::DenseError::Embed {
            model: "static-bundled".to_owned(),
            source,
        })?,
    };
    let mut options = HybridOptions::for_model(model.as_ref()).with_joint(!flags.cosine_only);
    if flags.first_stage {
        options.second_stage = false;
    }
    if let Some(w) = flags.dense_weight {
        if !(0.0..=1.0).contains(&w) {
            return Err(CliError::Usage(format!(
                "--dense-weight must be between 0 and 1, not {w}"
            )));
        }
        options.dense_weight = w;
    }
    if let Some(t) = flags.min_cosine {
        // A cosine lies in [-1, 1]: a bound outside it abstains on every query (above) or
        // never (below), which --never-abstain says plainly.
        if !(-1.0..=1.0).contains(&t) {
            return Err(CliError::Usage(format!(
                "--min-cosine must be between -1 and 1, not {t}"
            )));
        }
        options.min_cosine = t;
    }
    // The bundled model embeds a catalogue in milliseconds: nothing to cache.
    let cache_dir = if flags.no_cache || dir.is_none() {
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
    Ok(HybridBuilder::new(embedder, options))
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
    /// Whether the threshold is for joint abstention (the default).
    joint: bool,
    min_cosine: f32,
    /// The share of the requests abstained on at that threshold: `abstain_share`, or less
    /// when BM25F answers too many of them for joint abstention to refuse.
    abstains: f32,
}

/// Prints the threshold that abstains on `share` of the irrelevant `queries`.
fn calibrate(index: &HybridIndex, queries: &[String], share: f32) -> Result<(), CliError> {
    if !(0.0..=1.0).contains(&share) {
        return Err(CliError::Usage(format!(
            "--abstain-share must be between 0 and 1, not {share}"
        )));
    }
    let (min_cosine, abstains) = dense::calibrate_on_irrelevant(index, queries, share)?;
    let line = Calibration {
        model: index.embedder().model_id(),
        kind: index.embedder().kind().as_str(),
        tools: index.len(),
        irrelevant: queries.len(),
        abstain_share: share,
        joint: index.options().joint,
        min_cosine,
        abstains: (abstains * 1000.0).round() / 1000.0,
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

/// The flags that only mean something with another one. clap's `requires` does not catch
/// them next to `--queries`: it excuses a requirement that conflicts with a flag given.
fn check_flag_pairs(args: &SearchArgs) -> Result<(), CliError> {
    if args.split.is_some() && args.eval.is_none() {
        return Err(CliError::Usage(
            "--split selects the lines of --eval's labelled file: it needs --eval".to_owned(),
        ));
    }
    if args.dense.abstain_share.is_some() && args.dense.calibrate.is_none() {
        return Err(CliError::Usage(
            "--abstain-share is the share --calibrate aims at: it needs --calibrate".to_owned(),
        ));
    }
    Ok(())
}

pub(crate) fn run(args: &SearchArgs) -> Result<(), CliError> {
    check_flag_pairs(args)?;
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| CliError::Read {
            path: path.to_owned(),
            source,
        })
    };
    // The ranker is built as the tools are read, so that no tool is kept (a catalogue of
    // 100,000 tools is 600 MB of schemas). Its own errors (a flag out of range, a model
    // that does not load) wait until the tools and the requests are checked, as when it
    // was built after them.
    let mut building = builder(args);
    let mut names: Vec<ToolName> = Vec::new();
    let mut tools = 0;
    chef_ir::for_each_tool(&read(&args.tools)?, |tool, _| {
        tools += 1;
        if args.eval.is_some() {
            names.push(tool.name.clone());
        }
        if let Ok(building) = &mut building {
            building.push(tool);
        }
    })
    .map_err(|source| CliError::Tools {
        path: args.tools.clone(),
        source,
    })?;
    if let Some(path) = &args.eval {
        let labelled = parse_labelled(path, &read(path)?, &names, args.split.as_deref())?;
        if labelled.is_empty() {
            return Err(CliError::Usage(match &args.split {
                Some(split) => format!(
                    "{}: no line has \"split\":{split:?}: nothing to measure",
                    path.display()
                ),
                None => format!(
                    "{}: holds no labelled request: nothing to measure",
                    path.display()
                ),
            }));
        }
        let ranker = building?.finish()?;
        return evaluate(&ranker, &labelled, tools, args);
    }
    let requests = match (&args.dense.calibrate, &args.queries) {
        (Some(path), _) | (None, Some(path)) => path,
        (None, None) => return Err(CliError::Usage("--queries is required".to_owned())),
    };
    let queries = parse_queries(requests, &read(requests)?)?;
    if args.dense.calibrate.is_some() && queries.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: holds no request: --calibrate needs irrelevant requests to calibrate on",
            requests.display()
        )));
    }

    let ranker = building?.finish()?;
    if let (Some(_), Ranker::Hybrid(index)) = (&args.dense.calibrate, &ranker) {
        let share = args
            .dense
            .abstain_share
            .unwrap_or(chef_compress::search::dense::DEFAULT_ABSTAIN_SHARE);
        return calibrate(index, &queries, share);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let k = usize::from(args.top);
    for query in &queries {
        let found = match &ranker {
            Ranker::Lexical(index) if args.never_abstain => {
                index.search_with(query, k, &Abstention::NEVER)
            }
            Ranker::Lexical(index) => index.search(query, k),
            Ranker::Hybrid(index) if args.dense.second_stage => {
                index.search_second_stage(query, k, &second_stage(args)?)?
            }
            Ranker::Hybrid(index) if args.never_abstain => {
                index.search_with(query, k, f32::NEG_INFINITY)?
            }
            Ranker::Hybrid(index) => index.search(query, k)?,
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

/// The second stage's settings: the default, `--min-relevance`, or never abstaining.
fn second_stage(args: &SearchArgs) -> Result<SecondStage, CliError> {
    let mut stage = SecondStage::DEFAULT;
    if let Some(p) = args.dense.min_relevance {
        if !(0.0..=1.0).contains(&p) {
            return Err(CliError::Usage(format!(
                "--min-relevance must be between 0 and 1, not {p}"
            )));
        }
        stage.min_relevance = p;
    }
    if args.never_abstain {
        stage.min_relevance = 0.0;
    }
    Ok(stage)
}

/// A builder of the lexical index with `--lexical`, else of the hybrid with `--model`'s
/// model or the bundled one.
fn builder(args: &SearchArgs) -> Result<Building, CliError> {
    Ok(if args.dense.lexical {
        Building::Lexical(Box::new(CatalogBuilder::new(&IndexOptions::default())))
    } else {
        Building::Hybrid(Box::new(hybrid(args.dense.model.as_deref(), &args.dense)?))
    })
}

#[derive(Debug, Serialize)]
struct Evaluation<'a> {
    ranker: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dense_weight: Option<f32>,
    /// `second-stage` for the hybrid with the second stage's re-ordering of the best ten.
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<&'a str>,
    /// `default`, `none`, or for the hybrid the `min_cosine` used.
    abstention: String,
    tools: usize,
    requests: usize,
    relevant: usize,
    irrelevant: usize,
    /// None without relevant requests (as the three after it).
    recall_at_1: Option<f64>,
    recall_at_5: Option<f64>,
    mrr: Option<f64>,
    false_abstention: Option<f64>,
    /// None without irrelevant requests.
    true_abstention: Option<f64>,
}

impl<'a> Evaluation<'a> {
    /// The line for `m`, measured by `ranker` on `requests` requests over `tools` tools;
    /// figures rounded to 6 places, and null over no request of their kind.
    fn new(
        (ranker, model, dense_weight, abstention): (&'a str, Option<&'a str>, Option<f32>, String),
        tools: usize,
        requests: usize,
        m: &Metrics,
    ) -> Self {
        let round = |x: f64| (x * 1e6).round() / 1e6;
        let over_relevant = |x: f64| (m.relevant > 0).then(|| round(x));
        Self {
            ranker,
            model,
            dense_weight,
            order: None,
            abstention,
            tools,
            requests,
            relevant: m.relevant,
            irrelevant: m.irrelevant,
            recall_at_1: over_relevant(m.recall_at_1),
            recall_at_5: over_relevant(m.recall_at_5),
            mrr: over_relevant(m.mrr),
            false_abstention: over_relevant(m.false_abstention),
            true_abstention: (m.irrelevant > 0).then(|| round(m.true_abstention)),
        }
    }

    /// Writes this line as one JSON line.
    fn write(&self, out: &mut impl Write) -> Result<(), CliError> {
        serde_json::to_writer(&mut *out, self).map_err(|e| write_error(e.into()))?;
        out.write_all(b"\n").map_err(write_error)
    }
}

/// Prints the metrics of `ranker` on `labelled` (`--eval`).
fn evaluate(
    ranker: &Ranker,
    labelled: &[LabelledQuery],
    tools: usize,
    args: &SearchArgs,
) -> Result<(), CliError> {
    let (name, model, weight, abstention, m): (_, _, _, _, Metrics) = match ranker {
        Ranker::Lexical(index) => {
            let (label, setting) = if args.never_abstain {
                ("none", Abstention::NEVER)
            } else {
                ("default", index.options().abstention)
            };
            let m = eval::evaluate(index, labelled, &setting);
            ("lexical", None, None, label.to_owned(), m)
        }
        Ranker::Hybrid(index) => {
            let (label, threshold) = if args.never_abstain {
                ("none".to_owned(), f32::NEG_INFINITY)
            } else {
                let t = index.options().min_cosine;
                let joint = if index.options().joint { ", joint" } else { "" };
                (format!("min_cosine {t}{joint}"), t)
            };
            let m = dense::evaluate(index, labelled, threshold)?;
            let model = Some(index.embedder().model_id());
            (
                "hybrid",
                model,
                Some(index.options().dense_weight),
                label,
                m,
            )
        }
    };
    let mut out = io::stdout().lock();
    let mut line = Evaluation::new((name, model, weight, abstention), tools, labelled.len(), &m);
    if let Ranker::Hybrid(index) = ranker {
        line.order = index.options().second_stage.then_some("second-stage");
    }
    line.write(&mut out)?;
    if let (true, Ranker::Hybrid(index)) = (args.dense.second_stage, ranker) {
        let stage = second_stage(args)?;
        let m = dense::evaluate_second_stage(index, labelled, &stage)?;
        let abstention = if stage.min_relevance > 0.0 {
            format!("min_relevance {}", stage.min_relevance)
        } else {
            "none".to_owned()
        };
        let setting = (
            "second-stage",
            Some(index.embedder().model_id()),
            Some(index.options().dense_weight),
            abstention,
        );
        Evaluation::new(setting, tools, labelled.len(), &m).write(&mut out)?;
    }
    Ok(())
}

/// Every non-blank line of a JSON Lines file, parsed, with a maker of that line's error.
fn json_lines<'a>(
    path: &'a Path,
    text: &'a str,
) -> impl Iterator<Item = Result<(Value, impl Fn(String) -> CliError + 'a), CliError>> + 'a {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(move |(i, line)| {
            let problem = move |problem: String| CliError::Queries {
                path: path.to_owned(),
                line: i + 1,
                problem,
            };
            match serde_json::from_str::<Value>(line) {
                Ok(value) => Ok((value, problem)),
                Err(e) => Err(problem(format!("not valid JSON at column {}", e.column()))),
            }
        })
}

/// The labelled requests of every non-blank line (of `split` only, when given), in order;
/// every expected tool must be one of `tools`.
fn parse_labelled(
    path: &Path,
    text: &str,
    tools: &[ToolName],
    split: Option<&str>,
) -> Result<Vec<LabelledQuery>, CliError> {
    let names: std::collections::HashSet<&str> = tools.iter().map(ToolName::as_str).collect();
    let mut labelled = Vec::new();
    for line in json_lines(path, text) {
        let (value, problem) = line?;
        if !value.is_object() {
            return Err(problem(
                "expected an object like {\"query\":\"…\",\"expected\":[\"tool\"]}".to_owned(),
            ));
        }
        // A misspelt key (`expect`) must not turn the request into one no tool answers.
        if value.get("expected").is_none() {
            return Err(problem(
                "no \"expected\": list the tools that answer the request, or [] when none does"
                    .to_owned(),
            ));
        }
        let query: LabelledQuery = serde_json::from_value(value).map_err(|e| {
            problem(format!(
                "not a labelled request (a string `query`, a list of strings `expected`): {e}"
            ))
        })?;
        if let Some(unknown) = query.expected.iter().find(|e| !names.contains(e.as_str())) {
            return Err(problem(format!(
                "expected tool {unknown:?} is not in the catalogue"
            )));
        }
        if split.is_none_or(|s| query.split.as_deref() == Some(s)) {
            labelled.push(query);
        }
    }
    Ok(labelled)
}

/// The `query` of every non-blank line, in order.
fn parse_queries(path: &Path, text: &str) -> Result<Vec<String>, CliError> {
    let mut queries = Vec::new();
    for line in json_lines(path, text) {
        let (value, problem) = line?;
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

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// A JSON file of tool definitions (MCP, Anthropic, OpenAI, Gemini or bare shapes).
    pub(crate) tools: PathBuf,
    /// A JSON Lines file of requests, one `{"query":"…"}` object per line.
    #[arg(long, required_unless_present_any = ["calibrate", "eval"])]
    pub(crate) queries: Option<PathBuf>,
    /// How many tools to list per request, best first.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) top: u16,
    /// Instead of searching, measure the ranker on a labelled JSON Lines file (one
    /// `{"query":"…","expected":["tool",…]}` per line; `"expected":[]` for a request no
    /// tool answers) and print one JSON object: recall@1, recall@5, MRR (depth 10) and false
    /// abstention (over answerable requests, null without any) and true abstention (over
    /// the others, null without any), for the ranker in use (the bundled hybrid, --model's,
    /// or --lexical) at its abstention setting.
    #[arg(
        long,
        value_name = "LABELS.jsonl",
        conflicts_with_all = ["queries", "calibrate"]
    )]
    pub(crate) eval: Option<PathBuf>,
    /// With --eval: measure only the lines whose `"split"` is NAME (e.g. `heldout`).
    #[arg(long, value_name = "NAME", requires = "eval")]
    pub(crate) split: Option<String>,
    /// Never abstain: rank every request (with --eval, the figures of the ranking alone).
    #[arg(long, conflicts_with = "min_cosine")]
    pub(crate) never_abstain: bool,
    #[command(flatten)]
    pub(crate) dense: DenseFlags,
}

/// The hybrid (BM25F + embedding model) options of `chef search`.
#[derive(Debug, Args)]
pub(crate) struct DenseFlags {
    /// Rank with this local embedding model mixed with BM25F instead of the static model
    /// bundled in chef: a directory holding all-MiniLM-L6-v2 (config.json,
    /// model.safetensors, tokenizer.json) or a static model made by `chef embed distill`.
    /// Nothing is downloaded. Needs a chef built with `--features dense`.
    #[arg(long, value_name = "DIR", conflicts_with = "lexical")]
    pub(crate) model: Option<PathBuf>,
    /// Rank with BM25F alone (and its own abstention rule), not the default hybrid of
    /// BM25F and the bundled static model.
    #[arg(long, conflicts_with_all = ["min_cosine", "dense_weight", "calibrate", "joint", "cosine_only"])]
    pub(crate) lexical: bool,
    /// With --model: where its tool vectors are cached [default: $XDG_CACHE_HOME/chef/vectors,
    /// else ~/.cache/chef/vectors]. The bundled model's vectors are built in memory, never
    /// cached.
    #[arg(
        long,
        value_name = "DIR",
        requires = "model",
        conflicts_with = "no_cache"
    )]
    pub(crate) cache: Option<PathBuf>,
    /// With --model: embed the catalogue afresh and keep nothing on disk (the bundled
    /// model never writes a cache).
    #[arg(long, requires = "model")]
    pub(crate) no_cache: bool,
    /// Abstain when no tool's cosine with the request reaches this (and, unless
    /// --cosine-only, BM25F abstains too) [default: 0.32 for MiniLM, 0.54 for a static
    /// model (the bundled one included), calibrated on 149 tools; calibrate yours with
    /// --calibrate].
    #[arg(long, value_name = "COSINE", allow_negative_numbers = true)]
    pub(crate) min_cosine: Option<f32>,
    /// Joint abstention, the default: abstain only when the cosine is below --min-cosine
    /// and BM25F's own rule abstains too (the flag is accepted for scripts written when it
    /// was opt-in).
    #[arg(long, conflicts_with = "cosine_only")]
    pub(crate) joint: bool,
    /// Abstain on the cosine alone (below --min-cosine), whatever BM25F finds: refuses
    /// more unanswerable requests, and more answerable ones.
    #[arg(long)]
    pub(crate) cosine_only: bool,
    /// Weight of the model's score in the mix, 0 to 1 [default: 0.6 for MiniLM, 0.4 for a
    /// static model, calibrated on 149 tools].
    #[arg(long, value_name = "W")]
    pub(crate) dense_weight: Option<f32>,
    /// Instead of searching, print the --min-cosine for this catalogue, from a JSON Lines
    /// file of requests known to be irrelevant to it (`{"query":"…"}` per line): the
    /// lowest that abstains on --abstain-share of them, with the abstention rule in use
    /// (joint unless --cosine-only).
    #[arg(long, value_name = "IRRELEVANT.jsonl", conflicts_with = "queries")]
    pub(crate) calibrate: Option<PathBuf>,
    /// With --calibrate: the share of those requests to abstain on, 0 to 1 [default: 0.9].
    #[arg(long, value_name = "SHARE", requires = "calibrate")]
    pub(crate) abstain_share: Option<f32>,
    /// Re-rank the hybrid's best 30 tools with the second stage (a relevance model learned
    /// from public labelled data, compiled in) and abstain on its probability, read from the
    /// request's words that some tool mentions. Opt-in: on held-out data it does not beat
    /// the default (docs/PERFORMANCE.md). With --eval, prints the first stage's line and
    /// then the second stage's.
    #[arg(long, conflicts_with_all = ["lexical", "calibrate"])]
    pub(crate) second_stage: bool,
    /// Keep the hybrid's own order: without the second stage's re-ordering of the best ten
    /// (ranks 1-5 among themselves and 6-10 among themselves, by a relevance model learned
    /// from public labelled data), which is on by default with the bundled model. The
    /// tools in the best five and ten, and abstention, are the same either way.
    #[arg(long, conflicts_with_all = ["lexical", "second_stage"])]
    pub(crate) first_stage: bool,
    /// With --second-stage: abstain when no candidate's probability reaches this, 0 to 1
    /// [default: 0.256, calibrated on 149 tools].
    #[arg(long, value_name = "P", requires = "second_stage")]
    pub(crate) min_relevance: Option<f32>,
}
