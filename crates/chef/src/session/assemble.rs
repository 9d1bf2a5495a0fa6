//! Step 3 of a turn: the sandwich and the tail stitch.
//!
//! ```text
//! system layers   caller's system messages · chef's system message (compression preamble,
//!                 toolkit directory; ends the cached prefix) · active skill (after_system)
//!                 · memory layer
//! history         as stored (a rolling cache breakpoint on its last unchanged message)
//! tail stitch     appended to the last user turn (or a new user turn after tool results):
//!                 skill instructions (tail) → memory block (before_history_tail) → dynamic state and injected context
//!                 (last_user placement) → tail announcements → anchor line
//! system notes    system-channel announcements, as a positional system message after the tail
//! system state    dynamic state under system placement: a system message after the history
//! guardrail       the output guardrail's instruction: a positional system message, last
//!                 (before trailing assistant messages)
//! prefill         Request::prefill (each provider degrades it as it must)
//! ```
//!
//! Everything volatile sits after the last breakpoint, so the cached prefix only moves when
//! the tools or the system prompt do.

use chef_ir::{Content, Message, Role};

/// The line that ends a tail stitch carrying state or announcements.
pub const ANCHOR_LINE: &str =
    "The blocks above describe the current state; take them into account for your next step.";

/// What [`assemble`] puts together.
pub(crate) struct Parts<'a> {
    pub(crate) system: &'a [Message],
    /// Preamble and directory: stable text appended after the caller's system messages.
    pub(crate) stable_system: Option<&'a str>,
    /// The active skill's system message (placement `after_system`).
    pub(crate) skill_system: Option<&'a str>,
    /// The memory layer (instruction, and the block under `after_system`).
    pub(crate) memory_system: Option<&'a str>,
    pub(crate) history: &'a [Message],
    /// The active skill's tail part (placement `tail`).
    pub(crate) tail_skill: Option<&'a str>,
    /// The memory block under `before_history_tail`.
    pub(crate) tail_memory: Option<&'a str>,
    /// Dynamic state and injected context under `last_user` placement.
    pub(crate) tail_dynamic: Option<&'a str>,
    /// The system message of dynamic state under `system` placement.
    pub(crate) system_dynamic: Option<&'a str>,
    pub(crate) tail_announcements: &'a str,
    pub(crate) system_announcements: &'a str,
    /// The output guardrail's instruction.
    pub(crate) guardrail: Option<&'a str>,
    /// Place chef's breakpoints (end of the stable system layers, rolling history).
    pub(crate) cache: bool,
}

/// The text a compile adds around the history (made by `Chef::layers`).
pub(crate) struct Layers {
    pub(crate) stable: String,
    pub(crate) skill_system: Option<String>,
    pub(crate) tail_skill: Option<String>,
    pub(crate) memory_system: Option<String>,
    pub(crate) tail_memory: Option<String>,
    pub(crate) tail_dynamic: Option<String>,
    pub(crate) system_dynamic: Option<String>,
    pub(crate) tail_announcements: String,
    pub(crate) system_announcements: String,
    pub(crate) guardrail: Option<String>,
    /// The assistant prefill (set on the request, not a message).
    pub(crate) prefill: Option<String>,
}

impl Layers {
    /// The system layers alone: what every request of this turn starts with.
    pub(crate) fn head(&self, system: &[Message], cache: bool) -> Vec<Message> {
        assemble(Parts {
            system,
            stable_system: Some(&self.stable),
            skill_system: self.skill_system.as_deref(),
            memory_system: self.memory_system.as_deref(),
            history: &[],
            tail_skill: None,
            tail_memory: None,
            tail_dynamic: None,
            system_dynamic: None,
            tail_announcements: "",
            system_announcements: "",
            guardrail: None,
            cache,
        })
    }

    /// The message list of a request: system layers, `history`, the tail stitch.
    pub(crate) fn around(
        &self,
        system: &[Message],
        history: &[Message],
        cache: bool,
    ) -> Vec<Message> {
        assemble(Parts {
            system,
            stable_system: Some(&self.stable),
            skill_system: self.skill_system.as_deref(),
            memory_system: self.memory_system.as_deref(),
            history,
            tail_skill: self.tail_skill.as_deref(),
            tail_memory: self.tail_memory.as_deref(),
            tail_dynamic: self.tail_dynamic.as_deref(),
            system_dynamic: self.system_dynamic.as_deref(),
            tail_announcements: &self.tail_announcements,
            system_announcements: &self.system_announcements,
            guardrail: self.guardrail.as_deref(),
            cache,
        })
    }
}

