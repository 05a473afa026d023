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
// # Transactions
//
// On SQLite one connection writes (Update runs in BEGIN IMMEDIATE on it,
// concurrent Updates sharing one transaction and one sync, each in its own
// savepoint: see group.go) and a pool of query-only connections reads (View, lookups) from WAL snapshots,
// so writers are serialised and readers see one consistent state without
// waiting for them. On PostgreSQL, Update runs at isolation SERIALIZABLE and
// is retried a few times when PostgreSQL aborts it to keep it so (fn may then
// run more than once); it finds rows through indexes only, and no index
// holds a column that location ingest changes, so that transactions on
// different rows (two vehicles' ingests) do not abort each other. View runs
// READ ONLY at REPEATABLE READ, one snapshot.
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
	"math/rand/v2"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"               // the "sqlite" driver, and its error codes
	sqlite3 "modernc.org/sqlite/lib"
)

// Store is the fleet.Store on a SQL database. Create it with Open; it is
// safe for concurrent use.
type Store struct {
	d *dialect
	// rdb serves reads; wdb serves writes. On SQLite wdb is one connection
	// and rdb a pool of query-only ones; on PostgreSQL both are one pool.
	rdb, wdb *sql.DB
	// quota holds SQLite's rate-limit windows; nil on PostgreSQL.
	quota *memQuota
	// On PostgreSQL: addrQuota holds the windows of client addresses (the
	// brake on requests without a valid key) in this process's memory;
	// fast is a small pool whose commits do not wait for the disk, for
	// rate limiting and the live feed; quotaBatch coalesces the takes of
	// the server's requests into round trips on it.
	addrQuota  *memQuota
	fast       *sql.DB
	quotaBatch quotaBatcher
	// sdb is the pool of Update's SERIALIZABLE transactions (pg_fast.go).
	sdb *sql.DB
	// dsn is the database's, for the live feed's listening connection;
	// liveAppend coalesces the appends to the feed.
	dsn        string
	liveAppend liveAppender
	// writers bounds the SERIALIZABLE transactions (Update) of this
	// server that run at once (pg_writers.go).
	writers writerGate
	// bulkWriters bounds the bulk writes among them (pgBulkWriters).
	bulkWriters writerGate
	// unfair makes bulk writes wait like any other, as before the writer
	// served accounts in turn (the baseline of the benchmarks).
	unfair atomic.Bool
	// keyByHash is prepared once: on SQLite, parsing the query costs more
	// than running it.
	keyByHash *sql.Stmt
	// claim holds the delivery claim's statements, prepared once on the
	// writer for the same reason: a sender claims many times a second.
	claim claimStmts
	// group forms SQLite's group commits (see group.go); nil on PostgreSQL.
	group *groupCommit
	// wstmts and rstmts cache prepared statements of the writer and the
	// readers on SQLite (see stmtcache.go); nil on PostgreSQL.
	wstmts, rstmts *stmtCache

	// timeout bounds every call into the database (Options.Timeout).
	timeout time.Duration

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

// SQLite busy timeout: how long a connection waits for another process's
// lock before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 5 * time.Second

// Open opens the database that dsn names and applies pending migrations:
// "sqlite:PATH" (the file is created if missing) or "postgres://..." and
// "postgresql://..." (a pgx connection string; runtime parameters such as
// search_path may be given in its query).
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with settings.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	var s *Store
	var err error
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		s, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err = openPostgres(ctx, withTimeouts(dsn, o.Timeout))
	default:
		return nil, fmt.Errorf("sqlstore: unsupported data source %q: want sqlite:PATH or postgres://USER@HOST:PORT/DB (fleetstore.Open also takes memory:)", Redact(dsn))
	}
	if err != nil {
		return nil, err
	}
	s.timeout = o.Timeout
	if err := s.Migrate(ctx); err != nil {
		s.closeDBs()
		return nil, err
	}
	if s.quota != nil {
		if err := s.quota.load(ctx, s); err != nil {
			s.closeDBs()
			return nil, err
		}
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

func openSQLite(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlstore: sqlite: want the path of a database file, got %q", path)
	}
	// A new database is a file its owner alone may read and write
	// (secrets' hashes, sealed secrets and every account's data are in
	// it); SQLite gives the -wal and -shm files beside it the same mode.
	// An empty file is a new database to SQLite.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("sqlstore: sqlite: create %s: %w", path, err)
	}
	// The pragmas go in the DSN so that every connection the pools open
	// gets them. busy_timeout comes first: journal_mode needs a lock.
	common := fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", sqliteBusyTimeout.Milliseconds())
	wdb, err := sql.Open("sqlite", path+common+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: sqlite: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	// The writer connects first: it turns the file to WAL before any reader
	// opens it.
	if err := pingSQLite(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlstore: sqlite: open %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", path+common+"&_pragma=query_only(1)")
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlstore: sqlite: %w", err)
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	rdb.SetMaxOpenConns(readers)
	rdb.SetMaxIdleConns(readers)
	rdb.SetConnMaxLifetime(0)
	rdb.SetConnMaxIdleTime(0)
	if err := pingSQLite(ctx, rdb); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("sqlstore: sqlite: open %s: %w", path, err)
	}
	s := &Store{d: newDialect(SQLite), rdb: rdb, wdb: wdb, quota: newMemQuota()}
	s.group = &groupCommit{db: wdb, s: s, cache: newRowCache()}
	s.wstmts, s.rstmts = newStmtCache(wdb), newStmtCache(rdb)
	return s, nil
}

