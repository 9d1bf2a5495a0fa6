//! Tool vectors cached on disk, so that a catalogue is embedded once per model.
//!
//! # Format
//!
//! One file per model in the cache directory, named after the model's fingerprint:
//! `<first 16 hex digits of SHA-256(model id)>.vectors`. Little-endian:
//!
//! ```text
//! b"CHEFVEC1"  u32 dimensions  u32 count
//! count × ( [u8; 32] key  f32 × dimensions )
//! ```
//!
//! The key of a tool's vector is `SHA-256(model id ‖ 0x00 ‖ tool text)`: a tool whose
//! text changes (a new description, a renamed parameter) misses and is embedded again, and
//! another model never reads this model's vectors. The file is rewritten whole through a
//! temporary file in the same directory and a rename, so a reader sees the old file or the
//! new one, never half of one. A file that does not parse (truncated, another format) is
//! treated as empty and replaced on the next write; it only ever holds derived data.
//! Entries are never evicted: several catalogues can share one directory.

use std::{
    collections::HashMap,
    fmt,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use chef_compress::search::dense::{EmbedError, Embedder, ModelKind};
use sha2::{Digest, Sha256};

use crate::error::Error;

const MAGIC: &[u8; 8] = b"CHEFVEC1";

/// A cache key: SHA-256 of the model id, a zero byte and the text.
pub type Key = [u8; 32];

/// The key of `text`'s vector under `model_id`.
pub fn key(model_id: &str, text: &str) -> Key {
    let mut hash = Sha256::new();
    hash.update(model_id.as_bytes());
    hash.update([0]);
    hash.update(text.as_bytes());
    hash.finalize().into()
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// A directory of cached tool vectors (see the module docs for the format).
#[derive(Debug, Clone)]
pub struct VectorCache {
    dir: PathBuf,
}

impl VectorCache {
    /// A cache in `dir`, created on the first write.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding `model_id`'s vectors.
    pub fn file_for(&self, model_id: &str) -> PathBuf {
        let digest = Sha256::digest(model_id.as_bytes());
        let name = hex(digest.get(..8).unwrap_or_default());
        self.dir.join(format!("{name}.vectors"))
    }

    /// Every vector cached for `model_id`, by key. A missing or unreadable-as-a-cache file
    /// gives an empty map; an I/O error other than "not found" is an error.
    pub fn load(&self, model_id: &str) -> Result<HashMap<Key, Vec<f32>>, Error> {
        let path = self.file_for(model_id);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
            Err(source) => return Err(Error::Io { path, source }),
        };
        Ok(parse(&bytes).unwrap_or_default())
    }

    /// Writes `entries` (all of one dimension) as `model_id`'s file, atomically.
    pub fn store(&self, model_id: &str, entries: &HashMap<Key, Vec<f32>>) -> Result<(), Error> {
        let path = self.file_for(model_id);
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let dim = entries.values().next().map_or(0, Vec::len);
        // Sorted by key, so that the same entries give the same bytes.
        let mut keys: Vec<&Key> = entries.keys().collect();
        keys.sort_unstable();
        let mut bytes = Vec::with_capacity(16 + keys.len() * (32 + 4 * dim));
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&u32::try_from(dim).unwrap_or(u32::MAX).to_le_bytes());
        bytes.extend_from_slice(&u32::try_from(keys.len()).unwrap_or(u32::MAX).to_le_bytes());
        for k in keys {
            let Some(v) = entries.get(k).filter(|v| v.len() == dim) else {
                continue;
            };
            bytes.extend_from_slice(k);
            for x in v {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(io)?;
        file.write_all(&bytes).map_err(io)?;
        file.as_file().sync_all().map_err(io)?;
        file.persist(&path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

/// The entries of a cache file, or `None` if it is not one.
fn parse(bytes: &[u8]) -> Option<HashMap<Key, Vec<f32>>> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (dim, rest) = rest.split_first_chunk::<4>()?;
    let (count, mut rest) = rest.split_first_chunk::<4>()?;
    let dim = u32::from_le_bytes(*dim) as usize;
    let count = u32::from_le_bytes(*count) as usize;
    let entry = 32 + 4 * dim;
    if dim == 0 || rest.len() != count.checked_mul(entry)? {
        return None;
    }
    let mut out = HashMap::with_capacity(count);
    while let Some((k, tail)) = rest.split_first_chunk::<32>() {
        let (floats, tail) = tail.split_at_checked(4 * dim)?;
        let v: Vec<f32> = floats
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap_or_default()))
            .collect();
        out.insert(*k, v);
        rest = tail;
    }
    Some(out)
}

/// An [`Embedder`] whose tool vectors ([`Embedder::embed_tools`]) go through a
/// [`VectorCache`]; requests ([`Embedder::embed`]) are passed straight to the model.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: VectorCache,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("inner", &self.inner)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl CachedEmbedder {
    /// Wraps `inner` with a cache in `cache`.
    pub fn new(inner: Arc<dyn Embedder>, cache: VectorCache) -> Self {
        Self {
            inner,
            cache,
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// Tool texts found in the cache so far, and tool texts embedded by the model.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// The model underneath.
    pub fn inner(&self) -> &Arc<dyn Embedder> {
        &self.inner
    }
}

impl Embedder for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn kind(&self) -> ModelKind {
        self.inner.kind()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts)
    }

    fn embed_tools(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = self.inner.model_id();
        let cache_error = |e: Error| EmbedError::with_source("tool-vector cache", e);
        let mut entries = self.cache.load(model).map_err(cache_error)?;
        let keys: Vec<Key> = texts.iter().map(|t| key(model, t)).collect();
        let dim = entries.values().next().map(Vec::len);
        // Distinct texts to embed, in first-seen order.
        let mut missing: Vec<(Key, &str)> = Vec::new();
        for (k, text) in keys.iter().zip(texts) {
            let cached = entries.get(k).is_some_and(|v| Some(v.len()) == dim);
            if !cached && !missing.iter().any(|(m, _)| m == k) {
                missing.push((*k, text));
            }
        }
        self.hits
            .fetch_add(texts.len() - missing.len(), Ordering::Relaxed);
        self.misses.fetch_add(missing.len(), Ordering::Relaxed);
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|(_, t)| *t).collect();
            let vectors = self.inner.embed_tools(&batch)?;
            if vectors.len() != batch.len() {
                // Let the caller's count check report it; do not cache a bad answer.
                return Ok(vectors);
            }
            let new_dim = vectors.first().map(Vec::len);
            if let (Some(was), Some(now)) = (dim, new_dim)
                && was != now
            {
                return Err(EmbedError::new(format!(
                    "model {model} now gives {now}-dimensional vectors but {} holds {was}-dimensional ones under the same id; delete that file",
                    self.cache.file_for(model).display()
                )));
            }
            for ((k, _), v) in missing.iter().zip(vectors) {
                entries.insert(*k, v);
            }
            self.cache.store(model, &entries).map_err(cache_error)?;
        }
        keys.iter()
            .map(|k| {
                entries
                    .get(k)
                    .cloned()
                    .ok_or_else(|| EmbedError::new("tool-vector cache lost an entry"))
            })
            .collect()
    }
}
