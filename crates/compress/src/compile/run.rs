//! [`compile_tools`]: ask a model for each tool's line, verify it, retry once, publish.

use std::{collections::BTreeMap, fmt, sync::Arc};

use chef_ir::ToolDefinition;
use futures::{StreamExt as _, stream};
use parking_lot::Mutex;
use serde::Serialize;

use super::{
    DEFAULT_MAX_DOC_CHARS, DanglingReference, compile_prompt, dangling_references,
    describe_for_compile, roster, verify_line,
};
use crate::{error::CompressError, order::compare_names};

/// A model client: turns a system prompt and a user message into the model's text.
///
/// Implement it with any client (an OpenAI-compatible endpoint, a local model, a test
/// script). Errors end the tool's attempt; the tool is then reported as rejected and
/// the rest of the compile carries on.
#[async_trait::async_trait]
pub trait Completer: Send + Sync {
    /// The model's reply text to `user`, under the system prompt `system`.
    async fn complete(&self, system: &str, user: &str) -> Result<String, CompleterError>;
}

/// Why a [`Completer`] gave no reply (the message is kept as the tool's rejection reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompleterError {
    message: String,
}

impl CompleterError {
    /// An error with this message (say what failed: `HTTP 500 after one retry`, …).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Where verified lines land the moment they verify: a shared map the caller keeps a
/// handle to, so dropping the [`compile_tools`] future loses nothing already verified.
///
/// ```
/// use chef_compress::CompiledSink;
/// let sink = CompiledSink::new();
/// let handle = sink.clone();
/// sink.insert("f", r#"def f():"doc""#);
/// assert_eq!(handle.snapshot().len(), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct CompiledSink(Arc<Mutex<BTreeMap<String, String>>>);

impl CompiledSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a verified line for `tool`.
    pub fn insert(&self, tool: impl Into<String>, line: impl Into<String>) {
        self.0.lock().insert(tool.into(), line.into());
    }

    /// A copy of everything recorded so far, by tool name.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        self.0.lock().clone()
    }
}

/// Counters after each finished tool, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CompileProgress {
    /// Tools finished (compiled or rejected).
    pub done: usize,
    /// Tools to compile in this run.
    pub total: usize,
    /// Tools rejected so far.
    pub rejected: usize,
    /// Tools that needed their second attempt so far.
    pub retried: usize,
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(CompileProgress) + Send + Sync>;

/// How [`compile_tools`] runs.
#[derive(Clone)]
pub struct CompileOptions {
    concurrency: usize,
    max_doc_chars: usize,
    sink: Option<CompiledSink>,
    progress: Option<ProgressFn>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        Self {
            concurrency: 4,
            max_doc_chars: DEFAULT_MAX_DOC_CHARS,
            sink: None,
            progress: None,
        }
    }
}

impl fmt::Debug for CompileOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompileOptions")
            .field("concurrency", &self.concurrency)
            .field("max_doc_chars", &self.max_doc_chars)
            .field("sink", &self.sink.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl CompileOptions {
    /// Four requests in flight, docstrings aimed at 110 characters, no sink, no progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most requests in flight at once (at least 1; default 4).
    #[must_use]
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The docstring length the prompt aims for (default 110).
    #[must_use]
    pub fn with_max_doc_chars(mut self, n: usize) -> Self {
        self.max_doc_chars = n;
        self
    }

    /// Publishes each verified line into `sink` as soon as it verifies.
    #[must_use]
    pub fn with_sink(mut self, sink: CompiledSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Calls `f` after each finished tool.
    #[must_use]
    pub fn with_progress(mut self, f: impl Fn(CompileProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }
}

/// Totals of one compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CompileStats {
    /// Tools asked for.
    pub total: usize,
    /// Tools with a verified line.
    pub compiled: usize,
    /// Tools whose first line failed verification and were asked again.
    pub retried: usize,
    /// Tools left without a line (level 4 renders their bare signature).
    pub rejected: usize,
    /// Characters of all compiled lines joined by `\n`.
    pub chars: usize,
    /// `chars / compiled`, rounded; 0 when nothing compiled.
    pub chars_per_tool: usize,
}

/// What [`compile_tools`] produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompileReport {
    /// Verified lines by tool name: what [`Options::with_compiled`](crate::Options::with_compiled) takes.
    pub map: BTreeMap<String, String>,
    /// `(tool, reason)` for each tool without a line, in catalogue order.
    pub rejected: Vec<(String, String)>,
    /// Docstrings that point at tools missing from the catalogue (advisory).
    pub dangling: Vec<DanglingReference>,
    /// Totals.
    pub stats: CompileStats,
}

enum Outcome {
    Compiled { line: String, retried: bool },
    Rejected { reason: String, retried: bool },
}

/// The model's line for `name`: the first `def name(` line, else the first `def ` line
/// (so a renamed tool is reported as renamed), else none.
fn pick_line<'a>(reply: &'a str, name: &str) -> Option<&'a str> {
    let exact = format!("def {name}(");
    let lines = || {
        reply
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("def "))
    };
    lines()
        .find(|l| l.starts_with(&exact))
        .or_else(|| lines().next())
}

