package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/fleetkit/fleetapi/fleet"
)

// The writer's row cache (SQLite).
//
// A device's report reads, in its write transaction, its vehicle's row,
// the vehicle's latest trip, the account's alert configuration version and,
// when its odometer or engine hours moved, the vehicle's maintenance
// schedules, then writes the first two back. On SQLite those reads run in the one
// writer's serial turn, where every microsecond counts against every other
// write. So the writer keeps what its transactions last read or wrote of
// those rows, and a later transaction reads them from memory.
//
// What keeps it true:
//   - Every write statement of a group member to vehicles, trips or
//     alert_config runs in a method that updates the cache itself, inside
//     tx.keeping for the tables it writes (CreateVehicle, UpdateVehicle,
//     DeleteVehicle, PutTrips, DeleteTrip, BumpAlertConfig, and
//     CreateSchedule, UpdateSchedule and DeleteSchedule, which forget the
//     vehicle's schedules). Any other
//     statement that writes them empties it: the transaction's guard runs
//     before every statement, on each of its paths (exec, query, queryRow,
//     prepared statements), and finds the tables a statement writes by
//     reading it as SQL (writtenTables), whatever its spelling.
//     TestRowCacheFollowsEveryWrite runs the store's whole contract with
//     the cache checked against the rows around every transaction, and
//     TestCachedTablesWrittenOnlyWhereKept checks every statement of the
//     package's source, those that run on the writer outside a group
//     (purges, single statements), which no guard sees, included.
//   - Nothing else changes those rows: no trigger, and the cascades
//     into them are a vehicle's trips and schedules, which DeleteVehicle
//     forgets (TestCachedTablesChangeOnlyByTheirStatements).
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
	// schedules holds all of a vehicle's maintenance schedules, in id
	// order, by vehicle id.
	schedules map[string][]fleet.Schedule
	// undo restores, newest last, what the running member changed; it is
	// empty between members.
	undo []func()
	// parsed remembers the cached tables each statement writes (writes).
	parsed map[string]tableSet
	// guarded counts the times the guard emptied the cache.
	guarded atomic.Int64
}

// latestTrip is a vehicle's latest trip, or that it has none (ok false).
type latestTrip struct {
	trip fleet.Trip
	ok   bool
}

// maxCachedRows bounds each of the cache's maps.
const maxCachedRows = 100_000

func newRowCache() *rowCache {
	c := &rowCache{parsed: map[string]tableSet{}}
	c.reset()
	return c
}

// reset forgets every row.
func (c *rowCache) reset() {
	if c == nil {
		return
	}
	c.vehicles = map[string]fleet.Vehicle{}
	c.trips = map[string]latestTrip{}
	c.alerts = map[string]int64{}
	c.schedules = map[string][]fleet.Schedule{}
	c.undo = c.undo[:0]
}

