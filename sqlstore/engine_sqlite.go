package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"modernc.org/sqlite" // the "sqlite" driver, and its error codes
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteEngine runs a SQLite store: one writer connection (wdb), whose
// write transactions share commits and keep the rows they read (group),
// and a pool of query-only readers (rdb).
type sqliteEngine struct {
	*shared
	// group forms the writer's group commits (group.go) and holds its row
	// cache (rowcache.go).
	group *groupCommit
	// wstmts and rstmts cache prepared statements of the writer and the
	// readers (stmtcache.go).
	wstmts, rstmts *stmtCache
	// quota holds the rate-limit windows (memquota.go).
	quota *memQuota
}

// SQLite busy timeout: how long a connection waits for another process's
// lock before failing with SQLITE_BUSY.
const sqliteBusyTimeout = 5 * time.Second

// openSQLite opens the database file at path for sh.
func openSQLite(ctx context.Context, path string, sh *shared) (*sqliteEngine, error) {
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
	sh.d, sh.rdb, sh.wdb = newDialect(SQLite), rdb, wdb
	e := &sqliteEngine{shared: sh, wstmts: newStmtCache(wdb), rstmts: newStmtCache(rdb), quota: newMemQuota()}
	e.group = &groupCommit{db: wdb, sh: sh, stmts: e.wstmts, cache: newRowCache(), runners: 1, bulkRunners: 1, maxMembers: maxGroup, policy: sqlitePolicy{}}
	return e, nil
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

// update, write and writeLease run fn in the writer's group commit
// (group.go), in BEGIN IMMEDIATE on its one connection: serialisable, as
// writers take turns. A lease joins the forming group too, which commits
// without a sync when it holds leases only.
func (e *sqliteEngine) update(ctx context.Context, fn func(*tx) error) error {
	return e.inGroup(ctx, false, fn)
}

func (e *sqliteEngine) write(ctx context.Context, fn func(*tx) error) error {
	return e.inGroup(ctx, false, fn)
}

func (e *sqliteEngine) writeLease(ctx context.Context, fn func(*tx) error) error {
	return e.inGroup(ctx, true, fn)
}

// inGroup runs fn in the group commit at the store's boundary, as run
// does: under the store's deadline, which also ends the wait for the
// writer, with a store fault leaving as unavailable.
func (e *sqliteEngine) inGroup(ctx context.Context, lease bool, fn func(*tx) error) error {
	ctx, cancel := e.bound(ctx)
	defer cancel()
	return faultIn(ctx, e.group.update(ctx, lease, fn))
}

// view runs fn on a reader, in a WAL snapshot.
func (e *sqliteEngine) view(ctx context.Context, fn func(*tx) error) error {
	return e.run(ctx, e.rdb, &sql.TxOptions{ReadOnly: true}, true, e.rstmts, fn)
}

// The rate-limit windows are in memory (memquota.go).

func (e *sqliteEngine) takeQuota(_ context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	return e.quota.take(subject, limit, now)
}

func (e *sqliteEngine) takeQuotaN(_ context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	return e.quota.takeN(subject, n, limit, now)
}

func (e *sqliteEngine) refundQuota(_ context.Context, subject string, n int, reset time.Time) error {
	return e.quota.refund(subject, n, reset)
}

// purgeQuota forgets the windows that ended before before, and deletes
// them from the table that holds them between runs.
func (e *sqliteEngine) purgeQuota(ctx context.Context, before time.Time) (int, error) {
	n := e.quota.purge(before)
	_, err := e.purge(ctx, purgeQuotaSQL, before.Add(-fleet.QuotaWindow), "purge quotas")
	return n, err
}

// A SQLite file is served by one process: there is no feed to share.

func (e *sqliteEngine) appendLive(context.Context, string, []fleet.StreamItem, time.Time) error {
	return fleet.ErrNoLiveFeed
}

func (e *sqliteEngine) followLive(context.Context, time.Time, func([]fleet.LiveBatch)) error {
	return fleet.ErrNoLiveFeed
}

func (e *sqliteEngine) purgeLive(context.Context, time.Time) (int, error) { return 0, nil }

// check runs PRAGMA integrity_check and foreign_key_check; what they find
// comes back as the error.
func (e *sqliteEngine) check(ctx context.Context) error {
	var problems []string
	rows, err := e.wdb.QueryContext(ctx, "PRAGMA integrity_check")
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
	rows, err = e.wdb.QueryContext(ctx, "PRAGMA foreign_key_check")
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

func (e *sqliteEngine) poolStats() map[string]sql.DBStats {
	return map[string]sql.DBStats{"read": e.rdb.Stats(), "write": e.wdb.Stats()}
}

func (e *sqliteEngine) writeGroups() (commits, transactions int64) {
	return e.group.commits.Load(), e.group.members.Load()
}

// load reads the rate-limit windows the last Close saved.
func (e *sqliteEngine) load(ctx context.Context) error { return e.quota.load(ctx, e.rdb) }

// save refuses further takes and writes the windows back.
func (e *sqliteEngine) save(ctx context.Context) error { return e.quota.save(ctx, e.write) }

func (e *sqliteEngine) close() error {
	return errors.Join(e.wstmts.close(), e.rstmts.close(), e.wdb.Close(), e.rdb.Close())
}
