// Package storetest is the conformance suite every fleet.Store passes. A
// store's test calls Run with a function that opens a fresh, empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) fleet.Store { return memstore.New() })
//	}
//
// The suite is the contract of fleet.Store: isolation between accounts, error
// codes, ordering and cursors, atomic quota counting under concurrency, and
// all-or-nothing transactions.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

type namedTest struct {
	name string
	fn   func(t *testing.T, s fleet.Store)
}

// Run runs the whole suite; open must return a new, empty store each call.
// A new store can be written and checked one area at a time with the Run
// function of each area, RunTransactions first.
func Run(t *testing.T, open func(t *testing.T) fleet.Store) {
	RunTransactions(t, open)
	RunKeys(t, open)
	RunVehicles(t, open)
	RunLocations(t, open)
	RunEvents(t, open)
	RunMaintenance(t, open)
	RunAlerts(t, open)
	RunWebhooks(t, open)
	RunStreamTokens(t, open)
	RunTrips(t, open)
	RunUsers(t, open)
	RunDevices(t, open)
	RunNotify(t, open)
	RunDrivers(t, open)
	RunShareLinks(t, open)
	RunCommands(t, open)
	RunIngest(t, open)
}

// RunTransactions checks Store.Update and Store.View: all or nothing,
// isolated, read-only views, a failed method leaving the transaction usable,
// and cursors that neither skip nor repeat while data changes.
func RunTransactions(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnConflict", testRollbackOnConflict},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"ConflictLeavesTransactionUsable", testConflictLeavesTransactionUsable},
		{"CursorWalkWhileInserting", testCursorWalkWhileInserting},
	})
}

// RunKeys checks the keys area: accounts and their keys (fleet.KeyTx), and
// the per-request path (fleet.KeyStore): lookup by hash, quota windows
// exact under concurrency, usage counts, idempotency records, their purges.
func RunKeys(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"Accounts", testAccounts},
		{"AccountsList", testAccountsList},
		{"KeysScopedByAccount", testKeysScopedByAccount},
		{"KeyByID", testKeyByID},
		{"KeyByHash", testKeyByHash},
		{"KeyReplaces", testKeyReplaces},
		{"UpdateKeyChangesOnlyMutableFields", testUpdateKey},
		{"CountActiveKeys", testCountActiveKeys},
		{"KeysPagination", testKeysPagination},
		{"QuotaWindow", testQuotaWindow},
		{"QuotaConcurrent", testQuotaConcurrent},
		{"QuotaN", testQuotaN},
		{"QuotaNConcurrent", testQuotaNConcurrent},
		{"Usage", testUsage},
		{"Idempotency", testIdempotency},
		{"IdempotencyPurge", testIdempotencyPurge},
		{"PurgeQuotaAndUsage", testPurgeQuotaAndUsage},
	})
}

func run(t *testing.T, open func(t *testing.T) fleet.Store, tests []namedTest) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

// T0 is the fixed time the suite's data is created at.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// MustAccount stores a new account and returns it.
func MustAccount(tb testing.TB, s fleet.Store) fleet.Account {
	tb.Helper()
	a := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "Acme", Plan: fleet.PlanPro, CreatedAt: T0}
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(a) }); err != nil {
		tb.Fatalf("create account: %v", err)
	}
	return a
}

// NewKey returns a key of the account that is not stored yet.
func NewKey(accountID string) fleet.Key {
	secret := fleet.NewSecret()
	return fleet.Key{
		ID: fleet.NewID(fleet.PrefixKey), AccountID: accountID, Name: "k",
		Prefix: secret[:fleet.KeyPrefixLen], Hash: fleet.HashSecret(secret),
		Permissions: fleet.Permissions{fleet.PermVehiclesRead, fleet.PermKeysWrite},
		Environment: "test", CreatedAt: T0,
	}
}

// MustKey stores a new key of the account and returns it.
func MustKey(tb testing.TB, s fleet.Store, accountID string) fleet.Key {
	tb.Helper()
	k := NewKey(accountID)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(k) }); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return k
}

