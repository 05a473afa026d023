-- What a delivery claim reads. Due deliveries in due order, with what the
-- claim chooses by (account and endpoint) in the index itself, so that the
-- claim reads the index alone; and each endpoint's pending deliveries in
-- due order: a claim that finds a backlog reads the first few of each
-- endpoint there, so that what it reads depends on the number of
-- endpoints, not on the backlog's length.
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id, account_id, webhook_id, status) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
