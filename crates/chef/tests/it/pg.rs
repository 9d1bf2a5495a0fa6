//! A PostgreSQL server for the tests, and a fresh schema per test.
//!
//! The server is the one `CHEF_PG_URL` names, if set. Otherwise the first test that needs
//! one starts a throwaway cluster: `initdb` in a temporary directory, `postgres` on a free
//! loopback port with its Unix socket in that directory, fsync off. Running as root (as
//! CI does), the server runs as the `postgres` user (or `nobody`) through `setpriv`, since
//! PostgreSQL refuses to run as root. A small watchdog shell process stops the server and
//! removes the directory as soon as the test process exits, however it exits (statics are
//! never dropped, and a test binary can be killed).
//!
//! When neither works, each test that needs the server prints a loud `SKIPPED: no
//! PostgreSQL` banner on the real stderr (not the captured one) and returns; with
//! `CHEF_PG_REQUIRED=1` (set by `.ci/run`) it fails instead.
//!
//! Each test gets its own schema (`PgOptions::with_schema`), dropped when its fixture is.

use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use chef::store::{PgBackend, PgOptions, StorageBackend};

/// The server the tests use: a connection URL to a database.
struct Server {
    url: String,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

fn server() -> &'static Result<Server, String> {
    SERVER.get_or_init(|| {
        if let Ok(url) = std::env::var("CHEF_PG_URL")
            && !url.is_empty()
        {
            return Ok(Server { url });
        }
        // Starting and probing needs blocking waits: keep them off the async runtime.
        std::thread::spawn(start_throwaway)
            .join()
            .unwrap_or_else(|_| Err("the server start thread panicked".to_owned()))
    })
}

/// The URL of a server, or `None` after printing why the caller must skip. Panics when
/// `CHEF_PG_REQUIRED` is set and there is no server.
pub(crate) fn url() -> Option<String> {
    match server() {
        Ok(server) => Some(server.url.clone()),
        Err(why) => {
            if std::env::var("CHEF_PG_REQUIRED").is_ok_and(|v| v == "1") {
                panic!("CHEF_PG_REQUIRED=1 but no PostgreSQL server: {why}");
            }
            // Straight to the process's stderr: libtest captures only the print macros.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: no PostgreSQL (CHEF_PG_URL unset and no server could be started: {why}) ***\n"
            );
            None
        }
    }
}

/// A fresh backend in its own schema; the schema is dropped with the guard.
pub(crate) async fn backend() -> Option<(Arc<PgBackend>, SchemaGuard)> {
    let url = url()?;
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let store = PgBackend::connect_with(
        &url,
        PgOptions::new()
            .with_schema(schema.clone())
            .with_max_connections(8),
    )
    .await
    .unwrap();
    Some((Arc::new(store), SchemaGuard { url, schema }))
}

/// Connect again to the schema of `guard` (a second worker on the same data).
pub(crate) async fn reconnect(guard: &SchemaGuard) -> PgBackend {
    PgBackend::connect_with(
        &guard.url,
        PgOptions::new().with_schema(guard.schema.clone()),
    )
    .await
    .unwrap()
}

/// Drops a test's schema when the test ends.
pub(crate) struct SchemaGuard {
    pub(crate) url: String,
    pub(crate) schema: String,
}

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let (url, schema) = (self.url.clone(), self.schema.clone());
        // Async clean-up from a synchronous drop: a thread with its own runtime.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async move {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .await
                    .ok()
            })
        })
        .join();
    }
}

