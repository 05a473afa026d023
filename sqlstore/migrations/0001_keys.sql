-- Accounts, API keys, request usage, rate-limit state and idempotency
-- records.
--
-- Migrations are written once for both dialects: types in upper case from
-- the common subset (TEXT, BIGINT, INTEGER, BOOLEAN, BLOB), identifiers in
-- lower case. The PostgreSQL dialect maps BLOB to BYTEA and TEXT to
-- TEXT COLLATE "C" (byte order, as SQLite compares), see dialect.go.
-- Times are BIGINT Unix microseconds, UTC.

CREATE TABLE accounts (
    id                  TEXT PRIMARY KEY,
    company_name        TEXT NOT NULL,
    plan                TEXT NOT NULL,
    rate_limit_override BIGINT NOT NULL DEFAULT 0,
    created_at          BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         BLOB NOT NULL,
    permissions  TEXT NOT NULL, -- JSON array of strings
    environment  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    expires_at   BIGINT,
    revoked_at   BIGINT
);

CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_account ON api_keys (account_id, id);

CREATE TABLE key_usage (
    key_id   TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    hour     BIGINT NOT NULL,
    requests BIGINT NOT NULL,
    rejected BIGINT NOT NULL,
    PRIMARY KEY (key_id, hour)
);

-- Rate-limit windows per subject (a key id or "addr:" + client address).
-- PostgreSQL reads and writes them on every request; SQLite keeps them in
-- memory and saves them here when the store closes.
CREATE TABLE quotas (
    subject      TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    used         BIGINT NOT NULL
);

-- key_id has no foreign key: records outlive nothing but their 24 hours,
-- and the service also uses ids of keys that are not stored ("system").
CREATE TABLE idempotency (
    key_id       TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    created_at   BIGINT NOT NULL,
    done         BOOLEAN NOT NULL,
    status       INTEGER NOT NULL,
    body         BLOB,
    PRIMARY KEY (key_id, idem_key)
);

CREATE INDEX idempotency_created ON idempotency (created_at);
