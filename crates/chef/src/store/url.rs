//! Opening a store from where it lives: one parser and one `open` for every front end (the
//! `chef sessions --store` flag, the gateway's `[memory] url`), so a URL means the same
//! store everywhere.

use std::{fmt, path::PathBuf, str::FromStr, sync::Arc};

use super::{FsBackend, StorageBackend, StoreError};

/// Where a store lives: a directory (the file-system backend) or a PostgreSQL URL.
///
/// Parsed from `postgres://…` or `postgresql://…`, `file:///absolute/dir`, or a bare
/// directory path. `Display` never shows a PostgreSQL password.
///
/// ```
/// use chef::store::StoreUrl;
///
/// let url: StoreUrl = "postgres://chef:secret@db.internal/chef".parse()?;
/// assert_eq!(url.to_string(), "postgres://…@db.internal/chef");
/// assert_eq!("file:///var/chef".parse::<StoreUrl>()?, StoreUrl::Dir("/var/chef".into()));
/// assert!("s3://bucket".parse::<StoreUrl>().is_err());
/// # Ok::<(), chef::store::StoreUrlError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// A directory for the file-system backend ([`FsBackend`]).
    Dir(PathBuf),
    /// A PostgreSQL connection URL (the `PgBackend`, feature `postgres`).
    Postgres(String),
}

/// Why a store URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreUrlError {
    /// Nothing was given.
    #[error("the store is empty (expected file://, postgres:// or a directory)")]
    Empty,
    /// A `file://` URL whose path is not absolute.
    #[error("{0:?}: a file URL needs an absolute path (file:///dir)")]
    RelativeFileUrl(String),
    /// A scheme chef has no backend for.
    #[error("unknown store scheme {0:?} (expected file://, postgres:// or a directory)")]
    UnknownScheme(String),
}

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(s: &str) -> Result<Self, StoreUrlError> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return Ok(Self::Postgres(s.to_owned()));
        }
        if let Some(path) = s.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(StoreUrlError::RelativeFileUrl(s.to_owned()));
            }
            return Ok(Self::Dir(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            return Err(StoreUrlError::UnknownScheme(scheme.to_owned()));
        }
        if s.is_empty() {
            return Err(StoreUrlError::Empty);
        }
        Ok(Self::Dir(PathBuf::from(s)))
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dir(dir) => write!(f, "{}", dir.display()),
            // Never echo a password: whatever stands before the host goes.
            Self::Postgres(url) => match url.rsplit_once('@') {
                Some((before, rest)) => {
                    let scheme = before.split_once("://").map_or("postgres", |(s, _)| s);
                    write!(f, "{scheme}://…@{rest}")
                }
                None => f.write_str(url),
            },
        }
    }
}

/// Opens the store at `url`: the directory (made if missing) or a PostgreSQL connection
/// pool (which applies chef's migrations on first use).
///
/// # Errors
/// [`StoreError`]: the directory cannot be made or read, the database cannot be reached,
/// or a PostgreSQL URL in a chef built without the `postgres` feature.
pub async fn open(url: &StoreUrl) -> Result<Arc<dyn StorageBackend>, StoreError> {
    match url {
        StoreUrl::Dir(dir) => Ok(Arc::new(FsBackend::open(dir)?)),
        #[cfg(feature = "postgres")]
        StoreUrl::Postgres(url) => Ok(Arc::new(super::PgBackend::connect(url).await?)),
        #[cfg(not(feature = "postgres"))]
        StoreUrl::Postgres(_) => Err(StoreError::Backend {
            message: "this chef was built without PostgreSQL support (cargo feature `postgres`)"
                .to_owned(),
            source: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_display_without_passwords() {
        for (text, url) in [
            ("/tmp/x", StoreUrl::Dir("/tmp/x".into())),
            ("rel/dir", StoreUrl::Dir("rel/dir".into())),
            ("file:///tmp/x", StoreUrl::Dir("/tmp/x".into())),
            (
                "postgresql://u@h/db",
                StoreUrl::Postgres("postgresql://u@h/db".into()),
            ),
        ] {
            assert_eq!(text.parse::<StoreUrl>().as_ref(), Ok(&url), "{text}");
        }
        assert_eq!(
            StoreUrl::Postgres("postgres://u:p@ss@h:5432/db".into()).to_string(),
            "postgres://…@h:5432/db"
        );
        assert_eq!(
            StoreUrl::Postgres("postgres:///db".into()).to_string(),
            "postgres:///db"
        );
        assert_eq!("".parse::<StoreUrl>(), Err(StoreUrlError::Empty));
        assert!(matches!(
            "file://rel".parse::<StoreUrl>(),
            Err(StoreUrlError::RelativeFileUrl(_))
        ));
        assert!(matches!(
            "s3://b".parse::<StoreUrl>(),
            Err(StoreUrlError::UnknownScheme(s)) if s == "s3"
        ));
    }
}
