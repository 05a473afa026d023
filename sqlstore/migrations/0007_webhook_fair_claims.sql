-- Each endpoint's pending deliveries in due order: a claim that finds a
-- backlog reads the first few of each endpoint here, so that what it reads
-- depends on the number of endpoints, not on the backlog's length.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
