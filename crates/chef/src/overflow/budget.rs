//! Counting tokens and reading the budget.

use chef_ir::Message;

/// Counts the tokens of messages, for the overflow budget.
///
/// Implement it with the model's own tokenizer when you have one; without one, chef uses
/// [`Heuristic`]. Counting is per message so that a session can cache the count of every
/// message it has already seen: a turn pays only for the messages it added.
pub trait Tokenizer: Send + Sync {
    /// The tokens of one message as the model will see it.
    fn count(&self, message: &Message) -> u64;
}

impl<F> Tokenizer for F
where
    F: Fn(&Message) -> u64 + Send + Sync,
{
    fn count(&self, message: &Message) -> u64 {
        self(message)
    }
}

/// A model-free estimate: 1.5 tokens per CJK character and 0.3 per other character of the
/// message's JSON form, rounded up.
///
/// CJK means U+4E00–U+9FA5, U+3040–U+30FF and U+AC00–U+D7AF. Characters are Unicode scalar
/// values, not UTF-16 units: the same text gives the same count on every platform. The
/// estimate is per message, so a history's estimate is the sum over its messages (the
/// reference estimates the serialised list as a whole; the difference is the list's brackets
/// and commas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heuristic;

impl Tokenizer for Heuristic {
    fn count(&self, message: &Message) -> u64 {
        let json = serde_json::to_string(message).unwrap_or_default();
        estimate_text(&json)
    }
}

/// The heuristic estimate of a text (see [`Heuristic`]).
pub fn estimate_text(text: &str) -> u64 {
    let (mut cjk, mut other) = (0u64, 0u64);
    for c in text.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    // ceil(1.5 × cjk + 0.3 × other) in integers: (15 × cjk + 3 × other) / 10, rounded up.
    (15 * cjk + 3 * other).div_ceil(10)
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FA5}' | '\u{3040}'..='\u{30FF}' | '\u{AC00}'..='\u{D7AF}')
}

/// Counts with the o200k_base tokenizer (GPT-4o family; compiled-in tables, nothing is
/// fetched): the text of every block — text, thinking, tool-call names and arguments, tool
/// results — plus 4 tokens per message for the role and framing. For other providers it is
/// an estimate; their own counters differ by a few percent.
///
/// ```
/// use chef::overflow::{O200k, Tokenizer};
/// assert_eq!(O200k.count(&chef::ir::Message::user("hello world")), 2 + 4);
/// ```
#[cfg(feature = "tokens")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct O200k;

#[cfg(feature = "tokens")]
impl Tokenizer for O200k {
    fn count(&self, message: &Message) -> u64 {
        use chef_ir::Content;
        fn block(content: &Content) -> usize {
            let count = |t: &str| chef_compress::tokens::count_o200k(t).unwrap_or(0);
            match content {
                Content::Text { text, .. } => count(text),
                Content::Thinking { thinking, .. } => count(thinking),
                Content::ToolCall(call) => {
                    count(call.name.as_str()) + count(&call.arguments.to_string())
                }
                Content::ToolResult(result) => result.content.iter().map(block).sum(),
                Content::RedactedThinking { data } => count(data),
                Content::Unknown { value, .. } => count(&value.to_string()),
                // Media is billed by the provider's own rules; a flat estimate.
                Content::Attachment(_) => 1_000,
            }
        }
        let tokens: usize = message.content.iter().map(block).sum::<usize>() + 4;
        u64::try_from(tokens).unwrap_or(u64::MAX)
    }
}

/// Where the session stands against its context window.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Budget {
    /// The context window in tokens (`None`: unlimited; only forced overflows happen).
    pub limit: Option<u64>,
    /// The point at which overflow runs: `limit × trigger_ratio`.
    pub trigger: Option<f64>,
    /// The tokens the history takes now (reported usage or counted, see
    /// [`OverflowConfig`](super::OverflowConfig)).
    pub current: u64,
    /// `trigger − current`; negative when over the trigger. `None` without a limit.
    pub remaining: Option<f64>,
}

impl Budget {
    /// Whether the history is strictly over the trigger.
    pub fn is_over(&self) -> bool {
        self.remaining.is_some_and(|r| r < 0.0)
    }
}

/// Per-message token counts of a history, extended as the history grows.
///
/// Valid for a prefix of the history; any change other than an append clears it.
#[derive(Clone, Default)]
pub(crate) struct CountCache {
    counts: Vec<u64>,
    total: u64,
}

impl CountCache {
    pub(crate) fn clear(&mut self) {
        self.counts.clear();
        self.total = 0;
    }

    /// The total for `history`, counting only messages not yet counted.
    pub(crate) fn total(&mut self, history: &[Message], tokenizer: &dyn Tokenizer) -> u64 {
        if self.counts.len() > history.len() {
            self.clear();
        }
        for message in history.iter().skip(self.counts.len()) {
            let n = tokenizer.count(message);
            self.counts.push(n);
            self.total = self.total.saturating_add(n);
        }
        self.total
    }

    /// The count of each message counted so far, in history order.
    pub(crate) fn per_message(&self) -> &[u64] {
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heuristic_weights_cjk_and_rounds_up() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("a"), 1); // 0.3 → 1
        assert_eq!(estimate_text("abcdefghij"), 3);
        assert_eq!(estimate_text("日本"), 3); // 2 × 1.5
        assert_eq!(estimate_text("日a"), 2); // 1.5 + 0.3 = 1.8 → 2
        // Scalar values, not UTF-16 units: one emoji is one character.
        assert_eq!(estimate_text("😀"), 1);
    }

    #[test]
    fn the_cache_counts_each_message_once_and_resets_on_shrink() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let tokenizer = |_: &Message| {
            CALLS.fetch_add(1, Ordering::SeqCst);
            10
        };
        let mut cache = CountCache::default();
        let mut history = vec![Message::user("a"), Message::assistant("b")];
        assert_eq!(cache.total(&history, &tokenizer), 20);
        history.push(Message::user("c"));
        assert_eq!(cache.total(&history, &tokenizer), 30);
        assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        history.truncate(1);
        assert_eq!(cache.total(&history, &tokenizer), 10);
    }
}
