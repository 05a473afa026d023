package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestPostgresBulkWritesLeaveARunnerFree: however many bulk writes a
// server is asked for, at most pgGroupRunners-1 groups of them run at
// once, and the other group runner stays free for the other writes: a
// one-point report commits while bulk writes wait.
func TestPostgresBulkWritesLeaveARunnerFree(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	const bulkRunners = pgGroupRunners - 1
	const writes = bulkRunners + 2
	bulk := fleet.WithWriteCost(context.Background(), fleet.WriteCost{AccountID: "acc_heavy", Points: fleet.MaxPointsPerBulkBatch})
	release := make(chan struct{})
	entered := make(chan struct{}, writes)
	var wg sync.WaitGroup
	for range writes {
		wg.Go(func() {
			err := s.Update(bulk, func(tx fleet.Tx) error {
				entered <- struct{}{}
				<-release
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	for range bulkRunners {
		<-entered
	}
	// Bounded only so that a failure ends: the write must not wait for
	// the bulk ones, which wait for it.
	ctx, cancel := context.WithTimeout(fleet.WithWriteCost(context.Background(), fleet.WriteCost{AccountID: "acc_other", Points: 1}), 30*time.Second)
	defer cancel()
	a := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "Other", Plan: fleet.PlanFree, CreatedAt: time.Unix(1700000000, 0).UTC()}
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(a) })) // while bulk writes run and wait
	select {
	case <-entered:
		t.Fatalf("more than %d bulk writes ran at once", bulkRunners)
	default:
	}
	close(release)
	wg.Wait()
	is.Equal(len(entered), writes-bulkRunners) // the others ran once the first were done
}
