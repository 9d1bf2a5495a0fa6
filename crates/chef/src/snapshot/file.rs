//! The snapshot file format, [`save`] and [`load`].
//!
//! # Format
//!
//! One compact JSON object, followed by a newline:
//!
//! ```json
//! {"format":"chef-snapshot","format_version":2,"label":"before deploy","created_turn":12,"payload":{"history":[]},"checksum":"crc32:a7fd36ed"}
//! ```
//!
//! * `format` is always `"chef-snapshot"`: it tells a snapshot from any other JSON file.
//! * `format_version` is [`FORMAT_VERSION`]. A reader refuses a newer version with
//!   [`SnapshotError::NewerVersion`] instead of misreading it, and reads every older one.
//! * `label` (left out when there is none) and `created_turn` describe the snapshot.
//!   `created_turn` is a turn count, not a clock, so two saves of the same state are
//!   byte-identical.
//! * `payload` is the caller's value.
//! * `checksum` is always the last member: `crc32:` and the CRC-32 (IEEE) of every byte of
//!   the file before its `,"checksum"`, as 8 lowercase hex digits. A file whose checksum
//!   does not match, or a version-2 file without one, is [`SnapshotError::Corrupt`]: a bit
//!   flipped anywhere in a file (a message's text included) is found, where it would
//!   otherwise load as a different conversation. Version-1 files (written before the
//!   checksum) have none and still load.
//!
//! Unknown fields, at the top level and wherever the payload type tolerates them, are
//! ignored, so a file written by a newer build of the same format version still loads.
//!
//! # Guarantees
//!
//! [`save`] writes through the crate's one atomic-write routine: temporary file in the same
//! directory, `fsync`, rename, `fsync` of the directory. A crash leaves the previous file or
//! the new one, never a torn or empty one; the file is readable by its owner only. `save`
//! also removes stale temporary files left in that directory by writers that died.

use std::path::Path;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Serialize};

use super::error::{Origin, SnapshotError};
use crate::fsutil;

/// The value of the `format` field.
pub const FORMAT: &str = "chef-snapshot";
/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u64 = 2;

/// What comes before the checksum's hex digits, and after them.
const CHECKSUM_HEAD: &[u8] = b",\"checksum\":\"crc32:";
const CHECKSUM_TAIL: &[u8] = b"\"}";

/// A snapshot: the caller's payload plus what describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot<T> {
    /// An optional label.
    pub label: Option<String>,
    /// The session turn at which the snapshot was taken.
    pub created_turn: u64,
    /// The captured state.
    pub payload: T,
}

impl<T> Snapshot<T> {
    /// A snapshot of `payload` at turn 0, without a label.
    pub fn new(payload: T) -> Self {
        Self {
            label: None,
            created_turn: 0,
            payload,
        }
    }

    /// Set the label.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Set the turn.
    #[must_use]
    pub fn with_created_turn(mut self, turn: u64) -> Self {
        self.created_turn = turn;
        self
    }
}

#[derive(Serialize)]
struct EnvelopeRef<'a, T> {
    format: &'static str,
    format_version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    created_turn: u64,
    payload: &'a T,
}

/// Only what decides whether and how to read the rest. `format_version` is read as any
/// JSON value, so that a chef snapshot whose version is not a `u64` (`1e3`, `"2"`, 2^64)
/// is told apart from a file that is not a snapshot at all.
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    format_version: Option<serde_json::Value>,
}

impl Header {
    /// The version as [`check_header`] reads it: one that is not a `u64` is read as 0,
    /// which no build reads (so it is reported as an invalid version).
    fn version(&self) -> Option<u64> {
        self.format_version
            .as_ref()
            .map(|v| v.as_u64().unwrap_or(0))
    }
}

/// The whole file in one pass: the header fields are checked after reading, and only when
/// the pass fails is the [`Header`] read alone to tell which error it is.
#[derive(Deserialize)]
struct Envelope<T> {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    format_version: Option<u64>,
    #[serde(default)]
    label: Option<String>,
    created_turn: u64,
    payload: T,
}

/// Serialize a snapshot to the file format's bytes.
pub fn to_vec<T: Serialize>(snapshot: &Snapshot<T>) -> Result<Vec<u8>, SnapshotError> {
    let mut bytes = serde_json::to_vec(&EnvelopeRef {
        format: FORMAT,
        format_version: FORMAT_VERSION,
        label: snapshot.label.as_deref(),
        created_turn: snapshot.created_turn,
        payload: &snapshot.payload,
    })
    .map_err(|source| SnapshotError::Serialize { source })?;
    seal(&mut bytes)?;
    Ok(bytes)
}

/// The deepest a snapshot or journal record may nest: a save refuses more, a load reads
/// up to it (past serde_json's own 128, which a model's tool arguments nested 120 deep
/// already cross once they sit in a snapshot: such a save was written and could never be
/// read back).
pub const MAX_NESTING: usize = 256;

