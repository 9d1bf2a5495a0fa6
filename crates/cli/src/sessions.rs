//! `chef sessions ls|show|export|import --store URL`: inspect session snapshots kept in a
//! store and move them between backends.
//!
//! A store URL is `file:///abs/dir` or a plain directory path (the file-system backend), or
//! `postgres://…` / `postgresql://…` (the PostgreSQL backend, when chef is built with the
//! `postgres` feature).
//!
//! # Bundle format (`export` writes it, `import` reads it)
//!
//! JSON Lines, one session per line, sorted by id:
//!
//! ```json
//! {"id":"support/42","version":17,"snapshot":{"format":"chef-snapshot","format_version":2,"created_turn":3,"payload":{},"checksum":"crc32:…"}}
//! ```
//!
//! `snapshot` is the session's snapshot exactly as the snapshot file format has it;
//! `version` is informational (the target store assigns its own).
//!
//! # Journaled sessions
//!
//! Sessions saved with a [`Journal`](chef::snapshot::journal::Journal) are read too: `ls`
//! lists them with a `journal` member (the last record, the full record replay starts from,
//! the records replayed, a dropped damaged last record), `show` prints the replayed state as
//! a snapshot, and `export` writes it as a bundle line whose `version` is the last record's
//! number. `import` stores every line as a plain snapshot. An id kept both ways is shown and
//! exported from its plain snapshot.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chef::snapshot::{self, journal};
use chef::store::{Expect, StorageBackend, StoreError, StoreKey, StoreUrl};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{CliError, chain, json_line_problem};
use crate::output;

/// One line of `ls`.
#[derive(Serialize)]
struct Listed<'a> {
    id: &'a str,
    version: u64,
    created_turn: Option<u64>,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    journal: Option<JournalInfo>,
}

/// What `ls` says of a journaled session.
#[derive(Serialize)]
struct JournalInfo {
    seq: u64,
    full_seq: u64,
    records: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    dropped: Option<u64>,
}

/// One line of a bundle.
#[derive(Serialize, Deserialize)]
struct BundleLine {
    id: StoreKey,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<u64>,
    snapshot: Value,
}

pub(crate) fn run(args: &SessionsArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    // Global flags cannot be required in clap: check here.
    let url = args
        .store
        .as_ref()
        .ok_or_else(|| CliError::Usage("sessions: --store URL is required".to_owned()))?;
    // An import reads and checks its whole bundle before the store is opened (and, for a
    // directory, created): a missing or bad bundle leaves no empty store behind.
    let bundle = match &args.command {
        SessionsCommand::Import { file, .. } => Some(read_bundle(file)?),
        _ => None,
    };
    runtime.block_on(async {
        let store = open(url, bundle.is_some()).await?;
        match &args.command {
            SessionsCommand::Ls => ls(&*store, url).await,
            SessionsCommand::Show { id } => show(&*store, url, id).await,
            SessionsCommand::Export { ids, out } => export(&*store, url, ids, out.as_deref()).await,
            SessionsCommand::Import { overwrite, .. } => {
                import(&*store, url, bundle.unwrap_or_default(), *overwrite).await
            }
        }
    })
}

fn store_err(store: &StoreUrl) -> impl Fn(StoreError) -> CliError + '_ {
    move |source| CliError::Store {
        store: store.to_string(),
        source,
    }
}

async fn open(store: &StoreUrl, create: bool) -> Result<Arc<dyn StorageBackend>, CliError> {
    if let StoreUrl::Dir(dir) = store
        && !create
        && !dir.is_dir()
    {
        return Err(CliError::Usage(if dir.exists() {
            format!(
                "{}: not a directory (a store is a directory)",
                dir.display()
            )
        } else {
            format!("{}: no such store directory", dir.display())
        }));
    }
    // A usage error, not a store failure: this binary cannot open such a store at all.
    if cfg!(not(feature = "postgres")) && matches!(store, StoreUrl::Postgres(_)) {
        return Err(CliError::Usage(format!(
            "{store}: this chef was built without PostgreSQL support; rebuild it with `--features postgres`"
        )));
    }
    chef::store::open(store).await.map_err(|e| match e {
        // Bad input (exit 2), as the gateway reads it, not a store failure.
        StoreError::InvalidUrl { message } => CliError::Usage(format!("{store}: {message}")),
        e => store_err(store)(e),
    })
}

fn key(id: &str) -> Result<StoreKey, CliError> {
    StoreKey::new(id).map_err(CliError::SessionId)
}

