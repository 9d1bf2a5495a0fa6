//! The conversation history, the only code that changes it.
//!
//! Besides the messages it owns what caches derived from them need to stay true: a
//! *generation*, unchanged by an append and bumped by every other change (the history-prefix
//! reuse of [`super::compiler`] is valid within one generation), and the per-message token
//! counts the overflow budget reads (valid for a prefix of the history, extended as it grows).
//! Callers read the messages through `Deref<Target = [Message]>` and change them through
//! [`History::push`], [`History::replace`] and [`History::rewrite`]; nothing else can touch
//! the generation or the counts.

use chef_ir::Message;

use crate::overflow::{CountCache, Tokenizer};

/// The history, its generation and its token counts (see the module docs).
#[derive(Default)]
pub(crate) struct History {
    messages: Vec<Message>,
    generation: u64,
    counts: CountCache,
}

impl std::ops::Deref for History {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

impl History {
    /// A copy: the messages, generation and counts.
    pub(crate) fn fork(&self) -> Self {
        Self {
            messages: self.messages.clone(),
            generation: self.generation,
            counts: self.counts.clone(),
        }
    }

    /// The generation: the same while the history has only grown.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Appends a message (the generation stays; counts extend when next read).
    pub(crate) fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Replaces every message: a new generation.
    pub(crate) fn replace(&mut self, messages: Vec<Message>) {
        self.rewrite(|m| *m = messages);
    }

    /// Changes the messages in place: a new generation, counts made again.
    pub(crate) fn rewrite(&mut self, change: impl FnOnce(&mut Vec<Message>)) {
        change(&mut self.messages);
        self.counts.clear();
        self.generation += 1;
    }

    /// The tokens of the whole history, counting only messages not counted yet.
    pub(crate) fn tokens(&mut self, tokenizer: &dyn Tokenizer) -> u64 {
        self.counts.total(&self.messages, tokenizer)
    }

    /// The tokens of each message, in history order.
    pub(crate) fn tokens_per_message(&mut self, tokenizer: &dyn Tokenizer) -> &[u64] {
        self.counts.total(&self.messages, tokenizer);
        self.counts.per_message()
    }

    /// Forgets the counts (the tokenizer changed); the messages and generation stay.
    pub(crate) fn recount(&mut self) {
        self.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use chef_ir::Message;

    use super::History;
    use crate::overflow::Heuristic;

    #[test]
    fn only_an_append_keeps_the_generation() {
        let mut history = History::default();
        history.push(Message::user("a"));
        assert_eq!(history.generation(), 0);
        let one = history.tokens(&Heuristic);
        history.push(Message::user("bb"));
        assert!(history.tokens(&Heuristic) > one);
        assert_eq!(history.generation(), 0);
        history.replace(vec![Message::user("a")]);
        assert_eq!(history.generation(), 1);
        assert_eq!(history.tokens(&Heuristic), one);
        history.rewrite(Vec::clear);
        assert_eq!(history.generation(), 2);
        assert!(history.is_empty());
        assert_eq!(history.tokens_per_message(&Heuristic), &[] as &[u64]);
    }
}
