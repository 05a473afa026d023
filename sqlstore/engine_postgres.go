package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// pgEngine runs a PostgreSQL store: one pool for reads and single
// statements (rdb and wdb), one for the group commits of location writes
// (group_postgres.go), one for Update's other, SERIALIZABLE, transactions
// behind the writer slots, one whose commits do not wait for the disk for
// rate limiting and the live feed.
type pgEngine struct {
	*shared
	// group forms the group commits of location writes on gdb, its
	// pool of one connection per group runner (group_postgres.go).
	group *groupCommit
	gdb   *sql.DB
	// sdb is the pool of Update's SERIALIZABLE transactions (pg_fast.go).
	sdb *sql.DB
	// writers bounds the SERIALIZABLE transactions of this server that
	// run at once (pg_writers.go).
	writers writerGate
	// fast is a small pool whose commits do not wait for the disk, for
	// rate limiting and the live feed (pg_fast.go).
	fast *sql.DB
	// addrQuota holds the windows of client addresses (the brake on
	// requests without a valid key) in this process's memory; quotaBatch
	// coalesces the takes of the server's requests into round trips on
	// fast (quota_postgres.go).
	addrQuota  *memQuota
	quotaBatch quotaBatcher
	// dsn is the database's, for the live feed's listening connection;
	// liveAppend coalesces the appends to the feed (pg_live.go).
	dsn        string
	liveAppend liveAppender
}

// PostgreSQL pool size. Every request holds a connection only for the
// length of one short transaction.
const postgresConns = 32

