//! Memory: durable facts the model keeps across turns, with a TTL counted in turns.
//!
//! [`Memory`] is the in-session state: synchronous, owned by the session, mutated by the
//! owned memory tools (through the validated [`Memory::create`], [`Memory::modify`],
//! [`Memory::remove`]) and by host code (through the direct [`Memory::set`],
//! [`Memory::delete`]). Persistence is a separate, explicit async step through a
//! [`StorageBackend`] (namespace `memory`), with compare-and-set: [`Memory::persist`] writes
//! what changed since the last [`Memory::load`] / `persist`, and fails with a conflict rather
//! than overwrite an entry another worker changed. A conflict on a write made through the
//! validated writes is resolved by `persist` itself where that is safe (the store already
//! holds the change, or still holds the fact the change was based on), a bounded number of
//! times, with a [`MemoryEvent::PersistRetried`]; see [`Memory::persist`] for the rules.
//! `Chef::with_memory_store` persists the owned tools' writes as they are made.
//!
//! Every entry is rendered into every request, so a validated write (the model's) whose
//! value or description is longer than [`DEFAULT_MAX_VALUE_CHARS`] characters is refused
//! with [`MemoryError::TooLong`] ([`Memory::with_max_value_chars`] changes or removes the
//! limit); host writes through [`Memory::set`] are not limited.
//!
//! ```
//! use chef::memory::{Memory, MemoryStyle, SetOptions};
//!
//! let mut memory = Memory::new().with_default_ttl(2);
//! memory.set("lang", "Rust", SetOptions::new().with_description("project language"))?;
//! let block = memory.render_block(MemoryStyle::Unified).expect("one entry");
//! assert!(block.contains("<entry key=\"lang\">"));
//!
//! // One compile: sweep, then advance the turn. The TTL of 2 turns keeps the entry for two.
//! for _ in 0..2 {
//!     assert!(memory.sweep_expired().is_empty());
//!     memory.advance_turn();
//! }
//! assert_eq!(memory.sweep_expired().len(), 1);
//! # Ok::<(), chef::memory::MemoryError>(())
//! ```
//!
//! The store sync (load, persist, and how an entry is stored) is in `sync`.
//!
//! # Deliberate differences from the reference
//!
//! * TTLs count turns only; wall-clock TTLs would make the rendered block, and so the
//!   request bytes, depend on when a compile runs.
//! * The block shows `updated_turn` instead of a wall-clock timestamp, for the same reason.
//! * Entries render sorted by key (byte order), not in store insertion order, so the block is
//!   identical whatever backend the entries were loaded from.
//! * Keys, descriptions and values are XML-escaped (`&`, `<`, `>`, and `"` in the key
//!   attribute), in the data and in the key guidance: nothing stored can close its element
//!   or forge another entry.
//! * [`Ttl::Never`] on an update clears an existing expiry (the reference keeps it); only
//!   [`Ttl::Default`] with no default TTL configured leaves it as it was.
//!
//! [`StorageBackend`]: crate::store::StorageBackend

mod error;
mod render;
mod sync;

use std::collections::{BTreeMap, BTreeSet, btree_map};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use self::error::MemoryError;
pub use self::render::MemoryStyle;
use crate::store::{StoreKey, Versioned};

/// `Result` with [`MemoryError`].
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;

/// One memory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    key: StoreKey,
    value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    created_turn: u64,
    updated_turn: u64,
    update_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at_turn: Option<u64>,
}

impl MemoryEntry {
    /// The key (an address under `context://memory/`).
    pub fn key(&self) -> &StoreKey {
        &self.key
    }
    /// The value.
    pub fn value(&self) -> &str {
        &self.value
    }
    /// The description, when set.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// The turn of the first write.
    pub fn created_turn(&self) -> u64 {
        self.created_turn
    }
    /// The turn of the latest write.
    pub fn updated_turn(&self) -> u64 {
        self.updated_turn
    }
    /// 1 on creation, +1 per update.
    pub fn update_count(&self) -> u64 {
        self.update_count
    }
    /// The turn from which the entry counts as expired, when it has a TTL.
    pub fn expires_at_turn(&self) -> Option<u64> {
        self.expires_at_turn
    }
    /// Whether the entry is expired at `turn`.
    pub fn is_expired_at(&self, turn: u64) -> bool {
        self.expires_at_turn.is_some_and(|at| turn >= at)
    }
}