func code(err error) string { return fleet.ErrorCode(err) }

func testAccounts(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	a.RateLimitOverride = 5000
	var got fleet.Account
	err := s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Account(a.ID); return err })
	is.NoErr(err)
	is.Equal(got.ID, a.ID)
	is.Equal(got.CompanyName, "Acme")
	is.Equal(got.Plan, fleet.PlanPro)
	is.True(got.CreatedAt.Equal(T0))

	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(fleet.NewID(fleet.PrefixAccount)); return err })
	is.Equal(code(err), fleet.CodeNotFound) // unknown account

	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(got) })
	is.Equal(code(err), fleet.CodeConflict) // same id twice
}

func testAccountsList(t *testing.T, s fleet.Store) {
	is := is.New(t)
	var ids []string
	for range 5 {
		ids = append(ids, MustAccount(t, s).ID)
	}
	var walked []string
	after := ""
	for {
		var page []fleet.Account
		err := s.View(ctx, func(tx fleet.Tx) (err error) { page, err = tx.Accounts(fleet.Page{After: after, Limit: 2}); return err })
		is.NoErr(err)
		is.True(len(page) <= 2) // at most the limit
		for _, a := range page {
			walked = append(walked, a.ID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	is.Equal(walked, ids) // every account, in id order, each once
}

// testKeyByID: the operator's lookup finds a key whatever its account.
func testKeyByID(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	ka, kb := MustKey(t, s, a.ID), MustKey(t, s, b.ID)
	err := s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.KeyByID(kb.ID)
		is.NoErr(err)
		is.Equal(got.AccountID, b.ID)
		is.Equal(got.Hash, kb.Hash)
		got, err = tx.KeyByID(ka.ID)
		is.NoErr(err)
		is.Equal(got.AccountID, a.ID)
		_, err = tx.KeyByID(fleet.NewID(fleet.PrefixKey))
		is.Equal(code(err), fleet.CodeNotFound)
		return nil
	})
	is.NoErr(err)
}

func testKeysScopedByAccount(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	ka := MustKey(t, s, a.ID)
	kb := MustKey(t, s, b.ID)

	err := s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Key(a.ID, ka.ID)
		is.NoErr(err)
		is.Equal(got.Hash, ka.Hash)
		is.Equal(got.Permissions, ka.Permissions)
		is.Equal(got.Environment, "test")

		_, err = tx.Key(a.ID, kb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's key is not found

		list, err := tx.Keys(a.ID, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 1) // only the account's own keys
		is.Equal(list[0].ID, ka.ID)
		return nil
	})
	is.NoErr(err)

	// A caller never shares memory with the store.
	err = s.View(ctx, func(tx fleet.Tx) error {
		got, _ := tx.Key(a.ID, ka.ID)
		got.Permissions[0] = "mutated"
		again, _ := tx.Key(a.ID, ka.ID)
		is.Equal(again.Permissions[0], fleet.PermVehiclesRead)
		return nil
	})
	is.NoErr(err)

	other := NewKey(fleet.NewID(fleet.PrefixAccount))
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(other) })
	is.Equal(code(err), fleet.CodeNotFound) // a key needs an existing account
}

// testKeyReplaces: the key a rotation replaced is kept with the new key,
// read back by every read of a key, and no update changes it.
func testKeyReplaces(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	old := MustKey(t, s, a.ID)
	k := NewKey(a.ID)
	k.Replaces = old.ID
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(k) }))
	changed := k
	changed.Name, changed.Replaces = "renamed", ""
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateKey(changed) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Key(a.ID, k.ID)
		is.NoErr(err)
		is.Equal(got.Replaces, old.ID)
		is.Equal(got.Name, "renamed")
		got, err = tx.KeyByID(k.ID)
		is.NoErr(err)
		is.Equal(got.Replaces, old.ID)
		list, err := tx.Keys(a.ID, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(list), 2)
		is.Equal(list[0].Replaces, "") // a key made otherwise replaces none
		is.Equal(list[1].Replaces, old.ID)
		return nil
	}))
	got, _, err := s.KeyByHash(ctx, k.Hash)
	is.NoErr(err)
	is.Equal(got.Replaces, old.ID)
}

