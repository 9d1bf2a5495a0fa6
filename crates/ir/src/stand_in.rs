//! Text that stands in for what a target cannot carry: an Anthropic compaction summary
//! sent to a provider without compaction blocks, and a prefill sent to a provider that
//! cannot start the reply with given text.
//!
//! The bytes are part of every compiled body that uses them (and so of the prompt-cache
//! prefix of a running conversation): they do not change.

/// First line of the text that carries an Anthropic server-side compaction summary to a
/// provider that has no compaction block (OpenAI, Gemini).
pub const COMPACTION_HEADER: &str = "[Summary of earlier conversation (compacted server-side)]";

/// The text for a compaction summary: [`COMPACTION_HEADER`], a line feed, the summary.
///
/// ```
/// assert_eq!(
///     chef_ir::compaction_text("S"),
///     format!("{}\nS", chef_ir::COMPACTION_HEADER)
/// );
/// ```
pub fn compaction_text(summary: &str) -> String {
    let mut out = String::with_capacity(COMPACTION_HEADER.len() + 1 + summary.len());
    out.push_str(COMPACTION_HEADER);
    out.push('\n');
    out.push_str(summary);
    out
}

/// The wording of a prefill-enforcement instruction.
///
/// There are three. Each provider crate has always sent its own, and each is pinned by
/// that provider's golden bodies and by the cached prefixes of conversations already
/// running; no wording is a wire requirement, so all are kept as they are rather than
/// changed to match one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrefillWording {
    /// "your reply must begin with exactly the text below, character for character"
    /// (sent by `chef-openai`, Chat Completions and Responses).
    Reply,
    /// "your response must begin with exactly this text" (sent by `chef-gemini`).
    Response,
    /// Two lines: "Begin your reply with exactly the text between the markers below, …"
    /// and the prefill between `<reply_prefix>` markers (sent by `chef-anthropic` when
    /// it cannot send a prefill as the last assistant turn).
    ReplyPrefix,
}

/// The instruction that stands in for a prefill on an API (or a request) that cannot
/// start the reply with given text. The prefill is quoted as is (no escaping), so the
/// model sees exactly the text it must start with; no trailing newline.
///
/// [`PrefillWording::Reply`] and [`PrefillWording::Response`] are six lines joined by
/// `"\n"`, the prefill in double quotes on the third (when the prefill itself has no line
/// break);
/// [`PrefillWording::ReplyPrefix`] is two lines, the prefill between markers on the
/// second.
///
/// ```
/// use chef_ir::{PrefillWording, prefill_enforcement};
///
/// let text = prefill_enforcement("{\"a\":", PrefillWording::Reply);
/// assert!(text.starts_with("<ephemeral_message type=\"prefill_enforcement\">\n"));
/// assert!(text.contains("\n\"{\"a\":\"\n\n"));
/// assert!(text.ends_with("</ephemeral_message>"));
/// assert_eq!(text.lines().count(), 6);
/// ```
pub fn prefill_enforcement(prefill: &str, wording: PrefillWording) -> String {
    let (instruction, no_preamble) = match wording {
        PrefillWording::ReplyPrefix => {
            return format!(
                "Begin your reply with exactly the text between the markers below, then \
                 continue from it without any preface.\n<reply_prefix>{prefill}</reply_prefix>"
            );
        }
        PrefillWording::Reply => (
            "SYSTEM INSTRUCTION: your reply must begin with exactly the text below, character \
             for character:",
            "Write no introduction, preamble or acknowledgement before it; continue directly \
             from that text.",
        ),
        PrefillWording::Response => (
            "SYSTEM INSTRUCTION: your response must begin with exactly this text:",
            "Do not write any introduction or acknowledgement first; start directly with the \
             text above.",
        ),
    };
    let mut out = String::with_capacity(prefill.len() + 256);
    out.push_str("<ephemeral_message type=\"prefill_enforcement\">\n");
    out.push_str(instruction);
    out.push_str("\n\"");
    out.push_str(prefill);
    out.push_str("\"\n\n");
    out.push_str(no_preamble);
    out.push_str("\n</ephemeral_message>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_wordings_keep_their_bytes() {
        assert_eq!(
            prefill_enforcement("{", PrefillWording::Reply),
            "<ephemeral_message type=\"prefill_enforcement\">\n\
             SYSTEM INSTRUCTION: your reply must begin with exactly the text below, character \
             for character:\n\
             \"{\"\n\
             \n\
             Write no introduction, preamble or acknowledgement before it; continue directly \
             from that text.\n\
             </ephemeral_message>"
        );
        assert_eq!(
            prefill_enforcement("{", PrefillWording::Response),
            "<ephemeral_message type=\"prefill_enforcement\">\n\
             SYSTEM INSTRUCTION: your response must begin with exactly this text:\n\
             \"{\"\n\
             \n\
             Do not write any introduction or acknowledgement first; start directly with the text above.\n\
             </ephemeral_message>"
        );
        assert_eq!(
            prefill_enforcement("{", PrefillWording::ReplyPrefix),
            "Begin your reply with exactly the text between the markers below, then continue from it without any preface.\n<reply_prefix>{</reply_prefix>"
        );
    }
}
