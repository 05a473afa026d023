-- Telematics (API.md §14): what a report says besides where the vehicle is.
--
-- A point's attributes are one column in fleet.Attributes' binary form
-- (AppendBinary: the common vocabulary's names as one byte, numbers as
-- scaled integers where exact; about 60 bytes for a tracker's 15 typical
-- attributes), NULL when it has none. One value per row keeps a batch's
-- points, attributes included, one multi-row or set-based insert.
ALTER TABLE points ADD COLUMN attrs BLOB;

-- The vehicle's telematics state from its forward points: ignition 1 on,
-- 0 off, NULL unknown; telemetry_at the time of the report they come from;
-- telemetry what the rules remember between reports (fleet.TelemetryMemory
-- as JSON, NULL when nothing). None is indexed, so that ingest's updates
-- of a vehicle stay HOT on PostgreSQL (see 0004).
ALTER TABLE vehicles ADD COLUMN ignition INTEGER;
ALTER TABLE vehicles ADD COLUMN engine_hours DOUBLE PRECISION;
ALTER TABLE vehicles ADD COLUMN fuel_level DOUBLE PRECISION;
ALTER TABLE vehicles ADD COLUMN fuel_l DOUBLE PRECISION;
ALTER TABLE vehicles ADD COLUMN power_v DOUBLE PRECISION;
ALTER TABLE vehicles ADD COLUMN telemetry_at BIGINT;
ALTER TABLE vehicles ADD COLUMN telemetry TEXT;
-- The attributes of the vehicle's latest point (its last_location), as
-- points.attrs, for the snapshot and the live stream.
ALTER TABLE vehicles ADD COLUMN last_attrs BLOB;

-- Maintenance by engine hours (API.md §6): a schedule's interval, the
-- engine hours at its last service and when it is next due (NULL without
-- an interval).
ALTER TABLE schedules ADD COLUMN interval_engine_hours DOUBLE PRECISION;
ALTER TABLE schedules ADD COLUMN last_service_engine_hours DOUBLE PRECISION;
ALTER TABLE schedules ADD COLUMN next_due_engine_hours DOUBLE PRECISION;
