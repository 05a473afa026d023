package sqlstore

import "sync/atomic"

// Round trips: what a store's work costs the database, by kind, counted
// as the store sends it (Store.RoundTrips; fleetserver exports them as
// fleet_store_round_trips_total). A transaction's BEGIN and COMMIT (or
// ROLLBACK), the savepoints it takes, and each statement of its
// functions are one each; on PostgreSQL, the statements of the rate-limit
// windows and of the live feed (its appends and its reads), which are
// coalesced across requests and commit on their own, are counted as
// statements too.

// The kinds of round trip.
const (
	tripBegin = iota
	tripCommit
	tripRollback
	tripSavepoint
	tripStatement
	tripKinds
)

// tripNames are the kinds' names, as Store.RoundTrips reports them.
var tripNames = [tripKinds]string{"begin", "commit", "rollback", "savepoint", "statement"}

// roundTrips counts a store's round trips by kind.
type roundTrips [tripKinds]atomic.Int64

// add counts one round trip of kind k; a nil r counts nothing.
func (r *roundTrips) add(k int) {
	if r != nil {
		r[k].Add(1)
	}
}

// RoundTrips returns how many round trips the store has sent to its
// database since it opened, by kind: begin, commit, rollback, savepoint
// and statement. A group commit's members share its begin and commit.
func (s *Store) RoundTrips() map[string]int64 {
	out := make(map[string]int64, tripKinds)
	for k, name := range tripNames {
		out[name] = s.shared.trips[k].Load()
	}
	return out
}