/// Reads JSON of any shape up to [`MAX_NESTING`] levels deep. The usual read is serde_json's
/// own (128 levels); only past that is the depth measured (one pass, so the parse cannot
/// run out of stack) and the bytes read again without serde_json's limit.
pub(crate) fn from_slice_deep<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    match serde_json::from_slice(bytes) {
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {}
        read => return read,
    }
    let depth = chef_ir::json_scan::depth(bytes);
    if depth > MAX_NESTING {
        return Err(serde_json::Error::custom(format!(
            "nests {depth} levels deep, deeper than the {MAX_NESTING} a snapshot may"
        )));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Ends a serialised JSON object with its checksum member and a newline (the snapshot
/// file's rule, also used by journal records): the object's closing brace makes way for
/// `,"checksum":"crc32:…"}`. What nests deeper than [`MAX_NESTING`] is refused: a load
/// could not read it back.
pub(super) fn seal(bytes: &mut Vec<u8>) -> Result<(), SnapshotError> {
    let depth = chef_ir::json_scan::depth(bytes);
    if depth > MAX_NESTING {
        return Err(SnapshotError::TooDeep {
            depth,
            limit: MAX_NESTING,
        });
    }
    if bytes.pop() != Some(b'}') {
        return Err(SnapshotError::Serialize {
            source: serde::ser::Error::custom("the envelope did not serialise to an object"),
        });
    }
    let crc = crc32fast::hash(bytes);
    bytes.extend_from_slice(CHECKSUM_HEAD);
    write_hex(bytes, crc);
    bytes.extend_from_slice(CHECKSUM_TAIL);
    bytes.push(b'\n');
    Ok(())
}

/// Appends `crc` as 8 lowercase hex digits.
fn write_hex(bytes: &mut Vec<u8>, crc: u32) {
    for shift in (0..8).rev() {
        let nibble = ((crc >> (shift * 4)) & 0xf) as u8;
        bytes.push(if nibble < 10 {
            b'0' + nibble
        } else {
            b'a' + nibble - 10
        });
    }
}

/// The 8 hex digits of a sealed object's checksum member, unchecked (`None`: no checksum
/// member at its end).
pub(crate) fn checksum_digits(bytes: &[u8]) -> Option<&str> {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let rest = bytes.get(..end)?.strip_suffix(CHECKSUM_TAIL)?;
    let at = rest.len().checked_sub(8)?;
    rest.get(..at)?.strip_suffix(CHECKSUM_HEAD)?;
    std::str::from_utf8(rest.get(at..)?).ok()
}

/// A checksum member that does not match the bytes it covers.
#[derive(Debug, thiserror::Error)]
#[error("checksum mismatch: the file says crc32:{found}, its content gives crc32:{computed}")]
pub(super) struct ChecksumMismatch {
    found: String,
    computed: String,
}

/// Whether the bytes end with a checksum member, and if so whether it matches: `None` when
/// there is none, `Some(Err(_))` when it does not match.
pub(super) fn checksum(bytes: &[u8]) -> Option<Result<(), ChecksumMismatch>> {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let trimmed = bytes.get(..end)?;
    let rest = trimmed.strip_suffix(CHECKSUM_TAIL)?;
    let at = rest.len().checked_sub(8)?;
    let (covered, hex) = (rest.get(..at)?, rest.get(at..)?);
    let covered = covered.strip_suffix(CHECKSUM_HEAD)?;
    let found = std::str::from_utf8(hex).ok()?;
    let mut computed = Vec::with_capacity(8);
    write_hex(&mut computed, crc32fast::hash(covered));
    let computed = String::from_utf8_lossy(&computed);
    Some(if found == computed {
        Ok(())
    } else {
        Err(ChecksumMismatch {
            found: found.to_owned(),
            computed: computed.into_owned(),
        })
    })
}

/// Decode the file format's bytes.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<Snapshot<T>, SnapshotError> {
    decode(bytes, Origin::Bytes)
}

/// Save `snapshot` to `path`, atomically and durably (see the module docs). The parent
/// directory must exist. A symbolic link at `path` is followed (the link stays; the file it
/// points to gets the bytes); an existing file keeps its permission bits (a new one is
/// owner-only); a `path` that is a directory, a FIFO or a device is refused
/// ([`SnapshotError::Io`] of kind `InvalidInput`), never replaced.
pub fn save<T: Serialize>(
    path: impl AsRef<Path>,
    snapshot: &Snapshot<T>,
) -> Result<(), SnapshotError> {
    let path = path.as_ref();
    let bytes = to_vec(snapshot)?;
    let io_err = |source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    };
    fsutil::write_file_atomic(path, &bytes).map_err(io_err)
}

