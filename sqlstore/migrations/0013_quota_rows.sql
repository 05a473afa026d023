-- PostgreSQL takes the rate limits of all the subjects of a round trip in one
-- statement (INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE): the
-- update reads a subject's request count and limit from the row it would
-- have inserted, so the row keeps them. Unused on SQLite.
ALTER TABLE quotas ADD COLUMN req BIGINT NOT NULL DEFAULT 0;
ALTER TABLE quotas ADD COLUMN lim BIGINT NOT NULL DEFAULT 0;
