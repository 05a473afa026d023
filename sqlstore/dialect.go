package sqlstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The dialects a Store speaks, as Dialect returns them.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// dialect is everything that differs between SQLite and PostgreSQL. The rest
// of the package writes SQL once, with ? placeholders, in the subset both
// understand (INSERT ... ON CONFLICT, CASE, LIMIT).
type dialect struct {
	name string
	// forUpdate ends a SELECT whose rows a read-modify-write must lock. It is
	// empty on SQLite, where a writing transaction holds the database's
	// write lock from BEGIN IMMEDIATE on.
	forUpdate string
	// skipLocked ends a sub-SELECT whose rows a claim takes: rows another
	// claim is taking are skipped rather than waited for. Empty on SQLite.
	skipLocked string
	// dueByEndpoint selects (id, account_id, webhook_id, next_attempt_at)
	// of each endpoint's earliest pending deliveries due at the first
	// argument, as many as the second: LATERAL on PostgreSQL, a correlated
	// IN on SQLite (which has no LATERAL). Both read the index
	// webhook_deliveries_endpoint_due once per endpoint.
	dueByEndpoint string
	// idsIn is the condition "id is one of the ids of one argument", whose
	// value idsArg makes: a JSON array read by json_each on SQLite, an
	// array on PostgreSQL. The statement's text stays the same whatever
	// the number of ids, so that it is prepared once.
	idsIn string
	// latestTrips reads the latest trip (tripColumns) of each vehicle of
	// one argument (idsArg's): on PostgreSQL one seek down
	// trips_vehicle_start per vehicle (LATERAL ... LIMIT 1); on SQLite each
	// vehicle's latest start from that index, then its row.
	latestTrips string
	// abortsOnError says that a failed statement aborts the whole
	// transaction (PostgreSQL), so that a statement whose failure the
	// caller may go on after runs in a savepoint (tx.savepoint). SQLite
	// undoes a failed statement by itself.
	abortsOnError bool
	// rebound caches queries rewritten for PostgreSQL (string -> string).
	rebound sync.Map
}

func newDialect(name string) *dialect {
	d := &dialect{name: name, idsIn: "id IN (SELECT value FROM json_each(?))"}
	d.dueByEndpoint = `SELECT d.id, d.account_id, d.webhook_id, d.next_attempt_at FROM webhooks w
		JOIN webhook_deliveries d ON d.id IN (SELECT e.id FROM webhook_deliveries e
			WHERE e.webhook_id = w.id AND e.status = 'pending' AND e.next_attempt_at <= ?
			ORDER BY e.next_attempt_at, e.id LIMIT ?)`
	d.latestTrips = `SELECT ` + tripColumns + ` FROM trips WHERE (vehicle_id, start_at) IN
			(SELECT vehicle_id, MAX(start_at) FROM trips WHERE vehicle_id IN (SELECT value FROM json_each(?)) GROUP BY vehicle_id)`
	if name == Postgres {
		d.latestTrips = `SELECT t.* FROM unnest(?::text[]) AS v(id) CROSS JOIN LATERAL
			(SELECT ` + tripColumns + ` FROM trips WHERE vehicle_id = v.id ORDER BY start_at DESC LIMIT 1) t`
		d.abortsOnError = true
		d.forUpdate = " FOR UPDATE"
		d.skipLocked = " FOR UPDATE SKIP LOCKED"
		d.idsIn = "id = ANY(?)"
		d.dueByEndpoint = `SELECT d.id, d.account_id, d.webhook_id, d.next_attempt_at FROM webhooks w
		CROSS JOIN LATERAL (SELECT e.id, e.account_id, e.webhook_id, e.next_attempt_at FROM webhook_deliveries e
			WHERE e.webhook_id = w.id AND e.status = 'pending' AND e.next_attempt_at <= ?
			ORDER BY e.next_attempt_at, e.id LIMIT ?) d`
	}
	return d
}

// idsArg is the argument of idsIn for ids.
func (d *dialect) idsArg(ids []string) any {
	if d.name == Postgres {
		return ids
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// q returns query, written with ? placeholders, in the dialect's form:
// PostgreSQL numbers them ($1, $2, ...).
func (d *dialect) q(query string) string {
	if d.name != Postgres {
		return query
	}
	if v, ok := d.rebound.Load(query); ok {
		return v.(string)
	}
	r := rebind(query)
	d.rebound.Store(query, r)
	return r
}

// rebind numbers the ? placeholders of query that are outside quotes.
func rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ddl returns a migration, written with the common type names, in the
// dialect's form: on PostgreSQL BLOB is BYTEA, and TEXT compares bytewise
// (COLLATE "C") as it does on SQLite, so that ids sort the same on both
// whatever the database's locale.
func (d *dialect) ddl(script string) string {
	if d.name != Postgres {
		return script
	}
	return replaceWords(script, map[string]string{"BLOB": "BYTEA", "TEXT": `TEXT COLLATE "C"`})
}

// replaceWords replaces the whole words of s (runs of letters, digits and
// underscores) that m names, outside quotes and comments.
func replaceWords(s string, m map[string]string) string {
	var b strings.Builder
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '-' && i+1 < len(s) && s[i+1] == '-': // comment to end of line
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			} else {
				j++
			}
			b.WriteString(s[i : i+j+1])
			i += j + 1
		case isWord(c):
			j := i
			for j < len(s) && isWord(s[j]) {
				j++
			}
			if r, ok := m[s[i:j]]; ok {
				b.WriteString(r)
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// migrationLock is run first in each migration transaction. On PostgreSQL
// it takes a transaction-scoped advisory lock named after the schema, so
// that servers starting at once apply each migration once; on SQLite the
// transaction's BEGIN IMMEDIATE already excludes every other writer.
func (d *dialect) migrationLock() string {
	if d.name != Postgres {
		return ""
	}
	return "SELECT pg_advisory_xact_lock(hashtext('fleet.schema_migrations.' || coalesce(current_schema(), '')))"
}

// setStatementTimeout is the statement that bounds each statement of the
// transaction it runs in to timeout (0: no bound), where the database has
// such a setting (PostgreSQL's statement_timeout, which Options.Timeout
// sets for every connection); empty on SQLite.
func (d *dialect) setStatementTimeout(timeout time.Duration) string {
	if d.name != Postgres {
		return ""
	}
	return fmt.Sprintf("SET LOCAL statement_timeout = %d", timeout.Milliseconds())
}

// errKind is what a driver error means to the store, judged by its code.
type errKind int

const (
	errOther      errKind = iota
	errUnique             // a unique or primary key constraint was violated
	errForeignKey         // a foreign key constraint was violated
	errRetry              // PostgreSQL gave up a transaction to keep it serialisable
)

// PostgreSQL SQLSTATE codes the store acts on.
const (
	pgUniqueViolation      = "23505"
	pgForeignKeyViolation  = "23503"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// classify returns what err means, from the driver's error code (never its
// message): PostgreSQL's SQLSTATE, SQLite's extended result code.
func classify(err error) errKind {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgUniqueViolation:
			return errUnique
		case pgForeignKeyViolation:
			return errForeignKey
		case pgSerializationFailure, pgDeadlockDetected:
			return errRetry
		}
		return errOther
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errUnique
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errForeignKey
		}
	}
	return errOther
}