/// Builds the message list of one request.
pub(crate) fn assemble(parts: Parts<'_>) -> Vec<Message> {
    let mut messages: Vec<Message> =
        Vec::with_capacity(parts.system.len() + parts.history.len() + 4);
    messages.extend(parts.system.iter().cloned());
    if let Some(text) = parts.stable_system.filter(|t| !t.is_empty()) {
        messages.push(Message::system(text.to_owned()));
    }
    if parts.cache
        && let Some(last) = messages.iter_mut().rfind(|m| m.role == Role::System)
    {
        last.cache_breakpoint = true;
    }
    // After the breakpoint: a skill change never moves the cached tools and system text.
    if let Some(text) = parts.skill_system.filter(|t| !t.is_empty()) {
        messages.push(Message::system(text.to_owned()));
    }
    if let Some(text) = parts.memory_system {
        messages.push(Message::system(text.to_owned()));
    }
    let history_start = messages.len();
    super::interrupted::extend_closing_interrupted(&mut messages, parts.history);
    let history_end = messages.len();
    if let Some(text) = parts.system_dynamic.filter(|t| !t.is_empty()) {
        messages.push(Message::system(text.to_owned()));
    }

    let mut stitch_parts: Vec<&str> = Vec::new();
    if let Some(skill) = parts.tail_skill.filter(|t| !t.is_empty()) {
        stitch_parts.push(skill);
    }
    if let Some(memory) = parts.tail_memory {
        stitch_parts.push(memory);
    }
    let tail_dynamic = parts.tail_dynamic.filter(|t| !t.is_empty());
    if let Some(dynamic) = tail_dynamic {
        stitch_parts.push(dynamic);
    }
    if !parts.tail_announcements.is_empty() {
        stitch_parts.push(parts.tail_announcements);
    }
    // Skill instructions and memory introduce themselves; state, injected context and
    // announcements get the anchor.
    if tail_dynamic.is_some() || !parts.tail_announcements.is_empty() {
        stitch_parts.push(ANCHOR_LINE);
    }
    let stitch = stitch_parts.join("\n\n");

    let tail = messages
        .iter()
        .rposition(|m| matches!(m.role, Role::User | Role::Tool))
        .filter(|i| *i >= history_start);

    // The last history message the stitch leaves unchanged carries the rolling breakpoint
    // (never the system-placed state after the history).
    let mut unchanged_end = history_end;
    let mut tail_index = tail;
    if !stitch.is_empty() {
        match tail {
            Some(i) if messages.get(i).is_some_and(|m| m.role == Role::User) => {
                unchanged_end = i;
                if let Some(message) = messages.get_mut(i) {
                    stitch_into(message, &stitch);
                }
            }
            Some(i) => {
                messages.insert(i + 1, Message::user(stitch));
                unchanged_end = i + 1;
                tail_index = Some(i + 1);
            }
            None => {
                let at = before_trailing_assistants(&messages);
                messages.insert(at, Message::user(stitch));
                unchanged_end = at.min(history_end);
                tail_index = Some(at);
            }
        }
    }
    if parts.cache
        && unchanged_end > history_start
        && let Some(last) = messages.get_mut(unchanged_end - 1)
    {
        last.cache_breakpoint = true;
    }

    if !parts.system_announcements.is_empty() {
        let at = match tail_index {
            Some(i) => i + 1,
            None => before_trailing_assistants(&messages),
        };
        messages.insert(
            at,
            Message::system(parts.system_announcements.to_owned()).with_positional(true),
        );
    }
    if let Some(text) = parts.guardrail.filter(|t| !t.is_empty()) {
        let at = before_trailing_assistants(&messages);
        messages.insert(at, Message::system(text.to_owned()).with_positional(true));
    }
    messages
}

/// Appends the stitch to a user message: to its last text block when the message ends with
/// one, else as a new text block.
fn stitch_into(message: &mut Message, stitch: &str) {
    match message.content.last_mut() {
        Some(Content::Text { text, .. }) => {
            text.push_str("\n\n");
            text.push_str(stitch);
        }
        _ => message.content.push(Content::text(stitch)),
    }
}

