-- The settings of the telematics alert rule types (alarm, ignition_on,
-- fuel_drop, harsh_driving, power_cut): a JSON object of those a rule sets,
-- '{}' for the other types and for every rule made before this migration.
ALTER TABLE alert_rules ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
