//! The store sync of [`Memory`]: load from, and persist with compare-and-set to, a
//! [`StorageBackend`]'s `memory` namespace, and how an entry is stored there.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Memory, MemoryEntry, MemoryError, MemoryEvent, Result, RetryOutcome};
use crate::store::{Entry, Expect, Namespace, StorageBackend, StoreError, StoreKey, Versioned};

impl Memory {
    /// Whether changes were made since the last load or persist.
    pub fn has_unsaved_changes(&self) -> bool {
        !self.unsaved.is_empty()
    }

    /// Replace the entries with the store's `memory` namespace, discarding unsaved changes
    /// (no events are emitted).
    /// The turn counter is kept (it belongs to the session, not the store).
    pub async fn load(&mut self, backend: &dyn StorageBackend) -> Result<()> {
        let stored = backend.scan(&Namespace::MEMORY, "").await?;
        let mut entries = BTreeMap::new();
        let mut synced = BTreeMap::new();
        for (key, versioned) in stored {
            let entry = from_store(key.clone(), versioned.value)?;
            synced.insert(
                key.clone(),
                Versioned {
                    value: entry.clone(),
                    version: versioned.version,
                },
            );
            entries.insert(key, entry);
        }
        self.entries = entries;
        self.invalidate_render();
        self.synced = synced;
        self.unsaved.clear();
        self.host_written.clear();
        Ok(())
    }

    /// Replace one entry with the store's (or remove it when the store has none), discarding
    /// its unsaved change (no events are emitted). The way back after a conflict on one key
    /// without reloading everything.
    pub async fn reload_key(&mut self, backend: &dyn StorageBackend, key: &StoreKey) -> Result<()> {
        let current = read_key(backend, key).await?;
        self.adopt(key, current);
        Ok(())
    }

    /// Write every change since the last load or persist to the store, with
    /// compare-and-set against the versions last seen. Returns the number of keys written
    /// or deleted (a key found already holding the change is not counted).
    ///
    /// # Conflicts and retries
    ///
    /// When another writer changed a key since it was loaded, the store refuses the write.
    /// `persist` then reads the key again and, **where that is safe**, resolves the conflict
    /// itself, at most [`persist_retries`](Self::persist_retries) times per key, emitting
    /// [`MemoryEvent::PersistRetried`]. Let *base* be the entry the change was made on (as
    /// last loaded or persisted; absent for a new key), *want* what the change produces
    /// (absent for a delete), *now* what the store holds; two entries hold the same *fact*
    /// when both are absent, or both present with equal value and description.
    ///
    /// For keys written only through the validated writes ([`create`](Self::create),
    /// [`modify`](Self::modify), [`remove`](Self::remove): the owned memory tools):
    ///
    /// * *now* is the same fact as *want*: **already applied** (another writer made the same
    ///   change, or an earlier attempt succeeded but its answer was lost); the stored entry
    ///   is adopted, nothing is written, nothing counted twice.
    /// * else *now* is the same fact as *base*: the premise of the change still holds, only
    ///   its version or bookkeeping moved (a TTL refreshed, a value changed and changed
    ///   back): **re-applied** on top of *now*, keeping *now*'s `created_turn` and expiry
    ///   unless the change set them, and adding this change's updates to *now*'s
    ///   `update_count`; compare-and-set against *now*'s version.
    /// * otherwise the premise changed (a create whose key someone else created with
    ///   another value, an edit or delete of an entry someone else edited, an edit of an
    ///   entry someone else deleted): **not safe**, the write fails with
    ///   [`StoreError::Conflict`]. A text edit is never merged into a value the writer did
    ///   not see.
    ///
    /// For keys a direct write touched ([`set`](Self::set), [`delete`](Self::delete), the
    /// TTL sweep, [`restore_state`](Self::restore_state)) only a delete that finds the key
    /// already gone counts as applied; every other conflict fails.
    ///
    /// On a conflict that is not resolved (unsafe, or the budget spent) the error is
    /// returned at once: keys written before it are saved, the conflicting key and the rest
    /// stay unsaved and unchanged. Reload with [`load`](Self::load) or
    /// [`reload_key`](Self::reload_key), apply the change again, and persist.
    pub async fn persist(&mut self, backend: &dyn StorageBackend) -> Result<usize> {
        let keys: Vec<StoreKey> = self.unsaved.iter().cloned().collect();
        let mut written = 0;
        for key in keys {
            if self.persist_key(backend, &key).await? {
                written += 1;
            }
        }
        Ok(written)
    }

