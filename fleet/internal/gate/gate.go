// Package gate holds the gates of package fleet: they order, within one
// process, the writes whose judgement would otherwise be undone by each
// other. Location ingest may judge a batch against the account's alert
// rules outside its write transaction (see fleet's judgeBatch and
// judgeOutside: a read transaction, the judgement with no
// transaction open, a second read transaction); its write transaction
// checks that what it was judged against has not moved (the rules'
// version, each vehicle's last location and AlertsVersion) and sends it
// back to judge again if it has. That check alone keeps judgements right
// (servers sharing a PostgreSQL database share no gates); the gates make
// it pass on one server, so that a heavy batch is judged once, instead of
// again and again and, after maxOutsideJudgements, inside the write
// transaction, where its judgement holds back every account's writes.
// They are per account and per vehicle: one account's heavy batch makes
// only that account's writes wait.
//
// What is held across what, and why:
//
//   - A batch judged outside the write transaction holds its account's
//     gate shared and its vehicles' gates from before the read
//     transaction it is judged on, across the judgement, the second read
//     transaction (the states of the vehicles' alerts) and the write
//     transaction, until it commits: a change committed on the server
//     anywhere in between would send it back. A rule or geofence change
//     would (it moves the rules' version: the account's gate), and so
//     would another batch of one of its vehicles or a resolved alert of
//     one (they move the vehicle: its gate). The vehicles' gates cannot
//     wait until after the judgement: a bulk batch names up to 10,000
//     vehicles, and any one of them reporting meanwhile would send it
//     back, again at each try (TestWritesOfAVehicleWaitForItsBatchBeingJudged).
//   - A batch light enough to be judged inside its write transaction,
//     where nothing moves under it, holds only its vehicles' gates, across
//     that transaction, so as not to send back a batch of the same
//     vehicles being judged outside. It holds no account gate: a rule
//     change neither waits for it nor delays it
//     (TestLightBatchesPassARuleEditWaitingForAHeavyOne). When its
//     judgement turns out heavier than the transaction's budget, it gives
//     its vehicles' gates back, then takes the account's and theirs again
//     before it is judged outside.
//   - Once committed, a batch gives back its account's gate and its bulk
//     gate. It keeps its vehicles' gates across the publication of its
//     reports to the live streams (on PostgreSQL, an append to the shared
//     feed: a round trip), so that a vehicle's reports reach the streams in
//     the order they were committed, and gives them back before it returns
//     the unused part of its points allowance (a store call). The take of
//     the allowance comes before any gate but the bulk gate.
//   - A change of the account's alert rules or geofences, and a vehicle's
//     deletion (which takes the vehicle out of rules), holds the
//     account's gate alone across its write transaction only
//     (updateAlone); resolving a rule's alert holds its vehicle's gate
//     across its write transaction only (the alert is read before it
//     without the gate, and again in it).
//
// An account's bulk batches (BulkPoints or more) are ingested one at a
// time on each server, in the order they arrive: a bulk batch holds its
// account's bulk gate alone from before it is validated until it is
// committed, across the take of its allowance and its judgement. So one
// account posting bulk batches from many connections at once has one of
// them in the store's queue and one using a core at a time, not all of
// them: its own batches are no slower for it (the store writes them one
// after another anyway), and the other accounts' writes find the writer
// free between its batches instead of behind them
// (BenchmarkOtherTenantWritesVolume).
//
// Gates are taken in one order: the bulk gate, the account's, the
// vehicles' in id order (a batch that holds its vehicles' gives them back
// before it takes its account's), and never while a transaction of the
// request is open; so requests never wait for each other in a circle
// (TestGatesUnderLoad).
//
// Waiting. A gate is granted in the order its requests arrive: a request
// waits for those ahead of it and for no one behind it. Requests that share
// it and arrive one after another (batches) are granted it together; one
// that holds it alone (a rule edit) waits only for the holders and the
// waiters ahead of it, and the batches that arrive after it wait only until
// it is done. So a rule edit during a heavy ingest of its account waits for
// the batches being judged and written, and delays the next ones by its own
// transaction, never starved by a stream of batches and never starving them
// (TestRuleEditIsServedBeforeTheBatchesAfterIt). A request waits only while
// its context lasts: when the context ends (the client left, or the
// request's deadline passed) it stops waiting at once, takes nothing, lets
// the waiters behind it go if it was what held them, and answers
// unavailable with the context's error in the chain, as the stores answer a
// call whose context ended. A gate that no request holds or waits for is
// dropped, so the gates take memory only for the accounts and vehicles
// being written.
//
// Decision. The gates are a lock of their own (below, the standard library
// only) rather than sync.RWMutex, whose waiters cannot give up and which is
// handed over only about in order of arrival, or
// golang.org/x/sync/semaphore (a weighted semaphore could be the
// shared/alone lock, and waits with a context in order, but it is one more
// dependency for what these few lines do, and the gates need their table of
// keys around it anyway). What a rule edit costs an ingest of its account
// was measured before and after (BenchmarkRuleEditDuringIngest on SQLite, a
// batch of 1,000 points about 6 ms, batches judged outside their
// transaction; docs/performance.md has the figures): per edit
// the ingest loses about what the edit costs a batch posted alone (its
// transaction, and the rules read and compiled again: about one batch), 0.6
// to 2.1 batches over six runs, as with the RWMutex gates (1.0 to 1.8),
// which also stopped new readers behind a waiting writer. So the order of
// arrival changes no figure there; what these gates change is that a
// request whose context ends stops waiting, that the bulk gate's order is
// exact, and that light batches no longer take the account's gate at all.
//
// It knows nothing of batches, rules or stores: package fleet decides
// what takes which gate when (Service.ingest, updateAlone), and what a
// request whose wait ended answers (New's waitEnded).
package gate

