//! [`MemoryBackend`]: the store in process memory.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use parking_lot::RwLock;

use super::{Entry, Expect, Namespace, Result, StorageBackend, StoreError, StoreKey, Versioned};

/// A store that lives in process memory: one sorted map per namespace, nothing on disk.
///
/// Compare-and-set holds between all tasks and threads of the process sharing the backend:
/// every operation takes a `parking_lot` lock for a short synchronous section, never across
/// an `await`. Versions come from one counter for the whole backend, so a version is never
/// reused, not even by a key deleted and created again.
#[derive(Debug, Default)]
pub struct MemoryBackend {
    state: RwLock<State>,
}

#[derive(Debug, Default)]
struct State {
    namespaces: HashMap<Namespace, BTreeMap<StoreKey, Versioned<Entry>>>,
    last_version: u64,
}

impl State {
    fn next_version(&mut self) -> u64 {
        self.last_version += 1;
        self.last_version
    }
}

impl MemoryBackend {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// `f` of every entry of `namespace` whose key starts with `prefix`, in key order. One
    /// lock for the whole walk: a point-in-time view of the namespace.
    fn prefixed<T>(
        &self,
        namespace: &Namespace,
        prefix: &str,
        f: impl Fn(&StoreKey, &Versioned<Entry>) -> T,
    ) -> Vec<T> {
        let state = self.state.read();
        state
            .namespaces
            .get(namespace)
            .map(|entries| {
                entries
                    .iter()
                    .filter(|(k, _)| k.as_str().starts_with(prefix))
                    .map(|(k, v)| f(k, v))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn conflict(namespace: &Namespace, key: &StoreKey, current: Option<u64>) -> StoreError {
    StoreError::Conflict {
        namespace: namespace.clone(),
        key: key.clone(),
        current,
    }
}

#[async_trait]
impl StorageBackend for MemoryBackend {
    async fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>> {
        let state = self.state.read();
        Ok(state
            .namespaces
            .get(namespace)
            .and_then(|entries| entries.get(key))
            .cloned())
    }

    async fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: Entry,
        expect: Expect,
    ) -> Result<u64> {
        let mut state = self.state.write();
        let current = state
            .namespaces
            .get(namespace)
            .and_then(|entries| entries.get(key))
            .map(|v| v.version);
        if !expect.matches(current) {
            return Err(conflict(namespace, key, current));
        }
        let version = state.next_version();
        state
            .namespaces
            .entry(namespace.clone())
            .or_default()
            .insert(
                key.clone(),
                Versioned {
                    value: entry,
                    version,
                },
            );
        Ok(version)
    }

    async fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool> {
        let mut state = self.state.write();
        let Some(entries) = state.namespaces.get_mut(namespace) else {
            return match expect {
                Expect::Version(_) => Err(conflict(namespace, key, None)),
                Expect::Any | Expect::Absent => Ok(false),
            };
        };
        let current = entries.get(key).map(|v| v.version);
        if !expect.matches(current) {
            return Err(conflict(namespace, key, current));
        }
        Ok(entries.remove(key).is_some())
    }

    async fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>> {
        Ok(self.prefixed(namespace, prefix, |key, _| key.clone()))
    }

    async fn scan(
        &self,
        namespace: &Namespace,
        prefix: &str,
    ) -> Result<Vec<(StoreKey, Versioned<Entry>)>> {
        Ok(self.prefixed(namespace, prefix, |key, entry| (key.clone(), entry.clone())))
    }
}