func testKeyByHash(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	k := MustKey(t, s, a.ID)
	got, acc, err := s.KeyByHash(ctx, k.Hash)
	is.NoErr(err)
	is.Equal(got.ID, k.ID)
	is.Equal(acc.ID, a.ID)
	is.Equal(acc.Plan, fleet.PlanPro)

	_, _, err = s.KeyByHash(ctx, fleet.HashSecret(fleet.NewSecret()))
	is.Equal(code(err), fleet.CodeNotFound) // unknown hash

	dup := NewKey(a.ID)
	dup.Hash = k.Hash
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(dup) })
	is.Equal(code(err), fleet.CodeConflict) // hash is unique
}

func testUpdateKey(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	k := MustKey(t, s, a.ID)
	revoked := T0.Add(time.Minute)
	changed := k
	changed.Name = "renamed"
	changed.RevokedAt = &revoked
	changed.Permissions = fleet.Permissions{fleet.PermAll} // not mutable
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateKey(changed) }))

	got, _, err := s.KeyByHash(ctx, k.Hash)
	is.NoErr(err)
	is.Equal(got.Name, "renamed")
	is.True(got.RevokedAt != nil && got.RevokedAt.Equal(revoked))
	is.Equal(got.Permissions, k.Permissions) // permissions never change

	missing := NewKey(a.ID)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateKey(missing) })
	is.Equal(code(err), fleet.CodeNotFound)
}

// testCountActiveKeys: only keys neither revoked nor expired at the given
// time count (one expiring exactly then is expired, one expiring later is
// active), per account; the transaction sees its own writes, and a rolled
// back one counts nothing.
func testCountActiveKeys(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	now := T0.Add(time.Hour)
	count := func(acc string, at time.Time) int {
		var n int
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { n, err = tx.CountActiveKeys(acc, at); return err }))
		return n
	}
	is.Equal(count(a.ID, now), 0)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	plain, revoked, expired, expiringNow, later := NewKey(a.ID), NewKey(a.ID), NewKey(a.ID), NewKey(a.ID), NewKey(a.ID)
	revoked.RevokedAt = at(-time.Minute)
	expired.ExpiresAt = at(-time.Second)
	expiringNow.ExpiresAt = at(0)
	later.ExpiresAt = at(time.Microsecond)
	mustUpdate(t, s, func(tx fleet.Tx) error {
		for _, k := range []fleet.Key{plain, revoked, expired, expiringNow, later, NewKey(b.ID)} {
			if err := tx.CreateKey(k); err != nil {
				return err
			}
		}
		n, err := tx.CountActiveKeys(a.ID, now) // the transaction sees its own writes
		is.Equal(n, 2)
		return err
	})
	is.Equal(count(a.ID, now), 2)                     // plain and later
	is.Equal(count(a.ID, now.Add(-2*time.Second)), 4) // before expired and expiringNow ran out
	is.Equal(count(a.ID, now.Add(time.Hour)), 1)      // later has expired too
	is.Equal(count(b.ID, now), 1)                     // per account

	errBoom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateKey(NewKey(a.ID)); err != nil {
			return err
		}
		return errBoom
	})
	is.True(errors.Is(err, errBoom))
	plain.RevokedAt = at(0)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateKey(plain) })
	is.Equal(count(a.ID, now), 1) // rolled back, then one revoked
}

func testKeysPagination(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	var ids []string
	for range 7 {
		ids = append(ids, MustKey(t, s, a.ID).ID)
	}
	var walked []string
	after := ""
	for {
		var page []fleet.Key
		err := s.View(ctx, func(tx fleet.Tx) (err error) {
			page, err = tx.Keys(a.ID, fleet.Page{After: after, Limit: 3})
			return err
		})
		is.NoErr(err)
		for _, k := range page {
			walked = append(walked, k.ID)
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].ID
	}
	is.Equal(walked, ids) // every key once, in id order
}

