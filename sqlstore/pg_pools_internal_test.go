package sqlstore

import (
	"context"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// setting returns a run-time parameter as fn's transaction sees it.
func setting(t *testing.T, run func(context.Context, func(fleet.Tx) error) error, name string) string {
	t.Helper()
	var v string
	err := run(context.Background(), func(ftx fleet.Tx) error {
		return ftx.(*tx).tx.QueryRowContext(context.Background(), "SELECT current_setting($1)", name).Scan(&v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPostgresUpdatePlansWithIndexes: Update's SERIALIZABLE transactions
// run on sessions that plan without sequential scans (so that two ingests
// of different vehicles do not depend on each other's whole table), with
// no statement of their own for it; reads plan as usual.
func TestPostgresUpdatePlansWithIndexes(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	is.Equal(setting(t, s.Update, "enable_seqscan"), "off")
	is.Equal(setting(t, s.Update, "transaction_isolation"), "serializable")
	is.Equal(setting(t, s.View, "enable_seqscan"), "on")
	is.Equal(setting(t, s.Update, "jit"), "off") // JIT compiles the sweep's plan for 100s of ms
	is.Equal(setting(t, s.View, "jit"), "off")
	pools := s.PoolStats()
	is.Equal(pools["serializable"].MaxOpenConnections, pgWriters)
	is.Equal(pools["main"].MaxOpenConnections+pgWriters, postgresConns) // the server's connections in all
}

// TestPostgresLocationWritesRunReadCommitted: a location write (one whose
// context carries a fleet.WriteCost) runs in a group commit, at READ
// COMMITTED, on the group pool; other writes stay SERIALIZABLE.
func TestPostgresLocationWritesRunReadCommitted(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	located := func(ctx context.Context, fn func(fleet.Tx) error) error {
		return s.Update(fleet.WithWriteCost(ctx, fleet.WriteCost{AccountID: "acc_x", Points: 1}), fn)
	}
	is.Equal(setting(t, located, "transaction_isolation"), "read committed")
	is.Equal(setting(t, located, "jit"), "off")
	is.Equal(setting(t, located, "enable_seqscan"), "off") // rows by key, whatever the statistics say
	is.Equal(setting(t, s.Update, "transaction_isolation"), "serializable")
	is.Equal(s.PoolStats()["group"].MaxOpenConnections, pgGroupRunners)
	commits, members := s.WriteGroups()
	is.Equal(commits, int64(3)) // each location write's group, alone
	is.Equal(members, int64(3))
}

// TestWithoutJITKeepsTheOperators: JIT is off unless the URL says
// otherwise.
func TestWithoutJITKeepsTheOperators(t *testing.T) {
	is := is.New(t)
	is.Equal(withoutJIT("postgres://u@h/db?sslmode=disable"), "postgres://u@h/db?jit=off&sslmode=disable")
	is.Equal(withoutJIT("postgres://u@h/db?jit=on"), "postgres://u@h/db?jit=on")
}

// TestLiveReaderQuietWithoutListeners: the feed's reader reads at its pace
// while streams listen, or when nothing says (a follower without
// fleet.WithLiveListeners), and at the quiet pace while none does.
func TestLiveReaderQuietWithoutListeners(t *testing.T) {
	is := is.New(t)
	is.Equal(livePace(nil), liveReadPace)
	is.Equal(livePace(func() int { return 2 }), liveReadPace)
	is.Equal(livePace(func() int { return 0 }), liveQuietPace)
	is.True(liveQuietPace > liveReadPace)
}
