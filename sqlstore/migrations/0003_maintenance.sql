-- Work orders and recurring service schedules.

-- Work orders outlive their vehicle: no foreign key to vehicles.
CREATE TABLE work_orders (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    vehicle_id   TEXT NOT NULL,
    title        TEXT NOT NULL,
    description  TEXT NOT NULL,
    priority     TEXT NOT NULL,
    status       TEXT NOT NULL,
    due_date     TEXT NOT NULL,   -- "" or YYYY-MM-DD
    assigned_to  TEXT NOT NULL,
    odometer_km  DOUBLE PRECISION,
    cost_cents   BIGINT,
    currency     TEXT NOT NULL,
    schedule_id  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    completed_at BIGINT
);

CREATE INDEX work_orders_account ON work_orders (account_id, id);

-- Schedules go with their vehicle.
CREATE TABLE schedules (
    id                       TEXT PRIMARY KEY,
    account_id               TEXT NOT NULL REFERENCES accounts (id),
    vehicle_id               TEXT NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    name                     TEXT NOT NULL,
    interval_days            INTEGER,
    interval_km              DOUBLE PRECISION,
    last_service_date        TEXT NOT NULL,
    last_service_odometer_km DOUBLE PRECISION,
    auto_create_work_order   BOOLEAN NOT NULL,
    next_due_date            TEXT NOT NULL,   -- "" without interval_days
    next_due_odometer_km     DOUBLE PRECISION,
    status                   TEXT NOT NULL,
    notified_due_soon        BOOLEAN NOT NULL,
    notified_overdue         BOOLEAN NOT NULL,
    cycle_work_order_id      TEXT NOT NULL,
    created_at               BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL
);

CREATE INDEX schedules_account ON schedules (account_id, id);
CREATE INDEX schedules_vehicle ON schedules (vehicle_id, id);
CREATE INDEX schedules_due ON schedules (next_due_date, id);