func testCursorWalkWhileInserting(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	for range 5 {
		MustKey(t, s, a.ID)
	}
	seen := map[string]int{}
	after := ""
	for round := 0; ; round++ {
		var page []fleet.Key
		err := s.View(ctx, func(tx fleet.Tx) (err error) {
			page, err = tx.Keys(a.ID, fleet.Page{After: after, Limit: 2})
			return err
		})
		is.NoErr(err)
		for _, k := range page {
			seen[k.ID]++
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
		if round < 3 {
			MustKey(t, s, a.ID) // data changes during the walk
		}
	}
	var all []fleet.Key
	is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { all, err = tx.Keys(a.ID, fleet.Page{Limit: 100}); return err }))
	is.Equal(len(all), 8)
	for _, k := range all {
		is.Equal(seen[k.ID], 1) // no key skipped or repeated
	}
}

func testRollbackOnError(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "X", Plan: fleet.PlanFree, CreatedAt: T0}
	k := NewKey(a.ID)
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateAccount(a); err != nil {
			return err
		}
		if err := tx.CreateKey(k); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom)) // Update returns fn's error
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound) // account rolled back
	_, _, err = s.KeyByHash(ctx, k.Hash)
	is.Equal(code(err), fleet.CodeNotFound) // key rolled back
}

func testRollbackOnConflict(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	existing := MustKey(t, s, a.ID)
	fresh := NewKey(a.ID)
	revoked := T0.Add(time.Hour)
	err := s.Update(ctx, func(tx fleet.Tx) error {
		e := existing
		e.RevokedAt = &revoked
		if err := tx.UpdateKey(e); err != nil {
			return err
		}
		if err := tx.CreateKey(fresh); err != nil {
			return err
		}
		return tx.CreateKey(existing) // conflict: fails the whole transaction
	})
	is.Equal(code(err), fleet.CodeConflict)
	got, _, err := s.KeyByHash(ctx, existing.Hash)
	is.NoErr(err)
	is.Equal(got.RevokedAt, nil) // the update before the failure is undone
	_, _, err = s.KeyByHash(ctx, fresh.Hash)
	is.Equal(code(err), fleet.CodeNotFound) // so is the insert
}

func testViewIsReadOnly(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "X", Plan: fleet.PlanFree, CreatedAt: T0}
	err := s.View(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(a) })
	is.True(err != nil) // writes fail in View
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testQuotaWindow(t *testing.T, s fleet.Store) {
	is := is.New(t)
	subject := "key_" + t.Name()
	now := T0.Add(17 * time.Second)
	for i := 1; i <= 3; i++ {
		q, err := s.TakeQuota(ctx, subject, 3, now)
		is.NoErr(err)
		is.True(q.Allowed)
		is.Equal(q.Used, i)
		is.Equal(q.Remaining, 3-i)
		is.True(q.Reset.Equal(now.Add(time.Hour))) // window starts at the first request
	}
	q, err := s.TakeQuota(ctx, subject, 3, now.Add(59*time.Minute))
	is.NoErr(err)
	is.True(!q.Allowed) // over the limit
	is.Equal(q.Remaining, 0)
	is.Equal(q.Used, 3) // a refused request is not counted

	later := now.Add(time.Hour)
	q, err = s.TakeQuota(ctx, subject, 3, later)
	is.NoErr(err)
	is.True(q.Allowed) // new window
	is.Equal(q.Used, 1)
	is.True(q.Reset.Equal(later.Add(time.Hour)))

	q, err = s.TakeQuota(ctx, "other", 3, later)
	is.NoErr(err)
	is.Equal(q.Used, 1) // subjects are counted apart
}

func testQuotaConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	const limit, callers = 20, 60
	subject := "key_concurrent"
	results := make(chan bool, callers)
	start := make(chan struct{})
	for range callers {
		go func() {
			<-start
			q, err := s.TakeQuota(ctx, subject, limit, T0)
			results <- err == nil && q.Allowed
		}()
	}
	close(start)
	allowed := 0
	for range callers {
		if <-results {
			allowed++
		}
	}
	is.Equal(allowed, limit) // exactly the allowance succeeds
}

// testQuotaN: TakeQuotaN takes n units at once or none; RefundQuota gives
// units back to the window they were taken from, and to no other.
func testQuotaN(t *testing.T, s fleet.Store) {
	is := is.New(t)
	subject := "points:" + t.Name()
	now := T0.Add(17*time.Second + 250*time.Microsecond)
	q, err := s.TakeQuotaN(ctx, subject, 7, 10, now)
	is.NoErr(err)
	is.True(q.Allowed)
	is.Equal(q.Used, 7)
	is.Equal(q.Remaining, 3)
	is.Equal(q.Limit, 10)
	is.True(q.Reset.Equal(now.Add(time.Hour))) // the window starts at the first take
	reset := q.Reset

	q, err = s.TakeQuotaN(ctx, subject, 4, 10, now.Add(time.Minute))
	is.NoErr(err)
	is.True(!q.Allowed) // 4 do not fit in 3: none is taken
	is.Equal(q.Used, 7)
	is.Equal(q.Remaining, 3)
	is.True(q.Reset.Equal(reset))

	q, err = s.TakeQuotaN(ctx, subject, 3, 10, now.Add(2*time.Minute))
	is.NoErr(err)
	is.True(q.Allowed) // exactly what is left
	is.Equal(q.Used, 10)
	is.Equal(q.Remaining, 0)

	is.NoErr(s.RefundQuota(ctx, subject, 5, reset))
	q, err = s.TakeQuotaN(ctx, subject, 6, 10, now.Add(3*time.Minute))
	is.NoErr(err)
	is.True(!q.Allowed) // 5 came back, not 6
	is.Equal(q.Used, 5)
	q, err = s.TakeQuotaN(ctx, subject, 5, 10, now.Add(3*time.Minute))
	is.NoErr(err)
	is.True(q.Allowed)
	is.Equal(q.Used, 10)

	is.NoErr(s.RefundQuota(ctx, subject, 4, reset.Add(time.Second))) // not this window's end
	q, err = s.TakeQuotaN(ctx, subject, 1, 10, now.Add(4*time.Minute))
	is.NoErr(err)
	is.True(!q.Allowed) // nothing came back

	is.NoErr(s.RefundQuota(ctx, subject, 25, reset))
	q, err = s.TakeQuotaN(ctx, subject, 0, 10, now.Add(4*time.Minute))
	is.NoErr(err)
	is.Equal(q.Used, 0) // never below zero

	later := now.Add(time.Hour)
	q, err = s.TakeQuotaN(ctx, subject, 9, 10, later)
	is.NoErr(err)
	is.True(q.Allowed) // a new window
	is.Equal(q.Used, 9)
	is.True(q.Reset.Equal(later.Add(time.Hour)))
	is.NoErr(s.RefundQuota(ctx, subject, 9, reset)) // the ended window's: nothing
	q, err = s.TakeQuotaN(ctx, subject, 2, 10, later)
	is.NoErr(err)
	is.True(!q.Allowed)
	is.Equal(q.Used, 9)

	q, err = s.TakeQuotaN(ctx, subject, 11, 10, later.Add(time.Hour))
	is.NoErr(err)
	is.True(!q.Allowed) // more than the whole allowance never fits
	is.Equal(q.Used, 0)

	is.NoErr(s.RefundQuota(ctx, "points:never-taken", 3, reset)) // a subject never seen
	q, err = s.TakeQuotaN(ctx, "points:other", 10, 10, now)
	is.NoErr(err)
	is.True(q.Allowed) // subjects are counted apart
}

