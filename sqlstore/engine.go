package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Engines
//
// The SQL is written once, on *tx, with the spelling differences in
// dialect.go. What else differs between SQLite and PostgreSQL is how a
// transaction gets to run and where the state that is not rows lives: an
// engine. A Store holds one, chosen by Open, and hands it that work:
//
//   - sqliteEngine (engine_sqlite.go): one writer connection whose write
//     transactions share commits (group commit, group.go) and keep the rows
//     they read (rowcache.go), a pool of query-only readers, prepared
//     statements cached per pool (stmtcache.go), and the rate-limit windows
//     in memory (memquota.go). No live feed: one process owns the file.
//   - pgEngine (engine_postgres.go): location writes in group commits at
//     READ COMMITTED, their vehicles locked first (group.go,
//     group_postgres.go); the other writes SERIALIZABLE behind the writer
//     slots (pg_writers.go, pg_fast.go), run again when PostgreSQL aborts
//     them; rate-limit windows in the database, taken in coalesced round
//     trips (quota_postgres.go); the live feed shared by the servers
//     (pg_live.go).

// engine is what differs between the databases. Its transactions run fn
// on a *tx at the store's boundary: under the store's deadline (bound),
// a store fault leaving as unavailable (faultIn).
type engine interface {
	// update runs Store.Update's read-write transaction.
	update(ctx context.Context, fn func(*tx) error) error
	// write runs a write transaction at the database's default isolation
	// (READ COMMITTED on PostgreSQL, where fn takes the row locks it
	// needs).
	write(ctx context.Context, fn func(*tx) error) error
	// writeLease is write for a transaction whose commit need not reach
	// the disk before it returns: a claim's leases, which a crash may lose
	// (their deliveries are then due again).
	writeLease(ctx context.Context, fn func(*tx) error) error
	// view runs a read-only transaction that sees one snapshot.
	view(ctx context.Context, fn func(*tx) error) error

	// The rate-limit windows: fleet.Store's TakeQuota, TakeQuotaN,
	// RefundQuota and PurgeQuota.
	takeQuota(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error)
	takeQuotaN(ctx context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error)
	refundQuota(ctx context.Context, subject string, n int, reset time.Time) error
	purgeQuota(ctx context.Context, before time.Time) (int, error)

	// The live feed the servers share (fleet.LiveFeed), or
	// fleet.ErrNoLiveFeed where the database has none to share.
	appendLive(ctx context.Context, accountID string, items []fleet.StreamItem, at time.Time) error
	followLive(ctx context.Context, since time.Time, deliver func([]fleet.LiveBatch)) error
	purgeLive(ctx context.Context, before time.Time) (int, error)

	// check verifies the database's own consistency (Store.Check).
	check(ctx context.Context) error
	// poolStats and writeGroups are Store.PoolStats and Store.WriteGroups.
	poolStats() map[string]sql.DBStats
	writeGroups() (commits, transactions int64)

	// load, once the schema is migrated, reads what the engine keeps in
	// memory from the last run; save writes it back before close (SQLite:
	// the rate-limit windows). close closes what the engine opened.
	load(ctx context.Context) error
	save(ctx context.Context) error
	close() error
}

// shared is what a Store and its engine both use: nothing in it is
// missing on either database.
type shared struct {
	d *dialect
	// rdb serves reads; wdb serves writes outside the engine's
	// transactions (purges, single statements). On SQLite wdb is the one
	// writer connection and rdb a pool of query-only ones; on PostgreSQL
	// both are one pool. The engine opened them and closes them.
	rdb, wdb *sql.DB
	// timeout bounds every call into the database (Options.Timeout).
	timeout time.Duration
	// claim holds the delivery claim's statements, prepared once on the
	// writer: a sender claims many times a second.
	claim claimStmts
	// unfair makes bulk writes wait like any other, as before the writer
	// served accounts in turn (the baseline of the benchmarks).
	unfair atomic.Bool
	// trips counts the round trips sent to the database (roundtrips.go).
	trips roundTrips
}

// maxAttempts bounds how often a transaction is run: a PostgreSQL
// transaction aborted by a serialisation failure or a deadlock, a SQLite
// group member whose group broke (group.go).
const maxAttempts = 10

// beginner is a database or one of its connections.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// run runs fn in a transaction on db, again when the database aborted it
// for a serialisation failure or a deadlock (PostgreSQL), at most
// maxAttempts times. stmts is the pool's statement cache, or nil.
//
// It is the store's boundary: the call runs under the store's deadline
// (bound), and a store fault leaves it as unavailable (fault), including a
// serialisation failure or deadlock that outlasted the attempts.
func (sh *shared) run(ctx context.Context, db beginner, opts *sql.TxOptions, readOnly bool, stmts *stmtCache, fn func(*tx) error) error {
	ctx, cancel := sh.bound(ctx)
	defer cancel()
	for attempt := 1; ; attempt++ {
		retry, err := sh.runOnce(ctx, db, opts, readOnly, stmts, fn)
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
func (sh *shared) runOnce(ctx context.Context, db beginner, opts *sql.TxOptions, readOnly bool, stmts *stmtCache, fn func(*tx) error) (retry bool, err error) {
	sh.trips.add(tripBegin)
	stx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return classify(err) == errRetry, fmt.Errorf("sqlstore: begin: %w", err)
	}
	t := &tx{ctx: ctx, d: sh.d, tx: stx, readOnly: readOnly, claim: &sh.claim, stmts: stmts, roundTrips: &sh.trips}
	done := false
	defer func() {
		if !done {
			stx.Rollback() // fn panicked
		}
	}()
	err = fn(t)
	done = true
	if err != nil {
		sh.trips.add(tripRollback)
		stx.Rollback()
		return t.retry, err
	}
	sh.trips.add(tripCommit)
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

// ping checks that the pools answer.
func (sh *shared) ping(ctx context.Context) error {
	ctx, cancel := sh.bound(ctx)
	defer cancel()
	if err := sh.wdb.PingContext(ctx); err != nil {
		return wrap(err, "ping")
	}
	if sh.rdb != sh.wdb {
		return wrap(sh.rdb.PingContext(ctx), "ping")
	}
	return nil
}

// purge runs a statement that deletes the rows older than before, in a
// transaction of its own on the writer.
func (sh *shared) purge(ctx context.Context, query string, before time.Time, doing string) (int, error) {
	// A purge is background work that may delete a large backlog at once:
	// it gets PurgeTimeout rather than a request's deadline (and, on
	// PostgreSQL, the same as its statement_timeout).
	if sh.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, PurgeTimeout)
		defer cancel()
	}
	var n int64
	_, err := sh.runOnce(ctx, sh.wdb, &sql.TxOptions{}, false, nil, func(t *tx) error {
		if set := sh.d.setStatementTimeout(PurgeTimeout); sh.timeout > 0 && set != "" {
			if _, err := t.tx.ExecContext(ctx, set); err != nil {
				return err
			}
		}
		res, err := t.exec(sh.d.q(query), toDB(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), wrap(faultIn(ctx, err), doing)
}

// PurgeTimeout bounds each purge of expired records when the store has a
// deadline (Options.Timeout): purges run in the background and may have a
// backlog to delete.
const PurgeTimeout = 5 * time.Minute
