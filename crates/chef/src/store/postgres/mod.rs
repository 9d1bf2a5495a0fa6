//! [`PgBackend`]: the store in a PostgreSQL database, shared by many worker processes.
//!
//! Built on `tokio-postgres` (the async driver, queries as plain strings with typed
//! parameters, no compile-time checking against a live database) and `deadpool-postgres`
//! (a bounded pool that replaces broken connections).

mod migrate;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use serde::de::Error as _;
use serde_json::{Map, Value};
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Statement};

pub use self::migrate::SCHEMA_VERSION as PG_SCHEMA_VERSION;
use super::lease::check_holder;
use super::{
    Entry, Expect, Lease, Namespace, Result, StorageBackend, StoreError, StoreKey, Versioned,
};

/// How a [`PgBackend`] connects.
#[derive(Debug, Clone)]
pub struct PgOptions {
    max_connections: usize,
    connect_timeout: Duration,
    schema: Option<String>,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            connect_timeout: Duration::from_secs(10),
            schema: None,
        }
    }
}

impl PgOptions {
    /// 16 connections at most, 10 s to connect.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most connections the pool opens (at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long opening one connection may take, when the URL does not say
    /// (`connect_timeout=` in the URL wins).
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Keep chef's tables in this schema (created if missing) instead of the connection's
    /// default (`public`), so several independent stores can share one database. The name
    /// is 1 to 63 bytes of lowercase ASCII letters, digits and `_`, not starting with a
    /// digit; another name is refused when connecting.
    #[must_use]
    pub fn with_schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }
}

fn valid_schema(name: &str) -> bool {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    first_ok
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A store kept in PostgreSQL tables, for many workers on many hosts.
///
/// Available with the `postgres` feature.
///
/// # Schema
///
/// [`PgBackend::connect`] applies the embedded, numbered migrations it does not find in
/// `chef_schema_migrations`, in one transaction holding a transaction-scoped advisory lock:
/// several workers starting at once apply each migration exactly once, the others wait and
/// find it done. A database whose schema is newer than this build knows is refused.
/// Entries live in `chef_store_entries (namespace, key, version, content, meta)`, leases in
/// `chef_leases`.
///
/// # Guarantees
///
/// * **Compare-and-set in one statement.** A write is a single `INSERT .. ON CONFLICT` or
///   `UPDATE .. WHERE version = $expected`; PostgreSQL's row locks decide between racing
///   writers, on any number of hosts. The version stored now, returned with a conflict, is
///   read right after by a second statement.
/// * **Versions** come from one sequence (`chef_store_version`): strictly increasing across
///   the whole store and never reused, deletes and re-creations included.
/// * **Durability** is the server's: a write returns after its commit.
/// * **`scan` is a point-in-time view** (one statement).
/// * **Leases** (overriding the trait's default) are rows of `chef_leases`, claimed with one
///   statement and timed on the *server's* clock, so workers whose clocks disagree still
///   agree on who holds a session.
///
/// Connections are plain TCP or Unix sockets without TLS (`sslmode=require` is refused):
/// run it on a private network or through a local TLS proxy.
///
/// ```no_run
/// # async fn demo() -> Result<(), chef::store::StoreError> {
/// use chef::store::{PgBackend, StorageBackend};
/// let store = PgBackend::connect("postgres://chef@127.0.0.1:5432/chef").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PgBackend {
    pool: Pool,
}

impl std::fmt::Debug for PgBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PgBackend")
            .field("max_connections", &status.max_size)
            .field("open_connections", &status.size)
            .finish()
    }
}

fn backend_error(
    message: impl Into<String>,
    source: impl std::error::Error + Send + Sync + 'static,
) -> StoreError {
    StoreError::Backend {
        message: message.into(),
        source: Some(Box::new(source)),
    }
}

fn pg(message: &'static str) -> impl FnOnce(tokio_postgres::Error) -> StoreError {
    move |e| backend_error(message, e)
}