/// The sessions `ls` and `export` went on past because their data is damaged (a stored
/// entry or snapshot that does not decode, a journal that does not replay), each named
/// on stderr with its reason as it is met; the run then exits 2.
#[derive(Default)]
struct Damaged(Vec<String>);

impl Damaged {
    /// `result`'s value; or, when its error is damage to session `id` (not a failure of
    /// the store), `None` once `id` is named. Any other error is returned.
    fn skip<T>(
        &mut self,
        id: &StoreKey,
        result: Result<T, CliError>,
    ) -> Result<Option<T>, CliError> {
        let reason = match &result {
            Ok(_) => return result.map(Some),
            Err(CliError::CorruptSession { problem, .. }) => problem.clone(),
            Err(CliError::Store {
                source: source @ StoreError::Corrupt { .. },
                ..
            }) => chef_serve::error_chain(source),
            Err(_) => return result.map(Some),
        };
        eprintln!("chef: session {:?} is corrupt: {reason}", id.as_str());
        self.0.push(format!("{:?}", id.as_str()));
        Ok(None)
    }

    /// `Ok` when no session was damaged; else the error that says `what` became of them.
    fn finish(self, what: &'static str) -> Result<(), CliError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(CliError::DamagedSessions { ids: self.0, what })
        }
    }
}

/// Every stored (plain) session, with the ids of those whose entry does not decode, each
/// named on stderr. One bulk read when all decode; else one read a key.
async fn scan_sessions(
    store: &dyn StorageBackend,
    url: &StoreUrl,
    damaged: &mut Damaged,
) -> Result<Vec<(StoreKey, chef::store::Versioned<chef::store::Entry>)>, CliError> {
    let namespace = &chef::store::Namespace::SESSIONS;
    match store.scan(namespace, "").await {
        Ok(all) => return Ok(all),
        Err(StoreError::Corrupt { .. }) => {}
        Err(e) => return Err(store_err(url)(e)),
    }
    let mut sessions = Vec::new();
    for id in store.list(namespace, "").await.map_err(store_err(url))? {
        let got = store.get(namespace, &id).await.map_err(store_err(url));
        if let Some(stored) = damaged.skip(&id, got)?.flatten() {
            sessions.push((id, stored));
        }
    }
    Ok(sessions)
}

async fn ls(store: &dyn StorageBackend, url: &StoreUrl) -> Result<(), CliError> {
    let mut damaged = Damaged::default();
    let sessions = scan_sessions(store, url, &mut damaged).await?;
    for (id, stored) in &sessions {
        // Checked as `show` and `export` check it (its checksum too): a session they would
        // refuse is not listed as if it were whole.
        let checked = check_snapshot(id, stored.value.content());
        if damaged.skip(id, checked)?.is_none() {
            continue;
        }
        output::json_line(&Listed {
            id: id.as_str(),
            version: stored.version,
            created_turn: stored
                .value
                .meta()
                .get("created_turn")
                .and_then(Value::as_u64),
            bytes: stored.value.content().len(),
            journal: None,
        })?;
    }
    for id in journal::list(store).await.map_err(store_err(url))? {
        let Some(replayed) = damaged.skip(&id, replay(store, url, &id).await)? else {
            continue;
        };
        let Some((replayed, bytes)) = replayed else {
            // Records are there, but none replays (a damaged lone record is dropped):
            // said, not silently left out.
            eprintln!(
                "chef: notice: session {:?}: {UNREPLAYABLE}; not listed",
                id.as_str()
            );
            continue;
        };
        let loaded = &replayed.loaded;
        output::json_line(&Listed {
            id: id.as_str(),
            version: loaded.seq,
            created_turn: Some(replayed.snapshot.created_turn),
            bytes: bytes.len(),
            journal: Some(JournalInfo {
                seq: loaded.seq,
                full_seq: loaded.full_seq,
                records: loaded.records,
                dropped: loaded.dropped,
            }),
        })?;
    }
    damaged.finish("not listed")
}

/// A journaled session replayed, with its state in the snapshot file format; `None` when
/// it has no journal.
async fn replay(
    store: &dyn StorageBackend,
    url: &StoreUrl,
    id: &StoreKey,
) -> Result<Option<(journal::Replayed, String)>, CliError> {
    let corrupt = |e: &dyn std::fmt::Display| CliError::CorruptSession {
        id: id.as_str().to_owned(),
        problem: e.to_string(),
    };
    let replayed = match journal::read(store, id).await {
        Ok(Some(replayed)) => replayed,
        Ok(None) => return Ok(None),
        Err(chef::snapshot::SnapshotError::Store(e)) => return Err(store_err(url)(e)),
        Err(e) => return Err(corrupt(&chain(&e))),
    };
    let bytes = snapshot::to_vec(&replayed.snapshot).map_err(|e| corrupt(&e))?;
    let text = String::from_utf8(bytes).map_err(|e| corrupt(&e))?;
    Ok(Some((replayed, text)))
}

