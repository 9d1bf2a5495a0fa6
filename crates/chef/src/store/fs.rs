//! [`FsBackend`]: the store as a directory tree.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use parking_lot::{Mutex, MutexGuard};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::key::KeyProblem;
use super::{
    Entry, Expect, InvalidKey, Namespace, Result, StorageBackend, StoreError, StoreKey, Versioned,
};
use crate::fsutil;

/// Suffix of an entry file.
const ENTRY_SUFFIX: &str = ".json";
/// Suffix of a directory standing for a key segment that has segments below it.
const DIR_SUFFIX: &str = ".d";
/// Directory of the lock files, under the root.
const LOCK_DIR: &str = ".locks";
/// Number of lock files; keys are spread over them by a stable hash.
const STRIPES: usize = 64;

/// A store kept as files under one root directory.
///
/// # Layout
///
/// An entry of namespace `ns` with key `a/b/c` lives in `<root>/ns/a.d/b.d/c.json`: every
/// segment but the last names a directory with the suffix `.d`, the last names a file with
/// the suffix `.json`. The suffixes keep files and directories apart, so the keys `a` and
/// `a/b` can both exist (`a.json` beside `a.d/b.json`), as in every other backend. The file
/// holds one compact JSON object, the version first:
///
/// ```json
/// {"version":1796000000000000001,"content":"TypeScript","meta":{"description":"d"}}
/// ```
///
/// `meta` is left out when empty. Directories emptied by deletes are left in place.
/// `<root>/.locks/` holds the lock files, created by the first write or delete (a store
/// only read, `chef sessions ls` of a directory, is left as it was); names starting with
/// `.` are never keys.
///
/// # Guarantees
///
/// * **No escape from the root.** Keys are validated ([`StoreKey`]): no `..`, no absolute
///   paths, no NUL or backslash, no empty or hidden segments. Before each operation every
///   existing component of the entry's path is checked with `symlink_metadata`: a symbolic
///   link anywhere below the root is refused with [`KeyProblem::Symlink`], so a link planted
///   in the tree cannot redirect a read or write outside it. (The check and the open are two
///   steps; a process that can replace directories inside the root between them is already
///   trusted with the root.)
/// * **Atomic, durable writes**: temporary file in the entry's directory, write, `fsync`,
///   rename, `fsync` of the directory; new directories are synced into their parents. A
///   reader sees the old or the new entry, never a torn one, and a crash leaves the old or
///   the new entry. Files are created readable by the owner only (mode 0600 on Unix).
/// * **Compare-and-set** holds between tasks of one process *and* between processes on one
///   host: the read-check-write of a key runs under an in-process mutex plus an exclusive
///   `flock` on one of 64 lock files chosen by a stable hash of namespace and key. It relies
///   on advisory locks of the local file system; on network file systems it is only as good
///   as the server's lock support.
/// * **Versions**: an update stores the previous version + 1; a creation stores the wall
///   clock in nanoseconds since the Unix epoch, so a key deleted and created again does not
///   reuse a version a writer may still hold, unless the clock steps back by more than the
///   time between the two writes.
/// * **No pile of temporary files**: [`FsBackend::open`] removes temporary files left by
///   writers that died (see the crate's reliability notes).
///
/// Every operation runs its blocking file I/O on tokio's blocking pool when called inside a
/// tokio runtime, inline otherwise. [`FsBackend::open`] itself is blocking.
#[derive(Debug, Clone)]
pub struct FsBackend {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    root: PathBuf,
    /// One lock file a stripe, opened (and `.locks/` created) on its first use.
    stripes: Vec<Mutex<Option<File>>>,
}

/// The on-disk form, written without copying the entry.
#[derive(Serialize)]
struct OnDiskRef<'a> {
    version: u64,
    content: &'a str,
    #[serde(skip_serializing_if = "Map::is_empty")]
    meta: &'a Map<String, Value>,
}

#[derive(Deserialize)]
struct OnDisk {
    version: u64,
    content: String,
    #[serde(default)]
    meta: Map<String, Value>,
}

impl FsBackend {
    /// Open (creating if needed) a store rooted at `root`, and remove stale temporary files
    /// left below it by writers that died.
    pub fn open(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        fs::create_dir_all(root).map_err(|e| StoreError::io(root, e))?;
        let root = fs::canonicalize(root).map_err(|e| StoreError::io(root, e))?;
        let stripes = (0..STRIPES).map(|_| Mutex::new(None)).collect();
        fsutil::remove_stale_temps(&root, true).map_err(|e| StoreError::io(&root, e))?;
        Ok(Self {
            inner: Arc::new(Inner { root, stripes }),
        })
    }

    /// The root directory (canonical).
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// Where the entry for `key` in `namespace` lives (whether or not it exists).
    pub fn entry_path(&self, namespace: &Namespace, key: &StoreKey) -> PathBuf {
        self.inner.paths(namespace, key).1
    }

    async fn run<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(move || op(&inner))
                .await
                .map_err(|e| StoreError::Backend {
                    message: "file-system store worker failed".to_owned(),
                    source: Some(Box::new(e)),
                })?,
            Err(_) => op(&inner),
        }
    }
}

