// Package memstore is a fleet.Store held in memory: for tests, demos and
// programs that embed the fleet core without a database. Everything is lost
// when the process ends.
//
// Transactions hold one lock for their whole length (writers exclusive,
// readers shared) and undo their writes when they fail, so they are all or
// nothing and isolated. Values are copied on the way in and out.
package memstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Store is the in-memory fleet.Store. Create it with New.
type Store struct {
	mu       sync.RWMutex
	closed   bool
	accounts *table[fleet.Account]
	keys     *table[fleet.Key]
	keyHash  map[[32]byte]string

	vehicles    *table[fleet.Vehicle]
	externalIDs map[string]string // account + "\x00" + external id -> vehicle id
	points      map[string]*series
	events      *table[fleet.Event]

	workOrders       *table[fleet.WorkOrder]
	schedules        *table[fleet.Schedule]
	vehicleSchedules map[string][]string // vehicle id -> its schedule ids, sorted

	webhooks   *table[fleet.Webhook]
	deliveries *table[fleet.Delivery]
	pending    map[string]struct{} // ids of pending deliveries
	al         alertTables
	tr         tripTables
	us         userTables
	dv         *deviceTables
	nt         notifyTables
	dr         *driverTables
	sh         *shareLinkTables
	cm         *commandTables

	quotaMu sync.Mutex
	quota   map[string]*fleet.QuotaState

	usageMu sync.Mutex
	usage   map[usageSlot]fleet.Usage

	idemMu sync.Mutex
	idem   map[idemSlot]fleet.IdempotencyRecord

	tokMu  sync.Mutex
	tokens streamTokens
}

type usageSlot struct {
	keyID string
	hour  int64
}

type idemSlot struct{ keyID, key string }

var _ fleet.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		accounts: newTable("account", func(a fleet.Account) string { return a.ID },
			func(a fleet.Account) string { return "" }, nil),
		keys: newTable("API key", func(k fleet.Key) string { return k.ID },
			func(k fleet.Key) string { return k.AccountID }, cloneKey),
		keyHash: map[[32]byte]string{},
		vehicles: newTable("vehicle", func(v fleet.Vehicle) string { return v.ID },
			func(v fleet.Vehicle) string { return v.AccountID }, fleet.Vehicle.Clone),
		externalIDs: map[string]string{},
		points:      map[string]*series{},
		events: newTable("event", func(e fleet.Event) string { return e.ID },
			func(e fleet.Event) string { return e.AccountID }, cloneEvent),
		workOrders: newTable("work order", func(w fleet.WorkOrder) string { return w.ID },
			func(w fleet.WorkOrder) string { return w.AccountID }, cloneWorkOrder),
		schedules: newTable("schedule", func(s fleet.Schedule) string { return s.ID },
			func(s fleet.Schedule) string { return s.AccountID }, cloneSchedule),
		vehicleSchedules: map[string][]string{},
		quota:            map[string]*fleet.QuotaState{},
		usage:            map[usageSlot]fleet.Usage{},
		idem:             map[idemSlot]fleet.IdempotencyRecord{},
		pending:          map[string]struct{}{},
		webhooks: newTable("webhook endpoint", func(w fleet.Webhook) string { return w.ID },
			func(w fleet.Webhook) string { return w.AccountID }, cloneWebhook),
		deliveries: newTable("delivery", func(d fleet.Delivery) string { return d.ID },
			func(d fleet.Delivery) string { return d.AccountID }, cloneDelivery),
		al: newAlertTables(),
		tr: newTripTables(),
		us: newUserTables(),
		dv: newDeviceTables(),
		nt: newNotifyTables(),
		dr: newDriverTables(),
		sh: newShareLinkTables(),
		cm: newCommandTables(),
	}
}

