//! Writing results to stdout without panicking on a closed pipe.

use std::{
    io::{self, Write},
    path::Path,
};

use serde::Serialize;

use crate::error::CliError;

/// Writes `value` as one line of compact JSON to stdout.
pub(crate) fn json_line<T: Serialize>(value: &T) -> Result<(), CliError> {
    let mut line = serde_json::to_vec(value).map_err(|e| CliError::Write(e.into()))?;
    line.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
            _ => CliError::Write(e),
        })
}

/// Writes text to stdout as it is.
pub(crate) fn text(text: &str) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
            _ => CliError::Write(e),
        })
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and renames it
/// over `path`, so a reader finds the old bytes or the new ones, never a mix.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let err = |source| CliError::WriteFile {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