/// The session's snapshot text and version: the plain stored snapshot (once it decodes, its
/// checksum included), else the replayed journal (version: its last record's number).
/// Whether the stored snapshot text of session `id` decodes (its checksum included), as
/// `import` checks it.
fn check_snapshot(id: &StoreKey, text: &str) -> Result<(), CliError> {
    snapshot::from_slice::<serde::de::IgnoredAny>(text.as_bytes())
        .map(drop)
        .map_err(|e| CliError::CorruptSession {
            id: id.as_str().to_owned(),
            problem: chain(&e),
        })
}

async fn load_any(
    store: &dyn StorageBackend,
    url: &StoreUrl,
    id: &StoreKey,
) -> Result<(String, u64), CliError> {
    if let Some(stored) = snapshot::store::load_raw(store, id)
        .await
        .map_err(store_err(url))?
    {
        // Checked as `import` checks it: what is shown or exported must load back.
        check_snapshot(id, &stored.value)?;
        // The id may also name a journal (a journaled session imported into its own
        // store): said, since that journal is not what is shown or exported.
        // Best effort: a store that cannot list its journals still shows the snapshot.
        if journal::list(store)
            .await
            .is_ok_and(|journals| journals.contains(id))
        {
            eprintln!(
                "chef: notice: session {:?} is held both as a stored snapshot and as a journal; the stored snapshot is used, the journal is left as it is (`ls` lists both)",
                id.as_str()
            );
        }
        return Ok((stored.value, stored.version));
    }
    match replay(store, url, id).await? {
        Some((replayed, text)) => Ok((text, replayed.loaded.seq)),
        None if journal::list(store)
            .await
            .map_err(store_err(url))?
            .contains(id) =>
        {
            Err(CliError::CorruptSession {
                id: id.as_str().to_owned(),
                problem: UNREPLAYABLE.to_owned(),
            })
        }
        None => Err(CliError::SessionNotFound {
            id: id.as_str().to_owned(),
        }),
    }
}

/// What is said of a session whose journal has records of which none replays.
const UNREPLAYABLE: &str =
    "its journal has records, but none that replays (a damaged last record is dropped)";

async fn show(store: &dyn StorageBackend, url: &StoreUrl, id: &str) -> Result<(), CliError> {
    let id = key(id)?;
    let (text, _) = load_any(store, url, &id).await?;
    output::text(&text)
}

async fn export(
    store: &dyn StorageBackend,
    url: &StoreUrl,
    ids: &[String],
    out: Option<&Path>,
) -> Result<(), CliError> {
    let store_error = store_err(url);
    let ids: Vec<StoreKey> = if ids.is_empty() {
        let mut all = snapshot::store::list(store).await.map_err(&store_error)?;
        all.extend(journal::list(store).await.map_err(&store_error)?);
        all.sort();
        all.dedup();
        all
    } else {
        // Each session once, in the order first named: a bundle holds each session once
        // (`import` refuses one that does not).
        let mut named: Vec<StoreKey> = Vec::new();
        for id in ids {
            let id = key(id)?;
            if !named.contains(&id) {
                named.push(id);
            }
        }
        named
    };
    let mut bundle = Vec::new();
    let mut damaged = Damaged::default();
    for id in ids {
        let Some((text, version)) = damaged.skip(&id, load_any(store, url, &id).await)? else {
            continue;
        };
        let snapshot: Value =
            serde_json::from_str(&text).map_err(|e| CliError::CorruptSession {
                id: id.as_str().to_owned(),
                problem: e.to_string(),
            })?;
        let line = BundleLine {
            id,
            version: Some(version),
            snapshot,
        };
        serde_json::to_writer(&mut bundle, &line).map_err(|e| CliError::Write(e.into()))?;
        bundle.push(b'\n');
    }
    match out {
        Some(path) => output::write_atomic_private(path, &bundle)?,
        None => output::text(&String::from_utf8_lossy(&bundle))?,
    }
    // The bundle holds every other session, each line whole; its gaps are said here.
    damaged.finish("left out of the bundle")
}

/// Summary printed by `import`.
#[derive(Serialize)]
struct Imported {
    imported: usize,
}

