//! Append-only session persistence: a journal of records in a [`StorageBackend`].
//!
//! Saving a whole snapshot after every turn costs what the *session* holds; a journal costs
//! what the *turn* added. A [`Journal`] keeps one session as a sequence of records in
//! [`Namespace::JOURNAL`]:
//!
//! * a **full record** is a snapshot in the [snapshot file format](super::file), written by
//!   the first save, after the history was rewritten (compaction, overflow, `set_history`),
//!   after the registry changed, after the journal was handed another session, and whenever
//!   the records since the last full one grow past the [`CompactPolicy`] (64 deltas, or
//!   deltas as heavy as the full record);
//! * a **delta record** holds only what changed since the record before it: the messages
//!   appended, the turn, and each other part of the session state (system prompt, memory,
//!   announcements, blocklist, loaded toolkits, shown tools, overflow bookkeeping, dynamic
//!   state, guardrail, prefill, offload policy and pending offloads, active skill, the
//!   `new_context` request) whose serialised form changed.
//!
//! [`Journal::load`] replays the latest full record and the deltas after it into the state
//! a [`Chef::snapshot`](crate::Chef::snapshot) of the saving session gave, so the restored session compiles the
//! same next request, byte for byte, as the live one would have.
//!
//! # Keys and record format
//!
//! Record `n` of session `id` is the entry `id/` + `n` as 20 decimal digits (so a session
//! id must not itself end in a segment of 20 digits, or its records would sit beside
//! another session's). A delta record is one compact JSON object and a newline:
//!
//! ```json
//! {"format":"chef-journal","format_version":1,"seq":7,"prev":"crc32:1c291ca3","turn":7,"from":12,"append":[…],"set":{"memory":{…}},"checksum":"crc32:0d4a1f9e"}
//! ```
//!
//! `prev` is the checksum of record `seq - 1` and `from` the history length the appended
//! messages start at: a record that does not continue the one before it is refused, never
//! applied to the wrong state. Every record ends with the checksum member of the snapshot
//! format (CRC-32 of the bytes before it).
//!
//! # Crash safety and writers
//!
//! Each record is one store entry, written with [`Expect::Absent`], so a record is either
//! wholly there or not at all on every backend (the file-system backend writes a temporary
//! file, syncs and renames it; PostgreSQL commits a row). A damaged **last** record (a torn
//! append on a backend without atomic writes, or damage at rest) is dropped by
//! [`Journal::load`], which deletes it and says so in [`Loaded::dropped`]; the session
//! resumes from the record before it. Damage anywhere else is [`SnapshotError::Corrupt`]:
//! nothing is skipped silently.
//!
//! A journal has one writer at a time. Two writers appending to the same session collide
//! on the same record number and the second gets a conflict
//! ([`SnapshotError::is_conflict`]): reload, re-apply, save. A compaction keeps the records
//! since the previous full record, so a writer up to one compaction behind still collides;
//! workers that may drive the same session concurrently should hold its lease
//! ([`StorageBackend::claim_lease`]), as `chef serve` does.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! use std::sync::Arc;
//! use chef::snapshot::journal::Journal;
//! use chef::store::{MemoryBackend, StoreKey};
//! use chef::{Chef, ChefConfig};
//! use chef_ir::{Message, Target};
//!
//! let backend = Arc::new(MemoryBackend::new());
//! let id = StoreKey::new("support/42")?;
//! let mut chef = Chef::new(ChefConfig::default());
//! let mut journal = Journal::new(backend.clone(), id.clone());
//! for text in ["hello", "and again"] {
//!     chef.push(Message::user(text));
//!     chef.compile(Target::Anthropic)?;
//!     journal.save(&chef).await?; // a full record, then a delta of one message
//! }
//!
//! // Another process resumes the session.
//! let mut resumed = Chef::new(ChefConfig::default());
//! let loaded = Journal::new(backend, id).load(&mut resumed).await?.expect("saved");
//! assert_eq!(loaded.records, 2);
//! assert_eq!(resumed.history(), chef.history());
//! assert_eq!(resumed.compile(Target::Anthropic)?.body, chef.compile(Target::Anthropic)?.body);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;

