package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The writer's row cache (SQLite).
//
// A device's report reads, in its write transaction, its vehicle's row,
// the vehicle's latest trip and the account's alert configuration version,
// then writes the first two back. On SQLite those reads run in the one
// writer's serial turn, where every microsecond counts against every other
// write. So the writer keeps what its transactions last read or wrote of
// those rows, and a later transaction reads them from memory.
//
// What keeps it true:
//   - Every write statement of a group member to vehicles, trips or
//     alert_config goes through a method that updates the cache
//     (UpdateVehicle, PutTrips, ...); any other such statement
//     (tx.exec's guard) empties it.
//   - What a write leaves in the cache is what a read of the row would
//     return: the statement's own arguments, scanned by the function that
//     scans the row (argsRow).
//   - A member's changes are undone with its savepoint (the undo log), and
//     a group that does not commit empties the cache.
//   - Another process that writes the file (fleetserver accounts create,
//     a second server) changes the writer connection's PRAGMA data_version,
//     which each group reads after its BEGIN IMMEDIATE: when it moved, or
//     the writer connection is a new one, the cache starts empty.
//
// Only the group's runner uses it, one group at a time, so it has no lock.
// It holds at most maxCachedRows rows of each kind; past that, an
// arbitrary row is forgotten.
type rowCache struct {
	conn     any   // the driver connection whose data version it follows
	version  int64 // that connection's data_version when last checked
	vehicles map[string]fleet.Vehicle
	trips    map[string]latestTrip // by vehicle id
	alerts   map[string]int64      // alert configuration version by account
	// undo restores, newest last, what the running member changed; it is
	// empty between members.
	undo []func()
}

// latestTrip is a vehicle's latest trip, or that it has none (ok false).
type latestTrip struct {
	trip fleet.Trip
	ok   bool
}

// maxCachedRows bounds each of the cache's maps.
const maxCachedRows = 100_000

func newRowCache() *rowCache {
	c := &rowCache{}
	c.reset()
	return c
}

// reset forgets every row.
func (c *rowCache) reset() {
	c.vehicles = map[string]fleet.Vehicle{}
	c.trips = map[string]latestTrip{}
	c.alerts = map[string]int64{}
	c.undo = c.undo[:0]
}

// check, at the start of a group's transaction on conn, forgets every row
// when conn is not the connection the cache follows or when another
// connection has committed to the file since the last check.
func (c *rowCache) check(conn *sql.Conn, t *sql.Tx) error {
	var dc any
	if err := conn.Raw(func(d any) error { dc = d; return nil }); err != nil {
		return err
	}
	var version int64
	if err := t.QueryRowContext(context.Background(), "PRAGMA data_version").Scan(&version); err != nil {
		return err
	}
	if dc != c.conn || version != c.version {
		c.reset()
		c.conn, c.version = dc, version
	}
	return nil
}

// memberKept ends a member's changes with them kept (its savepoint was
// released); memberUndone undoes them (its savepoint was rolled back).
func (c *rowCache) memberKept() { c.undo = c.undo[:0] }

func (c *rowCache) memberUndone() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		c.undo[i]()
	}
	c.undo = c.undo[:0]
}

// put sets m[key] to v, or removes it when del, so that the running
// member's undo restores it. Forgetting a row is always safe: past
// maxCachedRows, an arbitrary one makes room.
func put[V any](c *rowCache, m map[string]V, key string, v V, del bool) {
	old, had := m[key]
	if !had && del {
		return
	}
	c.undo = append(c.undo, func() {
		if had {
			m[key] = old
		} else {
			delete(m, key)
		}
	})
	if del {
		delete(m, key)
		return
	}
	if !had && len(m) >= maxCachedRows {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[key] = v
}

func (c *rowCache) setVehicle(v fleet.Vehicle)  { put(c, c.vehicles, v.ID, v, false) }
func (c *rowCache) forgetVehicle(id string)     { put(c, c.vehicles, id, fleet.Vehicle{}, true) }
func (c *rowCache) forgetTrip(vehicleID string) { put(c, c.trips, vehicleID, latestTrip{}, true) }
func (c *rowCache) setTrip(vehicleID string, lt latestTrip) {
	put(c, c.trips, vehicleID, lt, false)
}
func (c *rowCache) setAlerts(accountID string, v int64) { put(c, c.alerts, accountID, v, false) }
func (c *rowCache) forgetAlerts(accountID string)       { put(c, c.alerts, accountID, 0, true) }

// putTrip notes that tr was written: it is its vehicle's latest trip when
// it starts after the latest known, and when it is the latest known (at
// its start or later). A vehicle whose latest trip is not known stays so;
// one whose latest trip moved its start back is forgotten.
func (c *rowCache) putTrip(tr fleet.Trip) {
	lt, ok := c.trips[tr.VehicleID]
	switch {
	case !ok:
	case !lt.ok || tr.Start.Timestamp.After(lt.trip.Start.Timestamp):
		c.setTrip(tr.VehicleID, latestTrip{tr, true})
	case lt.trip.ID == tr.ID && !tr.Start.Timestamp.Before(lt.trip.Start.Timestamp):
		c.setTrip(tr.VehicleID, latestTrip{tr, true})
	case lt.trip.ID == tr.ID:
		c.forgetTrip(tr.VehicleID)
	}
}

// cachedTables are the tables whose rows the cache keeps; a write
// statement that names one and does not keep the cache itself empties it.
var cachedTables = []string{"vehicles", "trips", "alert_config"}

// writesCachedRows reports whether query, a write statement, may change a
// row the cache keeps.
func writesCachedRows(query string) bool {
	for _, name := range cachedTables {
		if strings.Contains(query, name) {
			return true
		}
	}
	return false
}

// argsRow is a row made of the arguments a statement wrote, in the order of
// the columns a scan function reads, so that the same function turns it
// into what a read of the written row returns.
type argsRow []any

// Scan implements scanner for the types the stores' scan functions use.
func (r argsRow) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("sqlstore: %d values for %d columns", len(r), len(dest))
	}
	for i, d := range dest {
		v := r[i]
		ok := true
		switch d := d.(type) {
		case sql.Scanner:
			if err := d.Scan(v); err != nil {
				return err
			}
		case *string:
			*d, ok = v.(string)
		case *int64:
			*d, ok = v.(int64)
		case *float64:
			*d, ok = v.(float64)
		case *int:
			*d, ok = v.(int)
		case *bool:
			*d, ok = v.(bool)
		case *[]byte:
			var b []byte
			b, ok = v.([]byte)
			*d = append([]byte(nil), b...)
		default:
			ok = false
		}
		if !ok {
			return fmt.Errorf("sqlstore: column %d: cannot scan %T into %T", i, v, d)
		}
	}
	return nil
}
