package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunWebhooks checks the webhooks area (fleet.WebhookTx and
// fleet.WebhookStore): endpoints and deliveries scoped by account, the
// delivery queue's claims (due order, exclusive under concurrency, fair
// within caps), outcomes recorded only under a lease, and the purge.
func RunWebhooks(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"WebhooksRoundTripAndScope", testWebhooksRoundTrip},
		{"WebhookDeleteTakesDeliveries", testWebhookDelete},
		{"DeliveriesRoundTripAndFilter", testDeliveries},
		{"DeliveriesDueOrderAndClaim", testDeliveriesDue},
		{"DeliveriesDueConcurrentClaims", testDeliveriesDueConcurrent},
		{"DeliveriesClaimFairWithinCaps", testDeliveriesClaimFair},
		{"DeliveriesClaimFairBehindABacklog", testDeliveriesClaimBacklog},
		{"RecordDeliveryOnlyUnderLease", testRecordDelivery},
		{"RecordDeliveryKeepsConcurrentEndpointChanges", testRecordDeliveryEndpointRace},
		{"PurgeDeliveries", testPurgeDeliveries},
		{"WebhooksByID", testWebhooksByID},
	})
}

// NewWebhook returns an endpoint of the account, every field set, that is
// not stored yet.
func NewWebhook(accountID string) fleet.Webhook {
	until, failing := T0.Add(24*time.Hour+123*time.Microsecond), T0.Add(time.Minute)
	return fleet.Webhook{
		ID: fleet.NewID(fleet.PrefixWebhook), AccountID: accountID, URL: "https://hooks.example.com/fleet?x=1",
		Events: []string{fleet.EventVehicleCreated, fleet.EventVehicleUpdated}, Description: "Ops", Enabled: true,
		CreatedAt: T0, Secret: fleet.NewWebhookSecret(), PreviousSecret: fleet.NewWebhookSecret(),
		PreviousSecretUntil: &until, FailingSince: &failing,
	}
}

// MustWebhook stores an endpoint and returns it.
func MustWebhook(tb testing.TB, s fleet.Store, accountID string, enabled bool) fleet.Webhook {
	tb.Helper()
	w := NewWebhook(accountID)
	w.Enabled = enabled
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWebhook(w) }); err != nil {
		tb.Fatalf("create webhook: %v", err)
	}
	return w
}

// NewDelivery returns a pending delivery of the endpoint due at due.
func NewDelivery(w fleet.Webhook, eventID string, due time.Time) fleet.Delivery {
	return fleet.Delivery{ID: fleet.NewID(fleet.PrefixDelivery), AccountID: w.AccountID, WebhookID: w.ID, EventID: eventID,
		Attempt: 1, Status: fleet.DeliveryPending, NextAttemptAt: &due, CreatedAt: T0}
}

// claimDue claims up to limit due deliveries, with no cap per endpoint or
// account.
func claimDue(s fleet.Store, now, until time.Time, limit int) ([]fleet.Delivery, error) {
	ds, _, err := s.ClaimDeliveries(ctx, fleet.DeliveryClaim{Now: now, Until: until, Limit: limit})
	return ds, err
}

func mustDelivery(tb testing.TB, s fleet.Store, d fleet.Delivery) fleet.Delivery {
	tb.Helper()
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDelivery(d) }); err != nil {
		tb.Fatalf("create delivery: %v", err)
	}
	return d
}

func testWebhooksRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	w := NewWebhook(a.ID)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWebhook(w) }))
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWebhook(w) })), fleet.CodeConflict) // same id
	orphan := NewWebhook(fleet.NewID(fleet.PrefixAccount))
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWebhook(orphan) })), fleet.CodeNotFound) // no account
	off := MustWebhook(t, s, a.ID, false)
	MustWebhook(t, s, b.ID, true)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Webhook(a.ID, w.ID)
		is.NoErr(err)
		is.Equal(got, w) // every field round-trips
		_, err = tx.Webhook(b.ID, w.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's
		n, err := tx.CountWebhooks(a.ID)
		is.NoErr(err)
		is.Equal(n, 2)
		all, err := tx.Webhooks(a.ID, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(all), 2)
		is.Equal(all[0].ID, w.ID)
		page, err := tx.Webhooks(a.ID, fleet.Page{After: w.ID, Limit: 10})
		is.NoErr(err)
		is.Equal(len(page), 1)
		is.Equal(page[0].ID, off.ID)
		on, err := tx.EnabledWebhooks(a.ID)
		is.NoErr(err)
		is.Equal(len(on), 1)
		is.Equal(on[0].ID, w.ID)
		return nil
	}))
	// UpdateWebhook changes everything but id, account and created_at.
	w2 := w
	w2.URL, w2.Events, w2.Description, w2.Enabled = "https://other.example.com/", []string{"*"}, "", false
	w2.Secret, w2.PreviousSecret, w2.PreviousSecretUntil, w2.FailingSince = fleet.NewWebhookSecret(), "", nil, nil
	w2.CreatedAt = T0.Add(time.Hour)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWebhook(w2) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Webhook(a.ID, w.ID)
		is.NoErr(err)
		w2.CreatedAt = T0
		is.Equal(got, w2)
		return nil
	}))
	w3 := w2
	w3.AccountID = b.ID
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWebhook(w3) })), fleet.CodeNotFound)
}

func testWebhookDelete(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	w := MustWebhook(t, s, a.ID, true)
	keep := MustWebhook(t, s, a.ID, true)
	d := mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
	k := mustDelivery(t, s, NewDelivery(keep, fleet.NewID(fleet.PrefixEvent), T0))
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteWebhook(b.ID, w.ID) })), fleet.CodeNotFound)
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteWebhook(a.ID, w.ID) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Delivery(a.ID, d.ID)
		is.Equal(code(err), fleet.CodeNotFound) // went with its endpoint
		_, err = tx.Delivery(a.ID, k.ID)
		is.NoErr(err)
		return nil
	}))
	due, err := claimDue(s, T0, T0.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(due), 1)
	is.Equal(due[0].ID, k.ID)
}

func testDeliveries(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	w := MustWebhook(t, s, a.ID, true)
	other := MustWebhook(t, s, a.ID, true)
	evt := fleet.NewID(fleet.PrefixEvent)
	d1 := mustDelivery(t, s, NewDelivery(w, evt, T0))
	d2 := mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
	mustDelivery(t, s, NewDelivery(other, evt, T0))
	orphan := NewDelivery(fleet.Webhook{ID: fleet.NewID(fleet.PrefixWebhook), AccountID: a.ID}, evt, T0)
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDelivery(orphan) })), fleet.CodeNotFound)
	foreign := NewDelivery(fleet.Webhook{ID: w.ID, AccountID: b.ID}, evt, T0)
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateDelivery(foreign) })), fleet.CodeNotFound)

	// Record an attempt: every mutable field round-trips.
	st, msg, ms, next := 503, "The endpoint answered 503.", int64(1234), T0.Add(5*time.Second+7*time.Microsecond)
	u := d1
	u.Status, u.ResponseStatus, u.Error, u.DurationMs, u.NextAttemptAt = fleet.DeliveryFailed, &st, &msg, &ms, &next
	u.Attempt, u.EventID = 9, "evt_changed" // immutable: ignored
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateDelivery(u) }))
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Delivery(a.ID, d1.ID)
		is.NoErr(err)
		u.Attempt, u.EventID = d1.Attempt, d1.EventID
		is.Equal(got, u)
		_, err = tx.Delivery(b.ID, d1.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		all, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(all), 2) // only this endpoint's
		failed, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{Status: fleet.DeliveryFailed}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(failed), 1)
		is.Equal(failed[0].ID, d1.ID)
		byEvent, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{EventID: d2.EventID}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(byEvent), 1)
		is.Equal(byEvent[0].ID, d2.ID)
		after, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{After: d1.ID, Limit: 10})
		is.NoErr(err)
		is.Equal(len(after), 1)
		none, err := tx.Deliveries(b.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(none), 0)
		// Newest first: descending ids, before the cursor, the endpoint
		// and the filter kept (the other endpoint's delivery is the newest).
		newest, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{Limit: 10, Newest: true})
		is.NoErr(err)
		is.Equal(len(newest), 2)
		is.Equal([]string{newest[0].ID, newest[1].ID}, []string{d2.ID, d1.ID})
		older, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{After: d2.ID, Limit: 10, Newest: true})
		is.NoErr(err)
		is.Equal(len(older), 1)
		is.Equal(older[0].ID, d1.ID)
		one, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{}, fleet.Page{Limit: 1, Newest: true})
		is.NoErr(err)
		is.Equal(len(one), 1)
		is.Equal(one[0].ID, d2.ID)
		pending, err := tx.Deliveries(a.ID, w.ID, fleet.DeliveryFilter{Status: fleet.DeliveryPending}, fleet.Page{Limit: 10, Newest: true})
		is.NoErr(err)
		is.Equal(len(pending), 1)
		is.Equal(pending[0].ID, d2.ID)
		return nil
	}))
	foreign = u
	foreign.AccountID = b.ID
	is.Equal(code(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateDelivery(foreign) })), fleet.CodeNotFound)
}