use chef_ir::Message;
use serde::Deserialize;
use serde::de::Error as _;
use serde_json::value::RawValue;

mod fields;

use self::fields::set_field;
pub(crate) use self::fields::{FIELDS, Fields, FieldsOf};
use super::error::{Origin, SnapshotError};
use super::file::{self, Snapshot};
use crate::snapshot::SessionState;
use crate::store::{Entry, Expect, Namespace, StorageBackend, StoreError, StoreKey, Versioned};

/// The `format` of a delta record.
pub const JOURNAL_FORMAT: &str = "chef-journal";
/// The delta-record format version this build writes and the newest it reads.
pub const JOURNAL_FORMAT_VERSION: u64 = 1;

/// Digits of a record number in its key.
const SEQ_DIGITS: usize = 20;

/// When [`Journal::save`] writes a full record instead of a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactPolicy {
    /// At most this many delta records after a full one (default 64).
    pub max_records: u64,
    /// At most this many bytes of delta records after a full one, as a percentage of the
    /// full record's size (default 100: once the deltas weigh as much as the snapshot,
    /// replaying them costs more than reading a new one).
    pub max_bytes_percent: u64,
}

impl Default for CompactPolicy {
    fn default() -> Self {
        Self {
            max_records: 64,
            max_bytes_percent: 100,
        }
    }
}

impl CompactPolicy {
    /// Sets [`max_records`](Self::max_records) (0: every save writes a full record).
    #[must_use]
    pub fn with_max_records(mut self, records: u64) -> Self {
        self.max_records = records;
        self
    }

    /// Sets [`max_bytes_percent`](Self::max_bytes_percent).
    #[must_use]
    pub fn with_max_bytes_percent(mut self, percent: u64) -> Self {
        self.max_bytes_percent = percent;
        self
    }
}

/// What one [`Journal::save`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Saved {
    /// The record's number.
    pub seq: u64,
    /// Whether it is a full record (a snapshot) rather than a delta.
    pub full: bool,
    /// Its size in bytes.
    pub bytes: usize,
    /// Records older than the previous full record deleted by this save's compaction.
    pub pruned: usize,
}

/// What [`Journal::load`] (or [`read`]) found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Loaded {
    /// The number of the last record applied.
    pub seq: u64,
    /// The number of the full record the replay started from.
    pub full_seq: u64,
    /// Records applied: the full one and the deltas after it.
    pub records: usize,
    /// The number of a damaged last record that was dropped (deleted by
    /// [`Journal::load`], left in place by [`read`]).
    pub dropped: Option<u64>,
}

/// A replayed journal: the session state and what was read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Replayed {
    /// The state, as a snapshot at the last record's turn.
    pub snapshot: Snapshot<SessionState>,
    /// What was read.
    pub loaded: Loaded,
}

/// Where a session's history and registry stand, to tell an append from a rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// Which `Chef` value (a process-wide counter; a restore keeps it).
    pub(crate) instance: u64,
    /// The registry epoch.
    pub(crate) epoch: u64,
    /// The history generation (the same while the history only grew).
    pub(crate) generation: u64,
    /// The history length.
    pub(crate) len: usize,
}

/// The state the journal's last record describes, as this process knows it.
pub(crate) struct Image {
    pub(crate) mark: Mark,
    pub(crate) fields: Fields,
}

/// Where the journal stands: the next record and what the records since the last full
/// one weigh.
pub(crate) struct Head {
    pub(crate) next: u64,
    /// The checksum digits of record `next - 1`.
    pub(crate) last_checksum: String,
    /// The newest full record (0: not known, as after `find_end`).
    pub(crate) full_seq: u64,
    pub(crate) full_bytes: usize,
    pub(crate) deltas: u64,
    pub(crate) delta_bytes: usize,
    /// `None` until this journal saved or loaded a session.
    pub(crate) image: Option<Image>,
}

