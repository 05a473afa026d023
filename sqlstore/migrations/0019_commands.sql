-- Commands to devices (API.md §16), kept with their device: the service
-- deletes a device's commands in the transaction that deletes it.
-- seconds is set_interval's, idx and output_on output's (output_on 0 or 1),
-- body_text or body_hex custom's ('' when unset). status moves queued -> sent ->
-- delivered, or failed, expired, cancelled; a listener claims a device's
-- queued commands in queue order (commands_device), the clock expires the
-- queued ones (commands_expiring).
CREATE TABLE commands (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    device_id    TEXT NOT NULL,
    type         TEXT NOT NULL,
    seconds      BIGINT,
    idx          BIGINT,
    output_on    BIGINT,
    body_text    TEXT NOT NULL,
    body_hex     TEXT NOT NULL,
    forced       BIGINT NOT NULL,
    status       TEXT NOT NULL,
    result       TEXT NOT NULL,
    error        TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    sent_at      BIGINT,
    delivered_at BIGINT,
    finished_at  BIGINT
);

CREATE INDEX commands_device ON commands (device_id, status, id);
CREATE INDEX commands_device_list ON commands (device_id, id);
CREATE INDEX commands_expiring ON commands (status, expires_at);
CREATE INDEX commands_created ON commands (created_at);
