//! Cutting a history into turns and choosing what to summarise.

use chef_ir::{Content, Message, Role};

/// A half-open range of message indices forming one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) pinned: bool,
}

/// Cuts `history` into turns: a user, system or plain assistant message is one turn; an
/// assistant message with tool calls and every tool message directly after it are one
/// atomic turn. A turn is pinned when any of its messages is (pinning widens to the turn).
pub(crate) fn turns(history: &[Message]) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    let mut i = 0;
    while let Some(message) = history.get(i) {
        let start = i;
        i += 1;
        let calls = message.role == Role::Assistant
            && message
                .content
                .iter()
                .any(|c| matches!(c, Content::ToolCall(_)));
        if calls {
            while history.get(i).is_some_and(|m| m.role == Role::Tool) {
                i += 1;
            }
        } else if message.role == Role::Tool {
            // Orphan tool results (their call was cut earlier) stay with each other.
            while history.get(i).is_some_and(|m| m.role == Role::Tool) {
                i += 1;
            }
        }
        let pinned = history
            .get(start..i)
            .is_some_and(|s| s.iter().any(|m| m.pinned));
        out.push(Turn {
            start,
            end: i,
            pinned,
        });
    }
    out
}

/// How much of the history to keep verbatim at the end.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Preserve {
    /// Keep the last `n` turns (at least one).
    RecentTurns(usize),
    /// Keep whole turns from the end while their tokens stay within
    /// `floor(trigger × ratio)`; at least the last turn is kept.
    Ratio(f64),
}

/// The index where the kept tail starts (a turn boundary), or `None` when nothing before
/// it would be compressed.
///
/// `turn_tokens` gives the tokens of a turn (used by [`Preserve::Ratio`] only).
pub(crate) fn split_point(
    turns: &[Turn],
    preserve: Preserve,
    trigger: Option<f64>,
    turn_tokens: &mut dyn FnMut(&Turn) -> u64,
) -> Option<usize> {
    let last = turns.last()?;
    let keep_from = match preserve {
        Preserve::RecentTurns(n) => {
            let n = n.max(1).min(turns.len());
            turns.get(turns.len() - n).map_or(last.start, |t| t.start)
        }
        Preserve::Ratio(ratio) => {
            // Without a trigger (no context window) only the last turn is kept.
            let allowance = trigger.map_or(0.0, |t| (t * ratio).floor().max(0.0));
            let mut start = last.start;
            let mut used = turn_tokens(last);
            for turn in turns.iter().rev().skip(1) {
                let cost = turn_tokens(turn);
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "token counts are far below 2^52"
                )]
                let within = (used.saturating_add(cost)) as f64 <= allowance;
                if !within {
                    break;
                }
                used = used.saturating_add(cost);
                start = turn.start;
            }
            start
        }
    };
    (keep_from > 0).then_some(keep_from)
}

/// The split under a forced overflow: everything before the last turn.
pub(crate) fn forced_split_point(turns: &[Turn]) -> Option<usize> {
    turns.last().map(|t| t.start).filter(|&s| s > 0)
}

#[cfg(test)]
mod tests {
    use chef_ir::{ToolCall, ToolResult};
    use serde_json::json;

    use super::*;

    fn call_turn() -> Vec<Message> {
        vec![
            Message::assistant_with(vec![Content::ToolCall(ToolCall::new(
                "c1",
                "read",
                json!({}),
            ))]),
            Message::tool_results(vec![ToolResult::text("c1", "ok")]),
        ]
    }

    #[test]
    fn a_call_and_its_results_are_one_turn() {
        let mut history = vec![Message::user("go")];
        history.extend(call_turn());
        history.push(Message::assistant("done"));
        let t = turns(&history);
        assert_eq!(
            t.iter().map(|t| (t.start, t.end)).collect::<Vec<_>>(),
            [(0, 1), (1, 3), (3, 4)]
        );
    }

    #[test]
    fn pinning_widens_to_the_whole_turn() {
        let mut history = vec![Message::user("go")];
        let mut call = call_turn();
        if let Some(result) = call.get_mut(1) {
            result.pinned = true;
        }
        history.extend(call);
        let t = turns(&history);
        assert_eq!(
            t.iter().map(|t| t.pinned).collect::<Vec<_>>(),
            [false, true]
        );
    }

    #[test]
    fn recent_turns_keeps_at_least_one_and_cuts_on_boundaries() {
        let mut history = vec![Message::user("a"), Message::assistant("b")];
        history.extend(call_turn());
        history.push(Message::user("c"));
        let t = turns(&history);
        let mut none = |_: &Turn| 0;
        assert_eq!(
            split_point(&t, Preserve::RecentTurns(1), None, &mut none),
            Some(4)
        );
        assert_eq!(
            split_point(&t, Preserve::RecentTurns(2), None, &mut none),
            Some(2)
        );
        assert_eq!(
            split_point(&t, Preserve::RecentTurns(0), None, &mut none),
            Some(4)
        );
        assert_eq!(
            split_point(&t, Preserve::RecentTurns(9), None, &mut none),
            None
        );
    }

    #[test]
    fn ratio_keeps_turns_within_the_allowance() {
        let history: Vec<Message> = (0..5).map(|i| Message::user(format!("m{i}"))).collect();
        let t = turns(&history);
        let mut ten = |_: &Turn| 10;
        // trigger 100 × 0.25 = 25 → the last turn (10) and one more (20) fit, a third does not.
        assert_eq!(
            split_point(&t, Preserve::Ratio(0.25), Some(100.0), &mut ten),
            Some(3)
        );
        // A last turn larger than the allowance is still kept.
        let mut huge = |_: &Turn| 1_000;
        assert_eq!(
            split_point(&t, Preserve::Ratio(0.25), Some(100.0), &mut huge),
            Some(4)
        );
    }

    #[test]
    fn forced_keeps_only_the_last_turn() {
        let history = vec![Message::user("a"), Message::user("b")];
        assert_eq!(forced_split_point(&turns(&history)), Some(1));
        assert_eq!(forced_split_point(&turns(&history[..1])), None);
    }
}