/// The TTL of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ttl {
    /// The memory's default TTL; with none configured, a new entry never expires and an
    /// update keeps the entry's current expiry.
    #[default]
    Default,
    /// Never expire (an update clears an existing expiry).
    Never,
    /// Expire after this many turns: an entry written at turn `t` is swept at turn `t + n`,
    /// so it is visible in exactly `n` compiles.
    Turns(u64),
}

/// Options of a direct [`Memory::set`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetOptions {
    ttl: Ttl,
    description: Option<String>,
}

impl SetOptions {
    /// Default TTL, description unchanged.
    pub fn new() -> Self {
        Self::default()
    }
    /// Set the TTL.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Ttl) -> Self {
        self.ttl = ttl;
        self
    }
    /// Set (or replace) the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A write offered to the validation hook.
#[derive(Debug, Clone, Copy)]
pub struct MemoryWrite<'a> {
    /// The key written.
    pub key: &'a StoreKey,
    /// The new value; `None` for a delete.
    pub value: Option<&'a str>,
    /// The new description, when the write sets one.
    pub description: Option<&'a str>,
    /// The current value; `None` when the key is new.
    pub old_value: Option<&'a str>,
}

/// A change, delivered to subscribers after it is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryEvent {
    /// An entry was created or updated.
    Changed {
        /// The key.
        key: StoreKey,
        /// The new value.
        value: String,
        /// The previous value, `None` for a new entry.
        old_value: Option<String>,
    },
    /// An entry was deleted.
    Deleted {
        /// The key.
        key: StoreKey,
        /// The value it had.
        old_value: String,
    },
    /// An entry's TTL ran out and it was swept.
    Expired {
        /// The entry as it was.
        entry: MemoryEntry,
    },
    /// [`Memory::persist`] met a conflict on this key and resolved it itself (see
    /// [`Memory::persist`] for when that is safe): the store now holds this session's write.
    PersistRetried {
        /// The key.
        key: StoreKey,
        /// Conflicts met (and resolved) on the way, 1 or more.
        attempts: u32,
        /// How the last conflict was resolved.
        outcome: RetryOutcome,
    },
}

/// How [`Memory::persist`] resolved a conflict on a key without failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryOutcome {
    /// The store already held what the write would produce (another writer made the same
    /// change, or an earlier attempt of this one succeeded without its answer arriving):
    /// nothing was written, the stored entry was adopted.
    AlreadyApplied,
    /// The stored entry had changed in ways the write did not depend on (same value and
    /// description as the one the write was based on, another version): the write was
    /// applied again on top of it.
    Reapplied,
}

/// How many conflicts [`Memory::persist`] resolves on one key before it gives up with
/// [`StoreError::Conflict`] (see [`Memory::with_persist_retries`]).
///
/// [`StoreError::Conflict`]: crate::store::StoreError::Conflict
pub const DEFAULT_PERSIST_RETRIES: u32 = 3;

/// The longest value (and description), in characters (Unicode scalar values), that a
/// validated write ([`Memory::create`], [`Memory::modify`]: the model's memory tools) may
/// store by default: about 2,000 tokens. Each entry is rendered into every later request,
/// so without a limit one call could put megabytes into every prompt.
/// [`Memory::with_max_value_chars`] changes it (`None`: no limit).
pub const DEFAULT_MAX_VALUE_CHARS: usize = 8_000;

/// [`Memory`]'s limit on validated writes; defaults to [`DEFAULT_MAX_VALUE_CHARS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MaxChars(Option<usize>);

impl Default for MaxChars {
    fn default() -> Self {
        Self(Some(DEFAULT_MAX_VALUE_CHARS))
    }
}

/// The validation hook: `Err(reason)` refuses a validated write.
pub type Validator = Arc<dyn Fn(&MemoryWrite<'_>) -> Result<(), String> + Send + Sync>;

/// A subscriber to [`MemoryEvent`]s.
pub type Subscriber = Arc<dyn Fn(&MemoryEvent) + Send + Sync>;

/// Identifies a subscription, for [`Memory::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

/// The part of memory a session snapshot carries: entries and the turn counter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryState {
    /// Entries, sorted by key.
    pub entries: Vec<MemoryEntry>,
    /// The turn counter.
    pub turn: u64,
}

