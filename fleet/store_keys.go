package fleet

import (
	"context"
	"time"
)

// KeyStore is the keys area's part of a Store: what every request does
// before its use case runs (finding its key, taking its quota), and the
// usage counts and idempotency records kept beside it, with their purges.
// It runs outside transactions, and must be fast: it is on every request.
type KeyStore interface {
	// KeyByHash returns the key whose secret hashes to hash, with its
	// account, whatever the key's status. Returns not_found if none.
	KeyByHash(ctx context.Context, hash [32]byte) (Key, Account, error)

	// TakeQuota applies TakeQuota to subject's state atomically and returns
	// the outcome: of any number of concurrent calls, exactly as many are
	// allowed as the allowance has left — across every process sharing the
	// store, for a store that can be shared.
	TakeQuota(ctx context.Context, subject string, limit int, now time.Time) (Quota, error)
	// TakeQuotaN applies TakeQuotaN to subject's state atomically: n units
	// at once, all or none. It is exact as TakeQuota is: of concurrent
	// calls, whichever server makes them, each is allowed if and only if
	// its n fit in what the calls counted before it left, and their counts
	// add up. It shares TakeQuota's state and PurgeQuota's forgetting, so a
	// subject is counted in units of one kind only.
	TakeQuotaN(ctx context.Context, subject string, n, limit int, now time.Time) (Quota, error)
	// RefundQuota applies RefundQuota to subject's state atomically: n
	// units go back to the window that ends at reset, if that window is
	// still subject's; otherwise nothing changes.
	RefundQuota(ctx context.Context, subject string, n int, reset time.Time) error

	// RecordUsage adds each entry's counts to the key's hour and moves the
	// key's last_used_at forward to the entry's LastUsedAt (never back).
	// Entries for keys that no longer exist are ignored.
	RecordUsage(ctx context.Context, usage []Usage) error
	// Usage returns the key's hourly counts for hours at or after from,
	// newest first.
	Usage(ctx context.Context, keyID string, from time.Time) ([]Usage, error)

	// BeginIdempotency stores rec unless a record for the same key id and
	// idempotency key exists that IdempotencyRecord.Blocks at rec.CreatedAt;
	// then it returns that record and true instead.
	BeginIdempotency(ctx context.Context, rec IdempotencyRecord) (IdempotencyRecord, bool, error)
	// FinishIdempotency stores the response of a begun record. Returns
	// not_found if there is none.
	FinishIdempotency(ctx context.Context, keyID, idemKey string, status int, body []byte) error
	// DeleteIdempotency forgets a begun record (the request failed in a way
	// that a retry may repeat).
	DeleteIdempotency(ctx context.Context, keyID, idemKey string) error
	// PurgeIdempotency deletes records created before before.
	PurgeIdempotency(ctx context.Context, before time.Time) (int, error)

	// PurgeQuota forgets rate-limit windows that ended before before.
	PurgeQuota(ctx context.Context, before time.Time) (int, error)
	// PurgeUsage deletes hourly usage counts of hours before before.
	PurgeUsage(ctx context.Context, before time.Time) (int, error)
}

// KeyTx is the keys area's part of a Tx: accounts and their API keys.
type KeyTx interface {
	// CreateAccount stores a new account. Returns conflict if the id exists.
	CreateAccount(a Account) error
	// Account returns not_found if there is no such account.
	Account(id string) (Account, error)
	// Accounts returns every account in id order, after p.After, at most
	// p.Limit of them.
	Accounts(p Page) ([]Account, error)

	// CreateKey stores a new key. Returns conflict if the id or hash exists,
	// not_found if its account does not.
	CreateKey(k Key) error
	// Key returns the account's key; not_found if it has no such key.
	Key(accountID, id string) (Key, error)
	// KeyByID returns the key with the id, of whichever account; not_found
	// if there is none (the operator's lookup).
	KeyByID(id string) (Key, error)
	// Keys returns the account's keys in id order, after p.After, at most
	// p.Limit of them.
	Keys(accountID string, p Page) ([]Key, error)
	// UpdateKey replaces the mutable fields of a stored key (name,
	// expires_at, revoked_at; never replaces). Returns not_found if it is
	// not stored.
	UpdateKey(k Key) error
	// CountActiveKeys returns how many of the account's keys are active at
	// now (Key.Status): not revoked, and without an expiry or expiring
	// after now. Keys in a rotation's grace period count.
	CountActiveKeys(accountID string, now time.Time) (int, error)
}

// Usage is one key's request counts in one clock hour.
type Usage struct {
	KeyID      string
	Hour       time.Time // start of the hour, UTC
	Requests   int       // every request made with the key, rejected ones included
	Rejected   int       // requests refused by the rate limit
	LastUsedAt time.Time // latest request in the entry (RecordUsage only)
}

// IdempotencyRecord remembers a POST made with an Idempotency-Key, so that a
// repeat returns the first response.
type IdempotencyRecord struct {
	KeyID       string
	Key         string
	RequestHash [32]byte // method, path and body
	CreatedAt   time.Time
	Done        bool
	Status      int
	Body        []byte
}

// How long idempotency records are kept, and how long an unfinished one
// blocks a repeat before it is taken as abandoned (its server died).
const (
	IdempotencyRetention = 24 * time.Hour
	IdempotencyAbandoned = 5 * time.Minute
)

// Blocks reports whether the stored record r still decides what a new request
// with the same key does at time now; if not, a store replaces it.
func (r IdempotencyRecord) Blocks(now time.Time) bool {
	age := now.Sub(r.CreatedAt)
	if age >= IdempotencyRetention {
		return false
	}
	return r.Done || age < IdempotencyAbandoned
}
