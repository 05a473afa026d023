package fleet

import (
	"context"
	"errors"
	"sync"
)

// gates order, within one process, the writes whose judgement would
// otherwise be undone by each other. Location ingest judges a batch before
// its write transaction (see judgeBatch); another ingest of the same
// vehicle, a change of the account's rules or geofences, or a resolved
// alert of the vehicle committed in between sends it back to judge again.
// So an ingest holds its account's gate shared and each of its vehicles'
// gates while it judges and writes; a change of the account's alert
// configuration holds the account's gate alone, and resolving or
// acknowledging a rule's alert holds its vehicle's. Gates are taken before
// any transaction begins, accounts before vehicles and vehicles in id
// order, so they never wait on each other in a circle. They are per account
// and per vehicle: one account's heavy batch makes only that account's
// writes wait. (Servers sharing a PostgreSQL database do not share gates;
// there the checks in the write transaction alone keep judgements right.)
//
// Besides, an account's bulk batches (BulkPoints or more) are ingested one
// at a time on each server, in the order they arrive: a bulk batch holds
// its account's bulk gate alone from before it is validated until it is
// stored, taken before any other gate. So one account posting bulk batches
// from many connections at once has one of them in the store's queue and
// one using a core at a time, not all of them: its own batches are no
// slower for it (the store writes them one after another anyway), and the
// other accounts' writes find the writer free between its batches instead
// of behind them (BenchmarkOtherTenantWritesVolume).
//
// Waiting. A gate is granted in the order its requests arrive: a request
// waits for those ahead of it and for no one behind it. Requests that
// share it and arrive one after another (ingests) are granted it together;
// one that holds it alone (a rule edit) waits only for the holders and the
// waiters ahead of it, and the ingests that arrive after it wait only until
// it is done. So a rule edit during a heavy ingest of its account waits for
// the batches being ingested, and delays the next ones by its own
// transaction, never starved by a stream of ingests and never starving
// them. A request waits only while its context lasts: when the context
// ends (the client left, or the request's deadline passed) it stops
// waiting at once, takes nothing, lets the waiters behind it go if it was
// what held them, and answers unavailable with the context's error in the
// chain, as the stores answer a call whose context ended. A gate that no
// request holds or waits for is dropped, so the gates take memory only for
// the accounts and vehicles being written.
type gates struct {
	mu       sync.Mutex
	accounts map[string]*gate
	vehicles map[string]*gate
	bulks    map[string]*gate
	// queued, if set, is called as a request starts waiting for a gate,
	// with the gate's key (tests wait on it).
	queued func(key string, alone bool)
}

// gate is one gate's state, guarded by gates.mu.
type gate struct {
	refs    int       // requests holding or waiting for it: dropped at 0
	shared  int       // requests holding it shared
	alone   bool      // held alone
	waiting []*waiter // in their order of arrival
}

// waiter is a request waiting for a gate; granted is closed when it holds
// it.
type waiter struct {
	alone   bool
	granted chan struct{}
}

func (g *gates) init() {
	g.accounts = map[string]*gate{}
	g.vehicles = map[string]*gate{}
	g.bulks = map[string]*gate{}
}

// free reports whether the gate could be granted now (alone or shared),
// waiters aside.
func (e *gate) free(alone bool) bool {
	return !e.alone && (!alone || e.shared == 0)
}

func (e *gate) take(alone bool) {
	if alone {
		e.alone = true
	} else {
		e.shared++
	}
}

func (e *gate) give(alone bool) {
	if alone {
		e.alone = false
	} else {
		e.shared--
	}
}

// grant hands the gate to the waiters at the head of the queue that it can
// be granted to: the first, and the shared ones after a shared one.
func (e *gate) grant() {
	for len(e.waiting) > 0 {
		w := e.waiting[0]
		if !e.free(w.alone) {
			return
		}
		e.take(w.alone)
		close(w.granted)
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
	}
	e.waiting = nil
}

// acquire takes the gate of key in m, alone or shared, waiting in line
// while ctx lasts.
func (g *gates) acquire(ctx context.Context, m map[string]*gate, key string, alone bool) (*gate, error) {
	if err := ctx.Err(); err != nil {
		return nil, gateWaitEnded(err)
	}
	g.mu.Lock()
	e := m[key]
	if e == nil {
		e = &gate{}
		m[key] = e
	}
	e.refs++
	if len(e.waiting) == 0 && e.free(alone) {
		e.take(alone)
		g.mu.Unlock()
		return e, nil
	}
	w := &waiter{alone: alone, granted: make(chan struct{})}
	e.waiting = append(e.waiting, w)
	queued := g.queued
	g.mu.Unlock()
	if queued != nil {
		queued(key, alone)
	}
	select {
	case <-w.granted:
		return e, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.granted: // granted as ctx ended: given back
		e.give(alone)
	default:
		for i, x := range e.waiting {
			if x == w {
				e.waiting = append(e.waiting[:i], e.waiting[i+1:]...)
				break
			}
		}
	}
	e.grant() // those it held back may go
	g.drop(m, key, e)
	return nil, gateWaitEnded(ctx.Err())
}

// release gives back the gate of key in m.
func (g *gates) release(m map[string]*gate, key string, e *gate, alone bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e.give(alone)
	e.grant()
	g.drop(m, key, e)
}

// drop ends one request's interest in the gate, dropping the gate with the
// last one. g.mu is held.
func (g *gates) drop(m map[string]*gate, key string, e *gate) {
	if e.refs--; e.refs == 0 {
		delete(m, key)
	}
}

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

// hold takes the gate of key in m, alone or shared; the returned function
// gives it back.
func (g *gates) hold(ctx context.Context, m map[string]*gate, key string, alone bool) (func(), error) {
	e, err := g.acquire(ctx, m, key, alone)
	if err != nil {
		return nil, err
	}
	return func() { g.release(m, key, e, alone) }, nil
}

// ingest takes the account's gate shared and the vehicles' gates (ids
// sorted); the returned function gives them back. When ctx ends while it
// waits, it gives back what it took and holds nothing.
func (g *gates) ingest(ctx context.Context, accountID string, vehicleIDs []string) (func(), error) {
	account, err := g.acquire(ctx, g.accounts, accountID, false)
	if err != nil {
		return nil, err
	}
	held := make([]*gate, 0, len(vehicleIDs))
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			g.release(g.vehicles, vehicleIDs[i], held[i], true)
		}
		g.release(g.accounts, accountID, account, false)
	}
	for _, id := range vehicleIDs {
		e, err := g.acquire(ctx, g.vehicles, id, true)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, e)
	}
	return release, nil
}

// account takes the account's gate alone.
func (g *gates) account(ctx context.Context, accountID string) (func(), error) {
	return g.hold(ctx, g.accounts, accountID, true)
}

// bulk takes the account's bulk gate alone: one bulk batch of the account
// at a time, in their order of arrival.
func (g *gates) bulk(ctx context.Context, accountID string) (func(), error) {
	return g.hold(ctx, g.bulks, accountID, true)
}

// vehicle takes one vehicle's gate.
func (g *gates) vehicle(ctx context.Context, vehicleID string) (func(), error) {
	return g.hold(ctx, g.vehicles, vehicleID, true)
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
