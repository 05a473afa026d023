package sqlstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestPostgresBulkWritesLeaveAWriterFree: however many bulk writes a
// server is asked for, at most pgBulkWriters of them run at once, and the
// other writer slots stay free for the other writes: a one-point report
// commits while bulk writes wait.
func TestPostgresBulkWritesLeaveAWriterFree(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	bulk := fleet.WithWriteCost(context.Background(), fleet.WriteCost{AccountID: "acc_heavy", Points: fleet.MaxPointsPerBulkBatch})
	release := make(chan struct{})
	entered := make(chan struct{}, pgWriters)
	var wg sync.WaitGroup
	for range pgWriters {
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
	for range pgBulkWriters {
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
		t.Fatalf("more than %d bulk writes ran at once", pgBulkWriters)
	default:
	}
	close(release)
	wg.Wait()
	is.Equal(len(entered), pgWriters-pgBulkWriters) // the others ran once the first were done
}