/// The largest snapshot file [`load`] reads: 1 GiB.
pub const MAX_SNAPSHOT_FILE_BYTES: u64 = 1 << 30;

/// Load a snapshot from `path`.
///
/// Only a regular file (a symbolic link is followed) of at most
/// [`MAX_SNAPSHOT_FILE_BYTES`] is read: a directory, FIFO or device (`/dev/zero`, a pipe no
/// one writes to) is refused before it is opened, and a larger file before it is read.
///
/// Errors: [`SnapshotError::Io`] (missing or unreadable file; kind `InvalidInput` for a
/// path that is not a regular file, `InvalidData` for one over the limit),
/// [`SnapshotError::Corrupt`] (not JSON, truncated, empty, or the wrong shape),
/// [`SnapshotError::NotASnapshot`] (JSON without `"format": "chef-snapshot"`),
/// [`SnapshotError::NewerVersion`].
pub fn load<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<Snapshot<T>, SnapshotError> {
    let path = path.as_ref();
    let bytes = fsutil::read_regular(path, MAX_SNAPSHOT_FILE_BYTES).map_err(|source| {
        SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        }
    })?;
    decode(&bytes, Origin::File(path.to_path_buf()))
}

pub(super) fn decode<T: DeserializeOwned>(
    bytes: &[u8],
    origin: Origin,
) -> Result<Snapshot<T>, SnapshotError> {
    decode_versioned(bytes, origin).map(|(snapshot, _)| snapshot)
}

/// [`decode`], with the format version the bytes declare (1 for a file from before the
/// field).
pub(super) fn decode_versioned<T: DeserializeOwned>(
    bytes: &[u8],
    origin: Origin,
) -> Result<(Snapshot<T>, u64), SnapshotError> {
    // Nothing at all (a save cut before its first byte, `touch`): said as such, not as
    // JSON that ended at line 1, column 0.
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(SnapshotError::Corrupt {
            origin,
            source: serde_json::Error::custom("the file is empty"),
        });
    }
    // A checksum that does not match: corrupt, whatever the rest looks like.
    let checked = match checksum(bytes) {
        Some(Err(mismatch)) => {
            return Err(SnapshotError::Corrupt {
                origin,
                source: serde_json::Error::custom(mismatch),
            });
        }
        Some(Ok(())) => true,
        None => false,
    };
    // serde also reads structs from JSON arrays; a snapshot is always an object.
    if let Some(first) = bytes.iter().find(|b| !b.is_ascii_whitespace())
        && *first != b'{'
    {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => Err(SnapshotError::NotASnapshot { origin }),
            Err(source) => Err(SnapshotError::Corrupt { origin, source }),
        };
    }
    // One pass reads everything. A file of a newer version may still decode (its payload
    // may happen to fit), so the header is checked either way; when the pass fails, the
    // header alone decides between "not ours", "newer" and "corrupt".
    let envelope = match from_slice_deep::<Envelope<T>>(bytes) {
        Ok(envelope) => envelope,
        Err(source) => {
            let header = match from_slice_deep::<Header>(bytes) {
                Ok(header) => header,
                // Well-formed JSON of another shape (an array, a string): not ours.
                Err(e) if e.classify() == serde_json::error::Category::Data => {
                    return Err(SnapshotError::NotASnapshot { origin });
                }
                Err(source) => return Err(SnapshotError::Corrupt { origin, source }),
            };
            check_header(header.format.as_deref(), header.version(), &origin)?;
            return Err(SnapshotError::Corrupt { origin, source });
        }
    };
    check_header(envelope.format.as_deref(), envelope.format_version, &origin)?;
    if !checked && envelope.format_version.is_some_and(|v| v >= 2) {
        return Err(SnapshotError::Corrupt {
            origin,
            source: serde_json::Error::custom(
                "no checksum: a version-2 snapshot ends with its checksum member",
            ),
        });
    }
    let version = envelope.format_version.unwrap_or(1);
    Ok((
        Snapshot {
            label: envelope.label,
            created_turn: envelope.created_turn,
            payload: envelope.payload,
        },
        version,
    ))
}

/// Refuses a file that is not a snapshot, or of a format version this build cannot read.
fn check_header(
    format: Option<&str>,
    format_version: Option<u64>,
    origin: &Origin,
) -> Result<(), SnapshotError> {
    if format != Some(FORMAT) {
        return Err(SnapshotError::NotASnapshot {
            origin: origin.clone(),
        });
    }
    match format_version {
        Some(found) if found > FORMAT_VERSION => Err(SnapshotError::NewerVersion {
            origin: origin.clone(),
            found,
            supported: FORMAT_VERSION,
        }),
        Some(1 | 2) => Ok(()),
        Some(_) | None => Err(SnapshotError::Corrupt {
            origin: origin.clone(),
            source: serde_json::Error::custom("missing or invalid format_version"),
        }),
    }
}
