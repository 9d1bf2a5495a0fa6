//! Announcements: standing notes that tell the model what changed.
//!
//! An announcement has an id, content and a [`Channel`]. Announcing an existing id replaces
//! its content and channel in place (its position is kept); retracting removes it.
//! Announcements are not history: they are rendered into every compile until retracted,
//! survive `clear_history`, ride snapshots, and never persist into the conversation.
//!
//! # Format
//!
//! ```text
//! <announcements>
//! <announcement id="tools">
//! The tool `delete_file` is blocked for this session.
//! </announcement>
//! </announcements>
//! ```
//!
//! Ids are attribute-escaped (`&`, `<`, `"`); content is the caller's text, inserted as
//! written (it is meant to be read by the model).

use serde::{Deserialize, Serialize};

use chef_ir::Target;

/// Where an announcement is delivered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// `System` on Anthropic (which keeps positional system messages cheaply), `UserTail`
    /// elsewhere.
    #[default]
    Auto,
    /// A positional system message after the conversational tail.
    System,
    /// Stitched into the last user turn, after its content.
    UserTail,
}

impl Channel {
    /// The channel `Auto` resolves to on `target`.
    pub fn resolve(self, target: Target) -> Self {
        match (self, target) {
            (Self::Auto, Target::Anthropic) => Self::System,
            (Self::Auto, _) => Self::UserTail,
            (other, _) => other,
        }
    }
}

/// One standing announcement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announcement {
    /// Its id (unique among standing announcements).
    pub id: String,
    /// The text for the model.
    pub content: String,
    /// Where it is delivered.
    pub channel: Channel,
}

/// The ordered set of standing announcements.
///
/// Read back from a snapshot, a list that names an id twice keeps one announcement per id,
/// at the place of its first occurrence, with the content and channel of its last (as if
/// each had been announced in turn).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Announcements {
    #[serde(deserialize_with = "upserted")]
    items: Vec<Announcement>,
}

fn upserted<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Announcement>, D::Error> {
    let raw = Vec::<Announcement>::deserialize(deserializer)?;
    let mut out = Announcements::default();
    for a in raw {
        out.announce(a.id, a.content, a.channel);
    }
    Ok(out.items)
}

impl Announcements {
    /// Adds an announcement, or replaces the content and channel of the one with this id
    /// in place. Returns true when anything changed.
    pub fn announce(
        &mut self,
        id: impl Into<String>,
        content: impl Into<String>,
        channel: Channel,
    ) -> bool {
        let id = id.into();
        let content = content.into();
        match self.items.iter_mut().find(|a| a.id == id) {
            Some(existing) => {
                let changed = existing.content != content || existing.channel != channel;
                existing.content = content;
                existing.channel = channel;
                changed
            }
            None => {
                self.items.push(Announcement {
                    id,
                    content,
                    channel,
                });
                true
            }
        }
    }

    /// Removes the announcement with this id; true when one was removed.
    pub fn retract(&mut self, id: &str) -> bool {
        let before = self.items.len();
        self.items.retain(|a| a.id != id);
        self.items.len() != before
    }

    /// The standing announcements in order.
    pub fn as_slice(&self) -> &[Announcement] {
        &self.items
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Renders the announcements that resolve to `channel` on `target`, plus `extra`
    /// (per-compile announcements such as the handoff notice), or `""` when none do.
    pub fn render_for(&self, target: Target, channel: Channel, extra: &[Announcement]) -> String {
        let selected: Vec<&Announcement> = self
            .items
            .iter()
            .chain(extra)
            .filter(|a| a.channel.resolve(target) == channel)
            .collect();
        render(&selected)
    }
}

/// Renders announcements as one block, or `""` for none.
pub fn render(items: &[&Announcement]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let blocks: Vec<String> = items
        .iter()
        .map(|a| {
            format!(
                "<announcement id=\"{}\">\n{}\n</announcement>",
                escape_attr(&a.id),
                a.content
            )
        })
        .collect();
    format!("<announcements>\n{}\n</announcements>", blocks.join("\n\n"))
}

fn escape_attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announce_upserts_in_place_and_retract_removes() {
        let mut a = Announcements::default();
        assert!(a.announce("x", "one", Channel::Auto));
        assert!(a.announce("y", "two", Channel::System));
        assert!(a.announce("x", "uno", Channel::UserTail));
        assert!(!a.announce("x", "uno", Channel::UserTail));
        let ids: Vec<&str> = a.as_slice().iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["x", "y"]);
        assert_eq!(a.as_slice()[0].content, "uno");
        assert!(a.retract("x"));
        assert!(!a.retract("x"));
        assert_eq!(a.as_slice().len(), 1);
    }

    #[test]
    fn auto_resolves_by_target() {
        assert_eq!(Channel::Auto.resolve(Target::Anthropic), Channel::System);
        for t in [Target::OpenAiChat, Target::OpenAiResponses, Target::Gemini] {
            assert_eq!(Channel::Auto.resolve(t), Channel::UserTail);
        }
        assert_eq!(
            Channel::UserTail.resolve(Target::Anthropic),
            Channel::UserTail
        );
    }

    #[test]
    fn rendering_escapes_ids_and_splits_by_channel() {
        let mut a = Announcements::default();
        a.announce("a\"<&", "first", Channel::Auto);
        a.announce("b", "second", Channel::UserTail);
        assert_eq!(
            a.render_for(Target::Anthropic, Channel::System, &[]),
            "<announcements>\n<announcement id=\"a&quot;&lt;&amp;\">\nfirst\n</announcement>\n</announcements>"
        );
        assert_eq!(
            a.render_for(Target::OpenAiChat, Channel::UserTail, &[]),
            "<announcements>\n<announcement id=\"a&quot;&lt;&amp;\">\nfirst\n</announcement>\n\n<announcement id=\"b\">\nsecond\n</announcement>\n</announcements>"
        );
        assert_eq!(a.render_for(Target::OpenAiChat, Channel::System, &[]), "");
    }
}
