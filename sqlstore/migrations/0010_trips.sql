-- Trips the ingest derives from each vehicle's reports; stops and
-- summaries are read from them. They go with their vehicle.
CREATE TABLE trips (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    vehicle_id        TEXT NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    status            TEXT NOT NULL,
    start_lat         DOUBLE PRECISION NOT NULL,
    start_lon         DOUBLE PRECISION NOT NULL,
    start_at          BIGINT NOT NULL,
    end_lat           DOUBLE PRECISION NOT NULL,
    end_lon           DOUBLE PRECISION NOT NULL,
    end_at            BIGINT NOT NULL,
    distance_km       DOUBLE PRECISION NOT NULL,
    great_circle_km   DOUBLE PRECISION NOT NULL,
    moving_seconds    DOUBLE PRECISION NOT NULL,
    max_speed         DOUBLE PRECISION NOT NULL,
    start_odometer_km DOUBLE PRECISION,
    end_odometer_km   DOUBLE PRECISION,
    odometer_all      BOOLEAN NOT NULL,
    points            INTEGER NOT NULL,
    ignored_points    INTEGER NOT NULL,
    pending_ignored   INTEGER NOT NULL,   -- jumps after the end, while standing
    last_at           BIGINT NOT NULL,
    stationary_since  BIGINT,
    slices            BLOB NOT NULL   -- the trip's 15-minute slices, 24 bytes each (see encodeSlices)
);

CREATE UNIQUE INDEX trips_vehicle_start ON trips (vehicle_id, start_at);
CREATE INDEX trips_account ON trips (account_id, vehicle_id, start_at);
CREATE INDEX trips_open ON trips (vehicle_id, status);