import (
	"context"
	"sync"
)

type Gates struct {
	mu       sync.Mutex
	accounts map[string]*gate
	vehicles map[string]*gate
	bulks    map[string]*gate
	// Queued, if set, is called as a request starts waiting for a gate,
	// with the gate's key (tests wait on it).
	Queued func(key string, alone bool)
	// waitEnded makes the answer of a request whose context ended while
	// it waited, from the context's error.
	waitEnded func(error) error
}

// gate is one gate's state, guarded by Gates.mu.
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

// New returns gates, none held. waitEnded makes the answer of a request
// whose context ended while it waited for a gate from the context's error
// (which it keeps in the chain); nil answers that error itself.
func New(waitEnded func(error) error) *Gates {
	if waitEnded == nil {
		waitEnded = func(err error) error { return err }
	}
	return &Gates{accounts: map[string]*gate{}, vehicles: map[string]*gate{}, bulks: map[string]*gate{}, waitEnded: waitEnded}
}

// Len returns how many gates are kept: those held or waited for.
func (g *Gates) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.accounts) + len(g.vehicles) + len(g.bulks)
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
func (g *Gates) acquire(ctx context.Context, m map[string]*gate, key string, alone bool) (*gate, error) {
	if err := ctx.Err(); err != nil {
		return nil, g.waitEnded(err)
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
	queued := g.Queued
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
	return nil, g.waitEnded(ctx.Err())
}

// release gives back the gate of key in m.
func (g *Gates) release(m map[string]*gate, key string, e *gate, alone bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e.give(alone)
	e.grant()
	g.drop(m, key, e)
}

// drop ends one request's interest in the gate, dropping the gate with the
// last one. g.mu is held.
func (g *Gates) drop(m map[string]*gate, key string, e *gate) {
	if e.refs--; e.refs == 0 {
		delete(m, key)
	}
}

// hold takes the gate of key in m, alone or shared; the returned function
// gives it back.
func (g *Gates) hold(ctx context.Context, m map[string]*gate, key string, alone bool) (func(), error) {
	e, err := g.acquire(ctx, m, key, alone)
	if err != nil {
		return nil, err
	}
	return func() { g.release(m, key, e, alone) }, nil
}

// IngestHold is what one location batch holds: its account's bulk gate
// (a bulk batch), its account's gate shared (once it is judged outside the
// write transaction) and its vehicles' gates (ids sorted). It is taken and
// given back in stages (see fleet's Service.ingest); what it holds when its
// context ends while it waits is given back, and a release gives back only
// what is held, so it may be called again.
type IngestHold struct {
	g          *Gates
	accountID  string
	vehicleIDs []string
	bulk       *gate
	account    *gate
	vehicles   []*gate
}

// Ingest returns what one location batch of the account will hold,
// nothing yet.
func (g *Gates) Ingest(accountID string) *IngestHold {
	return &IngestHold{g: g, accountID: accountID}
}

// TakeBulk takes the account's bulk gate alone: one bulk batch of the
// account at a time, in their order of arrival.
func (h *IngestHold) TakeBulk(ctx context.Context) error {
	e, err := h.g.acquire(ctx, h.g.bulks, h.accountID, true)
	h.bulk = e
	return err
}

// Take takes the gates of vehicleIDs (sorted; the same at every call),
// and first the account's gate shared when account is set; a hold that has
// the vehicles' gates and not the account's gives them back first, so
// that the account's gate is always taken before them.
func (h *IngestHold) Take(ctx context.Context, vehicleIDs []string, account bool) error {
	h.vehicleIDs = vehicleIDs
	if account && h.account == nil {
		h.releaseVehicles()
		e, err := h.g.acquire(ctx, h.g.accounts, h.accountID, false)
		if err != nil {
			return err
		}
		h.account = e
	}
	for len(h.vehicles) < len(h.vehicleIDs) {
		e, err := h.g.acquire(ctx, h.g.vehicles, h.vehicleIDs[len(h.vehicles)], true)
		if err != nil {
			h.Release()
			return err
		}
		h.vehicles = append(h.vehicles, e)
	}
	return nil
}

// ReleaseStored gives back the bulk gate and the account's: the batch is
// stored.
func (h *IngestHold) ReleaseStored() {
	if h.account != nil {
		h.g.release(h.g.accounts, h.accountID, h.account, false)
		h.account = nil
	}
	if h.bulk != nil {
		h.g.release(h.g.bulks, h.accountID, h.bulk, true)
		h.bulk = nil
	}
}

func (h *IngestHold) releaseVehicles() {
	for i := len(h.vehicles) - 1; i >= 0; i-- {
		h.g.release(h.g.vehicles, h.vehicleIDs[i], h.vehicles[i], true)
	}
	h.vehicles = h.vehicles[:0]
}

// Release gives back all it holds.
func (h *IngestHold) Release() {
	h.releaseVehicles()
	h.ReleaseStored()
}

// Account takes the account's gate alone; the returned function gives it
// back.
func (g *Gates) Account(ctx context.Context, accountID string) (func(), error) {
	return g.hold(ctx, g.accounts, accountID, true)
}

// Vehicle takes one vehicle's gate; the returned function gives it back.
func (g *Gates) Vehicle(ctx context.Context, vehicleID string) (func(), error) {
	return g.hold(ctx, g.vehicles, vehicleID, true)
}
