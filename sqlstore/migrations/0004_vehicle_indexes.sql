-- Location ingest reads a vehicle by id and updates it, in a SERIALIZABLE
-- transaction on PostgreSQL. Two ingests of different vehicles must not
-- look like a conflict to it; they did, through indexes:
--
-- - vehicles_sweep held last_at and status, which every ingest changes, so
--   no update of a vehicle was a HOT update: each wrote new entries into
--   every index of the table, pages that concurrent ingests had read, and
--   PostgreSQL aborted one of them. With no index on a column that ingest
--   changes, its updates are HOT. The status sweep reads the whole table
--   instead, every few seconds, which is cheap next to the ingest rate.
-- - vehicles_external_id (account_id, external_id) could serve a lookup by
--   account and id, reading every vehicle of the account. As a partial index
--   it holds only the vehicles that have an external id (the only ones whose
--   uniqueness it checks), and is used only to find those.

DROP INDEX vehicles_sweep;
DROP INDEX vehicles_external_id;
CREATE UNIQUE INDEX vehicles_external_id ON vehicles (account_id, external_id) WHERE external_id IS NOT NULL;
