-- Webhook endpoints and their delivery attempts.

CREATE TABLE webhooks (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    url                   TEXT NOT NULL,
    events                TEXT NOT NULL,   -- JSON array of event types, or ["*"]
    description           TEXT NOT NULL,
    enabled               BOOLEAN NOT NULL,
    secret                TEXT NOT NULL,
    previous_secret       TEXT NOT NULL,   -- "" when none
    previous_secret_until BIGINT,
    failing_since         BIGINT,
    created_at            BIGINT NOT NULL
);

CREATE INDEX webhooks_account ON webhooks (account_id, id);

-- One row per attempt. A pending row is an attempt yet to be made at
-- next_attempt_at; a sender claims it by moving next_attempt_at on to the
-- end of its lease in the transaction that selects it.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL,
    webhook_id      TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,   -- no foreign key: events are purged after 30 days
    attempt         INTEGER NOT NULL,
    status          TEXT NOT NULL,
    response_status INTEGER,
    error           TEXT,
    duration_ms     BIGINT,
    next_attempt_at BIGINT,
    created_at      BIGINT NOT NULL
);

CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
