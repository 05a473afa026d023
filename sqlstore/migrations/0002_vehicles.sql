-- Vehicles, their location history, and the event log.

CREATE TABLE vehicles (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    name             TEXT NOT NULL,
    vin              TEXT NOT NULL,
    make             TEXT NOT NULL,
    model            TEXT NOT NULL,
    year             INTEGER,
    license_plate    TEXT NOT NULL,
    external_id      TEXT,             -- NULL when unset, so the unique index ignores it
    tags             TEXT NOT NULL,    -- JSON array of strings
    odometer_km      DOUBLE PRECISION,
    status           TEXT NOT NULL,
    speed            DOUBLE PRECISION,
    last_lat         DOUBLE PRECISION,
    last_lon         DOUBLE PRECISION,
    last_at          BIGINT,           -- NULL: never reported
    last_heading     DOUBLE PRECISION,
    stationary_since BIGINT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);

CREATE INDEX vehicles_account ON vehicles (account_id, id);
CREATE UNIQUE INDEX vehicles_external_id ON vehicles (account_id, external_id);
CREATE INDEX vehicles_sweep ON vehicles (status, last_at);

-- Location history, keyed by (vehicle, timestamp): a second point at the
-- same instant is a duplicate.
CREATE TABLE points (
    vehicle_id  TEXT NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    ts          BIGINT NOT NULL,
    lat         DOUBLE PRECISION NOT NULL,
    lon         DOUBLE PRECISION NOT NULL,
    speed       DOUBLE PRECISION,
    heading     DOUBLE PRECISION,
    odometer_km DOUBLE PRECISION,
    PRIMARY KEY (vehicle_id, ts)
);

CREATE INDEX points_ts ON points (ts);

CREATE TABLE events (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    type       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    data       TEXT NOT NULL
);

CREATE INDEX events_account ON events (account_id, id);
CREATE INDEX events_created ON events (created_at);
