//! Keeping a conversation inside the model's context window.
//!
//! A session tracks a token [`Budget`]: the history's tokens, counted by a [`Tokenizer`]
//! (default [`Heuristic`]) or reported by the provider
//! ([`Chef::report_token_usage`](crate::Chef::report_token_usage)), against a trigger at
//! `context_window × trigger_ratio`. When the history goes over the trigger, or the model
//! or host asked for a new context window ([`Chef::request_new_context`](crate::Chef::request_new_context)),
//! [`Chef::overflow`](crate::Chef::overflow) (and [`Chef::compile_async`](crate::Chef::compile_async),
//! which runs it before compiling) summarises the older turns through the caller's
//! [`Summarizer`]:
//!
//! * cuts fall on turn boundaries (a tool call and its results are never split);
//! * the most recent turns are kept verbatim ([`Preserve`]), and so is every pinned message
//!   (pinning widens to its whole turn), placed right after the summary;
//! * the replaced messages are archived in the store (namespace `archive`) before anything
//!   is dropped, and the summary cites where;
//! * the latest user message (the request in hand) is kept verbatim, with the pinned
//!   messages, when the span would take it (the reference summarises it; a summary only
//!   paraphrases the task); the lead message of an earlier window is summarised again;
//! * the stored history **is replaced** by `[summary, pinned…, kept tail…]`, so the next
//!   compile does not send the full history again (the reference keeps its stored history
//!   and re-sends it on every later compile);
//! * a failed summary (an error, an empty answer, one that does not shrink the span) changes
//!   nothing and counts toward a circuit breaker that stops trying after
//!   [`OverflowConfig::max_failures`] failures in a row, until a summary lands, the history
//!   is cleared, the host sets a summariser again (`Chef::set_summarizer`, `None`
//!   included: archive and drop), or a snapshot taken with fewer failures is restored (a
//!   snapshot carries the count). A new window asked for while it is open is not tried.
//!
//! Without a summariser the span is archived and dropped, and a short notice saying where it
//! went takes its place: with archiving on (the default) nothing is lost, and the model can
//! read it back; with it off the span is dropped.
//!
//! Between model calls, [`compact`] clears old tool results, thinking and reasoning tags
//! mechanically (no model), for a caller who wants to shrink the history without a summary.
//!
//! With a handoff budget ([`HandoffBudget`]), a compile whose remaining budget is within
//! the handoff budget tells the model, once per context window, that it should wrap up and
//! call `new_context`.

mod budget;
mod compact;
mod split;
mod summarize;

use serde::{Deserialize, Serialize};

#[cfg(feature = "tokens")]
pub use self::budget::O200k;
pub(crate) use self::{
    budget::CountCache,
    split::{Turn, forced_split_point, split_point, turns},
    summarize::{
        INSTRUCTION, SUMMARY_LEAD, check_shrink, clean, prepare_span, span_chars, summary_message,
    },
};
pub use self::{
    budget::{Budget, Heuristic, Tokenizer, estimate_text},
    compact::{CLEARED_TOOL_RESULT, Clear, compact},
    split::Preserve,
    summarize::{Summarizer, SummarizerError, SummaryFailure, SummaryRequest},
};

/// The announcement id of the handoff notice.
pub const HANDOFF_ID: &str = "__handoff__";

/// The longest handoff prompt accepted, in bytes.
pub const MAX_HANDOFF_PROMPT_BYTES: usize = 2_000;

/// How a session keeps its history within the context window.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OverflowConfig {
    /// The context window in tokens; `None` (the default): unlimited, so only forced
    /// overflows (`new_context`, [`Chef::request_new_context`](crate::Chef::request_new_context)) run.
    pub context_window: Option<u64>,
    /// The fraction of the window at which overflow runs (default 0.7).
    pub trigger_ratio: f64,
    /// What to keep verbatim at the end (default: `Ratio(0.8)` of the trigger when a
    /// tokenizer is set, else the last turn).
    pub preserve: Option<Preserve>,
    /// A summary of a span of 2,000 characters or more must be at most
    /// `(1 − min_shrink_ratio)` of it (default 0.5; 0 turns the check off).
    pub min_shrink_ratio: f64,
    /// Tool results longer than this many characters reach the summariser as a one-line
    /// stub (default: not stubbed).
    pub tool_result_stub_threshold: Option<usize>,
    /// Archive replaced messages in the store's `archive` namespace (default true).
    pub archive: bool,
    /// Failures in a row after which overflow stops trying (the circuit breaker; default 3).
    pub max_failures: u32,
    /// The handoff budget: when set, `new_context` is offered (unified tools mode) and the
    /// model is told when the budget runs low.
    pub handoff: Option<HandoffBudget>,
}