// testQuotaNConcurrent: of concurrent takes of several sizes, some given
// back at once, each is allowed exactly when it fits in what the others
// left: the units taken and not given back add up to the window's count,
// never past the limit, and every refused take was larger than what was
// left when it was refused.
func testQuotaNConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	const limit, callers = 100, 60
	subject := "points:concurrent"
	type outcome struct {
		n, kept int
		q       fleet.Quota
		err     error
	}
	results := make(chan outcome, callers)
	start := make(chan struct{})
	for i := range callers {
		go func() {
			<-start
			n := 3 + i%3*2 // 3, 5, 7
			q, err := s.TakeQuotaN(ctx, subject, n, limit, T0)
			o := outcome{n: n, q: q, err: err}
			if err == nil && q.Allowed {
				o.kept = n
				if i%4 == 0 { // a batch that stored only some of its points
					o.err = s.RefundQuota(ctx, subject, 2, q.Reset)
					o.kept -= 2
				}
			}
			results <- o
		}()
	}
	close(start)
	kept, smallestRefused := 0, limit+1
	var outs []outcome
	for range callers {
		o := <-results
		is.NoErr(o.err)
		kept += o.kept
		if !o.q.Allowed {
			smallestRefused = min(smallestRefused, o.n)
		}
		outs = append(outs, o)
	}
	q, err := s.TakeQuotaN(ctx, subject, 0, limit, T0)
	is.NoErr(err)
	is.Equal(q.Used, kept) // no take or refund lost
	is.True(kept <= limit)
	is.True(smallestRefused <= limit) // 60 takes of 3 to 7 cannot all fit in 100
	for _, o := range outs {
		if !o.q.Allowed {
			is.True(o.n > o.q.Remaining) // refused only when it did not fit
		}
	}
}

func testUsage(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	k := MustKey(t, s, a.ID)
	h0, h1 := T0, T0.Add(time.Hour)
	is.NoErr(s.RecordUsage(ctx, []fleet.Usage{
		{KeyID: k.ID, Hour: h0, Requests: 5, Rejected: 1, LastUsedAt: h0.Add(10 * time.Minute)},
		{KeyID: k.ID, Hour: h1, Requests: 2, LastUsedAt: h1.Add(time.Minute)},
		{KeyID: "key_gone", Hour: h1, Requests: 9, LastUsedAt: h1},
	}))
	is.NoErr(s.RecordUsage(ctx, []fleet.Usage{
		{KeyID: k.ID, Hour: h0, Requests: 3, Rejected: 2, LastUsedAt: h0.Add(20 * time.Minute)}, // older than last_used
	}))
	got, err := s.Usage(ctx, k.ID, h0)
	is.NoErr(err)
	is.Equal(len(got), 2)
	is.True(got[0].Hour.Equal(h1)) // newest first
	is.Equal(got[0].Requests, 2)
	is.Equal(got[1].Requests, 8) // counts add up
	is.Equal(got[1].Rejected, 3)

	got, err = s.Usage(ctx, k.ID, h1)
	is.NoErr(err)
	is.Equal(len(got), 1) // from filters

	key, _, err := s.KeyByHash(ctx, k.Hash)
	is.NoErr(err)
	is.True(key.LastUsedAt != nil && key.LastUsedAt.Equal(h1.Add(time.Minute))) // never moves back
}

