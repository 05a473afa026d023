package fleet_test

import (
	"context"
	"sync"
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
// timestamps dropped), so that a store can serve accounts in turn; other
// writes carry none.
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
	is.Equal(store.costs, []fleet.WriteCost{{AccountID: acc.p.Account.ID, Points: 1_200}})
}
