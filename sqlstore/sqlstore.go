// Package sqlstore is the fleet.Store on database/sql, for SQLite (the
// embedded default) and PostgreSQL (several servers sharing one database).
//
// # Dialects
//
// Open takes "sqlite:PATH" (modernc.org/sqlite, pure Go, no cgo) or
// "postgres://..." / "postgresql://..." (pgx). The SQL is written once;
// what differs between the two (placeholders, type names in migrations,
// row locks, driver error codes) lives in dialect.go. Times are stored as
// BIGINT Unix microseconds in UTC on both, so they round-trip exactly at
// the domain's precision. Migrations are embedded, applied in order by Open
// (and Migrate), each in its own transaction, and recorded in
// schema_migrations; on PostgreSQL an advisory lock lets several servers
// start at once.
//
// # Engines
//
// The statements of both databases are the transaction's methods (tx.go and
// a file per area: vehicles.go, trips.go...). What differs beyond their
// spelling is an engine (engine.go), which the Store hands that work: how
// Update, View and the store's other write transactions run, the
// rate-limit windows, the live feed where there is one, and closing. The
// SQLite engine (engine_sqlite.go) and the PostgreSQL engine
// (engine_postgres.go) are described below.
//
// # Transactions
//
// On SQLite one connection writes (Update runs in BEGIN IMMEDIATE on it,
// concurrent Updates sharing one transaction and one sync, each in its own
// savepoint: see group.go) and a pool of query-only connections reads
// (View, lookups) from WAL snapshots, so writers are serialised and readers
// see one consistent state without waiting for them. The writer keeps the
// rows of vehicles, trips and alert configuration its transactions last
// read or wrote (rowcache.go). On PostgreSQL, Update runs at isolation
// SERIALIZABLE, at most a few at once on each server (pg_writers.go), and
// is retried a few times when PostgreSQL aborts it to keep it so (fn may
// then run more than once); it finds rows through indexes only, and no
// index holds a column that location ingest changes, so that transactions
// on different rows (two vehicles' ingests) do not abort each other. View
// runs READ ONLY at REPEATABLE READ, one snapshot.
// The hot paths (RecordUsage, idempotency records) run at READ COMMITTED
// with explicit row locks, which serialise exactly the requests that touch
// the same row; TakeQuota is one statement that locks its row for that
// statement only, shared by the concurrent requests of a key on one server
// (quota_postgres.go).
//
// # Several servers on PostgreSQL
//
// Rate-limit windows are exact across the servers (one row per key);
// client addresses' windows (the brake on requests without a valid key)
// stay in each server's memory. The store is a fleet.LiveFeed: the live
// reports of every server pass through the table live_reports, so that
// every server's streams carry them all with the same ids (pg_live.go).
//
// # Rate-limit state on SQLite
//
// A SQLite file is owned by one process: the store assumes that no other
// process serves requests from the same file at the same time. Under that
// assumption, TakeQuota keeps each subject's window in memory (a mutex and a
// map, as memstore does), so that no request waits on a disk write. The
// windows are saved when the store closes and loaded when it opens, so a
// restart does not hand out a fresh hour; a process that crashes loses the
// windows of its last run. On PostgreSQL the windows live in the database
// and are exact across every server sharing it.
//
// # Durability
//
// SQLite runs in WAL mode with synchronous=FULL: each commit is synced to
// disk before Update returns, so a success reported to a client survives a
// process crash and a power loss. (NORMAL would survive a process crash but
// could lose the last commits on power loss.) The cost is one fsync per
// group of concurrent write transactions (group commit, group.go); request
// counting and rate limiting do not pay it.
// PostgreSQL commits durably (its synchronous_commit setting) except for
// TakeQuota and the live feed, whose commits do not wait for the flush: a
// database crash may forget the last moments of request counts and of the
// live feed, nothing else.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Store is the fleet.Store on a SQL database. Create it with Open; it is
// safe for concurrent use.
type Store struct {
	*shared
	// eng runs what differs between the databases (engine.go).
	eng engine
	// keyByHash is prepared once: on SQLite, parsing the query costs more
	// than running it.
	keyByHash *sql.Stmt

	closeOnce sync.Once
	closeErr  error
}

