package fleet

import (
	"context"
	"time"
)

// EventStore is the events area's part of a Store.
type EventStore interface {
	// PurgeEvents deletes events created before before.
	PurgeEvents(ctx context.Context, before time.Time) (int, error)
}

// EventTx is the events area's part of a Tx: the log of changes.
type EventTx interface {
	// AppendEvent stores an event.
	AppendEvent(e Event) error
	// Event returns not_found if the account has no such event.
	Event(accountID, id string) (Event, error)
	// Events returns the account's events that f.Match, in id order, after
	// p.After, at most p.Limit of them.
	Events(accountID string, f EventFilter, p Page) ([]Event, error)
	// EventsByID returns the stored events, of any account, among ids (in
	// no order; ids not stored are left out): the bodies of a claimed
	// batch of deliveries, in one read.
	EventsByID(ids []string) ([]Event, error)
}
