package fleet

import (
	"context"
	"time"
)

// WebhookTx is the webhooks area's part of a Tx: endpoints and their
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

	// WebhooksByID returns the stored endpoints, of any account, among ids
	// (in no order; ids not stored are left out): the endpoints of a
	// claimed batch of deliveries, in one read.
	WebhooksByID(ids []string) ([]Webhook, error)

	// CreateDelivery stores a new delivery. Returns conflict if the id
	// exists, not_found if the account has no endpoint d.WebhookID.
	CreateDelivery(d Delivery) error
	// Delivery returns not_found if the account has no such delivery.
	Delivery(accountID, id string) (Delivery, error)
	// Deliveries returns the endpoint's deliveries that f.Match, in id
	// order, after p.After, at most p.Limit of them; with p.Newest, in
	// descending id order, before p.After (see Page).
	Deliveries(accountID, webhookID string, f DeliveryFilter, p Page) ([]Delivery, error)
	// UpdateDelivery replaces the mutable fields of a stored delivery
	// (status, response_status, error, duration_ms, next_attempt_at).
	// Returns not_found if the account has no such delivery.
	UpdateDelivery(d Delivery) error
}

// WebhookStore is the webhooks area's part of a Store: the delivery queue,
// which hands due deliveries to senders, records what they did, and forgets
// old attempts.
type WebhookStore interface {
	// ClaimDeliveries leases what c.Pick chooses among the pending
	// deliveries, of any account, due at c.Now (NextAttemptAt <= c.Now),
	// given of each endpoint at least its c.Candidates() earliest due: it
	// moves their NextAttemptAt to c.Until and returns them so changed,
	// earliest due first (the caller's lease on them), and whether due
	// deliveries were left (over a cap or the limit; false when it took
	// every due delivery that no concurrent claim holds). It reads no more
	// than a few times c.Limit rows, plus a few per endpoint when more are
	// due (a backlog), so that its cost does not grow with a backlog. It is
	// atomic, and of claims running at once, across every process sharing
	// the store, none gets a delivery another got (on PostgreSQL: FOR
	// UPDATE SKIP LOCKED, outside any SERIALIZABLE transaction, so that
	// claims and recorded outcomes never abort each other).
	ClaimDeliveries(ctx context.Context, c DeliveryClaim) ([]Delivery, bool, error)
	// RecordDeliveries stores, in one transaction, each record whose
	// delivery is still pending with NextAttemptAt equal to the record's
	// Lease: its delivery's mutable fields (as UpdateDelivery does), then
	// its Next unless nil. It then applies each of changes whose endpoint
	// had a record stored, as EndpointChange says: only the changes, each
	// a conditional update of the endpoint's row, so that what others
	// wrote meanwhile (a user enabling the endpoint, another sender's
	// outcomes) stays. It reports, for each record, whether it was stored.
	// Like ClaimDeliveries it runs outside any SERIALIZABLE transaction:
	// the lease check is a conditional update of each row.
	RecordDeliveries(ctx context.Context, recs []DeliveryRecord, changes []EndpointChange) ([]bool, error)
	// PurgeDeliveries deletes deliveries created before before.
	PurgeDeliveries(ctx context.Context, before time.Time) (int, error)
}

// DeliveryRecord is the outcome of a claimed delivery, to store while its
// lease holds.
type DeliveryRecord struct {
	Delivery Delivery
	Lease    time.Time
	Next     *Delivery // the next attempt, if any
}

// EndpointChange is what recorded outcomes do to an endpoint: the service
// decides it, the store applies it, in this order, to the endpoint's state
// at the time of writing rather than to the state the sender read.
type EndpointChange struct {
	AccountID string
	WebhookID string
	// Disable sets Enabled to false (never to true). With DisableIfFailingSince
	// set, only an endpoint whose FailingSince is still that time is
	// disabled: one whose failures were forgotten meanwhile (re-enabled by
	// its user, or a delivery succeeded) stays as it is.
	Disable               bool
	DisableIfFailingSince *time.Time
	// ClearFailing sets FailingSince to nil: an attempt succeeded.
	ClearFailing bool
	// StartFailing, when set, sets FailingSince to it where FailingSince is
	// nil: an attempt failed, and an earlier failure, if one is recorded,
	// stays the start.
	StartFailing *time.Time
}