fn before_trailing_assistants(messages: &[Message]) -> usize {
    let mut at = messages.len();
    while at > 0
        && messages
            .get(at - 1)
            .is_some_and(|m| m.role == Role::Assistant)
    {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use chef_ir::{Content, ToolResult};

    use super::*;

    fn parts<'a>(system: &'a [Message], history: &'a [Message]) -> Parts<'a> {
        Parts {
            system,
            stable_system: None,
            skill_system: None,
            memory_system: None,
            history,
            tail_skill: None,
            tail_memory: None,
            tail_dynamic: None,
            system_dynamic: None,
            tail_announcements: "",
            system_announcements: "",
            guardrail: None,
            cache: false,
        }
    }

    #[test]
    fn the_stitch_goes_into_the_last_user_turn_in_order() {
        let system = [Message::system("sys")];
        let history = [Message::user("hello"), Message::assistant("hi")];
        let out = assemble(Parts {
            tail_memory: Some("MEM"),
            tail_announcements: "ANN",
            ..parts(&system, &history)
        });
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[1].text(),
            format!("hello\n\nMEM\n\nANN\n\n{ANCHOR_LINE}")
        );
        assert_eq!(history[0].text(), "hello", "stored history is not modified");
    }

    #[test]
    fn memory_alone_does_not_add_the_anchor() {
        let history = [Message::user("q")];
        let out = assemble(Parts {
            tail_memory: Some("MEM"),
            ..parts(&[], &history)
        });
        assert_eq!(out[0].text(), "q\n\nMEM");
    }

    #[test]
    fn after_tool_results_a_new_user_turn_carries_the_stitch() {
        let history = [
            Message::user("go"),
            Message::assistant_with(vec![Content::ToolCall(chef_ir::ToolCall::new(
                "c",
                "f",
                serde_json::json!({}),
            ))]),
            Message::tool_results(vec![ToolResult::text("c", "ok")]),
        ];
        let out = assemble(Parts {
            tail_announcements: "ANN",
            system_announcements: "SYS-ANN",
            guardrail: None,
            ..parts(&[], &history)
        });
        assert_eq!(out.len(), 5);
        assert_eq!(out[3].role, Role::User);
        assert!(out[3].text().starts_with("ANN"));
        assert_eq!(out[4].role, Role::System);
        assert!(out[4].positional);
    }

    #[test]
    fn breakpoints_end_the_system_layers_and_the_unchanged_history() {
        let system = [Message::system("sys")];
        let history = [
            Message::user("one"),
            Message::assistant("two"),
            Message::user("three"),
        ];
        let out = assemble(Parts {
            stable_system: Some("PREAMBLE"),
            memory_system: Some("MEMORY"),
            tail_announcements: "ANN",
            cache: true,
            ..parts(&system, &history)
        });
        let flags: Vec<bool> = out.iter().map(|m| m.cache_breakpoint).collect();
        // sys, preamble*, memory, one, two*, three(+stitch)
        assert_eq!(flags, [false, true, false, false, true, false]);
    }

    #[test]
    fn dynamic_state_sits_between_memory_and_announcements_and_brings_the_anchor() {
        let history = [Message::user("q")];
        let out = assemble(Parts {
            tail_memory: Some("MEM"),
            tail_dynamic: Some("DS"),
            tail_announcements: "ANN",
            ..parts(&[], &history)
        });
        assert_eq!(
            out[0].text(),
            format!("q\n\nMEM\n\nDS\n\nANN\n\n{ANCHOR_LINE}")
        );
        let out = assemble(Parts {
            tail_dynamic: Some("DS"),
            ..parts(&[], &history)
        });
        assert_eq!(out[0].text(), format!("q\n\nDS\n\n{ANCHOR_LINE}"));
    }

    #[test]
    fn system_placed_state_follows_the_history_and_never_carries_the_breakpoint() {
        let history = [
            Message::user("one"),
            Message::assistant("two"),
            Message::user("three"),
            Message::assistant("four"),
        ];
        let out = assemble(Parts {
            system_dynamic: Some("STATE"),
            system_announcements: "SYS-ANN",
            guardrail: None,
            cache: true,
            ..parts(&[], &history)
        });
        let roles: Vec<Role> = out.iter().map(|m| m.role).collect();
        // The announcements follow the last user turn; the state follows the history.
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::User,
                Role::System,
                Role::Assistant,
                Role::System
            ]
        );
        assert!(out[3].positional);
        assert_eq!(out[5].text(), "STATE");
        assert!(!out[5].positional);
        let flags: Vec<bool> = out.iter().map(|m| m.cache_breakpoint).collect();
        assert_eq!(flags, [false, false, false, false, true, false]);
    }

    #[test]
    fn with_no_user_turn_the_stitch_follows_system_placed_state() {
        let history = [Message::assistant("{")];
        let out = assemble(Parts {
            system_dynamic: Some("STATE"),
            tail_announcements: "ANN",
            cache: true,
            ..parts(&[], &history)
        });
        let roles: Vec<Role> = out.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Assistant, Role::System, Role::User]);
        assert!(out[0].cache_breakpoint);
        assert!(!out[1].cache_breakpoint);
    }

    #[test]
    fn with_no_user_turn_the_stitch_precedes_a_prefill() {
        let history = [Message::assistant("{")];
        let out = assemble(Parts {
            tail_announcements: "ANN",
            ..parts(&[], &history)
        });
        assert_eq!(out[0].role, Role::User);
        assert_eq!(out[1].role, Role::Assistant);
    }

    #[test]
    fn skill_parts_sit_after_the_cached_system_and_first_in_the_stitch() {
        let system = [Message::system("sys")];
        let history = [Message::user("q")];
        let out = assemble(Parts {
            stable_system: Some("PREAMBLE"),
            skill_system: Some("SKILL"),
            memory_system: Some("MEMORY"),
            cache: true,
            ..parts(&system, &history)
        });
        let texts: Vec<String> = out.iter().map(Message::text).collect();
        assert_eq!(texts, ["sys", "PREAMBLE", "SKILL", "MEMORY", "q"]);
        assert!(out[1].cache_breakpoint && !out[2].cache_breakpoint);
        let out = assemble(Parts {
            tail_skill: Some("SK"),
            tail_memory: Some("MEM"),
            ..parts(&[], &history)
        });
        assert_eq!(
            out[0].text(),
            "q\n\nSK\n\nMEM",
            "no anchor for skill and memory alone"
        );
    }
}