    /// [`persist`](Self::persist) for one key; `true` when it wrote or deleted.
    pub(crate) async fn persist_key(
        &mut self,
        backend: &dyn StorageBackend,
        key: &StoreKey,
    ) -> Result<bool> {
        if !self.unsaved.contains(key) {
            return Ok(false);
        }
        let validated_only = !self.host_written.contains(key);
        let mut base = self.synced.get(key).cloned();
        let mut want = self.entries.get(key).cloned();
        let budget = self.persist_retries();
        let mut attempts = 0u32;
        loop {
            let expect = base
                .as_ref()
                .map_or(Expect::Absent, |b| Expect::Version(b.version));
            let result = match &want {
                Some(entry) => backend
                    .put(&Namespace::MEMORY, key, to_store(entry), expect)
                    .await
                    .map(Some),
                None if base.is_some() => backend
                    .delete(&Namespace::MEMORY, key, expect)
                    .await
                    .map(|_| None),
                // Created and deleted again without ever reaching the store.
                None => {
                    self.unsaved.remove(key);
                    self.host_written.remove(key);
                    return Ok(false);
                }
            };
            let conflict = match result {
                Ok(version) => {
                    let current = want
                        .zip(version)
                        .map(|(value, version)| Versioned { value, version });
                    self.adopt(key, current);
                    if attempts > 0 {
                        self.emit(&MemoryEvent::PersistRetried {
                            key: key.clone(),
                            attempts,
                            outcome: RetryOutcome::Reapplied,
                        });
                    }
                    return Ok(true);
                }
                Err(e) if e.is_conflict() => e,
                Err(e) => return Err(e.into()),
            };
            if attempts >= budget {
                return Err(conflict.into());
            }
            attempts += 1;
            let now = read_key(backend, key).await?;
            let base_entry = base.as_ref().map(|b| &b.value);
            let now_entry = now.as_ref().map(|n| &n.value);
            if same_fact(now_entry, want.as_ref())
                && (validated_only || (want.is_none() && now.is_none()))
            {
                self.adopt(key, now);
                self.emit(&MemoryEvent::PersistRetried {
                    key: key.clone(),
                    attempts,
                    outcome: RetryOutcome::AlreadyApplied,
                });
                return Ok(false);
            }
            if !validated_only || !same_fact(now_entry, base_entry) {
                return Err(StoreError::Conflict {
                    namespace: Namespace::MEMORY,
                    key: key.clone(),
                    current: now.map(|n| n.version),
                }
                .into());
            }
            want = want.map(|w| rebase(base_entry, w, now_entry));
            base = now;
        }
    }

    /// Whether the key was in the store when last loaded or persisted.
    pub(crate) fn is_stored(&self, key: &StoreKey) -> bool {
        self.synced.contains_key(key)
    }

    /// Take `current` (what the store holds) as this key's entry and synced state.
    fn adopt(&mut self, key: &StoreKey, current: Option<Versioned<MemoryEntry>>) {
        match current {
            Some(current) => {
                self.invalidate_render();
                self.entries.insert(key.clone(), current.value.clone());
                self.synced.insert(key.clone(), current);
            }
            None => {
                self.invalidate_render();
                self.entries.remove(key);
                self.synced.remove(key);
            }
        }
        self.unsaved.remove(key);
        self.host_written.remove(key);
    }
}

/// Both absent, or both present with the same value and description.
fn same_fact(a: Option<&MemoryEntry>, b: Option<&MemoryEntry>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.value == b.value && a.description == b.description,
        _ => false,
    }
}

