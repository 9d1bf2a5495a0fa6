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