func testDeliveriesDue(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	wa, wb := MustWebhook(t, s, a.ID, true), MustWebhook(t, s, b.ID, true)
	late := mustDelivery(t, s, NewDelivery(wa, fleet.NewID(fleet.PrefixEvent), T0.Add(time.Minute)))
	early := mustDelivery(t, s, NewDelivery(wb, fleet.NewID(fleet.PrefixEvent), T0))
	future := mustDelivery(t, s, NewDelivery(wa, fleet.NewID(fleet.PrefixEvent), T0.Add(time.Hour)))
	done := NewDelivery(wa, fleet.NewID(fleet.PrefixEvent), T0)
	done.Status = fleet.DeliverySucceeded
	mustDelivery(t, s, done)
	now := T0.Add(time.Minute) // inclusive bound
	lease := now.Add(2 * time.Minute)
	one, err := claimDue(s, now, lease, 1)
	is.NoErr(err)
	is.Equal(len(one), 1)
	is.Equal(one[0].ID, early.ID) // earliest first, of any account
	is.Equal(*one[0].NextAttemptAt, lease)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.Delivery(b.ID, early.ID)
		is.NoErr(err)
		is.Equal(got, one[0]) // the lease is stored
		return nil
	}))
	rest, err := claimDue(s, now, lease, 10)
	is.NoErr(err)
	is.Equal(len(rest), 1) // the claimed one is no longer due
	is.Equal(rest[0].ID, late.ID)
	// A delivery made is no longer pending.
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		rest[0].Status, rest[0].NextAttemptAt = fleet.DeliverySucceeded, nil
		return tx.UpdateDelivery(rest[0])
	}))
	none, err := claimDue(s, now, lease, 10)
	is.NoErr(err)
	is.Equal(len(none), 0)
	again, err := claimDue(s, T0.Add(time.Hour), T0.Add(2*time.Hour), 10)
	is.NoErr(err)
	is.Equal(len(again), 2) // the lapsed lease and the future one
	is.Equal(again[0].ID, early.ID)
	is.Equal(again[1].ID, future.ID)
}