// pingSQLite opens a first connection. Turning a new file to WAL needs an
// exclusive lock for which SQLite does not wait (it would risk a deadlock),
// so when processes open a new file at once one may be told SQLITE_BUSY:
// it tries again, for up to the busy timeout.
func pingSQLite(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(sqliteBusyTimeout)
	for attempt := 1; ; attempt++ {
		err := db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// PostgreSQL pool size. Every request holds a connection only for the
// length of one short transaction.
const postgresConns = 32

// withTimeouts adds statement_timeout and connect_timeout for d to a
// PostgreSQL URL that does not set them.
func withTimeouts(dsn string, d time.Duration) string {
	if d <= 0 {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // Open reports it
	}
	q := u.Query()
	if !q.Has("statement_timeout") {
		q.Set("statement_timeout", fmt.Sprint(d.Milliseconds()))
	}
	if !q.Has("connect_timeout") {
		q.Set("connect_timeout", fmt.Sprint(max(1, int(d.Round(time.Second)/time.Second))))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: postgres: %w", err)
	}
	db.SetMaxOpenConns(postgresConns - pgWriters) // Update has its own pool
	db.SetMaxIdleConns(postgresConns - pgWriters)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlstore: postgres: connect: %w", err)
	}
	fast, err := openFastPostgres(ctx, dsn)
	if err != nil {
		db.Close()
		return nil, err
	}
	sdb, err := openSerializablePostgres(ctx, dsn)
	if err != nil {
		db.Close()
		fast.Close()
		return nil, err
	}
	return &Store{d: newDialect(Postgres), rdb: db, wdb: db, sdb: sdb, fast: fast, addrQuota: newMemQuota(), dsn: dsn,
		writers: newWriterGate(pgWriters), bulkWriters: newWriterGate(pgBulkWriters)}, nil
}

// Dialect returns "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.d.name }

// Ping implements fleet.Store.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	if err := s.wdb.PingContext(ctx); err != nil {
		return wrap(err, "ping")
	}
	if s.rdb != s.wdb {
		return wrap(s.rdb.PingContext(ctx), "ping")
	}
	return nil
}

// Check verifies the database's own consistency: on SQLite, PRAGMA
// integrity_check and foreign_key_check (what they find comes back as the
// error); on PostgreSQL, which checks its pages itself, that it answers.
func (s *Store) Check(ctx context.Context) error {
	if s.d.name == Postgres {
		return s.Ping(ctx)
	}
	var problems []string
	rows, err := s.wdb.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return err
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	rows, err = s.wdb.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return err
	}
	for rows.Next() {
		problems = append(problems, "a row refers to a missing parent")
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("sqlite: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Close implements fleet.Store. On SQLite it first saves the rate-limit
// windows held in memory. Calls after the first return its result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		var err error
		if s.quota != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = s.quota.save(ctx, s)
			cancel()
		}
		s.closeErr = errors.Join(err, s.closeDBs())
	})
	return s.closeErr
}

func (s *Store) closeDBs() error {
	var err error
	if s.keyByHash != nil {
		err = s.keyByHash.Close()
	}
	err = errors.Join(err, s.claim.close(), s.wstmts.close(), s.rstmts.close())
	if s.fast != nil {
		err = errors.Join(err, s.fast.Close())
	}
	if s.sdb != nil {
		err = errors.Join(err, s.sdb.Close())
	}
	err = errors.Join(err, s.wdb.Close())
	if s.rdb != s.wdb {
		err = errors.Join(err, s.rdb.Close())
	}
	return err
}

// maxAttempts bounds how often a PostgreSQL transaction aborted by a
// serialisation failure or a deadlock is run.
const maxAttempts = 10

// Update implements fleet.Store: fn runs in one read-write transaction,
// committed when fn returns nil and rolled back otherwise. On PostgreSQL the
// transaction is SERIALIZABLE and fn runs again (up to a few times) when
// PostgreSQL aborts it to keep it so; fn must therefore have no effects
// outside the Tx that a second run would repeat.
func (s *Store) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	if s.group != nil {
		return s.groupUpdate(ctx, false, func(t *tx) error { return fn(t) })
	}
	opts := &sql.TxOptions{Isolation: sql.LevelSerializable}
	// The slot is held across the attempts, backoffs included: letting a
	// transaction that waits to run again leave its slot let more
	// conflicting ones run, and two servers at 3,000 vehicles (fleetserver
	// load) answered 39 requests 503 in 30 s, p99 0.9 s, instead of none
	// and 10-64 ms.
	if c, ok := fleet.WriteCostOf(ctx); ok && c.Points >= bulkPoints && !s.unfair.Load() {
		if err := s.bulkWriters.acquire(ctx); err != nil {
			return err
		}
		defer s.bulkWriters.release()
	}
	if err := s.writers.acquire(ctx); err != nil {
		return err
	}
	defer s.writers.release()
	// On its own pool, whose sessions plan with index scans
	// (openSerializablePostgres).
	return s.run(ctx, s.sdb, opts, false, func(t *tx) error { return fn(t) })
}

