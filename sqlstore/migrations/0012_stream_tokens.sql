-- Stream tokens: single-use tokens, valid for a minute, that start one live
-- stream for the key that made them (a browser's EventSource cannot send an
-- Authorization header). Only the SHA-256 of a token is kept. A token is
-- spent by deleting its row, so of the servers sharing the store only one
-- can use it. key_id has no foreign key, as in idempotency: rows live a
-- minute, and the service also acts with ids of keys that are not stored.

CREATE TABLE stream_tokens (
    hash       BLOB PRIMARY KEY,
    key_id     TEXT NOT NULL,
    account_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX stream_tokens_expires ON stream_tokens (expires_at);