async fn compile_one(
    tool: &ToolDefinition,
    completer: &dyn Completer,
    system: &str,
    roster: &str,
    sink: Option<&CompiledSink>,
) -> Outcome {
    let name = tool.name.as_str();
    let user = format!("{roster}{}", describe_for_compile(tool));
    let mut retried = false;
    let mut prompt = user.clone();
    loop {
        let reply = match completer.complete(system, &prompt).await {
            Ok(reply) => reply,
            Err(e) => {
                return Outcome::Rejected {
                    reason: format!("model call failed: {e}"),
                    retried,
                };
            }
        };
        let problem = match pick_line(&reply, name) {
            None => "no line returned".to_owned(),
            Some(line) => match verify_line(line, name, &tool.input_schema) {
                Ok(()) => {
                    if let Some(sink) = sink {
                        sink.insert(name, line);
                    }
                    return Outcome::Compiled {
                        line: line.to_owned(),
                        retried,
                    };
                }
                Err(e) => e.to_string(),
            },
        };
        if retried {
            return Outcome::Rejected {
                reason: problem,
                retried,
            };
        }
        retried = true;
        prompt = format!(
            "{user}\n\nYour previous line for {name} was rejected: {problem}. Write the line again, keeping every rule."
        );
    }
}

/// Compiles one Python `def` line per tool with `completer`, verifying each.
///
/// Tools are sent one per request (with the full inventory, so docstrings can contrast
/// against real names), at most `options.concurrency` at a time. A line that fails
/// verification is asked for once more with the reason; a second failure, a missing line
/// or a failed model call rejects the tool. Verified lines go into the options' sink the
/// moment they verify.
///
/// Fails only on unusable input (a tool without a name, two tools with one name).
///
/// ```
/// use chef_compress::{compile_tools, CompileOptions, Completer, CompleterError};
/// use chef_ir::ToolDefinition;
/// use serde_json::json;
///
/// struct Echo;
/// #[async_trait::async_trait]
/// impl Completer for Echo {
///     async fn complete(&self, _system: &str, _user: &str) -> Result<String, CompleterError> {
///         Ok(r#"def ping(host):"check a host answers""#.to_owned())
///     }
/// }
///
/// let tools = [ToolDefinition::new("ping", json!({"properties": {"host": {}}, "required": ["host"]}))];
/// let report = futures::executor::block_on(compile_tools(&tools, &Echo, &CompileOptions::new()))?;
/// assert_eq!(report.map["ping"], r#"def ping(host):"check a host answers""#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn compile_tools(
    tools: &[ToolDefinition],
    completer: &dyn Completer,
    options: &CompileOptions,
) -> Result<CompileReport, CompressError> {
    let mut seen = std::collections::HashSet::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let name = tool.name.as_str();
        if name.trim().is_empty() {
            return Err(CompressError::MissingName { index });
        }
        crate::error::check_names(index, tool)?;
        if !seen.insert(name) {
            return Err(CompressError::DuplicateName {
                name: name.to_owned(),
            });
        }
    }
    let mut sorted: Vec<&ToolDefinition> = tools.iter().collect();
    sorted.sort_by(|a, b| compare_names(a.name.as_str(), b.name.as_str()));
    let names: Vec<&str> = sorted.iter().map(|t| t.name.as_str()).collect();
    let roster = roster(&names);
    let system = compile_prompt(options.max_doc_chars);

    let total = sorted.len();
    let mut progress = CompileProgress {
        total,
        ..CompileProgress::default()
    };
    let mut outcomes: Vec<(usize, Outcome)> = Vec::with_capacity(total);
    let mut running = stream::iter(sorted.iter().enumerate())
        .map(|(i, tool)| {
            let (system, roster) = (&system, &roster);
            async move {
                let outcome =
                    compile_one(tool, completer, system, roster, options.sink.as_ref()).await;
                (i, outcome)
            }
        })
        .buffer_unordered(options.concurrency);
    while let Some((i, outcome)) = running.next().await {
        progress.done += 1;
        match &outcome {
            Outcome::Compiled { retried, .. } => progress.retried += usize::from(*retried),
            Outcome::Rejected { retried, .. } => {
                progress.retried += usize::from(*retried);
                progress.rejected += 1;
            }
        }
        if let Some(f) = &options.progress {
            f(progress);
        }
        outcomes.push((i, outcome));
    }
    drop(running);
    outcomes.sort_by_key(|(i, _)| *i);

    let mut report = CompileReport::default();
    for (i, outcome) in outcomes {
        let name = names.get(i).copied().unwrap_or_default().to_owned();
        match outcome {
            Outcome::Compiled { line, .. } => {
                report.map.insert(name, line);
            }
            Outcome::Rejected { reason, .. } => report.rejected.push((name, reason)),
        }
    }
    let joined: usize = report
        .map
        .values()
        .map(|l| l.chars().count())
        .sum::<usize>()
        + report.map.len().saturating_sub(1);
    let compiled = report.map.len();
    report.stats = CompileStats {
        total,
        compiled,
        retried: progress.retried,
        rejected: report.rejected.len(),
        chars: joined,
        chars_per_tool: (joined + compiled / 2).checked_div(compiled).unwrap_or(0),
    };
    let sorted_tools: Vec<ToolDefinition> = sorted.into_iter().cloned().collect();
    report.dangling = dangling_references(&sorted_tools, |n| report.map.get(n).map(String::as_str));
    Ok(report)
}