// testDeliveriesDueConcurrent: claims running at once never get the same
// delivery.
func testDeliveriesDueConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	w := MustWebhook(t, s, a.ID, true)
	const n = 40
	for range n {
		mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				got, err := claimDue(s, T0, T0.Add(time.Minute), 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	is.Equal(len(seen), n)
	for id, c := range seen {
		if c != 1 {
			t.Errorf("delivery %s claimed %d times", id, c)
		}
	}
}

// ids returns the ids of ds.
func ids(ds []fleet.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// testDeliveriesClaimFair: a claim takes no more of an endpoint or an
// account than its cap leaves room for, what the claimant holds included;
// an account's endpoints take turns, and so do accounts; it says whether
// it left due deliveries.
func testDeliveriesClaimFair(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	e1, e2, e3 := MustWebhook(t, s, a.ID, true), MustWebhook(t, s, a.ID, true), MustWebhook(t, s, a.ID, true)
	wb := MustWebhook(t, s, b.ID, true)
	at := func(i int) time.Time { return T0.Add(time.Duration(i) * time.Second) }
	var d1, d2 []fleet.Delivery
	for i := range 5 {
		d1 = append(d1, mustDelivery(t, s, NewDelivery(e1, fleet.NewID(fleet.PrefixEvent), at(i))))
		d2 = append(d2, mustDelivery(t, s, NewDelivery(e2, fleet.NewID(fleet.PrefixEvent), at(10+i))))
	}
	d3 := mustDelivery(t, s, NewDelivery(e3, fleet.NewID(fleet.PrefixEvent), at(20)))
	db := mustDelivery(t, s, NewDelivery(wb, fleet.NewID(fleet.PrefixEvent), at(30)))
	now, lease := at(60), at(180)
	claim := fleet.DeliveryClaim{Now: now, Until: lease, Limit: 3, PerEndpoint: 2, PerAccount: 3}

	// Account a's endpoints in turn, account b's one among them.
	got, left, err := s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.True(left)
	is.Equal(ids(got), ids([]fleet.Delivery{d1[0], d2[0], db})) // earliest due first
	for _, d := range got {
		is.Equal(*d.NextAttemptAt, lease)
	}

	// Holding those three, a may take one more (its cap is 3, e1's 2):
	// not of e1, which would be its third.
	claim.HeldByEndpoint = map[string]int{e1.ID: 2, e2.ID: 1}
	claim.HeldByAccount = map[string]int{a.ID: 2}
	claim.Limit = 10
	got, left, err = s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.True(left)
	is.Equal(ids(got), ids([]fleet.Delivery{d2[1]}))

	// At its cap, a gets nothing; without caps, the rest in due order.
	claim.HeldByAccount = map[string]int{a.ID: 3}
	got, left, err = s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.True(left)
	is.Equal(len(got), 0)
	got, left, err = s.ClaimDeliveries(ctx, fleet.DeliveryClaim{Now: now, Until: lease, Limit: 10})
	is.NoErr(err)
	is.True(!left) // every due delivery taken
	is.Equal(ids(got), ids([]fleet.Delivery{d1[1], d1[2], d1[3], d1[4], d2[2], d2[3], d2[4], d3}))
}

// testDeliveriesClaimBacklog: an account's endpoint with hundreds of
// deliveries due before another account's does not hide it.
func testDeliveriesClaimBacklog(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	wa, wa2, wb := MustWebhook(t, s, a.ID, true), MustWebhook(t, s, a.ID, true), MustWebhook(t, s, b.ID, true)
	var backlog []fleet.Delivery
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error {
		for i := range 600 {
			w := wa
			if i%2 == 1 {
				w = wa2
			}
			d := NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0.Add(time.Duration(i)*time.Millisecond))
			backlog = append(backlog, d)
			if err := tx.CreateDelivery(d); err != nil {
				return err
			}
		}
		return nil
	}))
	db := mustDelivery(t, s, NewDelivery(wb, fleet.NewID(fleet.PrefixEvent), T0.Add(time.Minute)))
	now, lease := T0.Add(time.Hour), T0.Add(2*time.Hour)
	claim := fleet.DeliveryClaim{Now: now, Until: lease, Limit: 5, PerEndpoint: 2, PerAccount: 16}
	got, left, err := s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.True(left)
	is.Equal(ids(got), ids([]fleet.Delivery{backlog[0], backlog[1], backlog[2], backlog[3], db}))
	// Holding a's four, the next claim takes none of a's.
	claim.HeldByEndpoint = map[string]int{wa.ID: 2, wa2.ID: 2}
	got, left, err = s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.True(left)
	is.Equal(len(got), 0)
	claim.HeldByEndpoint = map[string]int{wa.ID: 1}
	got, _, err = s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.Equal(ids(got), ids([]fleet.Delivery{backlog[4], backlog[5], backlog[7]})) // wa's next one, wa2's next two
}

