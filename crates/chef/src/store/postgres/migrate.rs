//! Embedded, numbered schema migrations, applied on connect.
//!
//! Each migration is a SQL file compiled into the binary. [`run`] opens one transaction,
//! takes a transaction-scoped advisory lock (so workers starting at once apply migrations
//! one after the other), creates the bookkeeping table if needed, applies every migration
//! newer than the newest recorded one, records each, and commits. A migration never runs
//! twice; a failed one rolls back with everything else in the transaction.

use deadpool_postgres::Object;

use super::{StoreError, pg};
use crate::store::Result;

/// One migration: its number (strictly increasing from 1), a short name, its SQL.
struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "entries",
        sql: include_str!("migrations/0001_entries.sql"),
    },
    Migration {
        version: 2,
        name: "leases",
        sql: include_str!("migrations/0002_leases.sql"),
    },
];

/// The schema version this build creates and expects.
pub const SCHEMA_VERSION: i32 = 2;

/// Advisory-lock key for migrations: the bytes of "chefmigr".
const LOCK_KEY: i64 = 0x6368_6566_6d69_6772;

const CREATE_BOOKKEEPING: &str = "CREATE TABLE IF NOT EXISTS chef_schema_migrations (\
     version integer PRIMARY KEY, name text NOT NULL, \
     applied_at timestamptz NOT NULL DEFAULT now())";

/// Bring the schema up to [`SCHEMA_VERSION`]; returns the version found before.
/// `schema` (already validated as a plain identifier) is created first when given.
pub(super) async fn run(client: &mut Object, schema: Option<&str>) -> Result<i32> {
    let tx = client
        .transaction()
        .await
        .map_err(pg("cannot start the migration transaction"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await
        .map_err(pg("cannot take the migration lock"))?;
    if let Some(schema) = schema {
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
            .await
            .map_err(pg("cannot create the store's schema"))?;
    }
    tx.batch_execute(CREATE_BOOKKEEPING)
        .await
        .map_err(pg("cannot create chef_schema_migrations"))?;
    let found: Option<i32> = tx
        .query_one("SELECT max(version) FROM chef_schema_migrations", &[])
        .await
        .map_err(pg("cannot read chef_schema_migrations"))?
        .get(0);
    let found = found.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::Backend {
            message: format!(
                "the database's chef schema is at version {found}; this build knows up to {SCHEMA_VERSION}"
            ),
            source: None,
        });
    }
    for migration in MIGRATIONS.iter().filter(|m| m.version > found) {
        tx.batch_execute(migration.sql)
            .await
            .map_err(|e| StoreError::Backend {
                message: format!(
                    "schema migration {} ({}) failed",
                    migration.version, migration.name
                ),
                source: Some(Box::new(e)),
            })?;
        tx.execute(
            "INSERT INTO chef_schema_migrations (version, name) VALUES ($1, $2)",
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(pg("cannot record a schema migration"))?;
    }
    tx.commit()
        .await
        .map_err(pg("cannot commit the schema migrations"))?;
    Ok(found)
}

/// The newest applied migration (0 when none).
pub(super) async fn current(client: &Object) -> Result<i32> {
    let found: Option<i32> = client
        .query_one("SELECT max(version) FROM chef_schema_migrations", &[])
        .await
        .map_err(pg("cannot read chef_schema_migrations"))?
        .get(0);
    Ok(found.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_from_one_without_gaps_up_to_the_schema_version() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(m.version).unwrap(), i + 1, "{}", m.name);
            assert!(!m.sql.trim().is_empty());
        }
        assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(SCHEMA_VERSION));
    }
}
