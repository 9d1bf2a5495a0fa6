//! What the `Chef` class does with offloading: the policy a tool result over a limit is
//! stored whole under, and the report of a flush, over the Rust session.

use chef::offload::{FlushReport, Keep, OffloadPolicy};
use serde_json::{Value, json};

use crate::failure::Failure;

/// The policy for `chars=` or `tokens=` (one of them, neither turns offloading off),
/// keeping `head` and `tail` characters of a result in the window (both 0: nothing).
pub(crate) fn policy(
    chars: Option<usize>,
    tokens: Option<usize>,
    head: usize,
    tail: usize,
) -> Result<Option<OffloadPolicy>, Failure> {
    let base = match (chars, tokens) {
        (None, None) => return Ok(None),
        (Some(n), None) => OffloadPolicy::chars(n),
        (None, Some(n)) => OffloadPolicy::tokens(n),
        (Some(_), Some(_)) => {
            return Err(Failure::Invalid(
                "set_offload_policy takes chars= or tokens=, not both".to_owned(),
            ));
        }
    };
    let keep = if head == 0 && tail == 0 {
        Keep::Nothing
    } else {
        Keep::HeadTail { head, tail }
    };
    Ok(Some(base.with_keep(keep)))
}

/// A flush's report as a dict: the addresses written, how many the store already held,
/// and the results put back whole (address and why).
pub(crate) fn flush_report(report: &FlushReport) -> Value {
    json!({
        "stored": report.stored,
        "deduplicated": report.deduplicated,
        "kept_whole": report
            .kept_whole
            .iter()
            .map(|(uri, why)| json!({"uri": uri, "error": why}))
            .collect::<Vec<_>>(),
    })
}
