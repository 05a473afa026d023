package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/fleetkit/fleetapi/fleet"
)

// Group commit (PostgreSQL).
//
// A location batch's write transaction (one with a fleet.WriteCost: the
// API's location ingest and a device's report) joins a group commit as on
// SQLite (group.go): the writes that arrive while this server's groups
// run join the group that is forming, which then runs its members one
// after another in ONE transaction, applies their write-sets together in
// one statement (group_writes.go), and commits once. What is kept:
//
//   - All or nothing per request: a member whose function fails leaves
//     nothing (what it staged is dropped; what it wrote itself, after the
//     savepoint it then took, is rolled back), and gets its own error;
//     when the write-sets cannot be applied, the members run again one by
//     one, each in its savepoint.
//   - A 2xx means durable: every member returns after the group's COMMIT,
//     with its error if it failed.
//   - A member or a group that PostgreSQL aborts (a deadlock, 40P01, or a
//     serialisation failure, 40001) runs again in a later group, so a
//     member's function must be a pure function of its transaction
//     (fleet.Store allows it to run more than once). Side effects — the
//     live stream, webhooks, counters — follow the commit, in the service.
//
// Isolation. Groups run at READ COMMITTED: there is no SERIALIZABLE
// predicate locking to abort them. Instead every read that a write of the
// member depends on takes a row lock, and the writes are conditional:
//
//   - A vehicle is read FOR UPDATE (tx.Vehicle under lockRows): its latest
//     location, odometer, status, alerts version, trips, schedules and open
//     alerts are all the vehicle's, so two writes of one vehicle — from this
//     server or another — take turns, and each sees the other's committed
//     work. A batch reads its vehicles in id order (fleet sorts them), so
//     two members lock in one order. The latest location only moves
//     forward: the member compares with the locked row.
//   - A point newer than its locked vehicle's latest report cannot be
//     stored already, and is staged; an older one may be a duplicate, and
//     is inserted at once by INSERT ... ON CONFLICT (vehicle_id, ts) DO
//     NOTHING, which waits for a concurrent insert of the same point and
//     then skips it.
//   - The account's alert configuration is read FOR SHARE, so that a change
//     of its rules waits for the groups that judged with the old ones.
//   - A device's report is an UPDATE conditioned on the device's vehicle.
//
// Two groups that lock the same vehicles in a different order (member A of
// one group holds vehicle 1 and member B of the other vehicle 2, then each
// reaches for the other's) deadlock; PostgreSQL aborts one statement, the
// member holding it is rolled back to its savepoint and runs again in a
// later group — the others of its group are unaffected. That needs the
// same vehicle reported twice within one group's length, which is rare.
//
// Every other write (accounts, keys, vehicles' creation, rules, webhooks,
// users...) is infrequent and reads more than its own rows — caps counted
// over an account, uniqueness over a table — so it keeps its SERIALIZABLE
// transaction behind the writer slots (pg_writers.go), where PostgreSQL
// keeps those invariants. A SERIALIZABLE write and a group that write the
// same row conflict there (the first to update wins, the other is aborted
// and runs again), and a change of alert rules waits for the groups'
// FOR SHARE lock.
//
// A group holds up to maxGroup members, as on SQLite. Its members stage
// their location writes (group_writes.go) and take a savepoint only
// before a write of their own; each member whose savepoint wrote is a
// subtransaction, and a transaction of more than 64 of them overflows
// PostgreSQL's per-backend cache, which makes every other session's
// snapshots slower: so only a group whose members mostly write events or
// late points pays it, and a group that fell back to one by one.

// pgGroupRunners is how many groups of one server run at once, each on its
// own connection. While they all run, writes wait in the forming group.
const pgGroupRunners = 2

// pgPolicy is PostgreSQL's (groupPolicy): READ COMMITTED, the store's
// timeout over the group, a row cache of the group's own, the members'
// vehicles locked first, write-sets staged (a vehicle twice deferred), a
// member's savepoint released with the next one's, and members that the
// database aborted run again.
type pgPolicy struct{}

func (pgPolicy) open(gc *groupCommit, g *group) {
	g.ctx, g.cancel = context.Background(), func() {}
	if gc.sh.timeout > 0 {
		g.ctx, g.cancel = context.WithTimeout(g.ctx, gc.sh.timeout)
	}
	g.writeSets = true
	gc.deferRepeats(g)
	g.cache = gc.takeCache()
}

func (pgPolicy) txOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
}

func (pgPolicy) begun(*group) error                      { return nil }
func (pgPolicy) beforeMembers(gc *groupCommit, g *group) { gc.lockVehicles(g) }
func (pgPolicy) aborts() bool                            { return true }
func (pgPolicy) close(gc *groupCommit, g *group) {
	if g.cache != nil {
		gc.giveCache(g.cache)
	}
}