// Options are the settings of OpenWith.
type Options struct {
	// Timeout bounds every call into the database: a transaction with its
	// retries, a lookup, a purge. A call past it fails as unavailable. On
	// PostgreSQL it is also the connections' statement_timeout and (in
	// whole seconds, at least 1) their connect_timeout, unless the DSN
	// sets those. 0 means no bound (Open).
	Timeout time.Duration
}

// DefaultTimeout is the Timeout fleetserver uses unless told otherwise.
const DefaultTimeout = 10 * time.Second

var _ fleet.Store = (*Store)(nil)

// Open opens the database that dsn names and applies pending migrations:
// "sqlite:PATH" (the file is created if missing) or "postgres://..." and
// "postgresql://..." (a pgx connection string; runtime parameters such as
// search_path may be given in its query).
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with settings.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	s := &Store{shared: &shared{timeout: o.Timeout}}
	var err error
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		s.eng, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), s.shared)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s.eng, err = openPostgres(ctx, dsn, s.shared)
	default:
		return nil, fmt.Errorf("sqlstore: unsupported data source %q: want sqlite:PATH or postgres://USER@HOST:PORT/DB (fleetstore.Open also takes memory:)", Redact(dsn))
	}
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.eng.load(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if s.keyByHash, err = s.rdb.PrepareContext(ctx, s.d.q(keyByHashQuery)); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("sqlstore: prepare: %w", err)
	}
	if err := s.claim.prepare(ctx, s.rdb, s.wdb, s.d); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("sqlstore: prepare: %w", err)
	}
	return s, nil
}

// Redact returns dsn with any password replaced by "***" (the one in a
// URL's user information, and a password parameter of its query), for
// quoting a DSN in errors and logs.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "***")
		u.RawQuery = q.Encode()
	}
	return strings.ReplaceAll(u.String(), "%2A%2A%2A", "***")
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.d.name }

// Ping implements fleet.Store.
func (s *Store) Ping(ctx context.Context) error { return s.ping(ctx) }

// Check verifies the database's own consistency: on SQLite, PRAGMA
// integrity_check and foreign_key_check (what they find comes back as the
// error); on PostgreSQL, which checks its pages itself, that it answers.
func (s *Store) Check(ctx context.Context) error { return s.eng.check(ctx) }

// Close implements fleet.Store. On SQLite it first saves the rate-limit
// windows held in memory. Calls after the first return its result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.eng.save(ctx)
		cancel()
		s.closeErr = errors.Join(err, s.closeDBs())
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var err error
	if s.keyByHash != nil {
		err = s.keyByHash.Close()
	}
	return errors.Join(err, s.claim.close(), s.eng.close())
}

// Update implements fleet.Store: fn runs in one read-write transaction,
// committed when fn returns nil and rolled back otherwise. On PostgreSQL the
// transaction is SERIALIZABLE and fn runs again (up to a few times) when
// PostgreSQL aborts it to keep it so; fn must therefore have no effects
// outside the Tx that a second run would repeat.
func (s *Store) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.eng.update(ctx, func(t *tx) error { return fn(t) })
}

// View implements fleet.Store: fn runs in a read-only transaction that sees
// one snapshot. Writes in it fail.
func (s *Store) View(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.eng.view(ctx, func(t *tx) error { return fn(t) })
}

// PoolStats returns the figures of the store's connection pools, by name:
// "read" and "write" on SQLite (the readers' pool and the one writer),
// "main", "group" and "serializable" on PostgreSQL (pools of pgx
// connections through database/sql; "group" runs the group commits of
// location writes, "serializable" Update's other transactions).
func (s *Store) PoolStats() map[string]sql.DBStats { return s.eng.poolStats() }

// WriteGroups reports how many group commits the store has made and how
// many write transactions they carried (their ratio is the mean group
// size): every write on SQLite, location writes on PostgreSQL.
func (s *Store) WriteGroups() (commits, transactions int64) { return s.eng.writeGroups() }
