-- Alert rules, geofences and alerts.

-- A geofence's geometry is its GeoJSON; rules name geofences by id and the
-- service refuses to delete a geofence a rule names.
CREATE TABLE geofences (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    name       TEXT NOT NULL,
    geometry   TEXT NOT NULL,   -- GeoJSON Polygon or Point
    radius_m   DOUBLE PRECISION,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX geofences_account ON geofences (account_id, id);

CREATE TABLE alert_rules (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    type          TEXT NOT NULL,
    severity      TEXT NOT NULL,
    threshold_kmh DOUBLE PRECISION,
    after_minutes INTEGER,
    geofence_id   TEXT NOT NULL,   -- "" unless a geofence rule
    vehicle_ids   TEXT NOT NULL,   -- JSON array; empty: every vehicle
    enabled       BOOLEAN NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE INDEX alert_rules_account ON alert_rules (account_id, id);
CREATE INDEX alert_rules_type ON alert_rules (type, id);

-- Alerts outlive their vehicle and rule, as history: no foreign keys to them.
-- dedup_key is how the service finds the latest alert of a condition.
CREATE TABLE alerts (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    type            TEXT NOT NULL,
    severity        TEXT NOT NULL,
    status          TEXT NOT NULL,
    vehicle_id      TEXT NOT NULL,
    rule_id         TEXT NOT NULL,
    message         TEXT NOT NULL,
    data            TEXT NOT NULL,   -- JSON object
    dedup_key       TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    acknowledged_at BIGINT,
    resolved_at     BIGINT
);

CREATE INDEX alerts_account ON alerts (account_id, id);
CREATE INDEX alerts_dedup ON alerts (account_id, dedup_key, id);

-- The version of an account's rules and geofences: every change moves it
-- forward, in the change's transaction, so a server that keeps rules
-- compiled in memory knows by one read whether its copy is current.
CREATE TABLE alert_config (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id),
    version    BIGINT NOT NULL
);