/// An exclusive hold on one stripe: the in-process mutex, then the cross-process `flock`
/// (the file is always open while a guard exists).
struct StripeGuard<'a>(MutexGuard<'a, Option<File>>);

impl Drop for StripeGuard<'_> {
    fn drop(&mut self) {
        // Closing is not needed; unlocking explicitly lets the next holder in. An error here
        // leaves the lock to be released when the process exits.
        if let Some(file) = self.0.as_ref() {
            let _ = file.unlock();
        }
    }
}

impl Inner {
    /// The entry's directory and file.
    fn paths(&self, namespace: &Namespace, key: &StoreKey) -> (PathBuf, PathBuf) {
        let mut dir = self.root.join(namespace.as_str());
        let mut segments = key.segments().peekable();
        let mut file = dir.clone();
        while let Some(segment) = segments.next() {
            if segments.peek().is_some() {
                dir.push(format!("{segment}{DIR_SUFFIX}"));
            } else {
                file = dir.join(format!("{segment}{ENTRY_SUFFIX}"));
            }
        }
        (dir, file)
    }

    /// Resolve a key to its paths after checking that no existing component below the root
    /// is a symbolic link or something other than what the layout expects.
    fn resolve(&self, namespace: &Namespace, key: &StoreKey) -> Result<(PathBuf, PathBuf)> {
        let (dir, file) = self.paths(namespace, key);
        let refuse = |problem| {
            StoreError::InvalidKey(InvalidKey {
                key: key.as_str().to_owned(),
                problem,
            })
        };
        let Ok(rel) = file.strip_prefix(&self.root) else {
            return Err(refuse(KeyProblem::NotAnEntry));
        };
        let components: Vec<_> = rel.components().collect();
        let mut current = self.root.clone();
        for (i, component) in components.iter().enumerate() {
            current.push(component);
            let is_last = i + 1 == components.len();
            match fs::symlink_metadata(&current) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(refuse(KeyProblem::Symlink));
                }
                Ok(meta) if is_last && !meta.is_file() => {
                    return Err(refuse(KeyProblem::NotAnEntry));
                }
                Ok(meta) if !is_last && !meta.is_dir() => {
                    return Err(refuse(KeyProblem::NotAnEntry));
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(StoreError::io(&current, e)),
            }
        }
        Ok((dir, file))
    }

    fn lock(&self, namespace: &Namespace, key: &StoreKey) -> Result<StripeGuard<'_>> {
        let index = stripe_index(namespace, key);
        let Some(stripe) = self.stripes.get(index) else {
            return Err(StoreError::Backend {
                message: format!("lock stripe {index} missing"),
                source: None,
            });
        };
        let mut slot = stripe.lock();
        let lock_dir = self.root.join(LOCK_DIR);
        let path = lock_dir.join(format!("{index:02}.lock"));
        let file = match slot.take() {
            Some(file) => file,
            None => {
                fsutil::create_dir_durable(&self.root, &lock_dir)
                    .map_err(|e| StoreError::io(&lock_dir, e))?;
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(|e| StoreError::io(&path, e))?
            }
        };
        // Kept open whether or not the lock is taken: the next use reuses it.
        slot.insert(file)
            .lock()
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(StripeGuard(slot))
    }

    fn read(&self, file: &Path) -> Result<Option<OnDisk>> {
        let bytes = match fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(file, e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| StoreError::Corrupt {
                path: file.to_path_buf(),
                source,
            })
    }

    fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>> {
        let (_, file) = self.resolve(namespace, key)?;
        Ok(self.read(&file)?.map(|d| Versioned {
            value: Entry::new(d.content).with_meta_map(d.meta),
            version: d.version,
        }))
    }

    fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: &Entry,
        expect: Expect,
    ) -> Result<u64> {
        let (dir, file) = self.resolve(namespace, key)?;
        let _guard = self.lock(namespace, key)?;
        let version = match self.read(&file) {
            Ok(current) => {
                let current = current.map(|d| d.version);
                if !expect.matches(current) {
                    return Err(conflict(namespace, key, current));
                }
                match current {
                    Some(v) => v.saturating_add(1),
                    None => creation_version(),
                }
            }
            // A corrupt entry has no version to compare; only a blind write replaces it,
            // as if creating the key.
            Err(StoreError::Corrupt { .. }) if expect == Expect::Any => creation_version(),
            Err(e) => return Err(e),
        };
        let bytes = serde_json::to_vec(&OnDiskRef {
            version,
            content: entry.content(),
            meta: entry.meta(),
        })
        .map_err(|e| StoreError::Backend {
            message: "entry could not be serialized".to_owned(),
            source: Some(Box::new(e)),
        })?;
        fsutil::create_dir_durable(&self.root, &dir).map_err(|e| StoreError::io(&dir, e))?;
        fsutil::write_atomic(&file, &bytes).map_err(|e| StoreError::io(&file, e))?;
        Ok(version)
    }

    fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool> {
        let (dir, file) = self.resolve(namespace, key)?;
        let _guard = self.lock(namespace, key)?;
        let current = match self.read(&file) {
            Ok(current) => current.map(|d| d.version),
            Err(StoreError::Corrupt { .. }) if expect == Expect::Any => Some(0),
            Err(e) => return Err(e),
        };
        if !expect.matches(current) {
            return Err(conflict(namespace, key, current));
        }
        if current.is_none() {
            return Ok(false);
        }
        fs::remove_file(&file).map_err(|e| StoreError::io(&file, e))?;
        fsutil::sync_dir(&dir).map_err(|e| StoreError::io(&dir, e))?;
        Ok(true)
    }

    fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>> {
        let base = self.root.join(namespace.as_str());
        match fs::symlink_metadata(&base) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Ok(Vec::new()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&base, e)),
        }
        let mut keys = Vec::new();
        // (directory, key text of that directory including a trailing '/', or "")
        let mut pending = vec![(base, String::new())];
        while let Some((dir, dir_key)) = pending.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                // Removed by another process while we walked.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(StoreError::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| StoreError::io(&dir, e))?;
                let file_type = entry
                    .file_type()
                    .map_err(|e| StoreError::io(entry.path(), e))?;
                let Ok(name) = entry.file_name().into_string() else {
                    continue; // not UTF-8: never written by this backend
                };
                if name.starts_with('.') {
                    continue;
                }
                if file_type.is_dir() {
                    if let Some(segment) = name.strip_suffix(DIR_SUFFIX) {
                        let sub_key = format!("{dir_key}{segment}/");
                        if sub_key.starts_with(prefix) || prefix.starts_with(&sub_key) {
                            pending.push((entry.path(), sub_key));
                        }
                    }
                } else if file_type.is_file()
                    && let Some(segment) = name.strip_suffix(ENTRY_SUFFIX)
                {
                    let text = format!("{dir_key}{segment}");
                    if text.starts_with(prefix)
                        && let Ok(key) = StoreKey::new(text)
                    {
                        keys.push(key);
                    }
                }
            }
        }
        keys.sort();
        Ok(keys)
    }
}

