-- Share links: links that show one vehicle of an account on a public page
-- for a while. Only the SHA-256 of a link's token is kept (hash), unique
-- across accounts. vehicle_id has no foreign key, as devices' has none: the
-- service deletes a vehicle's links in the transaction that deletes it.
-- revoked_at is null while the link is not revoked; a link stays until the
-- purge, ShareLinkRetention after it expired.
CREATE TABLE share_links (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    vehicle_id TEXT NOT NULL,
    hash       BLOB NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE UNIQUE INDEX share_links_hash ON share_links (hash);
CREATE INDEX share_links_account ON share_links (account_id, id);
CREATE INDEX share_links_vehicle ON share_links (account_id, vehicle_id, id);
CREATE INDEX share_links_expires ON share_links (expires_at);
