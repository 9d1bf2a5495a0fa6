//! Validated names: [`StoreKey`] (a path inside a namespace) and [`Namespace`].
//!
//! Validation happens once, when the value is built, so every backend receives keys that
//! cannot name anything outside their namespace. The rules are deliberately stricter than
//! any one backend needs, so that a key accepted by the in-memory backend is also accepted
//! by the file-system backend (and by a database backend later): a session can move between
//! backends without a key that only one of them understands.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest key, in UTF-8 bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// Longest segment of a key (between two `/`), in UTF-8 bytes. File systems commonly cap a
/// file name at 255 bytes; the file-system backend adds a short suffix.
pub const MAX_SEGMENT_BYTES: usize = 200;
/// Longest namespace name, in bytes.
pub const MAX_NAMESPACE_BYTES: usize = 64;

/// A key inside one store namespace: one or more `/`-separated segments.
///
/// Accepted: non-empty UTF-8 of at most [`MAX_KEY_BYTES`] bytes, segments of at most
/// [`MAX_SEGMENT_BYTES`] bytes. Refused, with the reason in [`KeyProblem`]: a leading `/`
/// (absolute path), empty segments (`a//b`, a trailing `/`), the segments `.` and `..`,
/// segments starting with `.` (reserved for the file-system backend's temporary and lock
/// files), backslashes, NUL and every other control character.
///
/// ```
/// use chef::store::StoreKey;
/// assert_eq!(StoreKey::new("sub/plan.md")?.as_str(), "sub/plan.md");
/// assert!(StoreKey::new("../etc/passwd").is_err());
/// # Ok::<(), chef::store::InvalidKey>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct StoreKey(String);

impl StoreKey {
    /// Validate `key`.
    pub fn new(key: impl Into<String>) -> Result<Self, InvalidKey> {
        let key = key.into();
        match key_problem(&key) {
            None => Ok(Self(key)),
            Some(problem) => Err(InvalidKey { key, problem }),
        }
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The `/`-separated segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }

    /// The owned text.
    pub fn into_inner(self) -> String {
        self.0
    }
}

fn key_problem(key: &str) -> Option<KeyProblem> {
    if key.is_empty() {
        return Some(KeyProblem::Empty);
    }
    if key.len() > MAX_KEY_BYTES {
        return Some(KeyProblem::TooLong);
    }
    if key.starts_with('/') {
        return Some(KeyProblem::Absolute);
    }
    if key.contains('\\') {
        return Some(KeyProblem::Backslash);
    }
    if key.chars().any(char::is_control) {
        return Some(KeyProblem::ControlCharacter);
    }
    for segment in key.split('/') {
        if segment.is_empty() {
            return Some(KeyProblem::EmptySegment);
        }
        if segment == "." || segment == ".." {
            return Some(KeyProblem::DotSegment);
        }
        if segment.starts_with('.') {
            return Some(KeyProblem::HiddenSegment);
        }
        if segment.len() > MAX_SEGMENT_BYTES {
            return Some(KeyProblem::SegmentTooLong);
        }
    }
    None
}

impl fmt::Display for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// `StoreKey` orders exactly as its text (derived `Ord` on the inner `String`), so maps keyed
// by `StoreKey` can be searched with a `&str`.
impl std::borrow::Borrow<str> for StoreKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for StoreKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for StoreKey {
    type Error = InvalidKey;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl TryFrom<&str> for StoreKey {
    type Error = InvalidKey;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<StoreKey> for String {
    fn from(key: StoreKey) -> Self {
        key.0
    }
}

/// Why a key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyProblem {
    /// The key is empty.
    Empty,
    /// The key is longer than [`MAX_KEY_BYTES`].
    TooLong,
    /// The key starts with `/`.
    Absolute,
    /// The key contains a backslash.
    Backslash,
    /// The key contains NUL or another control character.
    ControlCharacter,
    /// A key the model made contains an invisible formatting character (a zero-width space
    /// or joiner, a bidirectional override, a byte-order mark). Only the validated memory
    /// writes refuse it ([`Memory::create`](crate::memory::Memory::create)); a store key may
    /// hold one.
    InvisibleCharacter,
    /// A key the model made is blank, or one of its segments begins or ends with
    /// whitespace (`" "`, `"x "`): it would show in the memory block as another key, or as
    /// none. Only the validated memory writes refuse it, as
    /// [`InvisibleCharacter`](Self::InvisibleCharacter).
    Whitespace,
    /// Two `/` in a row, or a leading or trailing `/`.
    EmptySegment,
    /// A segment is `.` or `..`.
    DotSegment,
    /// A segment starts with `.`.
    HiddenSegment,
    /// A segment is longer than [`MAX_SEGMENT_BYTES`].
    SegmentTooLong,
    /// On disk, the key's path passes through a symbolic link (which could lead out of the
    /// store root).
    Symlink,
    /// On disk, something that is not a store entry (a directory, a device) sits where the
    /// key's file would be.
    NotAnEntry,
}

impl KeyProblem {
    /// A short lowercase description.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Empty => "the key is empty",
            Self::TooLong => "the key is too long",
            Self::Absolute => "the key is an absolute path",
            Self::Backslash => "the key contains a backslash",
            Self::ControlCharacter => "the key contains a control character",
            Self::InvisibleCharacter => {
                "the key contains an invisible formatting character (zero-width or bidirectional)"
            }
            Self::Whitespace => {
                "the key is blank, or a segment of it begins or ends with whitespace"
            }
            Self::EmptySegment => "the key has an empty segment",
            Self::DotSegment => "the key has a `.` or `..` segment",
            Self::HiddenSegment => "a key segment starts with `.`",
            Self::SegmentTooLong => "a key segment is too long",
            Self::Symlink => "the key's path passes through a symbolic link",
            Self::NotAnEntry => "something that is not a store entry occupies the key's path",
        }
    }
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A key was refused: it could escape its namespace, or it cannot be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid store key {key:?}: {problem}")]
pub struct InvalidKey {
    /// The key as given.
    pub key: String,
    /// What is wrong with it.
    pub problem: KeyProblem,
}

