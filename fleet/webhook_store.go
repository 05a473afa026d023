package fleet

import "time"

// WebhookTx is the part of a Tx that holds webhook endpoints and their
// deliveries.
type WebhookTx interface {
	// CreateWebhook stores a new endpoint. Returns conflict if the id
	// exists, not_found if its account does not.
	CreateWebhook(w Webhook) error
	// Webhook returns not_found if the account has no such endpoint.
	Webhook(accountID, id string) (Webhook, error)
	// Webhooks returns the account's endpoints in id order, after p.After,
	// at most p.Limit of them.
	Webhooks(accountID string, p Page) ([]Webhook, error)
	// CountWebhooks returns how many endpoints the account has.
	CountWebhooks(accountID string) (int, error)
	// EnabledWebhooks returns the account's enabled endpoints in id order:
	// the narrow read made for every event.
	EnabledWebhooks(accountID string) ([]Webhook, error)
	// UpdateWebhook replaces a stored endpoint (every field but ID,
	// AccountID and CreatedAt). Returns not_found if the account has no
	// such endpoint.
	UpdateWebhook(w Webhook) error
	// DeleteWebhook deletes an endpoint and its deliveries. Returns
	// not_found if the account has no such endpoint.
	DeleteWebhook(accountID, id string) error

	// CreateDelivery stores a new delivery. Returns conflict if the id
	// exists, not_found if the account has no endpoint d.WebhookID.
	CreateDelivery(d Delivery) error
	// Delivery returns not_found if the account has no such delivery.
	Delivery(accountID, id string) (Delivery, error)
	// Deliveries returns the endpoint's deliveries that f.Match, in id
	// order, after p.After, at most p.Limit of them.
	Deliveries(accountID, webhookID string, f DeliveryFilter, p Page) ([]Delivery, error)
	// UpdateDelivery replaces the mutable fields of a stored delivery
	// (status, response_status, error, duration_ms, next_attempt_at).
	// Returns not_found if the account has no such delivery.
	UpdateDelivery(d Delivery) error
	// DeliveriesDue returns pending deliveries, of any account, whose
	// NextAttemptAt is at or before now; at most limit, earliest first. In
	// a store shared by several processes, rows returned to one Update are
	// not returned to another running at the same time (SKIP LOCKED): the
	// caller moves their NextAttemptAt on in the same transaction, which is
	// its claim on them.
	DeliveriesDue(now time.Time, limit int) ([]Delivery, error)
}
