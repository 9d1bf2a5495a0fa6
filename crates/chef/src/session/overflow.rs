//! The overflow step of a turn: budget, handoff notice, summary (see [`crate::overflow`]).

use std::sync::Arc;

use chef_ir::{Message, Target};

use super::{Chef, ChunkedPayload, Payload};
use crate::{
    announce::{Announcement, Channel},
    error::{ArchiveError, ChefError},
    events::ChefEvent,
    overflow::{
        self, Budget, HANDOFF_ID, Heuristic, OverflowOutcome, OverflowState, Preserve, Summarizer,
        SummaryFailure, SummaryRequest, Tokenizer,
    },
    store::{Entry, Expect, Namespace, StoreKey},
};

impl Chef {
    /// Counts tokens with `tokenizer` instead of the [`Heuristic`] (and keeps whole turns
    /// within a ratio of the trigger by default; see [`Preserve`]).
    #[must_use]
    pub fn with_tokenizer(mut self, tokenizer: Arc<dyn Tokenizer>) -> Self {
        self.conversation.tokenizer = Some(tokenizer);
        self.conversation.history.recount();
        self
    }

    /// Summarises older turns with `summarizer` when the history overflows.
    #[must_use]
    pub fn with_summarizer(mut self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.conversation.summarizer = Some(summarizer);
        self
    }

    /// Sets or clears the summariser on a session already built ([`with_summarizer`]
    /// is the builder form). Without one, an overflow archives and drops the older turns.
    ///
    /// [`with_summarizer`]: Self::with_summarizer
    pub fn set_summarizer(&mut self, summarizer: Option<Arc<dyn Summarizer>>) -> &mut Self {
        self.conversation.summarizer = summarizer;
        // Another summariser (or none: archive and drop) gets its own tries: an open
        // circuit breaker closes.
        self.conversation.overflow.consecutive_failures = 0;
        self
    }

    /// Records the prompt tokens the provider reported for the last request. Budget
    /// verdicts and the compile's notices read it until the next overflow step consumes
    /// it.
    pub fn report_token_usage(&mut self, tokens: u64) -> &mut Self {
        self.conversation.overflow.reported_tokens = Some(tokens);
        self
    }

    /// The overflow bookkeeping (window, failures in a row, reported usage).
    pub fn overflow_state(&self) -> &OverflowState {
        &self.conversation.overflow
    }