/// The session's memory. See the module docs.
#[derive(Default)]
pub struct Memory {
    entries: BTreeMap<StoreKey, MemoryEntry>,
    turn: u64,
    default_ttl: Option<u64>,
    allowed_keys: Option<Vec<String>>,
    validator: Option<Validator>,
    subscribers: Vec<(SubscriptionId, Subscriber)>,
    next_subscription: u64,
    /// The entries as last read from or written to the store, with their versions: what a
    /// write was based on.
    synced: BTreeMap<StoreKey, Versioned<MemoryEntry>>,
    /// Keys changed since the last load or persist.
    unsaved: BTreeSet<StoreKey>,
    /// Unsaved keys that a direct write (host code, a sweep, a restore) touched: their
    /// conflicts are never retried, except a delete that finds the key gone.
    host_written: BTreeSet<StoreKey>,
    /// Conflicts resolved per key before giving up; `None`: [`DEFAULT_PERSIST_RETRIES`].
    persist_retries: Option<u32>,
    /// The longest value or description a validated write may store.
    max_value_chars: MaxChars,
    /// The last [`render_block`](Self::render_block), kept until an entry or the allowed
    /// keys change (every compile renders the block; most turns change no memory).
    rendered: parking_lot::Mutex<Option<(MemoryStyle, Option<String>)>>,
}

impl fmt::Debug for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Memory")
            .field("entries", &self.entries)
            .field("turn", &self.turn)
            .field("default_ttl", &self.default_ttl)
            .field("allowed_keys", &self.allowed_keys)
            .field("validator", &self.validator.is_some())
            .field("subscribers", &self.subscribers.len())
            .field("unsaved", &self.unsaved)
            .finish_non_exhaustive()
    }
}

impl Memory {
    /// Empty memory at turn 0: no default TTL, no allow-list, no hook.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy for a forked session ([`Chef::fork`](crate::Chef::fork)): the entries, turn,
    /// settings, hook and what was last synced with a store (so the fork's writes are
    /// based on the same versions), without the subscribers.
    pub(crate) fn fork(&self) -> Self {
        Self {
            entries: self.entries.clone(),
            turn: self.turn,
            default_ttl: self.default_ttl,
            allowed_keys: self.allowed_keys.clone(),
            validator: self.validator.clone(),
            subscribers: Vec::new(),
            next_subscription: self.next_subscription,
            synced: self.synced.clone(),
            unsaved: self.unsaved.clone(),
            host_written: self.host_written.clone(),
            persist_retries: self.persist_retries,
            max_value_chars: self.max_value_chars,
            rendered: parking_lot::Mutex::new(self.rendered.lock().clone()),
        }
    }

    /// Give writes with [`Ttl::Default`] a TTL of `turns`.
    #[must_use]
    pub fn with_default_ttl(mut self, turns: u64) -> Self {
        self.default_ttl = Some(turns);
        self
    }

    /// Accept validated writes only to these keys (an empty list refuses every key).
    #[must_use]
    pub fn with_allowed_keys<I, S>(mut self, keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_keys = Some(keys.into_iter().map(Into::into).collect());
        self.invalidate_render();
        self
    }

