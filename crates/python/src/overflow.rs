//! What the `Chef` class does with overflow: a Python callable as the session's
//! summariser, the budget and each step's outcome as dicts, and the guard that keeps the
//! callable from calling back into the session it is summarising.
//!
//! The summariser runs while the session's lock is held (the overflow step owns the
//! history), with the GIL taken back for the call. Two things follow. Another thread that
//! waits for the lock must not hold the GIL meanwhile (`Chef::lock` releases it while it
//! waits). And the callable must not use the session it summarises: the lock is not
//! re-entrant, so such a call raises instead of waiting for itself.

use std::{cell::RefCell, sync::Arc};

use async_trait::async_trait;
use chef::overflow::{Budget, OverflowOutcome, Summarizer, SummarizerError, SummaryRequest};
use pyo3::prelude::*;
use serde_json::{Value, json};

use crate::{failure::Failure, json_out::to_py};

thread_local! {
    /// The sessions (their lock's address) whose overflow step runs on this thread.
    static SUMMARISING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    /// A `KeyboardInterrupt` or `SystemExit` the summariser raised on this thread: the step
    /// fails like any failed summary, then `overflow()` raises it again, so Ctrl-C in a
    /// summariser is not swallowed.
    static INTERRUPTED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The interrupt a summariser raised during the overflow step that just ran on this
/// thread, if any (taken: the next step starts clean).
pub(crate) fn take_interrupt() -> Option<PyErr> {
    INTERRUPTED.with(|slot| slot.borrow_mut().take())
}

/// Marks the session at `address` as summarising on this thread until dropped.
pub(crate) struct Summarising(usize);

impl Summarising {
    pub(crate) fn start(address: usize) -> Self {
        SUMMARISING.with(|s| s.borrow_mut().push(address));
        Self(address)
    }
}

impl Drop for Summarising {
    fn drop(&mut self) {
        SUMMARISING.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(at) = s.iter().rposition(|&a| a == self.0) {
                s.remove(at);
            }
        });
    }
}

/// Refuses a call into the session at `address` from its own summariser.
pub(crate) fn not_summarising(address: usize) -> Result<(), Failure> {
    if SUMMARISING.with(|s| s.borrow().contains(&address)) {
        return Err(Failure::Invalid(
            "the session is running its overflow step: the summariser cannot call the \
             session it summarises (use another Chef, or the request it is given)"
                .to_owned(),
        ));
    }
    Ok(())
}

/// Where a session keeps its summariser callable: one slot per Python `Chef`, which the
/// garbage collector sees (`Chef.__traverse__`) and can empty (`Chef.__clear__`), so that
/// a summariser that refers back to its session (`lambda r, s=s: …`, a bound method of an
/// object holding it) does not keep both alive forever.
pub(crate) type Slot = Arc<parking_lot::Mutex<Option<Py<PyAny>>>>;

/// A Python callable as a [`Summarizer`]: called with the request as a dict (`span`,
/// `instruction`, `window`, and `messages`, the span followed by the instruction as a
/// user message), it returns the summary text. An exception or a value that is not a
/// `str` is a failed summary (the history stays as it was). The callable is read from the
/// session's [`Slot`] at each call.
pub(crate) struct PySummarizer(Slot);

impl PySummarizer {
    /// Puts `callable` in `slot` and returns the summariser that calls it.
    pub(crate) fn shared(
        callable: &Bound<'_, PyAny>,
        slot: &Slot,
    ) -> Result<Arc<dyn Summarizer>, Failure> {
        if !callable.is_callable() {
            return Err(Failure::Invalid(
                "set_summarizer takes a callable (request dict → summary str) or None".to_owned(),
            ));
        }
        // The one it replaces is dropped after the slot's lock (that can run Python code).
        let old = slot.lock().replace(callable.clone().unbind());
        drop(old);
        Ok(Arc::new(Self(Arc::clone(slot))))
    }
}

#[async_trait]
impl Summarizer for PySummarizer {
    async fn summarize(&self, request: &SummaryRequest) -> Result<String, SummarizerError> {
        let value = json!({
            "span": request.span,
            "instruction": request.instruction,
            "window": request.window,
            "messages": request.to_messages(),
        });
        Python::attach(|py| {
            // Taken out of the slot's lock before the call: the callable may run the
            // garbage collector, which reads the slot.
            let Some(callable) = self.0.lock().as_ref().map(|c| c.clone_ref(py)) else {
                return Err(SummarizerError::new(
                    "the summariser was released (its session was collected or closed)",
                ));
            };
            let summary = to_py(py, &value)
                .and_then(|arg| callable.bind(py).call1((arg,))?.extract::<String>());
            summary.map_err(|e| {
                let message = e.to_string();
                // Not an `Exception`: KeyboardInterrupt, SystemExit, GeneratorExit.
                if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    INTERRUPTED.with(|slot| *slot.borrow_mut() = Some(e));
                }
                SummarizerError::new(message)
            })
        })
    }
}

/// A budget as a dict: `limit`, `trigger`, `current`, `remaining`, `over`.
pub(crate) fn budget(budget: &Budget) -> Value {
    json!({
        "limit": budget.limit,
        "trigger": budget.trigger,
        "current": budget.current,
        "remaining": budget.remaining,
        "over": budget.is_over(),
    })
}

/// An overflow step's outcome as a dict, its kind under `outcome`.
pub(crate) fn outcome(outcome: &OverflowOutcome) -> Value {
    match outcome {
        OverflowOutcome::NotNeeded { budget: b } => {
            json!({"outcome": "not_needed", "budget": budget(b)})
        }
        OverflowOutcome::BreakerOpen { failures } => {
            json!({"outcome": "breaker_open", "failures": failures})
        }
        OverflowOutcome::Summarized {
            replaced,
            pinned_kept,
            window,
            archive,
        } => json!({
            "outcome": "summarized",
            "replaced": replaced,
            "pinned_kept": pinned_kept,
            "window": window,
            "archive": archive,
        }),
        OverflowOutcome::Dropped {
            dropped,
            window,
            archive,
        } => json!({
            "outcome": "dropped",
            "dropped": dropped,
            "window": window,
            "archive": archive,
        }),
        OverflowOutcome::Failed { reason, failures } => json!({
            "outcome": "failed",
            "reason": reason.to_string(),
            "failures": failures,
        }),
        OverflowOutcome::NothingToCompress => json!({"outcome": "nothing_to_compress"}),
        other => json!({"outcome": "other", "detail": format!("{other:?}")}),
    }
}