func testRecordDelivery(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	w := MustWebhook(t, s, a.ID, true)
	d := mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
	lease := T0.Add(time.Minute)
	got, err := claimDue(s, T0, lease, 10)
	is.NoErr(err)
	is.Equal(len(got), 1)
	st, msg, ms, at := 500, "The endpoint answered 500.", int64(12), T0.Add(5*time.Second)
	done := got[0]
	done.Status, done.ResponseStatus, done.Error, done.DurationMs, done.NextAttemptAt = fleet.DeliveryFailed, &st, &msg, &ms, &at
	next := NewDelivery(w, d.EventID, at)
	next.Attempt = 2
	off := fleet.EndpointChange{AccountID: a.ID, WebhookID: w.ID, Disable: true, ClearFailing: true, StartFailing: &at}
	other := MustWebhook(t, s, a.ID, true)
	otherOff := fleet.EndpointChange{AccountID: a.ID, WebhookID: other.ID, Disable: true}                                               // no record of it is stored: it stays enabled
	held, err := s.RecordDeliveries(ctx, []fleet.DeliveryRecord{{Delivery: done, Lease: T0, Next: &next}}, []fleet.EndpointChange{off}) // not the lease
	is.NoErr(err)
	is.Equal(held, []bool{false})
	held, err = s.RecordDeliveries(ctx, []fleet.DeliveryRecord{{Delivery: done, Lease: lease, Next: &next}}, []fleet.EndpointChange{off, otherOff})
	is.NoErr(err)
	is.Equal(held, []bool{true})
	held, err = s.RecordDeliveries(ctx, []fleet.DeliveryRecord{{Delivery: done, Lease: lease, Next: &next}}, nil) // recorded already
	is.NoErr(err)
	is.Equal(held, []bool{false})
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		stored, err := tx.Delivery(a.ID, d.ID)
		is.NoErr(err)
		is.Equal(stored, done)
		n, err := tx.Delivery(a.ID, next.ID)
		is.NoErr(err)
		is.Equal(n, next)
		ep, err := tx.Webhook(a.ID, w.ID)
		is.NoErr(err)
		is.Equal(ep.Enabled, false)
		is.Equal(*ep.FailingSince, at)
		is.Equal(ep.URL, w.URL)
		ep, err = tx.Webhook(a.ID, other.ID)
		is.NoErr(err)
		is.Equal(ep.Enabled, true)
		return nil
	}))
}

// testRecordDeliveryEndpointRace: a sender decides an endpoint change from
// the endpoint as it read it; what a user (or another sender) wrote since
// stays, and the change applies to the endpoint as it is now.
func testRecordDeliveryEndpointRace(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	read, later := T0.Add(-6*24*time.Hour), T0.Add(time.Hour)
	type race struct {
		name        string
		enabled     bool       // as the sender read it
		failing     *time.Time // as the sender read it
		userEnabled bool       // written meanwhile
		userFailing *time.Time // written meanwhile
		change      fleet.EndpointChange
		wantEnabled bool
		wantFailing *time.Time
	}
	races := []race{
		// A failure after the user re-enabled the endpoint (forgetting its
		// failures): the failing clock starts again; the endpoint stays on.
		{"failure after a re-enable", false, &read, true, nil,
			fleet.EndpointChange{StartFailing: &later}, true, &later},
		// Failing for 5 days as read, but re-enabled meanwhile: not disabled.
		{"age disable after a re-enable", true, &read, true, nil,
			fleet.EndpointChange{Disable: true, DisableIfFailingSince: &read}, true, nil},
		// Failing for 5 days as read, still so: disabled.
		{"age disable", true, &read, true, &read,
			fleet.EndpointChange{Disable: true, DisableIfFailingSince: &read}, false, &read},
		// A success never enables what the user disabled meanwhile.
		{"success after a disable", true, &read, false, &read,
			fleet.EndpointChange{ClearFailing: true}, false, nil},
		// Another sender recorded an earlier failure meanwhile: it stays the start.
		{"failure after another failure", true, nil, true, &read,
			fleet.EndpointChange{StartFailing: &later}, true, &read},
		// A 410 disables whatever the endpoint's state.
		{"gone", true, nil, true, &read,
			fleet.EndpointChange{Disable: true, StartFailing: &later}, false, &read},
		// Succeeded, then failed again, in one batch: failing from then on.
		{"success then failure", true, &read, true, &read,
			fleet.EndpointChange{ClearFailing: true, StartFailing: &later}, true, &later},
	}
	ws := make([]fleet.Webhook, len(races))
	for i, r := range races {
		w := NewWebhook(a.ID)
		w.Enabled, w.FailingSince = r.enabled, r.failing
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateWebhook(w) }))
		mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
		ws[i] = w
	}
	lease := T0.Add(time.Minute)
	claimed, err := claimDue(s, T0, lease, 100)
	is.NoErr(err)
	is.Equal(len(claimed), len(races))
	byHook := map[string]fleet.Delivery{}
	for _, d := range claimed {
		byHook[d.WebhookID] = d
	}
	// The users' changes, committed after the sender read the endpoints.
	for i, r := range races {
		w := ws[i]
		w.Enabled, w.FailingSince = r.userEnabled, r.userFailing
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateWebhook(w) }))
	}
	var recs []fleet.DeliveryRecord
	var changes []fleet.EndpointChange
	for i, r := range races {
		d := byHook[ws[i].ID]
		d.Status, d.NextAttemptAt = fleet.DeliveryFailed, nil
		recs = append(recs, fleet.DeliveryRecord{Delivery: d, Lease: lease})
		c := r.change
		c.AccountID, c.WebhookID = a.ID, ws[i].ID
		changes = append(changes, c)
	}
	held, err := s.RecordDeliveries(ctx, recs, changes)
	is.NoErr(err)
	for _, h := range held {
		is.True(h)
	}
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		for i, r := range races {
			got, err := tx.Webhook(a.ID, ws[i].ID)
			is.NoErr(err)
			if got.Enabled != r.wantEnabled {
				t.Errorf("%s: enabled %v, want %v", r.name, got.Enabled, r.wantEnabled)
			}
			if (got.FailingSince == nil) != (r.wantFailing == nil) || got.FailingSince != nil && !got.FailingSince.Equal(*r.wantFailing) {
				t.Errorf("%s: failing since %v, want %v", r.name, got.FailingSince, r.wantFailing)
			}
		}
		return nil
	}))
}

