package fleet_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// costStore records the fleet.WriteCost of each Update.
type costStore struct {
	fleet.Store
	mu    sync.Mutex
	costs []fleet.WriteCost
}

func (s *costStore) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	if c, ok := fleet.WriteCostOf(ctx); ok {
		s.mu.Lock()
		s.costs = append(s.costs, c)
		s.mu.Unlock()
	}
	return s.Store.Update(ctx, fn)
}

// TestIngestTellsTheStoreItsCost: a location batch's write transaction
// carries its account and how many points it may store (its own repeated
// timestamps dropped) and the vehicles it writes, so that a store can serve
// accounts in turn and lock the vehicles first; other writes carry none.
func TestIngestTellsTheStoreItsCost(t *testing.T) {
	is := is.New(t)
	store := &costStore{Store: memstore.New()}
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	acc := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "Gateway GmbH", Plan: fleet.PlanPro}, 3)
	is.Equal(len(store.costs), 0) // creating the account and vehicles carries no cost
	pts := acc.batch(0, 3, 0, 400)
	pts = append(pts, pts[:5]...)
	_, err := svc.IngestBulk(ctx, acc.p, pts)
	is.NoErr(err)
	vehicles := slices.Sorted(slices.Values(acc.vehicles)) // in id order: a store may lock them so
	is.Equal(store.costs, []fleet.WriteCost{{AccountID: acc.p.Account.ID, Points: 1_200, Vehicles: vehicles}})
}

// TestBulkBatchesOfAnAccountOneAtATime: a server ingests an account's bulk
// batches one after another (the second is not judged before the first is
// stored), while another account's bulk batch goes ahead meanwhile.
func TestBulkBatchesOfAnAccountOneAtATime(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		a := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "A", Plan: fleet.PlanPro}, 2)
		b := newPointsAccount(t, svc, fleet.AccountParams{CompanyName: "B", Plan: fleet.PlanPro}, 1)
		// A rule to judge, and no budget for it in the write transaction:
		// every batch of A is judged outside it first, through the hook.
		g, err := svc.CreateGeofence(ctx, a.p, polygon([][]float64{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}}))
		is.NoErr(err)
		_, err = svc.CreateAlertRule(ctx, a.p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID}, nil)
		is.NoErr(err)
		fleet.SetJudgeBudget(svc, 0)
		first, second := a.batch(0, 1, 0, fleet.BulkPoints), a.batch(1, 2, 0, fleet.BulkPoints)
		held, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		var firstStoredBeforeSecond atomic.Bool
		fleet.SetJudging(svc, func(accountID string) {
			if accountID != a.p.Account.ID {
				return
			}
			if calls.Add(1) == 1 { // the first batch: held while judged
				close(held)
				<-release
				return
			}
			firstStoredBeforeSecond.Store(a.stored(t, svc) == fleet.BulkPoints)
		})
		done := make(chan error, 2)
		go func() { _, err := svc.IngestBulk(ctx, a.p, first); done <- err }()
		waitFor(t, held, "the first batch to be judged")
		go func() { _, err := svc.IngestBulk(ctx, a.p, second); done <- err }()
		res, err := svc.IngestBulk(ctx, b.p, b.batch(0, 1, 0, fleet.BulkPoints))
		is.NoErr(err) // another account's bulk batch is not held up
		is.Equal(res.Accepted, fleet.BulkPoints)
		close(release)
		is.NoErr(<-done)
		is.NoErr(<-done)
		is.Equal(int(calls.Load()), 2)
		is.True(firstStoredBeforeSecond.Load()) // the second began after the first was stored
		is.Equal(a.stored(t, svc), 2*fleet.BulkPoints)
	})
}