// check, at the start of a group's transaction on conn, forgets every row
// when conn is not the connection the cache follows or when another
// connection has committed to the file since the last check.
func (c *rowCache) check(conn *sql.Conn, t *sql.Tx) error {
	if c == nil {
		return nil
	}
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
func (c *rowCache) memberKept() {
	if c != nil {
		c.undo = c.undo[:0]
	}
}

func (c *rowCache) memberUndone() {
	if c == nil {
		return
	}
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
func (c *rowCache) setSchedules(vehicleID string, schs []fleet.Schedule) {
	put(c, c.schedules, vehicleID, schs, false)
}
func (c *rowCache) forgetSchedules(vehicleID string) { put(c, c.schedules, vehicleID, nil, true) }

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

// tableSet is a set of the tables whose rows the cache keeps.
type tableSet uint8

const (
	cachedVehicles tableSet = 1 << iota
	cachedTrips
	cachedAlertConfig
	cachedSchedules
)

// cachedTable returns the cached table that name (a table's name, any
// case) is, or none.
func cachedTable(name string) tableSet {
	switch strings.ToLower(name) {
	case "vehicles":
		return cachedVehicles
	case "trips":
		return cachedTrips
	case "alert_config":
		return cachedAlertConfig
	case "schedules":
		return cachedSchedules
	}
	return 0
}

// maxParsedStmts bounds the statements whose written tables the cache
// remembers, and maxParsedLen their length: longer ones (multi-row
// inserts) are read again each time, which costs little beside running
// them.
const (
	maxParsedStmts = 1024
	maxParsedLen   = 4096
)

// writes returns the cached tables that query writes (writtenTables),
// remembered by query.
func (c *rowCache) writes(query string) tableSet {
	if len(query) > maxParsedLen {
		return writtenTables(query)
	}
	if w, ok := c.parsed[query]; ok {
		return w
	}
	w := writtenTables(query)
	if len(c.parsed) < maxParsedStmts {
		c.parsed[query] = w
	}
	return w
}

// writtenTables returns the cached tables that query writes: the targets
// of its INSERT [OR ...] INTO, REPLACE INTO, UPDATE [OR ...] [ONLY] ...
// SET, DELETE FROM [ONLY] and TRUNCATE, wherever they stand (after a WITH,
// in a PostgreSQL data-modifying WITH). It reads the statement as SQL
// does: names in any case, quoted or not, qualified by a schema or not;
// comments and string literals skipped. An upsert's DO UPDATE SET is its
// INSERT's table, and FOR UPDATE a lock, not a write.
func writtenTables(query string) tableSet {
	if !namesCachedTable(query) {
		return 0 // a statement that names none of them writes none
	}
	var w tableSet
	lx := sqlLexer{s: query}
	var prev sqlToken
	for {
		tk, ok := lx.next()
		if !ok {
			return w
		}
		if tk.word {
			a := lx // reads on from the keyword, leaving lx where it is
			switch {
			case tk.is("INSERT"):
				if a.skip("OR") {
					a.next()
				}
				if a.skip("INTO") {
					w |= cachedTable(a.table())
				}
			case tk.is("REPLACE") && !prev.is("OR"):
				if a.skip("INTO") {
					w |= cachedTable(a.table())
				}
			case tk.is("UPDATE"):
				if a.skip("OR") {
					a.next()
				}
				a.skip("ONLY")
				n := a.table()
				if a.skip("AS") {
					a.next()
				} else if b := a; !b.skip("SET") {
					if t, ok := b.next(); ok && t.name {
						a = b // an alias
					}
				}
				if n != "" && a.skip("SET") {
					w |= cachedTable(n)
				}
			case tk.is("DELETE"):
				if a.skip("FROM") {
					a.skip("ONLY")
					w |= cachedTable(a.table())
				}
			case tk.is("TRUNCATE"):
				a.skip("TABLE")
				for {
					a.skip("ONLY")
					n := a.table()
					if n == "" {
						break
					}
					w |= cachedTable(n)
					if t, ok := a.next(); !ok || t.text != "," {
						break
					}
				}
			}
		}
		prev = tk
	}
}

// namesCachedTable reports whether query holds the name of a cached
// table, in any case: writtenTables reads only the statements that do.
func namesCachedTable(query string) bool {
	for i := 0; i < len(query); i++ {
		switch query[i] | 0x20 { // ASCII letters in lower case
		case 'v':
			if hasFold(query[i:], "vehicles") {
				return true
			}
		case 't':
			if hasFold(query[i:], "trips") {
				return true
			}
		case 'a':
			if hasFold(query[i:], "alert_config") {
				return true
			}
		case 's':
			if hasFold(query[i:], "schedules") {
				return true
			}
		}
	}
	return false
}

// hasFold reports whether s starts with lower, a lower-case ASCII word, in
// any case.
func hasFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// sqlToken is a word (a keyword or a name), a quoted name, or one
// character of punctuation; string literals, numbers, placeholders and
// comments are left out.
type sqlToken struct {
	text string
	word bool // a bare word: a keyword or a name
	name bool // a bare word or a quoted name
}

// is reports whether tk is the keyword kw (upper case), in any case.
func (tk sqlToken) is(kw string) bool { return tk.word && strings.EqualFold(tk.text, kw) }

// sqlLexer reads a statement's tokens one at a time; a copy reads on from
// where the original stands.
type sqlLexer struct {
	s string
	i int
}

// next returns the next token; ok is false at the end.
func (l *sqlLexer) next() (tk sqlToken, ok bool) {
	s := l.s
	for l.i < len(s) {
		i, c := l.i, s[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			l.i++
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i - 1
			}
			l.i = i + j + 1
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				j = len(s) - i - 4
			}
			l.i = i + j + 4
		case c == '\'':
			l.i = skipQuoted(s, i, '\'')
		case c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			l.i = skipQuoted(s, i, end)
			name := s[i+1 : max(i+1, l.i-1)]
			if end != ']' {
				name = strings.ReplaceAll(name, string([]byte{end, end}), string(end))
			}
			return sqlToken{text: name, name: true}, true
		case isWordByte(c) && !(c >= '0' && c <= '9') && c != '$':
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			l.i = j
			return sqlToken{text: s[i:j], word: true, name: true}, true
		case isWordByte(c): // a number or a placeholder
			for l.i++; l.i < len(s) && isWordByte(s[l.i]); l.i++ {
			}
		default:
			l.i++
			return sqlToken{text: s[i : i+1]}, true
		}
	}
	return sqlToken{}, false
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// skip reads the next token if it is the keyword kw (upper case).
func (l *sqlLexer) skip(kw string) bool {
	a := *l
	if tk, ok := a.next(); ok && tk.is(kw) {
		*l = a
		return true
	}
	return false
}

// table reads a table's name, "schema"."table" or table, and returns the
// table's; "" when the next token is no name.
func (l *sqlLexer) table() string {
	tk, ok := l.next()
	if !ok || !tk.name {
		return ""
	}
	n := tk.text
	for {
		a := *l
		if dot, ok := a.next(); !ok || dot.text != "." {
			return n
		}
		part, ok := a.next()
		if !ok || !part.name {
			return n
		}
		n, *l = part.text, a
	}
}

// skipQuoted returns the index after the quoted text that starts at i and
// ends with end (doubled, a quote stands for itself).
func skipQuoted(query string, i int, end byte) int {
	for j := i + 1; j < len(query); j++ {
		if query[j] == end {
			if j+1 < len(query) && query[j+1] == end && end != ']' {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(query)
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
			if v == nil { // NULL
				*d, ok = nil, true
			}
		default:
			ok = false
		}
		if !ok {
			return fmt.Errorf("sqlstore: column %d: cannot scan %T into %T", i, v, d)
		}
	}
	return nil
}
