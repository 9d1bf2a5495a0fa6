//! Writing results to stdout without panicking on a closed pipe.

use std::io::{self, Write};

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
