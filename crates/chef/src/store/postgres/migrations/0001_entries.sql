-- chef store, schema version 1: namespaced, versioned entries.
-- Versions come from one sequence for the whole store, so a key that is deleted and
-- created again never gets a version a stale writer may still hold.
CREATE SEQUENCE chef_store_version AS bigint START WITH 1;

CREATE TABLE chef_store_entries (
    namespace  text        NOT NULL,
    -- "C" collation: keys sort and compare by bytes, as in every other backend.
    key        text COLLATE "C" NOT NULL,
    version    bigint      NOT NULL,
    -- bytea: entry content may hold any UTF-8, NUL included (text cannot).
    content    bytea       NOT NULL,
    -- json (not jsonb) keeps the metadata's key order and bytes as written.
    meta       json        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, key)
);