/// A version read from the database (`bigint`, always positive).
fn to_version(v: i64) -> Result<u64> {
    u64::try_from(v).map_err(|_| StoreError::Backend {
        message: format!("negative version {v} in chef_store_entries"),
        source: None,
    })
}

fn micros_to_time(us: i64) -> SystemTime {
    match u64::try_from(us) {
        Ok(us) => UNIX_EPOCH + Duration::from_micros(us),
        Err(_) => UNIX_EPOCH,
    }
}

fn ttl_micros(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_micros()).unwrap_or(i64::MAX / 2)
}

/// A `SCAN` row of `key` as an entry with its version.
fn row_entry(
    namespace: &Namespace,
    key: StoreKey,
    row: &tokio_postgres::Row,
) -> Result<(StoreKey, Versioned<Entry>)> {
    let version = to_version(row.get(1))?;
    let meta: String = row.get(3);
    let value = decode_entry(namespace, key.as_str(), row.get(2), &meta)?;
    Ok((key, Versioned { value, version }))
}

/// `LIKE` pattern for keys starting with `prefix`.
fn like_prefix(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

fn corrupt(namespace: &Namespace, key: &str, source: serde_json::Error) -> StoreError {
    StoreError::Corrupt {
        path: PathBuf::from(format!("postgres:chef_store_entries/{namespace}/{key}")),
        source,
    }
}

fn conflict(namespace: &Namespace, key: &StoreKey, current: Option<u64>) -> StoreError {
    StoreError::Conflict {
        namespace: namespace.clone(),
        key: key.clone(),
        current,
    }
}

fn decode_entry(namespace: &Namespace, key: &str, content: Vec<u8>, meta: &str) -> Result<Entry> {
    let content = String::from_utf8(content)
        .map_err(|e| corrupt(namespace, key, serde_json::Error::custom(e)))?;
    let meta: Map<String, Value> =
        serde_json::from_str(meta).map_err(|e| corrupt(namespace, key, e))?;
    Ok(Entry::new(content).with_meta_map(meta))
}

fn encode_meta(entry: &Entry) -> Result<String> {
    serde_json::to_string(entry.meta())
        .map_err(|e| backend_error("entry metadata could not be serialized", e))
}

const GET: &str = "SELECT version, content, meta::text FROM chef_store_entries \
                   WHERE namespace = $1 AND key = $2";
const CURRENT: &str = "SELECT version FROM chef_store_entries WHERE namespace = $1 AND key = $2";
const PUT_ANY: &str = "INSERT INTO chef_store_entries (namespace, key, version, content, meta) \
     VALUES ($1, $2, nextval('chef_store_version'), $3, $4::text::json) \
     ON CONFLICT (namespace, key) DO UPDATE SET version = EXCLUDED.version, \
     content = EXCLUDED.content, meta = EXCLUDED.meta, updated_at = now() \
     RETURNING version";
const PUT_ABSENT: &str = "INSERT INTO chef_store_entries (namespace, key, version, content, meta) \
     VALUES ($1, $2, nextval('chef_store_version'), $3, $4::text::json) \
     ON CONFLICT (namespace, key) DO NOTHING RETURNING version";
const PUT_VERSION: &str = "UPDATE chef_store_entries SET version = nextval('chef_store_version'), \
     content = $3, meta = $4::text::json, updated_at = now() \
     WHERE namespace = $1 AND key = $2 AND version = $5 RETURNING version";
const DELETE_ANY: &str =
    "DELETE FROM chef_store_entries WHERE namespace = $1 AND key = $2 RETURNING version";
const DELETE_VERSION: &str = "DELETE FROM chef_store_entries \
     WHERE namespace = $1 AND key = $2 AND version = $3 RETURNING version";
const LIST: &str = "SELECT key FROM chef_store_entries \
     WHERE namespace = $1 AND key LIKE $2 ESCAPE '\\' ORDER BY key";
const SCAN: &str = "SELECT key, version, content, meta::text FROM chef_store_entries \
     WHERE namespace = $1 AND key LIKE $2 ESCAPE '\\' ORDER BY key";
const CLAIM: &str = "INSERT INTO chef_leases AS l (session, holder, token, expires_at) \
     VALUES ($1, $2, nextval('chef_lease_token'), clock_timestamp() + $3::bigint * interval '1 microsecond') \
     ON CONFLICT (session) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, \
     expires_at = EXCLUDED.expires_at \
     WHERE l.expires_at <= clock_timestamp() OR l.holder = EXCLUDED.holder \
     RETURNING token, (extract(epoch FROM expires_at) * 1000000)::bigint";
const LEASE_HOLDER: &str = "SELECT holder, (extract(epoch FROM expires_at) * 1000000)::bigint \
     FROM chef_leases WHERE session = $1";
const RENEW: &str = "UPDATE chef_leases \
     SET expires_at = clock_timestamp() + $3::bigint * interval '1 microsecond' \
     WHERE session = $1 AND token = $2 \
     RETURNING (extract(epoch FROM expires_at) * 1000000)::bigint";
const RELEASE: &str = "DELETE FROM chef_leases WHERE session = $1 AND token = $2";

/// How many times a write whose conflict vanished (the key was deleted or created between
/// the write and the read of the current version) is tried again.
const RACE_ATTEMPTS: usize = 8;

impl PgBackend {
    /// Connect to `url` (`postgres://user:password@host:port/database?...`, or the
    /// `host=... user=...` form) with default [`PgOptions`], and bring the schema up to date.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, PgOptions::default()).await
    }

    /// Connect with `options`, and bring the schema up to date.
    pub async fn connect_with(url: &str, options: PgOptions) -> Result<Self> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::InvalidUrl {
                message: format!("not a PostgreSQL connection URL: {e}"),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("chef");
        }
        if let Some(schema) = &options.schema {
            if !valid_schema(schema) {
                return Err(StoreError::Backend {
                    message: format!("invalid PostgreSQL schema name {schema:?}"),
                    source: None,
                });
            }
            // Every connection of the pool resolves chef's tables in this schema.
            let mut opts = config.get_options().unwrap_or_default().to_owned();
            opts.push_str(&format!(" -c search_path={schema}"));
            config.options(opts.trim());
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_connections)
            .build()
            .map_err(|e| backend_error("cannot build the connection pool", e))?;
        let backend = Self { pool };
        let mut client = backend.client().await?;
        migrate::run(&mut client, options.schema.as_deref()).await?;
        Ok(backend)
    }

    /// The schema version the database is at (after [`connect`](Self::connect):
    /// [`PG_SCHEMA_VERSION`]).
    pub async fn schema_version(&self) -> Result<i32> {
        let client = self.client().await?;
        migrate::current(&client).await
    }

    async fn client(&self) -> Result<Object> {
        self.pool
            .get()
            .await
            .map_err(|e| backend_error("cannot get a PostgreSQL connection", e))
    }

    /// `sql` prepared on `client` (kept in the connection's statement cache).
    async fn prepare(client: &Object, sql: &str) -> Result<Statement> {
        client
            .prepare_cached(sql)
            .await
            .map_err(pg("cannot prepare a store statement"))
    }

    async fn query_opt(
        client: &Object,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>> {
        let statement = Self::prepare(client, sql).await?;
        client
            .query_opt(&statement, params)
            .await
            .map_err(pg("store statement failed"))
    }

    async fn query(
        client: &Object,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>> {
        let statement = Self::prepare(client, sql).await?;
        client
            .query(&statement, params)
            .await
            .map_err(pg("store statement failed"))
    }

    async fn current(
        client: &Object,
        namespace: &Namespace,
        key: &StoreKey,
    ) -> Result<Option<u64>> {
        let row = Self::query_opt(client, CURRENT, &[&namespace.as_str(), &key.as_str()]).await?;
        row.map(|r| to_version(r.get(0))).transpose()
    }
}

#[async_trait]
impl StorageBackend for PgBackend {
    async fn get(&self, namespace: &Namespace, key: &StoreKey) -> Result<Option<Versioned<Entry>>> {
        let client = self.client().await?;
        let Some(row) =
            Self::query_opt(&client, GET, &[&namespace.as_str(), &key.as_str()]).await?
        else {
            return Ok(None);
        };
        let version = to_version(row.get(0))?;
        let meta: String = row.get(2);
        let value = decode_entry(namespace, key.as_str(), row.get(1), &meta)?;
        Ok(Some(Versioned { value, version }))
    }

    async fn put(
        &self,
        namespace: &Namespace,
        key: &StoreKey,
        entry: Entry,
        expect: Expect,
    ) -> Result<u64> {
        let client = self.client().await?;
        let meta = encode_meta(&entry)?;
        let (ns, k, content) = (namespace.as_str(), key.as_str(), entry.content().as_bytes());
        for _ in 0..RACE_ATTEMPTS {
            let row = match expect {
                Expect::Any => {
                    Self::query_opt(&client, PUT_ANY, &[&ns, &k, &content, &meta]).await?
                }
                Expect::Absent => {
                    Self::query_opt(&client, PUT_ABSENT, &[&ns, &k, &content, &meta]).await?
                }
                Expect::Version(v) => match i64::try_from(v) {
                    Ok(v) => {
                        Self::query_opt(&client, PUT_VERSION, &[&ns, &k, &content, &meta, &v])
                            .await?
                    }
                    // No stored version is that large: it cannot match.
                    Err(_) => None,
                },
            };
            if let Some(row) = row {
                return to_version(row.get(0));
            }
            let current = Self::current(&client, namespace, key).await?;
            if !expect.matches(current) {
                return Err(conflict(namespace, key, current));
            }
            // The key changed back between the write and the read (deleted after a failed
            // create): the expectation holds now, so write again.
        }
        Err(conflict(
            namespace,
            key,
            Self::current(&client, namespace, key).await?,
        ))
    }

    async fn delete(&self, namespace: &Namespace, key: &StoreKey, expect: Expect) -> Result<bool> {
        let client = self.client().await?;
        let (ns, k) = (namespace.as_str(), key.as_str());
        match expect {
            Expect::Any => Ok(Self::query_opt(&client, DELETE_ANY, &[&ns, &k])
                .await?
                .is_some()),
            Expect::Absent => match Self::current(&client, namespace, key).await? {
                None => Ok(false),
                current => Err(conflict(namespace, key, current)),
            },
            Expect::Version(v) => {
                let deleted = match i64::try_from(v) {
                    Ok(v) => Self::query_opt(&client, DELETE_VERSION, &[&ns, &k, &v]).await?,
                    Err(_) => None,
                };
                if deleted.is_some() {
                    return Ok(true);
                }
                // Versions are never reused, so the current one cannot be `v`.
                Err(conflict(
                    namespace,
                    key,
                    Self::current(&client, namespace, key).await?,
                ))
            }
        }
    }

    async fn list(&self, namespace: &Namespace, prefix: &str) -> Result<Vec<StoreKey>> {
        // No key holds a control character; PostgreSQL text cannot hold NUL.
        if prefix.chars().any(char::is_control) {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = Self::query(&client, LIST, &[&namespace.as_str(), &like_prefix(prefix)]).await?;
        // A row whose key no `StoreKey` can be (written by hand, or by something else) is
        // not an entry of this store: nothing can read or write it through the store. It
        // is passed over, as the directory store passes over a file of such a name, so
        // one foreign row does not stop a listing of every other entry.
        Ok(rows
            .into_iter()
            .filter_map(|row| StoreKey::new(row.get::<_, String>(0)).ok())
            .collect())
    }

    async fn scan(
        &self,
        namespace: &Namespace,
        prefix: &str,
    ) -> Result<Vec<(StoreKey, Versioned<Entry>)>> {
        if prefix.chars().any(char::is_control) {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = Self::query(&client, SCAN, &[&namespace.as_str(), &like_prefix(prefix)]).await?;
        rows.into_iter()
            .filter_map(|row| {
                // Passed over as `list` passes over it: not an entry of this store.
                let key = StoreKey::new(row.get::<_, String>(0)).ok()?;
                Some(row_entry(namespace, key, &row))
            })
            .collect()
    }

    async fn claim_lease(&self, session: &StoreKey, holder: &str, ttl: Duration) -> Result<Lease> {
        check_holder(holder)?;
        let client = self.client().await?;
        let s = session.as_str();
        let ttl = ttl_micros(ttl);
        for _ in 0..RACE_ATTEMPTS {
            if let Some(row) = Self::query_opt(&client, CLAIM, &[&s, &holder, &ttl]).await? {
                let token = to_version(row.get(0))?;
                return Ok(Lease::new(
                    session.clone(),
                    holder,
                    token,
                    micros_to_time(row.get(1)),
                ));
            }
            if let Some(row) = Self::query_opt(&client, LEASE_HOLDER, &[&s]).await? {
                return Err(StoreError::Leased {
                    session: session.clone(),
                    holder: row.get(0),
                    until: micros_to_time(row.get(1)),
                });
            }
            // Released between the two statements: claim again.
        }
        Err(StoreError::Backend {
            message: format!(
                "lease on {session} changed hands {RACE_ATTEMPTS} times during one claim"
            ),
            source: None,
        })
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> Result<Lease> {
        let client = self.client().await?;
        let token = i64::try_from(lease.token()).unwrap_or(-1);
        let row = Self::query_opt(
            &client,
            RENEW,
            &[&lease.session().as_str(), &token, &ttl_micros(ttl)],
        )
        .await?;
        match row {
            Some(row) => Ok(Lease::new(
                lease.session().clone(),
                lease.holder(),
                lease.token(),
                micros_to_time(row.get(0)),
            )),
            None => Err(StoreError::LeaseLost {
                session: lease.session().clone(),
                holder: lease.holder().to_owned(),
            }),
        }
    }

    async fn release_lease(&self, lease: &Lease) -> Result<bool> {
        let client = self.client().await?;
        let token = i64::try_from(lease.token()).unwrap_or(-1);
        let statement = Self::prepare(&client, RELEASE).await?;
        let n = client
            .execute(&statement, &[&lease.session().as_str(), &token])
            .await
            .map_err(pg("store statement failed"))?;
        Ok(n == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_escape_wildcards() {
        assert_eq!(like_prefix(""), "%");
        assert_eq!(like_prefix("a/b"), "a/b%");
        assert_eq!(like_prefix("50%_x"), "50\\%\\_x%");
    }

    #[test]
    fn durations_and_times_convert_without_overflow() {
        assert_eq!(ttl_micros(Duration::from_millis(1500)), 1_500_000);
        assert!(ttl_micros(Duration::MAX) > 0);
        assert_eq!(micros_to_time(-5), UNIX_EPOCH);
        assert_eq!(
            micros_to_time(2_000_000),
            UNIX_EPOCH + Duration::from_secs(2)
        );
    }

    #[test]
    fn schema_names_are_plain_identifiers() {
        for good in ["chef", "_t", "t_0123abc"] {
            assert!(valid_schema(good), "{good}");
        }
        for bad in ["", "1x", "Chef", "a-b", "a;drop", "a b", &"x".repeat(64)] {
            assert!(!valid_schema(bad), "{bad:?}");
        }
    }
}