    /// Where the history stands against the context window. Reading it changes nothing a
    /// compile can see (it only caches per-message token counts).
    pub fn budget(&mut self) -> Budget {
        let config = &self.config.overflow;
        let limit = config.context_window;
        #[allow(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52"
        )]
        let trigger = limit.map(|l| l as f64 * config.trigger_ratio);
        let current = match (
            &self.conversation.tokenizer,
            self.conversation.overflow.reported_tokens,
        ) {
            (Some(tokenizer), reported) => {
                let counted = self.conversation.history.tokens(tokenizer.as_ref());
                counted.max(reported.unwrap_or(0))
            }
            // What was pushed after the report (a large tool result) is not in it: the
            // estimate counts it.
            (None, Some(reported)) => reported.max(self.conversation.history.tokens(&Heuristic)),
            (None, None) => self.conversation.history.tokens(&Heuristic),
        };
        #[allow(
            clippy::cast_precision_loss,
            reason = "token counts are far below 2^52"
        )]
        let remaining = trigger.map(|t| t - current as f64);
        Budget {
            limit,
            trigger,
            current,
            remaining,
        }
    }

    /// Writes pending offloads, runs overflow, then compiles: the turn an agent loop with a
    /// [`Summarizer`] or an offload policy calls.
    pub async fn compile_async(&mut self, target: Target) -> Result<Payload, ChefError> {
        self.offloads_mut().flush().await?;
        self.overflow().await?;
        self.compile(target)
    }

    /// [`compile_async`](Self::compile_async) with the body as chunks: overflow, then
    /// [`compile_chunked`](Chef::compile_chunked).
    pub async fn compile_chunked_async(
        &mut self,
        target: Target,
    ) -> Result<ChunkedPayload, ChefError> {
        self.offloads_mut().flush().await?;
        self.overflow().await?;
        self.compile_chunked(target)
    }

    /// The overflow step: summarises (or archives and drops) older turns when the history
    /// is over the trigger or a new context window was requested. See [`crate::overflow`].
    ///
    /// A pending [`Chef::request_new_context`] is consumed whatever happens. Summary failures
    /// are not errors: they come back as [`OverflowOutcome::Failed`] with the history
    /// unchanged. `Err` means the store could not archive the replaced messages (the
    /// history is then unchanged too).
    pub async fn overflow(&mut self) -> Result<OverflowOutcome, ChefError> {
        let forced = std::mem::take(&mut self.conversation.new_context_requested);
        if self.conversation.history.is_empty() {
            // Under the trigger, an empty history is one more that needs nothing; asked
            // to act (forced, or over on the system text alone), it has nothing to act on.
            let budget = self.budget();
            return Ok(if forced || budget.is_over() {
                OverflowOutcome::NothingToCompress
            } else {
                OverflowOutcome::NotNeeded { budget }
            });
        }
        let config = self.config.overflow.clone();
        if self.conversation.overflow.consecutive_failures >= config.max_failures {
            return Ok(OverflowOutcome::BreakerOpen {
                failures: self.conversation.overflow.consecutive_failures,
            });
        }
        let budget = self.budget();
        self.conversation.overflow.reported_tokens = None;
        if !forced && !budget.is_over() {
            return Ok(OverflowOutcome::NotNeeded { budget });
        }
        self.emit(&ChefEvent::CompressStart {
            history_len: self.conversation.history.len(),
            current_tokens: budget.current,
            trigger: budget.trigger,
            forced,
        });
        let outcome = self.run_overflow(forced, budget, &config).await;
        self.emit(&ChefEvent::CompressEnd {
            compressed: matches!(&outcome, Ok(o) if o.changed_history()),
        });
        outcome
    }

    async fn run_overflow(
        &mut self,
        forced: bool,
        budget: Budget,
        config: &overflow::OverflowConfig,
    ) -> Result<OverflowOutcome, ChefError> {
        let turns = overflow::turns(&self.conversation.history);
        let split = if forced {
            overflow::forced_split_point(&turns)
        } else {
            let preserve = config
                .preserve
                .unwrap_or(if self.conversation.tokenizer.is_some() {
                    Preserve::Ratio(0.8)
                } else {
                    Preserve::RecentTurns(1)
                });
            // Per-message counts, cached as the budget reads them.
            let tokenizer: &dyn Tokenizer =
                self.conversation.tokenizer.as_deref().unwrap_or(&Heuristic);
            let counts = self.conversation.history.tokens_per_message(tokenizer);
            let mut turn_tokens = |t: &overflow::Turn| -> u64 {
                counts.get(t.start..t.end).map_or(0, |s| s.iter().sum())
            };
            overflow::split_point(&turns, preserve, budget.trigger, &mut turn_tokens)
        };
        let Some(split) = split else {
            return Ok(OverflowOutcome::NothingToCompress);
        };
        // The latest user message stays verbatim, after the summary with the pinned ones:
        // it is the task in hand, which a summary would only paraphrase (the context audit
        // found it folded in, leaving `[summary, call, result]`). Not the lead message of an
        // earlier window (always first, in one of the two wordings chef writes), which is
        // summarised again.
        let history: &[Message] = &self.conversation.history;
        let latest_request = history
            .iter()
            .rposition(|m| m.role == chef_ir::Role::User)
            .filter(|&i| i > 0 || !history.first().is_some_and(is_lead));
        let mut pinned = Vec::new();
        let mut replaced = Vec::new();
        for turn in turns.iter().take_while(|t| t.end <= split) {
            let messages = self
                .conversation
                .history
                .get(turn.start..turn.end)
                .unwrap_or_default();
            let request = latest_request.is_some_and(|i| (turn.start..turn.end).contains(&i));
            if turn.pinned || request {
                pinned.extend_from_slice(messages);
            } else {
                replaced.extend_from_slice(messages);
            }
        }
        if replaced.is_empty() {
            return Ok(OverflowOutcome::NothingToCompress);
        }
        let window = self.conversation.overflow.window;
        let next = window + 1;
        let summary = match self.conversation.summarizer.clone() {
            Some(summarizer) => match self
                .summarize(&*summarizer, &replaced, window, config)
                .await
            {
                Ok(text) => Some(text),
                Err(reason) => {
                    self.conversation.overflow.consecutive_failures += 1;
                    let failures = self.conversation.overflow.consecutive_failures;
                    self.emit(&ChefEvent::SummaryFailed {
                        reason: reason.to_string(),
                        failures,
                    });
                    return Ok(OverflowOutcome::Failed { reason, failures });
                }
            },
            None => None,
        };
        let archive = if config.archive {
            Some(self.archive_span(window, &replaced).await?)
        } else {
            None
        };
        let lead = match &summary {
            Some(text) => overflow::summary_message(text, next, window, archive.as_deref()),
            None => dropped_notice(replaced.len(), archive.as_deref()),
        };
        let count = replaced.len() + pinned.len();
        let pinned_kept = pinned.len();
        self.conversation.history.rewrite(|history| {
            let tail = history.split_off(split);
            history.clear();
            history.reserve(1 + pinned.len() + tail.len());
            history.push(lead);
            history.extend(pinned);
            history.extend(tail);
        });
        self.conversation.overflow.next_window();
        self.emit(&ChefEvent::Summarized {
            replaced: count,
            window: next,
        });
        Ok(match summary {
            Some(_) => OverflowOutcome::Summarized {
                replaced: count,
                pinned_kept,
                window: next,
                archive,
            },
            None => OverflowOutcome::Dropped {
                dropped: replaced.len(),
                window: next,
                archive,
            },
        })
    }

    async fn summarize(
        &self,
        summarizer: &dyn Summarizer,
        span: &[Message],
        window: u64,
        config: &overflow::OverflowConfig,
    ) -> Result<String, SummaryFailure> {
        let request = SummaryRequest {
            span: overflow::prepare_span(span, config.tool_result_stub_threshold),
            instruction: overflow::INSTRUCTION.to_owned(),
            window,
        };
        let raw = summarizer.summarize(&request).await?;
        let text = overflow::clean(&raw);
        if text.is_empty() {
            return Err(SummaryFailure::Empty);
        }
        overflow::check_shrink(
            overflow::span_chars(span),
            text.chars().count(),
            config.min_shrink_ratio,
        )?;
        Ok(text)
    }

    /// Writes the replaced messages to `archive/window-<n>.json` (a fresh key if that one is
    /// taken, say by another lineage restored into this store) and returns its URI.
    async fn archive_span(&self, window: u64, span: &[Message]) -> Result<String, ChefError> {
        let content = serde_json::to_string(span)
            .map_err(|e| ChefError::Summarize(ArchiveError::Serialize(e)))?;
        let namespace = Namespace::ARCHIVE;
        for attempt in 0u32..100 {
            let name = if attempt == 0 {
                format!("window-{window}.json")
            } else {
                format!("window-{window}-{attempt}.json")
            };
            let key = StoreKey::new(&name).map_err(crate::store::StoreError::from)?;
            let entry = Entry::new(content.clone())
                .with_meta("window", window)
                .with_meta("messages", span.len());
            match self
                .storage
                .store
                .put(&namespace, &key, entry, Expect::Absent)
                .await
            {
                Ok(_) => return Ok(format!("context://archive/{name}")),
                Err(e) if e.is_conflict() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(ChefError::Summarize(ArchiveError::NoFreeKey { window }))
    }

    /// The handoff notice for this compile, when the budget is low and it has not been shown
    /// in this window. `record` marks it shown.
    pub(super) fn handoff_notice(&mut self, record: bool) -> Option<Announcement> {
        let handoff = self.config.overflow.handoff.clone()?;
        if self.conversation.overflow.handoff_noticed_window
            == Some(self.conversation.overflow.window)
        {
            return None;
        }
        self.config.overflow.context_window?;
        let remaining = self.budget().remaining?;
        #[allow(
            clippy::cast_precision_loss,
            reason = "token budgets are far below 2^52"
        )]
        let low = remaining <= handoff.budget_tokens() as f64;
        if !low {
            return None;
        }
        if record {
            self.conversation.overflow.handoff_noticed_window =
                Some(self.conversation.overflow.window);
        }
        Some(Announcement {
            id: HANDOFF_ID.to_owned(),
            content: handoff.render(remaining),
            channel: Channel::Auto,
        })
    }

    /// Why this compile should have been preceded by an overflow step, if it should.
    pub(super) fn pending_overflow_notice(&mut self) -> Option<String> {
        if self.conversation.new_context_requested {
            return Some(
                "a new context window was requested; run Chef::overflow (or compile_async) \
                 before compile to act on it"
                    .to_owned(),
            );
        }
        self.config.overflow.context_window?;
        let budget = self.budget();
        budget.is_over().then(|| {
            format!(
                "the history ({} tokens) is over the overflow trigger; run Chef::overflow (or \
                 compile_async) before compile to summarise it",
                budget.current
            )
        })
    }
}

/// Whether `message` is the lead message an overflow wrote: a summary
/// ([`overflow::summary_message`]) or a dropped-turns notice ([`dropped_notice`]).
fn is_lead(message: &Message) -> bool {
    let text = message.text();
    message.role == chef_ir::Role::User
        && (text.starts_with(overflow::SUMMARY_LEAD)
            || (text.starts_with('[') && text.contains(DROPPED_LEAD)))
}

/// What every dropped-turns notice says after its count.
const DROPPED_LEAD: &str = " earlier messages of this conversation were ";

fn dropped_notice(count: usize, archive: Option<&str>) -> Message {
    let text = match archive {
        Some(uri) => format!(
            "[{count}{DROPPED_LEAD}moved out of the context window to {uri}; read them with \
             the context tools if you need them.]"
        ),
        None => format!("[{count}{DROPPED_LEAD}dropped to fit the context window.]"),
    };
    Message::user(text)
}