/// [`OverflowConfig::trigger_ratio`] by default, and for a ratio that is not a number.
const DEFAULT_TRIGGER_RATIO: f64 = 0.7;
/// [`OverflowConfig::min_shrink_ratio`] by default, and for a ratio that is not a number.
const DEFAULT_MIN_SHRINK_RATIO: f64 = 0.5;

/// `ratio` clamped to `min`–1, or `default` when it is not a finite number.
fn ratio_within(ratio: f64, min: f64, default: f64) -> f64 {
    if ratio.is_finite() {
        ratio.clamp(min, 1.0)
    } else {
        default
    }
}

impl Default for OverflowConfig {
    fn default() -> Self {
        Self {
            context_window: None,
            trigger_ratio: DEFAULT_TRIGGER_RATIO,
            preserve: None,
            min_shrink_ratio: DEFAULT_MIN_SHRINK_RATIO,
            tool_result_stub_threshold: None,
            archive: true,
            max_failures: 3,
            handoff: None,
        }
    }
}

impl OverflowConfig {
    /// Sets the context window (tokens).
    #[must_use]
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Sets the trigger ratio (clamped to 0.01–1).
    #[must_use]
    pub fn with_trigger_ratio(mut self, ratio: f64) -> Self {
        self.trigger_ratio = ratio_within(ratio, 0.01, DEFAULT_TRIGGER_RATIO);
        self
    }

    /// Sets what is kept verbatim.
    #[must_use]
    pub fn with_preserve(mut self, preserve: Preserve) -> Self {
        self.preserve = Some(preserve);
        self
    }

    /// Sets the shrink guard ratio (clamped to 0–1).
    #[must_use]
    pub fn with_min_shrink_ratio(mut self, ratio: f64) -> Self {
        self.min_shrink_ratio = ratio_within(ratio, 0.0, DEFAULT_MIN_SHRINK_RATIO);
        self
    }

    /// Stubs tool results longer than `chars` before summarising.
    #[must_use]
    pub fn with_tool_result_stub_threshold(mut self, chars: usize) -> Self {
        self.tool_result_stub_threshold = Some(chars);
        self
    }

    /// Turns archiving of replaced messages on or off.
    #[must_use]
    pub fn with_archive(mut self, on: bool) -> Self {
        self.archive = on;
        self
    }

    /// Sets the circuit breaker's failure count (at least 1).
    #[must_use]
    pub fn with_max_failures(mut self, failures: u32) -> Self {
        self.max_failures = failures.max(1);
        self
    }

    /// Sets the handoff budget.
    #[must_use]
    pub fn with_handoff(mut self, handoff: HandoffBudget) -> Self {
        self.handoff = Some(handoff);
        self
    }
}

/// When to tell the model its context window is nearly used up, and what to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffBudget {
    budget_tokens: u64,
    prompt: String,
}

/// A handoff budget was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandoffError {
    /// The budget is zero.
    #[error("the handoff budget must be a positive number of tokens")]
    ZeroBudget,
    /// The prompt is empty after trimming.
    #[error("the handoff prompt is empty")]
    EmptyPrompt,
    /// The prompt is too long.
    #[error("the handoff prompt is {0} bytes; at most {MAX_HANDOFF_PROMPT_BYTES} are accepted")]
    PromptTooLong(usize),
}

/// The default handoff prompt; `{n_remaining}` becomes the tokens left before the trigger.
pub const DEFAULT_HANDOFF_PROMPT: &str = "About {n_remaining} tokens of this context window are \
left. Finish the step you are on, save what the next window needs (decisions, open items, \
where things are) with the context tool under context://notes/ or context://memory/, then \
call new_context to continue in a fresh window.";