fn conflict(namespace: &Namespace, key: &StoreKey, current: Option<u64>) -> StoreError {
    StoreError::Conflict {
        namespace: namespace.clone(),
        key: key.clone(),
        current,
    }
}

/// The version of a newly created key: nanoseconds since the Unix epoch (at least 1).
fn creation_version() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(1);
    u64::try_from(nanos).unwrap_or(u64::MAX / 2).max(1)
}

/// A stable (FNV-1a) hash of namespace and key, so that every process and every build picks
/// the same lock file for a key.
fn stripe_index(namespace: &Namespace, key: &StoreKey) -> usize {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    for byte in namespace
        .as_str()
        .bytes()
        .chain([0])
        .chain(key.as_str().bytes())
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    // STRIPES is a small power of two: the remainder fits in usize.
    usize::try_from(hash % STRIPES as u64).unwrap_or(0)
}

#[async_trait]
impl StorageBackend for FsBackend {
    async fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>> {
        let (namespace, key) = (namespace.clone(), key.clone());
        self.run(move |inner| inner.get(&namespace, &key)).await
    }

    async fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: Entry,
        expect: Expect,
    ) -> Result<u64> {
        let (namespace, key) = (namespace.clone(), key.clone());
        self.run(move |inner| inner.put(&namespace, &key, &entry, expect))
            .await
    }

    async fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool> {
        let (namespace, key) = (namespace.clone(), key.clone());
        self.run(move |inner| inner.delete(&namespace, &key, expect))
            .await
    }

    async fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>> {
        let (namespace, prefix) = (namespace.clone(), prefix.to_owned());
        self.run(move |inner| inner.list(&namespace, &prefix)).await
    }

    async fn scan(
        &self,
        namespace: &Namespace,
        prefix: &str,
    ) -> Result<Vec<(StoreKey, Versioned<Entry>)>> {
        let (namespace, prefix) = (namespace.clone(), prefix.to_owned());
        self.run(move |inner| {
            let keys = inner.list(&namespace, &prefix)?;
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                if let Some(entry) = inner.get(&namespace, &key)? {
                    out.push((key, entry));
                }
            }
            Ok(out)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_suffixed_paths_so_files_and_directories_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsBackend::open(dir.path()).unwrap();
        let root = store.root().to_path_buf();
        let path = |k: &str| store.entry_path(&Namespace::NOTES, &StoreKey::new(k).unwrap());
        assert_eq!(path("a"), root.join("notes/a.json"));
        assert_eq!(path("a/b"), root.join("notes/a.d/b.json"));
        assert_eq!(path("a.json/b.d"), root.join("notes/a.json.d/b.d.json"));
    }

    #[test]
    fn stripe_index_is_stable_across_builds() {
        // Pinned (values checked against an independent FNV-1a): changing the hash would let two binaries lock different files for one key.
        let ns = Namespace::MEMORY;
        assert_eq!(stripe_index(&ns, &StoreKey::new("lang").unwrap()), 6);
        assert_eq!(stripe_index(&ns, &StoreKey::new("a/b").unwrap()), 8);
    }

    #[test]
    fn creation_versions_are_positive() {
        assert!(creation_version() > 1_000_000_000);
    }
}
