-- Notifications by e-mail (API.md §17): the people's notification rules
-- and report schedules, and the mail outbox a sender claims from.

CREATE TABLE notification_rules (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id),
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    events         TEXT NOT NULL, -- JSON array of event types
    alert_types    TEXT NOT NULL, -- JSON array
    vehicle_ids    TEXT NOT NULL, -- JSON array
    tags           TEXT NOT NULL, -- JSON array
    channel        TEXT NOT NULL,
    quiet_hours    TEXT,          -- JSON {tz, from, to}, or NULL
    digest_minutes INTEGER NOT NULL,
    enabled        BOOLEAN NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE INDEX notification_rules_account ON notification_rules (account_id, id);

CREATE TABLE report_schedules (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    frequency   TEXT NOT NULL,
    weekday     TEXT NOT NULL,
    hour        INTEGER NOT NULL,
    tz          TEXT NOT NULL,
    report      TEXT NOT NULL,
    group_by    TEXT NOT NULL,
    vehicle_ids TEXT NOT NULL, -- JSON array
    tags        TEXT NOT NULL, -- JSON array
    enabled     BOOLEAN NOT NULL,
    created_at  BIGINT NOT NULL,
    next_run_at BIGINT NOT NULL
);

CREATE INDEX report_schedules_account ON report_schedules (account_id, id);
CREATE INDEX report_schedules_due ON report_schedules (next_run_at, id) WHERE enabled;

-- One row per rule and window (a notice of the window's first event, then
-- a digest of the rest), or per report schedule and period. A rule has at
-- most one open pending row: an event adds itself to it with one upsert
-- (events_count + 1, its item appended to items while item_count is under
-- the kept maximum), so that a storm of events costs one small write each
-- and the outbox stays bounded. items holds one JSON object a line. rule_id
-- names the rule, or the schedule of a report; neither is a foreign key:
-- a deleted rule's pending mail fails when a sender claims it.
CREATE TABLE mail_outbox (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL,
    kind             TEXT NOT NULL,
    rule_id          TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    is_open          BOOLEAN NOT NULL,
    phase            TEXT NOT NULL,
    status           TEXT NOT NULL,
    noticed          BOOLEAN NOT NULL,
    window_end       BIGINT NOT NULL,
    events_count     BIGINT NOT NULL,
    items            TEXT NOT NULL,
    item_count       INTEGER NOT NULL,
    period           TEXT NOT NULL, -- "" but for a report
    attempts         INTEGER NOT NULL,
    next_attempt_at  BIGINT,
    first_attempt_at BIGINT,
    error            TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    sent_at          BIGINT
);

CREATE UNIQUE INDEX mail_outbox_open ON mail_outbox (rule_id) WHERE is_open AND status = 'pending';
CREATE UNIQUE INDEX mail_outbox_period ON mail_outbox (rule_id, period) WHERE period <> '';
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX mail_outbox_account ON mail_outbox (account_id, id);
CREATE INDEX mail_outbox_created ON mail_outbox (created_at);

-- The one-click unsubscribe tokens mail carried (RFC 8058), by the SHA-256
-- of the token: each attempt a token of its own, all valid until purged
-- with the mail's retention.
CREATE TABLE mail_unsubscribe (
    hash     BLOB PRIMARY KEY,
    mail_id  TEXT NOT NULL,
    added_at BIGINT NOT NULL
);

CREATE INDEX mail_unsubscribe_added ON mail_unsubscribe (added_at);