/// How long `import` waits on one write before it says on stderr that it is waiting for
/// the store's lock (it then waits on).
const LOCK_NOTICE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// A bundle's sessions, each id with its snapshot's bytes, once every line is checked.
type Bundle = Vec<(StoreKey, Vec<u8>)>;

/// Reads and checks every line of the bundle `file` (`-`: stdin) before anything is
/// written: a bad bundle imports nothing.
fn read_bundle(file: &Path) -> Result<Bundle, CliError> {
    let reader: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(file).map_err(|source| CliError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        Box::new(BufReader::new(f))
    };
    // Read and check every line before writing anything: a bad bundle imports nothing.
    let mut sessions = Vec::new();
    // The line each id is on: a second line with it would overwrite the first, or fail
    // half-way through the writes without --overwrite.
    let mut first_line: HashMap<StoreKey, usize> = HashMap::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|source| CliError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |problem: String| CliError::Bundle {
            path: file.to_path_buf(),
            line: i + 1,
            problem,
        };
        let parsed: BundleLine =
            serde_json::from_str(&line).map_err(|e| bad(json_line_problem(&e)))?;
        let mut bytes = serde_json::to_vec(&parsed.snapshot).map_err(|e| bad(e.to_string()))?;
        bytes.push(b'\n');
        snapshot::from_slice::<serde::de::IgnoredAny>(&bytes).map_err(|e| bad(chain(&e)))?;
        if let Some(first) = first_line.insert(parsed.id.clone(), i + 1) {
            return Err(bad(format!(
                "session {:?} is also on line {first}: a bundle holds each session once",
                parsed.id.as_str()
            )));
        }
        sessions.push((parsed.id, bytes));
    }
    Ok(sessions)
}

async fn import(
    store: &dyn StorageBackend,
    url: &StoreUrl,
    sessions: Bundle,
    overwrite: bool,
) -> Result<(), CliError> {
    let expect = if overwrite {
        Expect::Any
    } else {
        Expect::Absent
    };
    let mut imported = 0;
    for (id, bytes) in sessions {
        let saved = {
            let save = snapshot::store::save_raw(store, &id, bytes, expect);
            tokio::pin!(save);
            match tokio::time::timeout(LOCK_NOTICE_AFTER, &mut save).await {
                Ok(saved) => saved,
                Err(_) => {
                    // Another process holds the store's lock (a file-system store's `flock`, a
                    // PostgreSQL row lock): waiting is right, waiting in silence is not.
                    eprintln!(
                        "chef: notice: waiting for the store to write session {:?}: another process holds its lock (Ctrl-C stops the import)",
                        id.as_str()
                    );
                    save.await
                }
            }
        };
        if imported > 0
            && let Err(e) = &saved
            && !e.is_conflict()
        {
            // The sessions before it are in the store: say so beside the error (the
            // "already exists" error counts them itself).
            eprintln!(
                "chef: notice: {imported} session(s) of the bundle were imported before {:?} failed",
                id.as_str()
            );
        }
        match saved {
            Ok(_) => imported += 1,
            Err(e) if e.is_conflict() => {
                return Err(CliError::SessionExists {
                    id: id.into_inner(),
                    imported,
                });
            }
            Err(snapshot::SnapshotError::Store(source)) => return Err(store_err(url)(source)),
            Err(e) => {
                return Err(CliError::CorruptSession {
                    id: id.into_inner(),
                    problem: chain(&e),
                });
            }
        }
    }
    output::json_line(&Imported { imported })
}

#[derive(Debug, Args)]
pub(crate) struct SessionsArgs {
    /// The store: `file:///dir` or a directory (file system), or `postgres://…` (needs a
    /// chef built with the `postgres` feature). Required.
    #[arg(long, value_name = "URL", global = true, value_parser = clap::value_parser!(chef::store::StoreUrl))]
    pub(crate) store: Option<chef::store::StoreUrl>,
    #[command(subcommand)]
    pub(crate) command: SessionsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List sessions, one JSON line each: id, version, created_turn, bytes.
    Ls,
    /// Print one session's snapshot (the snapshot file format).
    Show {
        /// The session id.
        id: String,
    },
    /// Write sessions (all, or those named) as a JSON Lines bundle.
    Export {
        /// Session ids (default: every session).
        ids: Vec<String>,
        /// Write the bundle here (atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Read a bundle written by `export` (`-` for stdin) into the store. Every line is
    /// checked before anything is written (a session id on two lines is refused); an
    /// existing session stops the import unless --overwrite is given.
    Import {
        /// The bundle file.
        file: PathBuf,
        /// Replace sessions that already exist in the store.
        #[arg(long)]
        overwrite: bool,
    },
}
