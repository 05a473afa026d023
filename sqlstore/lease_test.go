package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestClaimLeavesTheWriterSynced: a claim commits without waiting for the
// disk, and every write after it is synced again, whether the claim
// succeeded or failed.
func TestClaimLeavesTheWriterSynced(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	is.NoErr(err)
	defer s.Close()
	synchronous := func() int {
		var n int
		is.NoErr(s.wdb.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n))
		return n
	}
	const full = 2
	is.Equal(synchronous(), full)
	now := time.Now()
	claim := fleet.DeliveryClaim{Now: now, Until: now.Add(time.Minute), Limit: 10}
	_, _, err = s.ClaimDeliveries(ctx, claim)
	is.NoErr(err)
	is.Equal(synchronous(), full) // after a claim
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = s.ClaimDeliveries(stopped, claim)
	is.True(err != nil)
	is.Equal(synchronous(), full) // after a claim that failed
}