/// One session's journal in a store (see the module docs).
pub struct Journal {
    pub(crate) backend: Arc<dyn StorageBackend>,
    pub(crate) session: StoreKey,
    pub(crate) policy: CompactPolicy,
    pub(crate) head: Option<Head>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("session", &self.session)
            .field("policy", &self.policy)
            .field("next", &self.head.as_ref().map(|h| h.next))
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// The journal of `session` in `backend`, with the default [`CompactPolicy`]. Nothing is
    /// read until [`load`](Self::load) or [`save`](Self::save).
    pub fn new(backend: Arc<dyn StorageBackend>, session: StoreKey) -> Self {
        Self {
            backend,
            session,
            policy: CompactPolicy::default(),
            head: None,
        }
    }

    /// Sets the compaction policy.
    #[must_use]
    pub fn with_policy(mut self, policy: CompactPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The session id.
    pub fn session(&self) -> &StoreKey {
        &self.session
    }

    /// The number the next saved record gets (`None` before a load or save).
    pub fn next_seq(&self) -> Option<u64> {
        self.head.as_ref().map(|h| h.next)
    }

    pub(crate) fn compaction_due(&self, head: &Head) -> bool {
        head.deltas >= self.policy.max_records
            || head.delta_bytes as u128 * 100
                >= head.full_bytes as u128 * u128::from(self.policy.max_bytes_percent)
    }

    /// The head of the stored journal, for a first save without a load: record 1 of a new
    /// session, or after the last stored record (whose state this journal does not know,
    /// so the save will be a full record).
    pub(crate) async fn find_end(&self) -> Result<Head, SnapshotError> {
        let keys = self
            .backend
            .list(&Namespace::JOURNAL, &prefix(&self.session))
            .await
            .map_err(SnapshotError::from)?;
        let last = keys
            .iter()
            .filter_map(|k| record_seq(&self.session, k))
            .max()
            .unwrap_or(0);
        Ok(Head {
            next: last + 1,
            last_checksum: String::new(),
            full_seq: 0,
            full_bytes: 0,
            deltas: 0,
            delta_bytes: 0,
            image: None,
        })
    }
}

/// Reads and replays session `session`'s journal without changing anything (a damaged last
/// record is left in place and reported in [`Loaded::dropped`]); `None` when the store has
/// no record of it, or only one, damaged.
pub async fn read(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
) -> Result<Option<Replayed>, SnapshotError> {
    Ok(replay(backend, session).await?.map(|found| found.replayed))
}

/// The ids of the sessions that have a journal in `backend`, sorted.
pub async fn list(backend: &(impl StorageBackend + ?Sized)) -> Result<Vec<StoreKey>, StoreError> {
    let mut ids: Vec<StoreKey> = Vec::new();
    for key in backend.list(&Namespace::JOURNAL, "").await? {
        let Some((id, seq)) = key.as_str().rsplit_once('/') else {
            continue;
        };
        if is_seq(seq) {
            ids.push(StoreKey::new(id)?);
        }
    }
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Deletes every record of session `session`; returns how many.
pub async fn delete(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
) -> Result<usize, StoreError> {
    delete_records(backend, session, None).await
}

/// Deletes `session`'s records numbered below `below` (all with `None`); returns how many.
pub(crate) async fn delete_records(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
    below: Option<u64>,
) -> Result<usize, StoreError> {
    let mut deleted = 0;
    for key in backend.list(&Namespace::JOURNAL, &prefix(session)).await? {
        if record_seq(session, &key).is_some_and(|seq| below.is_none_or(|below| seq < below))
            && backend
                .delete(&Namespace::JOURNAL, &key, Expect::Any)
                .await?
        {
            deleted += 1;
        }
    }
    Ok(deleted)
}

fn prefix(session: &StoreKey) -> String {
    format!("{session}/")
}

fn is_seq(segment: &str) -> bool {
    segment.len() == SEQ_DIGITS && segment.bytes().all(|b| b.is_ascii_digit())
}

/// The record number of `key` when it is one of `session`'s records.
fn record_seq(session: &StoreKey, key: &StoreKey) -> Option<u64> {
    let seq = key
        .as_str()
        .strip_prefix(session.as_str())?
        .strip_prefix('/')?;
    if is_seq(seq) { seq.parse().ok() } else { None }
}

pub(crate) fn record_key(session: &StoreKey, seq: u64) -> Result<StoreKey, SnapshotError> {
    Ok(StoreKey::new(format!("{session}/{seq:020}")).map_err(StoreError::from)?)
}

/// A delta record's bytes, sealed: the messages `append`ed at history length `from`, and
/// each field of `now` that differs from `before`.
pub(crate) fn encode_delta(
    seq: u64,
    prev: &str,
    turn: u64,
    from: usize,
    append: &[Message],
    before: &Fields,
    now: &Fields,
) -> Result<Vec<u8>, SnapshotError> {
    let serialize = |source| SnapshotError::Serialize { source };
    let mut out = Vec::with_capacity(256);
    write!(
        out,
        "{{\"format\":\"{JOURNAL_FORMAT}\",\"format_version\":{JOURNAL_FORMAT_VERSION},\"seq\":{seq},\"prev\":\"crc32:{prev}\",\"turn\":{turn},\"from\":{from},\"append\":"
    )
    .map_err(|e| serialize(serde_json::Error::io(e)))?;
    serde_json::to_writer(&mut out, append).map_err(serialize)?;
    let mut first = true;
    for ((name, old), new) in FIELDS.iter().zip(&before.0).zip(&now.0) {
        if old == new {
            continue;
        }
        out.extend_from_slice(if first { b",\"set\":{\"" } else { b",\"" });
        first = false;
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(new);
    }
    if !first {
        out.push(b'}');
    }
    out.push(b'}');
    file::seal(&mut out)?;
    Ok(out)
}

#[derive(Deserialize)]
struct Delta {
    format: String,
    format_version: u64,
    seq: u64,
    prev: String,
    turn: u64,
    from: usize,
    #[serde(default)]
    append: Vec<Message>,
    #[serde(default)]
    set: BTreeMap<String, Box<RawValue>>,
}

/// A replay and what a writer continuing it needs.
pub(crate) struct Found {
    pub(crate) replayed: Replayed,
    pub(crate) head: Head,
    /// The dropped last record's number and version, to delete it.
    pub(crate) dropped_version: Option<(u64, u64)>,
}

fn is_full(content: &str) -> bool {
    content.starts_with("{\"format\":\"chef-snapshot\"")
}

pub(crate) async fn replay(
    backend: &(impl StorageBackend + ?Sized),
    session: &StoreKey,
) -> Result<Option<Found>, SnapshotError> {
    // The keys alone first, then the records from the newest back to the newest full one:
    // a replay reads what it applies, not the generation a compaction keeps behind it.
    let mut keys: Vec<(u64, StoreKey)> = backend
        .list(&Namespace::JOURNAL, &prefix(session))
        .await?
        .into_iter()
        .filter_map(|key| record_seq(session, &key).map(|seq| (seq, key)))
        .collect();
    keys.sort_by_key(|(seq, _)| *seq);
    let origin = |seq| Origin::Journal {
        session: session.as_str().to_owned(),
        seq,
    };
    let corrupt = |seq, message: String| SnapshotError::Corrupt {
        origin: origin(seq),
        source: serde_json::Error::custom(message),
    };
    let mut records: Vec<(u64, Versioned<Entry>)> = Vec::new();
    let mut dropped_version = None;
    for (seq, key) in keys.iter().rev() {
        // Gone since the listing: pruned by a compaction that wrote a newer full record.
        let Some(entry) = backend.get(&Namespace::JOURNAL, key).await? else {
            continue;
        };
        let content = entry.value.content();
        // A damaged last record is what a torn append leaves: drop it.
        if records.is_empty()
            && dropped_version.is_none()
            && !matches!(file::checksum(content.as_bytes()), Some(Ok(())))
        {
            dropped_version = Some((*seq, entry.version));
            continue;
        }
        let full = is_full(content);
        records.push((*seq, entry));
        if full {
            break;
        }
    }
    records.reverse();
    let Some(((full_seq, full), deltas_after)) = records.split_first() else {
        return Ok(None);
    };
    let full_seq = *full_seq;
    if !is_full(full.value.content()) {
        return Err(corrupt(
            full_seq,
            "the journal has no full record".to_owned(),
        ));
    }
    let mut snapshot: Snapshot<SessionState> =
        file::decode(full.value.content().as_bytes(), origin(full_seq))?;
    let full_bytes = full.value.content().len();
    let mut last_checksum = file::checksum_digits(full.value.content().as_bytes())
        .unwrap_or_default()
        .to_owned();
    let (mut seq, mut delta_bytes) = (full_seq, 0usize);
    for (at, entry) in deltas_after {
        let content = entry.value.content();
        if *at != seq + 1 {
            return Err(corrupt(*at, format!("record {} is missing", seq + 1)));
        }
        match file::checksum(content.as_bytes()) {
            Some(Ok(())) => {}
            Some(Err(mismatch)) => return Err(corrupt(*at, mismatch.to_string())),
            None => return Err(corrupt(*at, "no checksum".to_owned())),
        }
        let delta: Delta =
            file::from_slice_deep(content.as_bytes()).map_err(|source| SnapshotError::Corrupt {
                origin: origin(*at),
                source,
            })?;
        if delta.format != JOURNAL_FORMAT {
            return Err(corrupt(
                *at,
                format!("format {:?} in the journal", delta.format),
            ));
        }
        if delta.format_version > JOURNAL_FORMAT_VERSION {
            return Err(SnapshotError::NewerVersion {
                origin: origin(*at),
                found: delta.format_version,
                supported: JOURNAL_FORMAT_VERSION,
            });
        }
        if delta.seq != *at || delta.prev.strip_prefix("crc32:") != Some(last_checksum.as_str()) {
            return Err(corrupt(
                *at,
                format!("record {at} does not continue record {seq}"),
            ));
        }
        let state = &mut snapshot.payload;
        if delta.from != state.history.len() {
            return Err(corrupt(
                *at,
                format!(
                    "record {at} appends at message {} to a history of {}",
                    delta.from,
                    state.history.len()
                ),
            ));
        }
        state.history.extend(delta.append);
        state.turn = delta.turn;
        // In FIELDS order (memory entries before the memory turn), then anything unknown.
        let mut set = delta.set;
        let mut ordered: Vec<_> = FIELDS
            .iter()
            .filter_map(|name| set.remove_entry(*name))
            .collect();
        ordered.extend(set);
        for (name, raw) in &ordered {
            set_field(state, name, raw).map_err(|source| SnapshotError::Corrupt {
                origin: origin(*at),
                source,
            })?;
        }
        snapshot.created_turn = delta.turn;
        last_checksum = file::checksum_digits(content.as_bytes())
            .unwrap_or_default()
            .to_owned();
        delta_bytes += content.len();
        seq = *at;
    }
    let records_applied = records.len();
    let deltas = deltas_after.len() as u64;
    Ok(Some(Found {
        replayed: Replayed {
            snapshot,
            loaded: Loaded {
                seq,
                full_seq,
                records: records_applied,
                dropped: dropped_version.map(|(s, _)| s),
            },
        },
        head: Head {
            next: seq + 1,
            last_checksum,
            full_seq,
            full_bytes,
            deltas,
            delta_bytes,
            image: None,
        },
        dropped_version,
    }))
}