func testPurgeDeliveries(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	w := MustWebhook(t, s, a.ID, true)
	old := mustDelivery(t, s, NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0))
	fresh := NewDelivery(w, fleet.NewID(fleet.PrefixEvent), T0)
	fresh.CreatedAt = T0.Add(time.Minute)
	mustDelivery(t, s, fresh)
	n, err := s.PurgeDeliveries(ctx, T0.Add(time.Minute))
	is.NoErr(err)
	is.Equal(n, 1)
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.Delivery(a.ID, old.ID)
		is.Equal(code(err), fleet.CodeNotFound)
		_, err = tx.Delivery(a.ID, fresh.ID)
		is.NoErr(err)
		return nil
	}))
	due, err := claimDue(s, T0, T0.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(due), 1) // the purged one is not claimed
	is.Equal(due[0].ID, fresh.ID)
}

func testEventsByID(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	var ids []string
	for i, acc := range []string{a.ID, b.ID, a.ID} {
		e := fleet.Event{ID: fleet.NewID(fleet.PrefixEvent), AccountID: acc, Type: fleet.EventVehicleCreated,
			CreatedAt: T0.Add(time.Duration(i) * time.Second), Data: []byte(`{"n":1}`)}
		is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.AppendEvent(e) }))
		ids = append(ids, e.ID)
	}
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.EventsByID(append([]string{fleet.NewID(fleet.PrefixEvent)}, ids[1:]...))
		is.NoErr(err)
		is.Equal(len(got), 2) // of any account; unknown ids left out
		byID := map[string]fleet.Event{}
		for _, e := range got {
			byID[e.ID] = e
		}
		is.Equal(byID[ids[1]].AccountID, b.ID)
		is.Equal(string(byID[ids[2]].Data), `{"n":1}`)
		none, err := tx.EventsByID(nil)
		is.NoErr(err)
		is.Equal(len(none), 0)
		return nil
	}))
}

func testWebhooksByID(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	wa, wb := MustWebhook(t, s, a.ID, true), MustWebhook(t, s, b.ID, false)
	MustWebhook(t, s, a.ID, true) // not asked for
	is.NoErr(s.View(ctx, func(tx fleet.Tx) error {
		got, err := tx.WebhooksByID([]string{fleet.NewID(fleet.PrefixWebhook), wb.ID, wa.ID, wa.ID})
		is.NoErr(err)
		byID := map[string]fleet.Webhook{}
		for _, w := range got {
			byID[w.ID] = w
		}
		is.Equal(len(byID), 2) // of any account; unknown ids left out
		is.Equal(byID[wa.ID], wa)
		is.Equal(byID[wb.ID], wb)
		none, err := tx.WebhooksByID(nil)
		is.NoErr(err)
		is.Equal(len(none), 0)
		return nil
	}))
}
