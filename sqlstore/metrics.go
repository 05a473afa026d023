package sqlstore

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Collectors returns the store's Prometheus collectors: its connection
// pools ("read" and "write" on SQLite; "main", "group" and "serializable"
// on PostgreSQL), the round trips it sends to its database by operation,
// and its group commits. fleethttp's metrics register them when the
// service's store has them.
func (s *Store) Collectors() []prometheus.Collector {
	return []prometheus.Collector{storeCollector{s}, roundTripCollector{s}}
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	descConns     = desc("fleet_store_connections", "The store's open connections by pool and state (in_use, idle).", "pool", "state")
	descConnsMax  = desc("fleet_store_connections_max", "The most connections a pool of the store opens.", "pool")
	descWaits     = desc("fleet_store_waits_total", "Times a store call waited for a free connection.", "pool")
	descWaitSecs  = desc("fleet_store_wait_seconds_total", "Time store calls spent waiting for a free connection.", "pool")
	descConnsDrop = desc("fleet_store_connections_closed_total", "Connections the pool closed for idleness or age.", "pool")
)

// storeCollector reads a SQL store's pool figures.
type storeCollector struct{ s *Store }

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConns, descConnsMax, descWaits, descWaitSecs, descConnsDrop} {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	pools := c.s.PoolStats()
	for _, pool := range slices.Sorted(maps.Keys(pools)) {
		st := pools[pool]
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(st.InUse), pool, "in_use")
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(st.Idle), pool, "idle")
		ch <- prometheus.MustNewConstMetric(descConnsMax, prometheus.GaugeValue, float64(st.MaxOpenConnections), pool)
		ch <- prometheus.MustNewConstMetric(descWaits, prometheus.CounterValue, float64(st.WaitCount), pool)
		ch <- prometheus.MustNewConstMetric(descWaitSecs, prometheus.CounterValue, st.WaitDuration.Seconds(), pool)
		ch <- prometheus.MustNewConstMetric(descConnsDrop, prometheus.CounterValue,
			float64(st.MaxIdleClosed+st.MaxIdleTimeClosed+st.MaxLifetimeClosed), pool)
	}
}

var (
	descRoundTrips   = desc("fleet_store_round_trips_total", "Round trips the store sent to its database, by operation (begin, commit, rollback, savepoint, statement); the members of a group commit share its begin and commit.", "operation")
	descGroupCommits = desc("fleet_store_group_commits_total", "Group commits the store made: write transactions that committed together, once (SQLite: every write; PostgreSQL: location writes).")
	descGroupMembers = desc("fleet_store_group_members_total", "Write transactions the store's group commits carried (divided by fleet_store_group_commits_total: the mean group size).")
)

// roundTripCollector reads a SQL store's round trips and group commits.
type roundTripCollector struct{ s *Store }

func (c roundTripCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRoundTrips
	ch <- descGroupCommits
	ch <- descGroupMembers
}

func (c roundTripCollector) Collect(ch chan<- prometheus.Metric) {
	trips := c.s.RoundTrips()
	for _, op := range slices.Sorted(maps.Keys(trips)) {
		ch <- prometheus.MustNewConstMetric(descRoundTrips, prometheus.CounterValue, float64(trips[op]), op)
	}
	commits, members := c.s.WriteGroups()
	ch <- prometheus.MustNewConstMetric(descGroupCommits, prometheus.CounterValue, float64(commits))
	ch <- prometheus.MustNewConstMetric(descGroupMembers, prometheus.CounterValue, float64(members))
}
