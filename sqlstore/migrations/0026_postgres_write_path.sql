-- dialect: postgres
--
-- The write path of PostgreSQL's groups, tuned where the schema shared with
-- SQLite cannot say it (docs/storage.md). A migration whose first line
-- names a dialect runs on that dialect alone; the other records it as
-- applied.
--
-- A point's vehicle is not checked by a foreign key: a trigger's query per
-- point was a quarter of PostgreSQL's CPU in an API batch of 1,000 points.
-- Every point is inserted by a transaction that holds its vehicle's row
-- (a group locks its vehicles FOR UPDATE; SQLite has one writer), and
-- DeleteVehicle deletes the vehicle's points with it.
ALTER TABLE points DROP CONSTRAINT points_vehicle_id_fkey;

-- A vehicle's row and its open trip are updated by every report: room on
-- each page lets the new version stay on it (a HOT update, no index entry),
-- which a full page does not.
ALTER TABLE vehicles SET (fillfactor = 80);
ALTER TABLE trips SET (fillfactor = 80);

-- The live feed's reports are read once by each server and purged within
-- minutes: kept uncompressed, a batch's thousand reports cost no pglz pass.
ALTER TABLE live_reports ALTER COLUMN items SET STORAGE EXTERNAL;