// View implements fleet.Store: fn runs in a read-only transaction that sees
// one snapshot. Writes in it fail.
func (s *Store) View(ctx context.Context, fn func(fleet.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.d.name == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	return s.run(ctx, s.rdb, opts, true, func(t *tx) error { return fn(t) })
}

// write runs fn in a write transaction at the database's default isolation
// (READ COMMITTED on PostgreSQL, where fn takes the row locks it needs;
// BEGIN IMMEDIATE on SQLite's one writer connection).
func (s *Store) write(ctx context.Context, fn func(*tx) error) error {
	if s.group != nil {
		return s.groupUpdate(ctx, false, fn)
	}
	return s.run(ctx, s.wdb, &sql.TxOptions{}, false, fn)
}

// writeLease is write for a transaction whose commit need not reach the
// disk before it returns: a claim, whose leases a crash may lose, which
// only makes their deliveries due again. On SQLite it joins the group
// commit: a group of leases only is committed with synchronous=NORMAL (in
// WAL mode the next synced commit syncs it too, and a crash before that
// drops it whole); on PostgreSQL synchronous_commit is off for the
// transaction.
func (s *Store) writeLease(ctx context.Context, fn func(*tx) error) error {
	if s.d.name == Postgres {
		return s.write(ctx, func(t *tx) error {
			if _, err := t.tx.ExecContext(t.ctx, "SET LOCAL synchronous_commit TO OFF"); err != nil {
				return t.failed(err)
			}
			return fn(t)
		})
	}
	// On SQLite it joins the forming group (group.go), which commits
	// without a sync when it holds leases only.
	return s.groupUpdate(ctx, true, fn)
}

// groupUpdate runs fn in SQLite's group commit (group.go) at the store's
// boundary, as run does: under the store's deadline, which also ends the
// wait for the writer, with a store fault leaving as unavailable.
func (s *Store) groupUpdate(ctx context.Context, lease bool, fn func(*tx) error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return faultIn(ctx, s.group.update(ctx, lease, fn))
}

// beginner is a database or one of its connections.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// run runs fn in a transaction, again when the database aborted it for a
// serialisation failure or a deadlock (PostgreSQL), at most maxAttempts
// times.
//
// It is the store's boundary: the call runs under the store's deadline
// (bound), and a store fault leaves it as unavailable (fault), including a
// serialisation failure or deadlock that outlasted the attempts.
func (s *Store) run(ctx context.Context, db beginner, opts *sql.TxOptions, readOnly bool, fn func(*tx) error) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	for attempt := 1; ; attempt++ {
		retry, err := s.runOnce(ctx, db, opts, readOnly, fn)
		if !retry || attempt == maxAttempts {
			return faultIn(ctx, err)
		}
		if err := backoff(ctx, attempt); err != nil {
			return faultIn(ctx, err)
		}
	}
}

// runOnce runs fn in one transaction. retry reports that the database
// aborted it for a serialisation failure or a deadlock, so that running it
// again may succeed.
func (s *Store) runOnce(ctx context.Context, db beginner, opts *sql.TxOptions, readOnly bool, fn func(*tx) error) (retry bool, err error) {
	stx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return classify(err) == errRetry, fmt.Errorf("sqlstore: begin: %w", err)
	}
	t := &tx{ctx: ctx, d: s.d, tx: stx, readOnly: readOnly, claim: &s.claim}
	if s.d.name != Postgres {
		if db == s.rdb {
			t.stmts = s.rstmts
		} else if db == s.wdb {
			t.stmts = s.wstmts
		}
	}
	done := false
	defer func() {
		if !done {
			stx.Rollback() // fn panicked
		}
	}()
	err = fn(t)
	done = true
	if err != nil {
		stx.Rollback()
		return t.retry, err
	}
	if err := stx.Commit(); err != nil {
		return classify(err) == errRetry, fmt.Errorf("sqlstore: commit: %w", err)
	}
	return false, nil
}

// backoff waits before attempt+1: twice as long each time from 1 ms, at
// most 100 ms, with jitter so that transactions that collided do not
// collide again.
func backoff(ctx context.Context, attempt int) error {
	d := min(time.Millisecond<<min(attempt-1, 7), 100*time.Millisecond)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// PoolStats returns the figures of the store's connection pools, by name:
// "read" and "write" on SQLite (the readers' pool and the one writer),
// "main" and "serializable" on PostgreSQL (pools of pgx connections through
// database/sql; the second runs Update's transactions).
func (s *Store) PoolStats() map[string]sql.DBStats {
	if s.rdb == s.wdb {
		return map[string]sql.DBStats{"main": s.wdb.Stats(), "serializable": s.sdb.Stats()}
	}
	return map[string]sql.DBStats{"read": s.rdb.Stats(), "write": s.wdb.Stats()}
}