func cloneKey(k fleet.Key) fleet.Key {
	k.Permissions = slices.Clone(k.Permissions)
	k.LastUsedAt = clonePtr(k.LastUsedAt)
	k.ExpiresAt = clonePtr(k.ExpiresAt)
	k.RevokedAt = clonePtr(k.RevokedAt)
	return k
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// errClosed is what a closed store answers: unavailable, as a server
// that is stopping answers.
func errClosed() error {
	return &fleet.Error{Code: fleet.CodeUnavailable, Message: "The store is closed.", Err: errors.New("memstore: store is closed")}
}

// errContext is what a call whose context ended answers: unavailable, as
// sqlstore answers it, with the context's error in the chain.
func errContext(err error) error {
	return &fleet.Error{Code: fleet.CodeUnavailable, Message: "The request ended before the store was reached; retry later.", Err: err}
}

// Update implements fleet.Store.
func (s *Store) Update(ctx context.Context, fn func(fleet.Tx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return errContext(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed()
	}
	t := &tx{s: s, txn: &txn{}}
	defer func() {
		if p := recover(); p != nil {
			t.rollback()
			panic(p)
		}
		if err != nil {
			t.rollback()
		}
	}()
	return fn(t)
}

// View implements fleet.Store.
func (s *Store) View(ctx context.Context, fn func(fleet.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return errContext(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed()
	}
	return fn(&tx{s: s, txn: &txn{readOnly: true}})
}

// KeyByHash implements fleet.Store.
func (s *Store) KeyByHash(ctx context.Context, hash [32]byte) (fleet.Key, fleet.Account, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fleet.Key{}, fleet.Account{}, errClosed()
	}
	id, ok := s.keyHash[hash]
	if !ok {
		return fleet.Key{}, fleet.Account{}, fleet.Errorf(fleet.CodeNotFound, "No such key.")
	}
	k, err := s.keys.get("", id)
	if err != nil {
		return fleet.Key{}, fleet.Account{}, err
	}
	a, err := s.accounts.get("", k.AccountID)
	return k, a, err
}

// TakeQuota implements fleet.Store.
func (s *Store) TakeQuota(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	s.quotaMu.Lock()
	st := s.quota[subject]
	if st == nil {
		st = &fleet.QuotaState{}
		s.quota[subject] = st
	}
	var q fleet.Quota
	*st, q = fleet.TakeQuota(*st, limit, now)
	s.quotaMu.Unlock()
	return q, nil
}

// TakeQuotaN implements fleet.Store.
func (s *Store) TakeQuotaN(ctx context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	st := s.quota[subject]
	if st == nil {
		st = &fleet.QuotaState{}
		s.quota[subject] = st
	}
	var q fleet.Quota
	*st, q = fleet.TakeQuotaN(*st, n, limit, now)
	return q, nil
}

// RefundQuota implements fleet.Store.
func (s *Store) RefundQuota(ctx context.Context, subject string, n int, reset time.Time) error {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	if st := s.quota[subject]; st != nil {
		*st = fleet.RefundQuota(*st, n, reset)
	}
	return nil
}

// RecordUsage implements fleet.Store.
func (s *Store) RecordUsage(ctx context.Context, usage []fleet.Usage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	for _, u := range usage {
		k, ok := s.keys.byID[u.KeyID]
		if !ok {
			continue
		}
		if k.LastUsedAt == nil || u.LastUsedAt.After(*k.LastUsedAt) {
			t := u.LastUsedAt
			k.LastUsedAt = &t
			s.keys.byID[u.KeyID] = k
		}
		slot := usageSlot{u.KeyID, u.Hour.Unix()}
		c := s.usage[slot]
		c.KeyID, c.Hour = u.KeyID, u.Hour
		c.Requests += u.Requests
		c.Rejected += u.Rejected
		s.usage[slot] = c
	}
	return nil
}

// Usage implements fleet.Store.
func (s *Store) Usage(ctx context.Context, keyID string, from time.Time) ([]fleet.Usage, error) {
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	var out []fleet.Usage
	for slot, u := range s.usage {
		if slot.keyID == keyID && !u.Hour.Before(from) {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b fleet.Usage) int { return b.Hour.Compare(a.Hour) })
	return out, nil
}

// BeginIdempotency implements fleet.Store.
func (s *Store) BeginIdempotency(ctx context.Context, rec fleet.IdempotencyRecord) (fleet.IdempotencyRecord, bool, error) {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	slot := idemSlot{rec.KeyID, rec.Key}
	if prev, ok := s.idem[slot]; ok && prev.Blocks(rec.CreatedAt) {
		prev.Body = slices.Clone(prev.Body)
		return prev, true, nil
	}
	rec.Body = slices.Clone(rec.Body)
	s.idem[slot] = rec
	return fleet.IdempotencyRecord{}, false, nil
}

// FinishIdempotency implements fleet.Store.
func (s *Store) FinishIdempotency(ctx context.Context, keyID, idemKey string, status int, body []byte) error {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	slot := idemSlot{keyID, idemKey}
	rec, ok := s.idem[slot]
	if !ok {
		return fleet.Errorf(fleet.CodeNotFound, "No such idempotency record.")
	}
	rec.Done, rec.Status, rec.Body = true, status, slices.Clone(body)
	s.idem[slot] = rec
	return nil
}

// DeleteIdempotency implements fleet.Store.
func (s *Store) DeleteIdempotency(ctx context.Context, keyID, idemKey string) error {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	delete(s.idem, idemSlot{keyID, idemKey})
	return nil
}

// PurgeIdempotency implements fleet.Store.
func (s *Store) PurgeIdempotency(ctx context.Context, before time.Time) (int, error) {
	s.idemMu.Lock()
	defer s.idemMu.Unlock()
	return deleteWhere(s.idem, func(rec fleet.IdempotencyRecord) bool { return rec.CreatedAt.Before(before) }), nil
}

// deleteWhere deletes the entries of m whose value old says is old, and
// returns how many it deleted: the purges of the store's maps.
func deleteWhere[K comparable, V any](m map[K]V, old func(V) bool) int {
	n := 0
	for k, v := range m {
		if old(v) {
			delete(m, k)
			n++
		}
	}
	return n
}

// PurgeQuota implements fleet.Store.
func (s *Store) PurgeQuota(ctx context.Context, before time.Time) (int, error) {
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	return deleteWhere(s.quota, func(st *fleet.QuotaState) bool { return st.WindowStart.Add(fleet.QuotaWindow).Before(before) }), nil
}

// PurgeUsage implements fleet.Store.
func (s *Store) PurgeUsage(ctx context.Context, before time.Time) (int, error) {
	s.usageMu.Lock()
	defer s.usageMu.Unlock()
	return deleteWhere(s.usage, func(u fleet.Usage) bool { return u.Hour.Before(before) }), nil
}

// Ping implements fleet.Store.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed()
	}
	return nil
}

