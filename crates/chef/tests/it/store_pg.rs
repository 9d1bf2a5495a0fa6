//! PostgreSQL backend specifics: migrations under concurrent start-up, two connections
//! (two workers) on one schema.

use std::time::Duration;

use chef::store::{
    Entry, Expect, Namespace, PG_SCHEMA_VERSION, PgBackend, PgOptions, StorageBackend, StoreKey,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_starting_at_once_apply_each_migration_once() {
    let Some(url) = crate::pg::url() else { return };
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let guard = crate::pg::SchemaGuard {
        url: url.clone(),
        schema: schema.clone(),
    };
    let mut handles = Vec::new();
    for _ in 0..8 {
        let (url, schema) = (url.clone(), schema.clone());
        handles.push(tokio::spawn(async move {
            PgBackend::connect_with(
                &url,
                PgOptions::new().with_schema(schema).with_max_connections(1),
            )
            .await
        }));
    }
    let mut stores = Vec::new();
    for h in handles {
        stores.push(h.await.unwrap().unwrap());
    }
    for store in &stores {
        assert_eq!(store.schema_version().await.unwrap(), PG_SCHEMA_VERSION);
    }
    // Connecting again changes nothing and keeps the data.
    let k = StoreKey::new("k").unwrap();
    stores[0]
        .put(&Namespace::NOTES, &k, Entry::new("kept"), Expect::Absent)
        .await
        .unwrap();
    let again = crate::pg::reconnect(&guard).await;
    assert_eq!(again.schema_version().await.unwrap(), PG_SCHEMA_VERSION);
    let got = again.get(&Namespace::NOTES, &k).await.unwrap().unwrap();
    assert_eq!(got.value.content(), "kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_connection_sees_writes_and_leases_of_the_first() {
    let Some((a, guard)) = crate::pg::backend().await else {
        return;
    };
    let b = crate::pg::reconnect(&guard).await;
    let k = StoreKey::new("sessions/x").unwrap();
    let v = a
        .put(&Namespace::MEMORY, &k, Entry::new("from a"), Expect::Absent)
        .await
        .unwrap();
    let got = b.get(&Namespace::MEMORY, &k).await.unwrap().unwrap();
    assert_eq!((got.value.content(), got.version), ("from a", v));
    let lease = a
        .claim_lease(&k, "worker-a", Duration::from_secs(30))
        .await
        .unwrap();
    let refused = b
        .claim_lease(&k, "worker-b", Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(refused.is_leased(), "{refused}");
    assert!(b.release_lease(&lease).await.unwrap());
    b.claim_lease(&k, "worker-b", Duration::from_secs(30))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_unreachable_server_is_a_typed_error_not_a_hang() {
    // Port 1 on loopback: nothing listens there.
    let err = PgBackend::connect_with(
        "postgres://chef@127.0.0.1:1/chef",
        PgOptions::new().with_connect_timeout(Duration::from_secs(2)),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot get a PostgreSQL connection"),
        "{err}"
    );
    let bad = PgBackend::connect_with(
        "postgres://chef@127.0.0.1:1/chef",
        PgOptions::new().with_schema("no; drop"),
    )
    .await
    .unwrap_err();
    assert!(
        bad.to_string().contains("invalid PostgreSQL schema"),
        "{bad}"
    );
}

/// A row whose key no `StoreKey` can be (written by hand, `../evil`) is not an entry of the
/// store: `list` and `scan` pass over it, as the directory store passes over a file of such
/// a name, so `chef sessions ls` and `export` still see every other session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_no_key_can_name_is_passed_over_by_list_and_scan() {
    let Some((store, guard)) = crate::pg::backend().await else {
        return;
    };
    let good = StoreKey::new("alpha").unwrap();
    store
        .put(
            &Namespace::SESSIONS,
            &good,
            Entry::new("{}"),
            Expect::Absent,
        )
        .await
        .unwrap();
    let (client, connection) = tokio_postgres::connect(&guard.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client
        .batch_execute(&format!(
            "INSERT INTO {}.chef_store_entries (namespace, key, version, content, meta) \
             VALUES ('sessions', '../evil', 999999, '\\x7b7d', '{{}}')",
            guard.schema
        ))
        .await
        .unwrap();
    drop(client);
    let _ = task.await;
    let listed = store.list(&Namespace::SESSIONS, "").await.unwrap();
    assert_eq!(listed, vec![good.clone()]);
    let scanned = store.scan(&Namespace::SESSIONS, "").await.unwrap();
    assert_eq!(
        scanned.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        vec![good]
    );
}