/// Where the PostgreSQL server binaries are: `initdb` on `PATH`, else the newest
/// `/usr/lib/postgresql/*/bin` (Debian's layout).
fn bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|dir| dir.join("initdb").is_file() && dir.join("postgres").is_file())
    });
    if on_path.is_some() {
        return on_path;
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The user to run the server as when we are root.
fn unprivileged_user() -> Option<(String, u32, u32)> {
    for name in ["postgres", "nobody"] {
        let id = |flag: &str| -> Option<u32> {
            let out = Command::new("id").args([flag, name]).output().ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().parse().ok())?
        };
        if let (Some(uid), Some(gid)) = (id("-u"), id("-g")) {
            return Some((name.to_owned(), uid, gid));
        }
    }
    None
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A command run as `user` (through `setpriv`, which execs: the pid is the program's).
fn command(bin: &Path, program: &str, user: Option<&(String, u32, u32)>) -> Command {
    match user {
        Some((name, _, _)) => {
            let mut c = Command::new("setpriv");
            c.args([
                format!("--reuid={name}"),
                format!("--regid={name}"),
                "--init-groups".to_owned(),
                "--".to_owned(),
            ])
            .arg(bin.join(program));
            c
        }
        None => Command::new(bin.join(program)),
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn start_throwaway() -> Result<Server, String> {
    let bin = bin_dir().ok_or("no initdb on PATH or under /usr/lib/postgresql")?;
    let user = if is_root() {
        Some(unprivileged_user().ok_or("running as root and no postgres or nobody user")?)
    } else {
        None
    };
    // Not a TempDir: the watchdog removes it after this process is gone.
    let dir = tempfile::Builder::new()
        .prefix("chef-pg-")
        .tempdir()
        .map_err(|e| e.to_string())?
        .keep();
    let cleanup_now = |why: String| {
        let _ = std::fs::remove_dir_all(&dir);
        why
    };
    if let Some((_, uid, gid)) = &user {
        std::os::unix::fs::chown(&dir, Some(*uid), Some(*gid))
            .map_err(|e| cleanup_now(e.to_string()))?;
    }
    let data = dir.join("data");
    let out = command(&bin, "initdb", user.as_ref())
        .arg("-D")
        .arg(&data)
        .args([
            "-A",
            "trust",
            "-U",
            "chef",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| cleanup_now(format!("initdb: {e}")))?;
    if !out.status.success() {
        return Err(cleanup_now(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let port = free_port().map_err(&cleanup_now)?;
    let log =
        std::fs::File::create(dir.join("server.log")).map_err(|e| cleanup_now(e.to_string()))?;
    let child = command(&bin, "postgres", user.as_ref())
        .arg("-D")
        .arg(&data)
        .arg("-k")
        .arg(&dir)
        .args(["-p", &port.to_string()])
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
        .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
        .args(["-c", "max_connections=300"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| cleanup_now(format!("postgres: {e}")))?;
    // The watchdog outlives this process by design: it waits for it to exit, then stops the
    // server (fast shutdown, then kill) and removes the directory.
    let script = format!(
        "while kill -0 {me} 2>/dev/null; do sleep 0.2; done; \
         kill -INT {pg} 2>/dev/null; \
         for i in $(seq 50); do kill -0 {pg} 2>/dev/null || break; sleep 0.1; done; \
         kill -KILL {pg} 2>/dev/null; rm -rf '{dir}'",
        me = std::process::id(),
        pg = child.id(),
        dir = dir.display()
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("watchdog: {e}"))?;
    let url = format!("postgres://chef@127.0.0.1:{port}/postgres");
    wait_ready(&url, &dir)?;
    Ok(Server { url })
}

fn wait_ready(url: &str, dir: &Path) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let attempt = runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
            let task = tokio::spawn(connection);
            let result = client.simple_query("SELECT 1").await.map(|_| ());
            drop(client);
            let _ = task.await;
            result
        });
        match attempt {
            Ok(()) => return Ok(()),
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!("server did not become ready: {e}; log: {log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A conformance fixture for the PostgreSQL backend, or `None` (skipped, loudly).
pub(crate) async fn fixture() -> Option<crate::store_conformance::Fixture> {
    let (store, guard) = backend().await?;
    Some(crate::store_conformance::Fixture::with_guard(
        store as Arc<dyn StorageBackend>,
        Box::new(guard),
    ))
}
