//! The conversation: the system prompt, the history, the turn counter and the
//! announcements.

use chef_ir::Message;

use super::Chef;
use crate::{announce::Announcement, announce::Channel, events::ChefEvent};

impl Chef {
    /// Asks for a fresh context window: the next overflow step summarises or archives
    /// everything before the last turn (not while the circuit breaker is open:
    /// [`set_summarizer`](Self::set_summarizer) closes it).
    pub fn request_new_context(&mut self) -> &mut Self {
        self.conversation.new_context_requested = true;
        self
    }

    /// Whether a new context window was requested and not yet acted on.
    pub fn new_context_requested(&self) -> bool {
        self.conversation.new_context_requested
    }

    /// Replaces the system prompt (system messages; breakpoints as the caller sets them).
    pub fn set_system_prompt(&mut self, messages: Vec<Message>) -> &mut Self {
        self.conversation.system = messages;
        self
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &[Message] {
        &self.conversation.system
    }

    /// Appends a message to the history.
    ///
    /// With an [offload policy](super::OffloadsMut::set_policy), a tool result over its limit is
    /// replaced by its preview here, and its full text written to the store at the next
    /// async step (see [`OffloadsMut::flush`](super::OffloadsMut::flush)).
    pub fn push(&mut self, message: Message) -> &mut Self {
        let message = if self.offloading.offload.is_some() {
            self.offload_incoming(message)
        } else {
            message
        };
        self.conversation.history.push(message);
        self
    }

    /// Replaces the history.
    pub fn set_history(&mut self, history: Vec<Message>) -> &mut Self {
        self.conversation.history.replace(history);
        self
    }

    /// The history.
    pub fn history(&self) -> &[Message] {
        &self.conversation.history
    }

    /// Clears the history (announcements, memory, toolkits and the turn counter stay). This
    /// starts a new context window: the circuit breaker resets and the handoff notice may
    /// show again.
    pub fn clear_history(&mut self) -> &mut Self {
        self.conversation.history.rewrite(Vec::clear);
        self.conversation.overflow.next_window();
        self
    }

    /// The turn counter: compiles so far.
    pub fn turn(&self) -> u64 {
        self.conversation.turn
    }

    /// Adds an announcement or updates the one with this id in place.
    pub fn announce(
        &mut self,
        id: impl Into<String>,
        content: impl Into<String>,
        channel: Channel,
    ) -> &mut Self {
        let id = id.into();
        self.announce_internal(&id, content.into(), channel);
        self
    }

    /// Removes an announcement; true when one was removed.
    pub fn retract_announcement(&mut self, id: &str) -> bool {
        self.retract_internal(id)
    }

    /// The standing announcements, in order.
    pub fn announcements(&self) -> &[Announcement] {
        self.announcements.as_slice()
    }

    pub(crate) fn announce_internal(&mut self, id: &str, content: String, channel: Channel) {
        if self.announcements.announce(id, content, channel) {
            self.emit(&ChefEvent::AnnouncementChanged {
                id: id.to_owned(),
                present: true,
            });
        }
    }

    pub(super) fn retract_internal(&mut self, id: &str) -> bool {
        let removed = self.announcements.retract(id);
        if removed {
            self.emit(&ChefEvent::AnnouncementChanged {
                id: id.to_owned(),
                present: false,
            });
        }
        removed
    }
}
