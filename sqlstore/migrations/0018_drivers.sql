-- Drivers (API.md §15), who drives which vehicle, and the driver of each
-- trip.
--
-- identifier and external_id are NULL when unset, so that the unique
-- indexes ignore them. identifier_key is the identifier as fleet compares
-- it (fleet.DriverIdentifierKey, upper case): a device's key read in
-- either case finds its driver, and two drivers cannot hold one key in two
-- spellings.
CREATE TABLE drivers (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts (id),
    name               TEXT NOT NULL,
    identifier         TEXT,
    identifier_key     TEXT,
    phone              TEXT NOT NULL,
    email              TEXT NOT NULL,
    license_number     TEXT NOT NULL,
    license_expires_on TEXT NOT NULL,   -- YYYY-MM-DD, '' when unset
    notes              TEXT NOT NULL,
    external_id        TEXT,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

CREATE INDEX drivers_account ON drivers (account_id, id);
CREATE UNIQUE INDEX drivers_identifier ON drivers (account_id, identifier_key) WHERE identifier_key IS NOT NULL;
CREATE UNIQUE INDEX drivers_external_id ON drivers (account_id, external_id) WHERE external_id IS NOT NULL;

-- The driver a vehicle has now, NULL when none: the one place an
-- assignment is kept (a driver's vehicle is read through it). No foreign
-- key: the service clears it in the transaction that deletes the driver.
-- Location ingest never writes it (UpdateVehicle leaves it out), so its
-- updates of a vehicle stay HOT on PostgreSQL although an index holds it
-- (see 0004); the index is partial, holding only vehicles with a driver,
-- and makes a driver drive one vehicle of the account at a time.
ALTER TABLE vehicles ADD COLUMN driver_id TEXT;
CREATE UNIQUE INDEX vehicles_driver ON vehicles (account_id, driver_id) WHERE driver_id IS NOT NULL;

-- The driver the vehicle had when the trip started, NULL when none; it
-- stays when the driver is deleted, as history.
ALTER TABLE trips ADD COLUMN driver_id TEXT;
