package fleet

import (
	"context"
	"errors"

	"github.com/fleetkit/fleetapi/fleet/internal/gate"
)

// gates order, within one process, the writes whose judgement would
// otherwise be undone by each other: per account and per vehicle, and an
// account's bulk batches one at a time. What is held across what, and why,
// is told in package internal/gate, which keeps them; these are the names
// the use cases call them by.
type gates struct{ *gate.Gates }

func (g *gates) init() { g.Gates = gate.New(gateWaitEnded) }

// ingest returns what one location batch of the account will hold.
func (g *gates) ingest(accountID string) *ingestHold { return &ingestHold{g.Ingest(accountID)} }

// account takes the account's gate alone.
func (g *gates) account(ctx context.Context, accountID string) (func(), error) {
	return g.Account(ctx, accountID)
}

// vehicle takes one vehicle's gate.
func (g *gates) vehicle(ctx context.Context, vehicleID string) (func(), error) {
	return g.Vehicle(ctx, vehicleID)
}

// ingestHold is what one location batch holds (gate.IngestHold), taken
// and given back in stages (see Service.ingest).
type ingestHold struct{ *gate.IngestHold }

func (h *ingestHold) takeBulk(ctx context.Context) error { return h.TakeBulk(ctx) }

func (h *ingestHold) take(ctx context.Context, vehicleIDs []string, account bool) error {
	return h.Take(ctx, vehicleIDs, account)
}

func (h *ingestHold) releaseStored() { h.ReleaseStored() }

func (h *ingestHold) release() { h.Release() }

// gateWaitEnded is the answer of a request whose context ended while it
// waited for a gate: unavailable, as a store answers a call whose context
// ended, with the context's error in the chain.
func gateWaitEnded(err error) error {
	msg := "The request was cancelled while it waited for other writes of the account."
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "The request's deadline passed while it waited for other writes of the account; retry later."
	}
	return &Error{Code: CodeUnavailable, Message: msg, Err: err}
}

// updateAlone runs fn in a write transaction with the account's gate held
// alone, as every change of the account's alert rules or geofences does:
// the gate is held across that transaction only.
func (s *Service) updateAlone(ctx context.Context, accountID string, fn func(Tx) error) error {
	release, err := s.gates.account(ctx, accountID)
	if err != nil {
		return err
	}
	defer release()
	return s.update(ctx, fn)
}
