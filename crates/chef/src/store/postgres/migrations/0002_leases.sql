-- chef store, schema version 2: session leases, timed on the server's clock.
CREATE SEQUENCE chef_lease_token AS bigint START WITH 1;

CREATE TABLE chef_leases (
    session    text COLLATE "C" PRIMARY KEY,
    holder     text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL
);