/// `want` (made on `base`) moved on top of `now`, which holds the same fact as `base`.
fn rebase(base: Option<&MemoryEntry>, want: MemoryEntry, now: Option<&MemoryEntry>) -> MemoryEntry {
    let (Some(base), Some(now)) = (base, now) else {
        return want;
    };
    let updates = want.update_count.saturating_sub(base.update_count);
    MemoryEntry {
        created_turn: now.created_turn,
        update_count: now.update_count.saturating_add(updates),
        expires_at_turn: if want.expires_at_turn == base.expires_at_turn {
            now.expires_at_turn
        } else {
            want.expires_at_turn
        },
        ..want
    }
}

async fn read_key(
    backend: &dyn StorageBackend,
    key: &StoreKey,
) -> Result<Option<Versioned<MemoryEntry>>> {
    match backend.get(&Namespace::MEMORY, key).await? {
        Some(stored) => Ok(Some(Versioned {
            value: from_store(key.clone(), stored.value)?,
            version: stored.version,
        })),
        None => Ok(None),
    }
}

/// Metadata of a memory entry in the store, beside `content` = value.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default)]
    created_turn: u64,
    #[serde(default)]
    updated_turn: u64,
    #[serde(default = "one")]
    update_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at_turn: Option<u64>,
}

fn one() -> u64 {
    1
}

fn to_store(entry: &MemoryEntry) -> Entry {
    let meta = StoredMeta {
        description: entry.description.clone(),
        created_turn: entry.created_turn,
        updated_turn: entry.updated_turn,
        update_count: entry.update_count,
        expires_at_turn: entry.expires_at_turn,
    };
    let meta = match serde_json::to_value(meta) {
        Ok(Value::Object(map)) => map,
        // A struct of strings and integers always serializes to an object.
        _ => Map::new(),
    };
    Entry::new(entry.value.clone()).with_meta_map(meta)
}

fn from_store(key: StoreKey, entry: Entry) -> Result<MemoryEntry> {
    let (value, meta) = entry.into_parts();
    let meta: StoredMeta = serde_json::from_value(Value::Object(meta)).map_err(|source| {
        MemoryError::CorruptEntry {
            key: key.as_str().to_owned(),
            source,
        }
    })?;
    Ok(MemoryEntry {
        key,
        value,
        description: meta.description,
        created_turn: meta.created_turn,
        updated_turn: meta.updated_turn,
        update_count: meta.update_count,
        expires_at_turn: meta.expires_at_turn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::entry;

    #[test]
    fn a_fact_is_value_and_description_not_bookkeeping() {
        let a = entry("x", Some("d"), 1);
        let mut b = entry("x", Some("d"), 7);
        b.expires_at_turn = Some(9);
        assert!(same_fact(Some(&a), Some(&b)));
        assert!(same_fact(None, None));
        assert!(!same_fact(Some(&a), None));
        assert!(!same_fact(Some(&a), Some(&entry("x", None, 1))));
        assert!(!same_fact(Some(&a), Some(&entry("y", Some("d"), 1))));
    }

    #[test]
    fn rebase_keeps_the_newer_bookkeeping_and_adds_this_writes_updates() {
        let base = entry("x", None, 2);
        let mut want = entry("new", None, 4); // two updates on top of base
        want.created_turn = 1;
        let mut now = entry("x", None, 5);
        now.created_turn = 0;
        now.expires_at_turn = Some(30);
        let rebased = rebase(Some(&base), want.clone(), Some(&now));
        assert_eq!(rebased.value, "new");
        assert_eq!(rebased.update_count, 7);
        assert_eq!(rebased.created_turn, 0);
        // The write left the expiry alone, so the newer one stays...
        assert_eq!(rebased.expires_at_turn, Some(30));
        // ...unless the write set it.
        want.expires_at_turn = Some(4);
        assert_eq!(
            rebase(Some(&base), want.clone(), Some(&now)).expires_at_turn,
            Some(4)
        );
        // Nothing to rebase onto: the write as it is.
        assert_eq!(rebase(None, want.clone(), None), want);
    }
}