func testIdempotency(t *testing.T, s fleet.Store) {
	is := is.New(t)
	rec := fleet.IdempotencyRecord{KeyID: "key_1", Key: "abc", RequestHash: [32]byte{1}, CreatedAt: T0}
	_, found, err := s.BeginIdempotency(ctx, rec)
	is.NoErr(err)
	is.True(!found) // first use stores it

	prev, found, err := s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_1", Key: "abc", CreatedAt: T0.Add(time.Second)})
	is.NoErr(err)
	is.True(found)      // in flight
	is.True(!prev.Done) // not finished yet
	is.Equal(prev.RequestHash, [32]byte{1})

	_, found, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_2", Key: "abc", CreatedAt: T0})
	is.NoErr(err)
	is.True(!found) // scoped by API key

	is.NoErr(s.FinishIdempotency(ctx, "key_1", "abc", 201, []byte(`{"ok":true}`)))
	prev, found, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_1", Key: "abc", CreatedAt: T0.Add(time.Hour)})
	is.NoErr(err)
	is.True(found)
	is.True(prev.Done)
	is.Equal(prev.Status, 201)
	is.Equal(string(prev.Body), `{"ok":true}`)

	_, found, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_1", Key: "abc", CreatedAt: T0.Add(25 * time.Hour)})
	is.NoErr(err)
	is.True(!found) // expired after 24 h, replaced

	is.Equal(code(s.FinishIdempotency(ctx, "key_1", "nope", 200, nil)), fleet.CodeNotFound)

	// An unfinished record is abandoned after a while, and can be deleted.
	_, _, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_3", Key: "x", CreatedAt: T0})
	is.NoErr(err)
	_, found, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_3", Key: "x", CreatedAt: T0.Add(fleet.IdempotencyAbandoned)})
	is.NoErr(err)
	is.True(!found)
	is.NoErr(s.DeleteIdempotency(ctx, "key_3", "x"))
	_, found, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_3", Key: "x", CreatedAt: T0.Add(fleet.IdempotencyAbandoned)})
	is.NoErr(err)
	is.True(!found)
}

func testIdempotencyPurge(t *testing.T, s fleet.Store) {
	is := is.New(t)
	for i, at := range []time.Time{T0, T0.Add(time.Hour), T0.Add(2 * time.Hour)} {
		_, _, err := s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_1", Key: string(rune('a' + i)), CreatedAt: at})
		is.NoErr(err)
	}
	n, err := s.PurgeIdempotency(ctx, T0.Add(90*time.Minute))
	is.NoErr(err)
	is.Equal(n, 2)
	_, found, err := s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: "key_1", Key: "c", CreatedAt: T0.Add(2 * time.Hour)})
	is.NoErr(err)
	is.True(found) // the newer one stays
}

func testPurgeQuotaAndUsage(t *testing.T, s fleet.Store) {
	is := is.New(t)
	_, err := s.TakeQuota(ctx, "addr:old", 5, T0)
	is.NoErr(err)
	_, err = s.TakeQuota(ctx, "addr:new", 5, T0.Add(90*time.Minute))
	is.NoErr(err)
	_, err = s.PurgeQuota(ctx, T0.Add(2*time.Hour))
	is.NoErr(err)
	q, err := s.TakeQuota(ctx, "addr:new", 5, T0.Add(100*time.Minute))
	is.NoErr(err)
	is.Equal(q.Used, 2) // a window still running is kept
	q, err = s.TakeQuota(ctx, "addr:old", 5, T0.Add(30*time.Minute))
	is.NoErr(err)
	is.Equal(q.Used, 1) // an ended one was forgotten: a new window

	a := MustAccount(t, s)
	k := MustKey(t, s, a.ID)
	is.NoErr(s.RecordUsage(ctx, []fleet.Usage{
		{KeyID: k.ID, Hour: T0, Requests: 1, LastUsedAt: T0},
		{KeyID: k.ID, Hour: T0.Add(time.Hour), Requests: 2, LastUsedAt: T0.Add(time.Hour)},
	}))
	n, err := s.PurgeUsage(ctx, T0.Add(time.Hour))
	is.NoErr(err)
	is.Equal(n, 1)
	got, err := s.Usage(ctx, k.ID, T0.Add(-time.Hour))
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.Equal(got[0].Requests, 2)
}

func testConflictLeavesTransactionUsable(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	k := MustKey(t, s, a.ID)
	fresh := NewKey(a.ID)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		err := tx.CreateKey(k) // a conflict...
		is.Equal(code(err), fleet.CodeConflict)
		return tx.CreateKey(fresh) // ...and the transaction goes on
	}))
	_, _, err := s.KeyByHash(ctx, fresh.Hash)
	is.NoErr(err)
}
