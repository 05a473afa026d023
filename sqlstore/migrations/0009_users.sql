-- The people who sign in to the dashboard, their sessions and one-time
-- sign-in links. Sessions and links are kept by the SHA-256 of their
-- secret only.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    email         TEXT NOT NULL,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_login_at BIGINT
);

CREATE UNIQUE INDEX users_email ON users (email);
CREATE INDEX users_account ON users (account_id, id);

CREATE TABLE user_sessions (
    hash         BLOB PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

CREATE INDEX user_sessions_user ON user_sessions (user_id);

CREATE TABLE sign_in_links (
    hash       BLOB PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX sign_in_links_user ON sign_in_links (user_id);
