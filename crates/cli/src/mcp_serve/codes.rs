//! The code file: every code `chef mcp serve` has issued, kept across restarts.
//!
//! Codes are given in catalogue order, so an upstream that gains a tool would move most
//! codes at the next start, and a host that kept a code (a conversation resumed after the
//! restart) would reach another tool. The proxy pins every code it ever issued while it
//! runs; this file carries those pins to the next run, so a code names the same tool or
//! none, restart or not. It is written atomically (a temporary file renamed over it,
//! owner-only when new) whenever a new code is issued.
//!
//! ```json
//! {"version": 1, "codes": {"files_read_file": "a0", "git_push": "b1"}}
//! ```

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

/// What went wrong with the code file.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CodeFileError {
    #[error("code file {}: cannot read it: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "code file {}: not a code table ({source}); delete it to start afresh (codes a host kept may then name other tools)",
        path.display()
    )]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("code file {}: version {version} is not one this chef reads (1)", path.display())]
    Version { path: PathBuf, version: u64 },
    #[error(
        "code file {}: the code {code:?} is given to both {first} and {second}; a code names one tool (fix or delete the file)",
        path.display()
    )]
    SharedCode {
        path: PathBuf,
        code: String,
        first: String,
        second: String,
    },
    #[error("code file {}: cannot write it: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "code file {}: another chef mcp serve is using it (its lock {} is held); give each proxy its own code_file, or the two would issue one code to different tools",
        path.display(),
        lock.display()
    )]
    InUse { path: PathBuf, lock: PathBuf },
    #[error("code file {}: cannot lock it ({}): {source}", path.display(), lock.display())]
    Lock {
        path: PathBuf,
        lock: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Holds the code file for this process: an exclusive lock on `<code file>.lock`, released
/// when the returned file is dropped (or the process ends). Two proxies sharing one code
/// file would each pin codes the other does not see and overwrite each other's pins, so a
/// code one of them issued could reach another tool after a restart.
///
/// # Errors
/// [`CodeFileError::InUse`] when another process holds it; [`CodeFileError::Lock`] when the
/// lock file cannot be opened or locked.
pub(crate) fn hold(path: &Path) -> Result<std::fs::File, CodeFileError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock = PathBuf::from(name);
    let failed = |source| CodeFileError::Lock {
        path: path.to_owned(),
        lock: lock.clone(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(failed)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(CodeFileError::InUse {
            path: path.to_owned(),
            lock,
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(failed(e)),
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u64,
    codes: BTreeMap<String, String>,
}

/// The codes in `path`; none when it does not exist yet.
pub(crate) fn load(path: &Path) -> Result<BTreeMap<String, String>, CodeFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(CodeFileError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let file: File = serde_json::from_str(&text).map_err(|source| CodeFileError::Parse {
        path: path.to_owned(),
        source,
    })?;
    if file.version != 1 {
        return Err(CodeFileError::Version {
            path: path.to_owned(),
            version: file.version,
        });
    }
    // One code for two tools would send a host's call of one to the other.
    let mut owners: BTreeMap<&str, &str> = BTreeMap::new();
    for (tool, code) in &file.codes {
        if let Some(first) = owners.insert(code, tool) {
            return Err(CodeFileError::SharedCode {
                path: path.to_owned(),
                code: code.clone(),
                first: first.to_owned(),
                second: tool.clone(),
            });
        }
    }
    Ok(file.codes)
}

/// Writes `codes` to `path` atomically.
pub(crate) fn save(path: &Path, codes: &BTreeMap<String, String>) -> Result<(), CodeFileError> {
    let error = |source| CodeFileError::Write {
        path: path.to_owned(),
        source,
    };
    let file = File {
        version: 1,
        codes: codes.clone(),
    };
    let mut bytes = serde_json::to_vec_pretty(&file).map_err(|e| error(e.into()))?;
    bytes.push(b'\n');
    crate::output::write_file_atomic(path, &bytes, true).map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_file_is_held_by_one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codes.json");
        let held = hold(&path).unwrap();
        // A second hold (another open file description, as another process has) is refused.
        let error = hold(&path).unwrap_err();
        assert!(matches!(error, CodeFileError::InUse { .. }), "{error}");
        assert!(
            error.to_string().contains("another chef mcp serve"),
            "{error}"
        );
        drop(held);
        hold(&path).unwrap();
    }

    #[test]
    fn codes_round_trip_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        assert!(load(&path).unwrap().is_empty());
        let codes = BTreeMap::from([("a_b".to_owned(), "a0".to_owned())]);
        save(&path, &codes).unwrap();
        assert_eq!(load(&path).unwrap(), codes);
    }

    #[test]
    fn a_file_that_is_not_a_code_table_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        for (text, needle) in [
            ("{", "not a code table"),
            ("{\"version\": 1}", "not a code table"),
            ("{\"version\": 2, \"codes\": {}}", "version 2"),
            (
                "{\"version\": 1, \"codes\": {\"a_b\": \"a0\", \"c_d\": \"a0\"}}",
                "\"a0\" is given to both a_b and c_d",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = load(&path).unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("c.json"), "{text}: {e}");
        }
    }
}