// undo rolls the member back in one round trip.
func (pgPolicy) undo(gc *groupCommit, bg *tx) error {
	gc.trip(tripSavepoint)
	_, err := bg.exec("ROLLBACK TO member; RELEASE member")
	return err
}

// keep leaves the savepoint open: the next member's SAVEPOINT releases it
// in the same round trip, or the COMMIT does.
func (pgPolicy) keep(_ *groupCommit, g *group, _ *tx) error {
	g.open = true
	return nil
}

// trip counts a round trip of the group's own (roundtrips.go).
func (gc *groupCommit) trip(k int) { gc.sh.trips.add(k) }

// takeCache returns an empty row cache for a group; giveCache takes it
// back when the group ends.
func (gc *groupCommit) takeCache() *rowCache {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if n := len(gc.caches); n > 0 {
		c := gc.caches[n-1]
		gc.caches = gc.caches[:n-1]
		c.reset()
		return c
	}
	return newRowCache()
}

func (gc *groupCommit) giveCache(c *rowCache) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.caches = append(gc.caches, c)
}

// lockVehicles, before g's members run, locks the rows of the vehicles
// their WriteCosts name, in id order and in one statement, so that two
// groups that write some of the same vehicles — on this server or another —
// take turns instead of each locking some of them in its members' order
// and then waiting for the other (a deadlock). It reads what the members
// will read of them into the group's row cache (rowcache.go) meanwhile:
// the vehicles' rows, in the same statement; their latest trips; their
// maintenance schedules, locked too (lockSchedules); and the version of
// their accounts' alert configuration, locked FOR SHARE. Those
// rows cannot change under the group but through its own members, whose
// writes keep the cache (and a member rolled back rolls its changes to
// the cache back). A failure here breaks the group: its members run again
// in a later one.
func (gc *groupCommit) lockVehicles(g *group) {
	var ids, accounts []string
	for _, m := range g.members {
		ids = append(ids, m.vehicles...)
		if len(m.vehicles) > 0 {
			accounts = append(accounts, m.account)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	slices.Sort(accounts)
	accounts = slices.Compact(accounts)
	t := &tx{ctx: g.ctx, d: gc.sh.d, tx: g.tx, cache: g.cache, roundTrips: &gc.sh.trips}
	err := func() error {
		rows, err := t.query(`SELECT `+vehicleColumns+` FROM vehicles v WHERE v.id = ANY($1) ORDER BY v.id FOR UPDATE`, ids)
		if err != nil {
			return err
		}
		g.locked = make(map[string]bool, len(ids))
		for rows.Next() {
			v, err := scanVehicle(rows)
			if err != nil {
				rows.Close()
				return err
			}
			g.locked[v.ID] = true
			g.cache.setVehicle(v)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if _, err := t.LatestTrips(ids); err != nil {
			return err
		}
		if err := gc.lockSchedules(t, g, ids); err != nil {
			return err
		}
		rows, err = t.query(`SELECT account_id, version FROM alert_config WHERE account_id = ANY($1) ORDER BY account_id FOR SHARE`, accounts)
		if err != nil {
			return err
		}
		versions := make(map[string]int64, len(accounts))
		for rows.Next() {
			var id string
			var v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return err
			}
			versions[id] = v
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, id := range accounts {
			g.cache.setAlerts(id, versions[id]) // 0: none configured
		}
		return nil
	}()
	g.cache.memberKept() // what was read is no member's to undo
	if err != nil {
		g.broken = fmt.Errorf("sqlstore: lock the group's vehicles: %w", err)
		g.locked = nil
		g.cache.reset()
	}
}

// lockSchedules reads the maintenance schedules of the vehicles ids (in id
// order) into the group's row cache, locked FOR UPDATE: a report whose
// odometer or engine hours moved reviews its vehicle's schedules and may
// write them back, and without the lock a schedule changed through the
// API after this read would be written over with its state before. One
// statement for the group instead of one per such report: a round trip
// each was the most frequent statement of a saturated server.
func (gc *groupCommit) lockSchedules(t *tx, g *group, ids []string) error {
	schs, err := t.schedules("lock schedules", `s.vehicle_id = ANY($1) ORDER BY s.vehicle_id, s.id FOR UPDATE`, ids)
	if err != nil {
		return err
	}
	byVehicle := make(map[string][]fleet.Schedule, len(ids))
	for _, s := range schs { // in id order within each vehicle
		byVehicle[s.VehicleID] = append(byVehicle[s.VehicleID], s)
	}
	for _, id := range ids {
		mine := byVehicle[id]
		if mine == nil {
			mine = []fleet.Schedule{} // it has none
		}
		g.cache.setSchedules(id, mine)
	}
	return nil
}