// Close implements fleet.Store. Calls after Close fail.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// tx is a transaction on the store; the store's lock is held while it lives.
type tx struct {
	s *Store
	*txn
}

func (t *tx) CreateAccount(a fleet.Account) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.accounts.insert(t.txn, a)
}

func (t *tx) Account(id string) (fleet.Account, error) { return t.s.accounts.get("", id) }

func (t *tx) Accounts(p fleet.Page) ([]fleet.Account, error) {
	return t.s.accounts.list("", p, nil), nil
}

func (t *tx) CreateKey(k fleet.Key) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, ok := t.s.keyHash[k.Hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "A key with this secret exists.")
	}
	if _, err := t.s.accounts.get("", k.AccountID); err != nil {
		return err
	}
	if err := t.s.keys.insert(t.txn, k); err != nil {
		return err
	}
	t.s.keyHash[k.Hash] = k.ID
	t.undo(func() { delete(t.s.keyHash, k.Hash) })
	return nil
}

func (t *tx) Key(accountID, id string) (fleet.Key, error) { return t.s.keys.get(accountID, id) }

func (t *tx) KeyByID(id string) (fleet.Key, error) { return t.s.keys.get("", id) }

func (t *tx) Keys(accountID string, p fleet.Page) ([]fleet.Key, error) {
	return t.s.keys.list(accountID, p, nil), nil
}

func (t *tx) CountActiveKeys(accountID string, now time.Time) (int, error) {
	n := 0
	for _, id := range t.s.keys.order[accountID] {
		if t.s.keys.byID[id].Status(now) == fleet.KeyActive {
			n++
		}
	}
	return n, nil
}

func (t *tx) UpdateKey(k fleet.Key) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.keys.get(k.AccountID, k.ID)
	if err != nil {
		return err
	}
	// Only the mutable fields change.
	old.Name, old.ExpiresAt, old.RevokedAt = k.Name, k.ExpiresAt, k.RevokedAt
	return t.s.keys.put(t.txn, old)
}