// withoutJIT turns PostgreSQL's JIT compilation off for the store's
// sessions, unless the URL sets jit itself. The store's statements are
// short, and JIT compiles a plan whose estimated cost passes
// jit_above_cost: the status sweep's, planned without sequential scans on
// the SERIALIZABLE pool (pg_fast.go), carries the planner's penalty for
// them and spent 340-430 ms compiling at each run, about 5% of
// PostgreSQL's CPU under pg-scale.sh's load (docs/storage.md).
func withoutJIT(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // Open reports it
	}
	q := u.Query()
	if q.Has("jit") {
		return dsn
	}
	q.Set("jit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

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

// openPostgres connects to the database dsn names for sh, with sh's
// timeout on its connections (withTimeouts).
func openPostgres(ctx context.Context, dsn string, sh *shared) (*pgEngine, error) {
	dsn = withoutJIT(withTimeouts(dsn, sh.timeout))
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
	// The groups' sessions plan without sequential scans: every statement
	// of a group finds its rows by key, and the plans PostgreSQL keeps for
	// a session (the generic plan of a prepared statement, chosen once the
	// table's statistics say it is small) had the write-set statement
	// update the vehicles through a hash join over all of them, and the
	// vehicles' lock filter every row by the group's ids: a third of
	// PostgreSQL's CPU under pg-scale.sh with 2,000 vehicles, and more with
	// every vehicle (docs/storage.md).
	gdb, err := openPostgresPool(ctx, dsn, pgGroupRunners, "synchronous_commit", "on", "enable_seqscan", "off")
	if err != nil {
		db.Close()
		fast.Close()
		sdb.Close()
		return nil, err
	}
	sh.d, sh.rdb, sh.wdb = newDialect(Postgres), db, db
	return &pgEngine{shared: sh, sdb: sdb, gdb: gdb, fast: fast, addrQuota: newMemQuota(), dsn: dsn,
		writers: newWriterGate(pgWriters),
		group: &groupCommit{db: gdb, sh: sh, runners: pgGroupRunners, bulkRunners: pgGroupRunners - 1,
			maxMembers: maxGroup, policy: pgPolicy{}}}, nil
}

// update runs a location write (one whose context carries a
// fleet.WriteCost) in a group commit at READ COMMITTED
// (group_postgres.go); any other fn at isolation SERIALIZABLE on the
// writers' pool, in a writer slot, again (up to maxAttempts times) when
// PostgreSQL aborts it to keep it so.
func (e *pgEngine) update(ctx context.Context, fn func(*tx) error) error {
	if _, ok := fleet.WriteCostOf(ctx); ok {
		ctx, cancel := e.bound(ctx)
		defer cancel()
		return faultIn(ctx, e.group.update(ctx, false, fn))
	}
	opts := &sql.TxOptions{Isolation: sql.LevelSerializable}
	// The slot is held across the attempts, backoffs included: letting a
	// transaction that waits to run again leave its slot let more
	// conflicting ones run, and two servers at 3,000 vehicles (fleetserver
	// load) answered 39 requests 503 in 30 s, p99 0.9 s, instead of none
	// and 10-64 ms (when location writes were SERIALIZABLE too).
	if err := e.writers.acquire(ctx); err != nil {
		return err
	}
	defer e.writers.release()
	// On its own pool, whose sessions plan with index scans
	// (openSerializablePostgres).
	return e.run(ctx, e.sdb, opts, false, nil, fn)
}

// write runs fn at READ COMMITTED, where fn takes the row locks it needs.
func (e *pgEngine) write(ctx context.Context, fn func(*tx) error) error {
	return e.run(ctx, e.wdb, &sql.TxOptions{}, false, nil, fn)
}

// writeLease is write with synchronous_commit off for the transaction.
func (e *pgEngine) writeLease(ctx context.Context, fn func(*tx) error) error {
	return e.write(ctx, func(t *tx) error {
		if _, err := t.tx.ExecContext(t.ctx, "SET LOCAL synchronous_commit TO OFF"); err != nil {
			return t.failed(err)
		}
		return fn(t)
	})
}

// view runs fn READ ONLY at REPEATABLE READ: one snapshot.
func (e *pgEngine) view(ctx context.Context, fn func(*tx) error) error {
	opts := &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
	return e.run(ctx, e.rdb, opts, true, nil, fn)
}

// The rate-limit windows of keys are rows, taken in coalesced round trips
// (quota_postgres.go); those of client addresses stay in this process's
// memory.

func (e *pgEngine) takeQuota(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	if isAddress(subject) {
		return e.addrQuota.take(subject, limit, fleet.Timestamp(now))
	}
	// Window starts are stored at microsecond precision: start from the
	// stored value, so that the first answer agrees with later ones.
	ctx, cancel := e.bound(ctx)
	defer cancel()
	q, err := e.takeQuotaPostgres(ctx, subject, limit, fleet.Timestamp(now))
	return q, wrap(err, "take quota")
}

func (e *pgEngine) takeQuotaN(ctx context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	if isAddress(subject) {
		return e.addrQuota.takeN(subject, n, limit, fleet.Timestamp(now))
	}
	ctx, cancel := e.bound(ctx)
	defer cancel()
	if n == 1 {
		// One unit, all or nothing, is what a request takes: a one-point
		// report's points join the batcher's round trips with the
		// requests' (no statement and no commit of their own).
		q, err := e.takeQuotaPostgres(ctx, subject, limit, fleet.Timestamp(now))
		return q, wrap(err, "take quota")
	}
	q, err := e.takeQuotaNPostgres(ctx, subject, n, limit, fleet.Timestamp(now))
	return q, wrap(err, "take quota")
}

func (e *pgEngine) refundQuota(ctx context.Context, subject string, n int, reset time.Time) error {
	if isAddress(subject) {
		return e.addrQuota.refund(subject, n, fleet.Timestamp(reset))
	}
	ctx, cancel := e.bound(ctx)
	defer cancel()
	return wrap(e.refundQuotaPostgres(ctx, subject, n, fleet.Timestamp(reset)), "give back quota")
}

// purgeQuota forgets the addresses' windows and deletes the keys' rows
// that ended before before.
func (e *pgEngine) purgeQuota(ctx context.Context, before time.Time) (int, error) {
	n := e.addrQuota.purge(before)
	m, err := e.purge(ctx, purgeQuotaSQL, before.Add(-fleet.QuotaWindow), "purge quotas")
	return n + m, err
}

// check asks the database to answer: PostgreSQL checks its pages itself.
func (e *pgEngine) check(ctx context.Context) error { return e.ping(ctx) }

func (e *pgEngine) poolStats() map[string]sql.DBStats {
	return map[string]sql.DBStats{"main": e.wdb.Stats(), "serializable": e.sdb.Stats(), "group": e.gdb.Stats()}
}

// writeGroups counts the group commits of location writes: the other
// writes commit one by one.
func (e *pgEngine) writeGroups() (commits, transactions int64) {
	return e.group.commits.Load(), e.group.members.Load()
}

// load and save have nothing to do: the windows are in the database.
func (e *pgEngine) load(context.Context) error { return nil }
func (e *pgEngine) save(context.Context) error { return nil }

func (e *pgEngine) close() error {
	return errors.Join(e.fast.Close(), e.gdb.Close(), e.sdb.Close(), e.wdb.Close())
}