impl HandoffBudget {
    /// A budget of `tokens` with the default prompt.
    pub fn new(tokens: u64) -> Result<Self, HandoffError> {
        if tokens == 0 {
            return Err(HandoffError::ZeroBudget);
        }
        Ok(Self {
            budget_tokens: tokens,
            prompt: DEFAULT_HANDOFF_PROMPT.to_owned(),
        })
    }

    /// Replaces the prompt (trimmed; not empty; at most 2,000 bytes). `{n_remaining}` in it
    /// becomes the tokens left.
    pub fn with_prompt(mut self, prompt: &str) -> Result<Self, HandoffError> {
        let prompt = prompt.trim();
        if prompt.is_empty() {
            return Err(HandoffError::EmptyPrompt);
        }
        if prompt.len() > MAX_HANDOFF_PROMPT_BYTES {
            return Err(HandoffError::PromptTooLong(prompt.len()));
        }
        self.prompt = prompt.to_owned();
        Ok(self)
    }

    /// The budget in tokens.
    pub fn budget_tokens(&self) -> u64 {
        self.budget_tokens
    }

    /// The prompt template.
    pub fn prompt(&self) -> &str {
        &self.prompt
    }

    pub(crate) fn render(&self, remaining: f64) -> String {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 0 and rounded; token budgets are far below u64::MAX"
        )]
        let n = remaining.max(0.0).round() as u64;
        self.prompt.replace("{n_remaining}", &n.to_string())
    }
}

impl Default for HandoffBudget {
    fn default() -> Self {
        Self {
            budget_tokens: 8_000,
            prompt: DEFAULT_HANDOFF_PROMPT.to_owned(),
        }
    }
}

/// The overflow bookkeeping a session carries (and snapshots).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OverflowState {
    /// The last usage reported by the provider, read by budget verdicts and consumed by
    /// the next overflow step.
    #[serde(default)]
    pub reported_tokens: Option<u64>,
    /// Failed summaries in a row.
    #[serde(default)]
    pub consecutive_failures: u32,
    /// The current context window (0 at the start; +1 at every landed overflow and every
    /// `clear_history`).
    #[serde(default)]
    pub window: u64,
    /// The window the handoff notice was last shown in.
    #[serde(default)]
    pub handoff_noticed_window: Option<u64>,
}

impl OverflowState {
    /// Starts the next context window: the circuit breaker resets, reported usage is
    /// forgotten and the handoff notice may show again.
    pub(crate) fn next_window(&mut self) {
        self.window += 1;
        self.consecutive_failures = 0;
        self.reported_tokens = None;
    }
}

/// What one overflow step did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OverflowOutcome {
    /// Under the trigger and not forced: nothing to do.
    NotNeeded {
        /// The budget read.
        budget: Budget,
    },
    /// The circuit breaker is open: overflow does nothing until it is reset.
    BreakerOpen {
        /// Failures in a row.
        failures: u32,
    },
    /// Over the trigger (or forced), but every turn is kept or pinned.
    NothingToCompress,
    /// The older turns were summarised; the stored history now starts with the summary.
    Summarized {
        /// Messages replaced (pinned ones included, as in the reference).
        replaced: usize,
        /// Pinned messages kept from the replaced span.
        pinned_kept: usize,
        /// The new window.
        window: u64,
        /// Where the replaced messages were archived.
        archive: Option<String>,
    },
    /// No summariser is configured: the older turns were archived and dropped.
    Dropped {
        /// Messages dropped (pinned ones kept).
        dropped: usize,
        /// The new window.
        window: u64,
        /// Where they were archived.
        archive: Option<String>,
    },
    /// The summary was not used; the history is unchanged.
    Failed {
        /// Why.
        reason: SummaryFailure,
        /// Failures in a row, this one included.
        failures: u32,
    },
}

impl OverflowOutcome {
    /// Whether the stored history was replaced.
    pub fn changed_history(&self) -> bool {
        matches!(self, Self::Summarized { .. } | Self::Dropped { .. })
    }
}
