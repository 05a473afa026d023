package fleet

import (
	"slices"
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
// at a time on each server, in about the order they arrive: a bulk batch
// holds its account's bulk gate alone from before it is validated until
// it is stored, taken before any other gate. So one account posting bulk
// batches from many connections at once has one of them in the store's
// queue and one using a core at a time, not all of them: its own batches
// are no slower for it (the store writes them one after another anyway),
// and the other accounts' writes find the writer free between its
// batches instead of behind them (BenchmarkOtherTenantWritesVolume).
type gates struct {
	mu       sync.Mutex
	accounts map[string]*gate
	vehicles map[string]*gate
	bulks    map[string]*gate
}

type gate struct {
	sync.RWMutex
	refs int
}

func (g *gates) init() {
	g.accounts = map[string]*gate{}
	g.vehicles = map[string]*gate{}
	g.bulks = map[string]*gate{}
}

func (g *gates) acquire(m map[string]*gate, key string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := m[key]
	if e == nil {
		e = &gate{}
		m[key] = e
	}
	e.refs++
	return e
}

func (g *gates) release(m map[string]*gate, key string, e *gate) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(m, key)
	}
}

// ingest takes the account's gate shared and the vehicles' gates (ids
// sorted); the returned function gives them back.
func (g *gates) ingest(accountID string, vehicleIDs []string) func() {
	account := g.hold(g.accounts, accountID, false)
	held := make([]func(), 0, len(vehicleIDs))
	for _, id := range vehicleIDs {
		held = append(held, g.hold(g.vehicles, id, true))
	}
	return func() {
		for _, release := range slices.Backward(held) {
			release()
		}
		account()
	}
}

// account takes the account's gate alone.
func (g *gates) account(accountID string) func() { return g.hold(g.accounts, accountID, true) }

// bulk takes the account's bulk gate alone: one bulk batch of the account
// at a time. Go's mutex hands itself to the longest waiter once waiters
// wait over a millisecond, so batches go in about their order of arrival.
func (g *gates) bulk(accountID string) func() { return g.hold(g.bulks, accountID, true) }

// vehicle takes one vehicle's gate.
func (g *gates) vehicle(vehicleID string) func() { return g.hold(g.vehicles, vehicleID, true) }

// hold takes the gate of key in m, alone or shared; the returned function
// gives it back.
func (g *gates) hold(m map[string]*gate, key string, alone bool) func() {
	e := g.acquire(m, key)
	if alone {
		e.Lock()
	} else {
		e.RLock()
	}
	return func() {
		if alone {
			e.Unlock()
		} else {
			e.RUnlock()
		}
		g.release(m, key, e)
	}
}
