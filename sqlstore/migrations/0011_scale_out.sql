-- Scale-out on PostgreSQL (unused on SQLite, where one process owns the file).

-- taken is how many requests the last take of a window counted, so that one
-- INSERT ... ON CONFLICT DO UPDATE ... RETURNING can tell each of the
-- requests it took for at once whether it was allowed.
ALTER TABLE quotas ADD COLUMN taken BIGINT NOT NULL DEFAULT 0;

-- The live stream shared by every server on the database. live_seq holds the
-- last id handed out: a server appending reports takes the next ids from it
-- in the transaction that inserts them, holding its row until that commits,
-- so ids become visible in order and a server reading the feed after its
-- last id misses none. Each row of live_reports is one request's reports
-- (a JSON array), ids first_id .. first_id + count - 1; rows older than the
-- replay window are deleted.
CREATE TABLE live_seq (
    id   INTEGER PRIMARY KEY,
    last BIGINT NOT NULL
);
INSERT INTO live_seq (id, last) VALUES (1, 0);

CREATE TABLE live_reports (
    first_id   BIGINT PRIMARY KEY,
    count      INTEGER NOT NULL,
    account_id TEXT NOT NULL,
    items      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX live_reports_created ON live_reports (created_at);
