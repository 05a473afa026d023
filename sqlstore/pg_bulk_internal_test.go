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
// server has running, one of its writer slots stays free for the others:
// a one-point report commits while bulk writes hold the rest, and a bulk
// write past pgBulkWriters waits.
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
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(a) })) // while three bulk writes run
	select {
	case <-entered:
		t.Fatal("a fourth bulk write ran beside three others")
	default:
	}
	close(release)
	wg.Wait()
	is.Equal(len(entered), 1) // the fourth ran once the others were done
}