/// A store namespace: `memory`, `notes`, `vfs`, `archive`, or a custom one.
///
/// A namespace name is 1 to [`MAX_NAMESPACE_BYTES`] bytes of ASCII lowercase letters, digits,
/// `_` and `-`, starting with a letter or digit. That keeps it one safe path segment on disk
/// and one safe identifier elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Namespace(Cow<'static, str>);

impl Namespace {
    /// Durable facts, injected into every compile.
    pub const MEMORY: Self = Self(Cow::Borrowed("memory"));
    /// The model's own scratch space.
    pub const NOTES: Self = Self(Cow::Borrowed("notes"));
    /// Offloaded large tool output and archived overflow spans.
    pub const VFS: Self = Self(Cow::Borrowed("vfs"));
    /// Reserved for archives; read-only to the model by default.
    pub const ARCHIVE: Self = Self(Cow::Borrowed("archive"));
    /// Session snapshots, one entry per session id (see [`crate::snapshot::store`]).
    pub const SESSIONS: Self = Self(Cow::Borrowed("sessions"));
    /// Session journals: a full snapshot now and then and one record per saved turn (see
    /// [`crate::snapshot::journal`]).
    pub const JOURNAL: Self = Self(Cow::Borrowed("journal"));
    /// Session leases kept by the default lease implementation (see [`super::Lease`]).
    pub const LEASES: Self = Self(Cow::Borrowed("leases"));

    /// Validate a namespace name.
    pub fn new(name: impl Into<String>) -> Result<Self, InvalidNamespace> {
        let name = name.into();
        let valid_char =
            |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
        let first_ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if first_ok && name.len() <= MAX_NAMESPACE_BYTES && name.chars().all(valid_char) {
            Ok(Self(Cow::Owned(name)))
        } else {
            Err(InvalidNamespace { name })
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Namespace {
    type Error = InvalidNamespace;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<Namespace> for String {
    fn from(ns: Namespace) -> Self {
        ns.0.into_owned()
    }
}

/// A namespace name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid store namespace {name:?}: use 1 to 64 lowercase ASCII letters, digits, `_` or `-`, starting with a letter or digit"
)]
pub struct InvalidNamespace {
    /// The name as given.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_validated_as_the_docs_say() {
        let table: &[(&str, Option<KeyProblem>)] = &[
            ("lang", None),
            ("sub/plan.md", None),
            ("a b/ü-é/x.y", None),
            ("", Some(KeyProblem::Empty)),
            ("/etc/passwd", Some(KeyProblem::Absolute)),
            ("..", Some(KeyProblem::DotSegment)),
            ("a/../b", Some(KeyProblem::DotSegment)),
            ("a/./b", Some(KeyProblem::DotSegment)),
            ("a//b", Some(KeyProblem::EmptySegment)),
            ("a/", Some(KeyProblem::EmptySegment)),
            ("a\\b", Some(KeyProblem::Backslash)),
            ("..\\x", Some(KeyProblem::Backslash)),
            ("a\0b", Some(KeyProblem::ControlCharacter)),
            ("a\nb", Some(KeyProblem::ControlCharacter)),
            (".hidden", Some(KeyProblem::HiddenSegment)),
            ("a/.tmp-1-x", Some(KeyProblem::HiddenSegment)),
        ];
        for (key, want) in table {
            assert_eq!(key_problem(key), *want, "key {key:?}");
        }
        assert_eq!(
            key_problem(&"x".repeat(MAX_SEGMENT_BYTES + 1)),
            Some(KeyProblem::SegmentTooLong)
        );
        assert_eq!(
            key_problem(&"abc/".repeat(MAX_KEY_BYTES / 4 + 1)),
            Some(KeyProblem::TooLong)
        );
    }

    #[test]
    fn a_key_deserializes_only_when_valid() {
        let ok: StoreKey = serde_json::from_str(r#""a/b""#).unwrap();
        assert_eq!(ok.as_str(), "a/b");
        assert!(serde_json::from_str::<StoreKey>(r#""../b""#).is_err());
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#""a/b""#);
    }

    #[test]
    fn namespaces_are_single_safe_segments() {
        for good in ["memory", "notes", "vfs", "archive", "team-1", "a_b", "9"] {
            assert!(Namespace::new(good).is_ok(), "{good}");
        }
        for bad in [
            "", ".", "..", "a/b", "a\\b", "Memory", "-x", "_x", "a:b", "a b",
        ] {
            assert!(Namespace::new(bad).is_err(), "{bad:?}");
        }
        assert!(Namespace::new("x".repeat(65)).is_err());
        assert_eq!(Namespace::new("memory").unwrap(), Namespace::MEMORY);
    }
}
