//! Event subscribers and compile hooks.

use std::sync::Arc;

use super::{Chef, Subscriber, bridge_memory_events};
use crate::events::{ChefEvent, Subscription};

impl Chef {
    /// Subscribes to session events, until [`unsubscribe`](Self::unsubscribe).
    ///
    /// Memory changes (set, deleted, expired) arrive as [`ChefEvent::Memory`], whether the
    /// memory was attached before or after subscribing.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// use chef::{Chef, ChefConfig, ChefEvent};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// let done = Arc::new(AtomicUsize::new(0));
    /// let seen = Arc::clone(&done);
    /// let subscription = chef.subscribe(move |event| {
    ///     if matches!(event, ChefEvent::CompileDone { .. }) {
    ///         seen.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// });
    /// chef.push(Message::user("hi"));
    /// chef.compile(Target::Anthropic)?;
    /// assert!(chef.unsubscribe(subscription));
    /// chef.compile(Target::Anthropic)?;
    /// assert_eq!(done.load(Ordering::Relaxed), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn subscribe(
        &mut self,
        subscriber: impl Fn(&ChefEvent) + Send + Sync + 'static,
    ) -> Subscription {
        let subscriber: Subscriber = Arc::new(subscriber);
        let id = Self::next_subscription();
        if let Some(memory) = self.storage.memory.as_mut() {
            let bridge = bridge_memory_events(memory, Arc::clone(&subscriber));
            self.events.memory_bridges.push((id, bridge));
        }
        self.events.subscribers.push((id, subscriber));
        id
    }

    /// Calls `hook` at the end of every successful compile (after
    /// [`ChefEvent::CompileDone`]) with the compiled request, borrowed: the body (read
    /// in place, piece by piece), names, notices and meta. For logging the exact bytes
    /// sent, metrics on the payload, or a cache audit of your own. A hook cannot change the
    /// request, so the bytes stay the same for the same input. Ends with
    /// [`unsubscribe`](Self::unsubscribe).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use chef::{Chef, ChefConfig};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// let last = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&last);
    /// chef.on_compiled(move |compiled| *sink.lock().unwrap() = compiled.body_to_vec());
    /// chef.push(Message::user("hi"));
    /// let payload = chef.compile(Target::OpenAiChat)?;
    /// assert_eq!(*last.lock().unwrap(), payload.body);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_compiled(
        &mut self,
        hook: impl Fn(&Compiled<'_>) + Send + Sync + 'static,
    ) -> Subscription {
        let id = Self::next_subscription();
        self.events.compiled_hooks.push((id, Arc::new(hook)));
        id
    }

    /// Ends a subscription made with [`subscribe`](Self::subscribe) or
    /// [`on_compiled`](Self::on_compiled) (its memory events too); `false` when it was not
    /// there (already ended, or made on another session).
    pub fn unsubscribe(&mut self, subscription: Subscription) -> bool {
        let before = self.events.subscribers.len() + self.events.compiled_hooks.len();
        self.events
            .subscribers
            .retain(|(id, _)| *id != subscription);
        self.events
            .compiled_hooks
            .retain(|(id, _)| *id != subscription);
        let memory = self.storage.memory.as_mut();
        let mut bridges = std::mem::take(&mut self.events.memory_bridges);
        if let Some(memory) = memory {
            bridges.retain(|(id, bridge)| {
                *id != subscription || {
                    memory.unsubscribe(*bridge);
                    false
                }
            });
        }
        self.events.memory_bridges = bridges;
        before != self.events.subscribers.len() + self.events.compiled_hooks.len()
    }

    fn next_subscription() -> Subscription {
        // Process-wide, so a subscription of another session (a fork included) is never
        // mistaken for one of this session's.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Subscription(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    pub(crate) fn emit(&self, event: &ChefEvent) {
        for (_, s) in &self.events.subscribers {
            s(event);
        }
    }
}

/// A compiled request as [`Chef::on_compiled`](crate::Chef::on_compiled) subscribers see
/// it, borrowed from the compile: the body is read in place (the pieces the chunked body is
/// made of), never copied for them.
pub struct Compiled<'a> {
    /// The target.
    pub target: chef_ir::Target,
    pub(crate) body: &'a super::compiler::Spliced,
    /// Real ↔ wire tool names.
    pub names: &'a chef_ir::WireNames,
    /// The provider crate's notices (as [`Payload::notices`](crate::Payload::notices)).
    pub notices: &'a [String],
    /// The compile's bookkeeping (as [`Payload::meta`](crate::Payload::meta)).
    pub meta: &'a super::payload::PayloadMeta,
}

impl Compiled<'_> {
    /// The body's length in bytes.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// Calls `each` with the body's bytes in order (the pieces of
    /// [`ChunkedBody`](crate::ChunkedBody)); together they are exactly the bytes
    /// [`Chef::compile`](crate::Chef::compile) returns.
    pub fn for_each_chunk(&self, each: impl FnMut(&[u8])) {
        self.body.for_each_piece(each);
    }

    /// The body as one buffer (a copy).
    pub fn body_to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len());
        self.for_each_chunk(|piece| out.extend_from_slice(piece));
        out
    }
}

impl std::fmt::Debug for Compiled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("target", &self.target)
            .field("body_len", &self.body_len())
            .field("notices", &self.notices)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}