    /// Install the validation hook called before every validated write.
    #[must_use]
    pub fn with_validator<F>(mut self, hook: F) -> Self
    where
        F: Fn(&MemoryWrite<'_>) -> Result<(), String> + Send + Sync + 'static,
    {
        self.validator = Some(Arc::new(hook));
        self
    }

    /// Refuse a validated write ([`create`](Self::create), [`modify`](Self::modify)) whose
    /// value or description is longer than `max` characters, with
    /// [`MemoryError::TooLong`]; `None` removes the limit (default
    /// [`DEFAULT_MAX_VALUE_CHARS`]). Entries already stored, and host writes through
    /// [`set`](Self::set), are not affected.
    ///
    /// ```
    /// use chef::memory::{Memory, MemoryError};
    ///
    /// let mut memory = Memory::new().with_max_value_chars(Some(10));
    /// assert!(memory.create("plan", "short", None).is_ok());
    /// let err = memory.create("notes", "far too long for ten", None).unwrap_err();
    /// assert!(matches!(err, MemoryError::TooLong { chars: 20, limit: 10, .. }));
    /// ```
    #[must_use]
    pub fn with_max_value_chars(mut self, max: Option<usize>) -> Self {
        self.max_value_chars = MaxChars(max);
        self
    }

    /// The limit of [`with_max_value_chars`](Self::with_max_value_chars), `None` for none.
    pub fn max_value_chars(&self) -> Option<usize> {
        self.max_value_chars.0
    }

    /// Resolve at most `retries` conflicts per key in [`persist`](Self::persist) before
    /// failing with the conflict (default [`DEFAULT_PERSIST_RETRIES`]; 0 never retries).
    #[must_use]
    pub fn with_persist_retries(mut self, retries: u32) -> Self {
        self.persist_retries = Some(retries);
        self
    }

    /// The retry budget of [`persist`](Self::persist), per key.
    pub fn persist_retries(&self) -> u32 {
        self.persist_retries.unwrap_or(DEFAULT_PERSIST_RETRIES)
    }

    /// The allow-list, when configured.
    pub fn allowed_keys(&self) -> Option<&[String]> {
        self.allowed_keys.as_deref()
    }

    /// Call `subscriber` after every change (in subscription order).
    pub fn subscribe<F>(&mut self, subscriber: F) -> SubscriptionId
    where
        F: Fn(&MemoryEvent) + Send + Sync + 'static,
    {
        self.next_subscription += 1;
        let id = SubscriptionId(self.next_subscription);
        self.subscribers.push((id, Arc::new(subscriber)));
        id
    }

    /// Remove a subscription; `false` when it was not there.
    pub fn unsubscribe(&mut self, id: SubscriptionId) -> bool {
        let before = self.subscribers.len();
        self.subscribers.retain(|(sid, _)| *sid != id);
        self.subscribers.len() != before
    }

    fn emit(&self, event: &MemoryEvent) {
        for (_, subscriber) in &self.subscribers {
            subscriber(event);
        }
    }

    // ---- reads ------------------------------------------------------------------------

    /// The current turn (0 before the first compile).
    pub fn turn(&self) -> u64 {
        self.turn
    }

    /// One entry (expired but not yet swept entries are still readable).
    pub fn get(&self, key: &str) -> Option<&MemoryEntry> {
        self.entries.get(key)
    }

    /// Every entry, sorted by key.
    pub fn entries(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.entries.values()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    // ---- direct writes (host code) ------------------------------------------------------

    /// Create or update an entry, without the allow-list or the hook.
    pub fn set(
        &mut self,
        key: &str,
        value: impl Into<String>,
        options: SetOptions,
    ) -> Result<&MemoryEntry> {
        let key = StoreKey::new(key)?;
        Ok(self.write(key, value.into(), options, Origin::Host))
    }

    /// Delete an entry, without the allow-list or the hook. Returns the removed entry.
    pub fn delete(&mut self, key: &str) -> Option<MemoryEntry> {
        let key = StoreKey::new(key).ok()?;
        self.remove_entry(&key, Origin::Host)
    }

    // ---- validated writes (owned tools) --------------------------------------------------

    /// Create an entry, or overwrite an existing one, after the allow-list, the length limit
    /// ([`with_max_value_chars`](Self::with_max_value_chars)) and the hook. A key holding an
    /// invisible formatting character (zero-width, bidirectional) is refused
    /// ([`KeyProblem::InvisibleCharacter`](crate::store::KeyProblem::InvisibleCharacter)).
    pub fn create(
        &mut self,
        key: &str,
        value: impl Into<String>,
        description: Option<&str>,
    ) -> Result<&MemoryEntry> {
        let key = self.check_new_key(key)?;
        let value = value.into();
        self.check_length(&key, &value, description)?;
        self.validate(&key, Some(&value), description)?;
        Ok(self.write(key, value, options_with(description), Origin::Tool))
    }

    /// [`create`](Self::create) without the length limit: for a rename, which moves what
    /// is stored and adds nothing.
    pub(crate) fn create_moved(
        &mut self,
        key: &str,
        value: &str,
        description: Option<&str>,
    ) -> Result<&MemoryEntry> {
        let key = self.check_new_key(key)?;
        self.validate(&key, Some(value), description)?;
        Ok(self.write(
            key,
            value.to_owned(),
            options_with(description),
            Origin::Tool,
        ))
    }

    /// Update an existing entry, after the allow-list, an existence check and the hook.
    pub fn modify(
        &mut self,
        key: &str,
        value: impl Into<String>,
        description: Option<&str>,
    ) -> Result<&MemoryEntry> {
        let key = self.check_allowed(key)?;
        if !self.entries.contains_key(&key) {
            return Err(MemoryError::NotFound {
                key: key.into_inner(),
            });
        }
        let value = value.into();
        self.check_length(&key, &value, description)?;
        self.validate(&key, Some(&value), description)?;
        Ok(self.write(key, value, options_with(description), Origin::Tool))
    }

    /// Delete an existing entry, after the allow-list, an existence check and the hook.
    pub fn remove(&mut self, key: &str) -> Result<MemoryEntry> {
        let key = self.check_allowed(key)?;
        if !self.entries.contains_key(&key) {
            return Err(MemoryError::NotFound {
                key: key.into_inner(),
            });
        }
        self.validate(&key, None, None)?;
        self.remove_entry(&key, Origin::Tool)
            .ok_or_else(|| MemoryError::NotFound {
                key: key.into_inner(),
            })
    }

    fn check_allowed(&self, key: &str) -> Result<StoreKey> {
        if let Some(allowed) = &self.allowed_keys
            && !allowed.iter().any(|k| k == key)
        {
            return Err(MemoryError::NotAllowed {
                key: key.to_owned(),
                allowed: allowed.clone(),
            });
        }
        Ok(StoreKey::new(key)?)
    }

    /// [`check_allowed`](Self::check_allowed), and, for a key the model makes, no invisible
    /// formatting character (a zero-width space or joiner, a bidirectional override) and no
    /// blank or whitespace-padded segment: either would show in the memory block as a key
    /// that reads as another. Host keys and stored keys are not refused for it.
    fn check_new_key(&self, key: &str) -> Result<StoreKey> {
        let checked = self.check_allowed(key)?;
        if key.chars().any(chef_compress::similarity::unshowable) {
            return Err(MemoryError::InvalidKey(crate::store::InvalidKey {
                key: key.to_owned(),
                problem: crate::store::KeyProblem::InvisibleCharacter,
            }));
        }
        // `" "`, `"x "` and `" x"` would each be a key of its own that reads as another (an
        // empty segment is refused already, so a blank one is one that trims).
        if key.split('/').any(|segment| segment.trim() != segment) {
            return Err(MemoryError::InvalidKey(crate::store::InvalidKey {
                key: key.to_owned(),
                problem: crate::store::KeyProblem::Whitespace,
            }));
        }
        Ok(checked)
    }

    fn check_length(&self, key: &StoreKey, value: &str, description: Option<&str>) -> Result<()> {
        let Some(limit) = self.max_value_chars.0 else {
            return Ok(());
        };
        // Counting stops one past the limit: a 100 MB value is not walked to the end.
        let over = |text: &str| {
            let chars = text.chars().take(limit.saturating_add(1)).count();
            (chars > limit).then(|| text.chars().count())
        };
        for (field, text) in [("value", Some(value)), ("description", description)] {
            if let Some(chars) = text.and_then(over) {
                return Err(MemoryError::TooLong {
                    key: key.as_str().to_owned(),
                    field,
                    chars,
                    limit,
                });
            }
        }
        Ok(())
    }

    fn validate(
        &self,
        key: &StoreKey,
        value: Option<&str>,
        description: Option<&str>,
    ) -> Result<()> {
        let Some(hook) = &self.validator else {
            return Ok(());
        };
        let write = MemoryWrite {
            key,
            value,
            description,
            old_value: self.entries.get(key).map(|e| e.value.as_str()),
        };
        hook(&write).map_err(|reason| MemoryError::Rejected {
            key: key.as_str().to_owned(),
            reason,
        })
    }

    fn write(
        &mut self,
        key: StoreKey,
        value: String,
        options: SetOptions,
        origin: Origin,
    ) -> &MemoryEntry {
        let turn = self.turn;
        let expiry = match options.ttl {
            Ttl::Turns(n) => Expiry::At(turn.saturating_add(n)),
            Ttl::Never => Expiry::Clear,
            Ttl::Default => match self.default_ttl {
                Some(n) => Expiry::At(turn.saturating_add(n)),
                None => Expiry::Keep,
            },
        };
        let old = self.entries.get(&key).cloned();
        let entry = match &old {
            Some(old) => MemoryEntry {
                key: key.clone(),
                value: value.clone(),
                description: options.description.or_else(|| old.description.clone()),
                created_turn: old.created_turn,
                updated_turn: turn,
                update_count: old.update_count.saturating_add(1),
                expires_at_turn: match expiry {
                    Expiry::At(at) => Some(at),
                    Expiry::Clear => None,
                    Expiry::Keep => old.expires_at_turn,
                },
            },
            None => MemoryEntry {
                key: key.clone(),
                value: value.clone(),
                description: options.description,
                created_turn: turn,
                updated_turn: turn,
                update_count: 1,
                expires_at_turn: match expiry {
                    Expiry::At(at) => Some(at),
                    Expiry::Clear | Expiry::Keep => None,
                },
            },
        };
        self.mark_unsaved(&key, origin);
        self.emit(&MemoryEvent::Changed {
            key: key.clone(),
            value,
            old_value: old.map(|o| o.value),
        });
        self.invalidate_render();
        match self.entries.entry(key) {
            btree_map::Entry::Occupied(mut slot) => {
                slot.insert(entry);
                slot.into_mut()
            }
            btree_map::Entry::Vacant(slot) => slot.insert(entry),
        }
    }

    fn mark_unsaved(&mut self, key: &StoreKey, origin: Origin) {
        self.unsaved.insert(key.clone());
        if origin == Origin::Host {
            self.host_written.insert(key.clone());
        }
    }

    fn remove_entry(&mut self, key: &StoreKey, origin: Origin) -> Option<MemoryEntry> {
        self.invalidate_render();
        let removed = self.entries.remove(key)?;
        self.mark_unsaved(key, origin);
        self.emit(&MemoryEvent::Deleted {
            key: key.clone(),
            old_value: removed.value.clone(),
        });
        Some(removed)
    }

    // ---- turns -----------------------------------------------------------------------

    /// Remove every entry expired at the current turn, emitting [`MemoryEvent::Expired`] for
    /// each (in key order). Returns the removed entries. Run once per compile, before
    /// rendering and before [`advance_turn`](Self::advance_turn).
    pub fn sweep_expired(&mut self) -> Vec<MemoryEntry> {
        let removed = self.take_expired();
        self.finish_expired(&removed);
        removed
    }

    /// The first half of [`sweep_expired`](Self::sweep_expired): removes the expired
    /// entries (so rendering leaves them out) without marking them or telling anyone, so a
    /// compile that fails afterwards can put them back ([`unexpire`](Self::unexpire)).
    pub(crate) fn take_expired(&mut self) -> Vec<MemoryEntry> {
        let turn = self.turn;
        let expired: Vec<StoreKey> = self
            .entries
            .values()
            .filter(|e| e.is_expired_at(turn))
            .map(|e| e.key.clone())
            .collect();
        if !expired.is_empty() {
            self.invalidate_render();
        }
        expired
            .iter()
            .filter_map(|key| self.entries.remove(key))
            .collect()
    }

    /// The second half: the removal becomes final (marked unsaved, events emitted).
    pub(crate) fn finish_expired(&mut self, removed: &[MemoryEntry]) {
        for entry in removed {
            self.mark_unsaved(&entry.key, Origin::Host);
            self.emit(&MemoryEvent::Expired {
                entry: entry.clone(),
            });
        }
    }

    /// Puts back what [`take_expired`](Self::take_expired) removed.
    pub(crate) fn unexpire(&mut self, removed: Vec<MemoryEntry>) {
        if removed.is_empty() {
            return;
        }
        self.invalidate_render();
        for entry in removed {
            self.entries.insert(entry.key.clone(), entry);
        }
    }

    /// Advance the turn counter by one (once per compile, after the sweep).
    pub fn advance_turn(&mut self) {
        self.turn = self.turn.saturating_add(1);
    }

    // ---- rendering --------------------------------------------------------------------

    /// The memory block for every entry, sorted by key; `None` when memory is empty.
    ///
    /// # Format
    ///
    /// ```text
    /// Memory (context://memory/*) currently holds:
    /// <memory>
    /// <entry key="lang">
    /// <description>
    /// project language
    /// </description>
    /// <metadata>
    /// - updated_turn=0
    /// - update_count=1
    /// </metadata>
    /// <value>
    /// Rust
    /// </value>
    /// </entry>
    /// </memory>
    ///
    /// Existing memory keys: lang. To change one of these facts, ...
    /// ```
    ///
    /// Entries are separated by a blank line; `<description>` appears only when set. With a
    /// non-empty allow-list the last paragraph names the writable keys instead.
    pub fn render_block(&self, style: MemoryStyle) -> Option<String> {
        let mut rendered = self.rendered.lock();
        if let Some((cached, block)) = rendered.as_ref()
            && *cached == style
        {
            return block.clone();
        }
        let entries: Vec<&MemoryEntry> = self.entries.values().collect();
        let block = render::render_block(&entries, style, self.allowed_keys.as_deref());
        *rendered = Some((style, block.clone()));
        block
    }

    /// Forgets the rendered block: an entry or the allowed keys changed.
    fn invalidate_render(&mut self) {
        *self.rendered.get_mut() = None;
    }

    /// The memory block for the entries `select` keeps, in the order it returns them (a
    /// caller-supplied selector: filter, reorder, truncate).
    pub fn render_block_with<F>(&self, style: MemoryStyle, select: F) -> Option<String>
    where
        F: FnOnce(Vec<&MemoryEntry>) -> Vec<&MemoryEntry>,
    {
        let entries = select(self.entries.values().collect());
        render::render_block(&entries, style, self.allowed_keys.as_deref())
    }

    // ---- snapshots --------------------------------------------------------------------

    /// Entries and turn counter, for a session snapshot.
    pub fn state(&self) -> MemoryState {
        MemoryState {
            entries: self.entries.values().cloned().collect(),
            turn: self.turn,
        }
    }

    /// Replace entries and turn counter with `state` (configuration and subscribers stay).
    /// Every key that changes is marked unsaved, so the next [`persist`](Self::persist)
    /// brings the store to the restored state. No events are emitted.
    pub fn restore_state(&mut self, state: MemoryState) {
        let restored: BTreeMap<StoreKey, MemoryEntry> = state
            .entries
            .into_iter()
            .map(|e| (e.key.clone(), e))
            .collect();
        for key in self.entries.keys().chain(restored.keys()) {
            if self.entries.get(key) != restored.get(key) {
                self.unsaved.insert(key.clone());
                self.host_written.insert(key.clone());
            }
        }
        self.entries = restored;
        self.invalidate_render();
        self.turn = state.turn;
    }
}

/// Who made a write: the validated writes (owned tools) or a direct one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Tool,
    Host,
}

/// The keys whose entry differs between two sorted entry lists (a [`MemoryState`]'s).
pub(crate) fn changed_keys(before: &[MemoryEntry], after: &[MemoryEntry]) -> Vec<StoreKey> {
    let before: BTreeMap<&StoreKey, &MemoryEntry> = before.iter().map(|e| (&e.key, e)).collect();
    let after: BTreeMap<&StoreKey, &MemoryEntry> = after.iter().map(|e| (&e.key, e)).collect();
    let keys: BTreeSet<&StoreKey> = before.keys().chain(after.keys()).copied().collect();
    keys.into_iter()
        .filter(|k| before.get(k) != after.get(k))
        .cloned()
        .collect()
}

enum Expiry {
    At(u64),
    Clear,
    Keep,
}

fn options_with(description: Option<&str>) -> SetOptions {
    SetOptions {
        ttl: Ttl::Default,
        description: description.map(str::to_owned),
    }
}

const _: fn() = || {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<Memory>();
    assert_send_sync::<MemoryError>();
};

#[cfg(test)]
mod tests;
