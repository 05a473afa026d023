-- Each vehicle's alerts version moves forward whenever an alert a rule
-- opened for the vehicle opens or is resolved. Location ingest judges a
-- batch against the vehicle's alerts before its write transaction and, in
-- it, checks that the version has not moved. No index holds it, so ingest's
-- updates of the row stay HOT on PostgreSQL (see 0004).

ALTER TABLE vehicles ADD COLUMN alert_version BIGINT NOT NULL DEFAULT 0;
