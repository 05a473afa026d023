-- Devices: the trackers and phone apps that report positions in their own
-- protocols, and the operator's record of identifiers that tried to report
-- without being registered.
--
-- identifier is unique on the server, across accounts. vehicle_id is ''
-- when the device has no vehicle (as alerts keep it): no foreign key, as
-- the service detaches a vehicle's devices in the transaction that deletes
-- it. A report writes protocol, last_seen_at and last_report only, and no
-- index holds them, so that on PostgreSQL the SERIALIZABLE transactions of
-- different devices' reports do not abort each other.
CREATE TABLE devices (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    identifier   TEXT NOT NULL,
    vehicle_id   TEXT NOT NULL,
    name         TEXT NOT NULL,
    protocol     TEXT NOT NULL,   -- '' before the first report
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    last_seen_at BIGINT,
    last_report  TEXT             -- JSON, null before the first report with a position
);

CREATE UNIQUE INDEX devices_identifier ON devices (identifier);
CREATE INDEX devices_account ON devices (account_id, id);
CREATE INDEX devices_vehicle ON devices (account_id, vehicle_id, id);

-- One row per identifier, protocol and address (a host, without the port);
-- attempts counts the attempts recorded.
CREATE TABLE unknown_devices (
    identifier TEXT NOT NULL,
    protocol   TEXT NOT NULL,
    address    TEXT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen  BIGINT NOT NULL,
    attempts   BIGINT NOT NULL,
    PRIMARY KEY (identifier, protocol, address)
);

CREATE INDEX unknown_devices_last_seen ON unknown_devices (last_seen);
