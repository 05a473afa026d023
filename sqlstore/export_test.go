package sqlstore

import (
	"context"
	"fmt"
)

// SQLiteBusyTimeout is how long SQLite waits for another process's lock.
const SQLiteBusyTimeout = sqliteBusyTimeout

// Fault is fault, for the tests of the classification.
var Fault = fault

// SetMaxPageCount sets PRAGMA max_page_count on the SQLite writer
// connection (the pragma is per connection), so that a test can fill the
// file up; n below the file's size is taken as its size.
func SetMaxPageCount(ctx context.Context, s *Store, n int64) error {
	_, err := s.wdb.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n))
	return err
}

// PageCount returns the SQLite file's size in pages.
func PageCount(ctx context.Context, s *Store) (int64, error) {
	var n int64
	err := s.wdb.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n)
	return n, err
}

// Setting returns a runtime setting of a connection of the reader pool
// (PostgreSQL's SHOW).
func Setting(ctx context.Context, s *Store, name string) (string, error) {
	var v string
	err := s.rdb.QueryRowContext(ctx, "SHOW "+name).Scan(&v)
	return v, err
}

// SetFairWrites turns on or off the turns the writer gives accounts'
// bulk writes (on by default): off, they wait for the writer like any
// other write, as before the turns existed.
func SetFairWrites(s *Store, on bool) { s.unfair.Store(!on) }

// sqlite and postgres return the store's engine, for tests of its parts.
func (s *Store) sqlite() *sqliteEngine { return s.eng.(*sqliteEngine) }
func (s *Store) postgres() *pgEngine   { return s.eng.(*pgEngine) }

// WriteSetCounts returns how many members of a PostgreSQL store's groups
// were deferred to the next group, and how many groups fell back to one
// by one (group_writes.go).
func WriteSetCounts(s *Store) (deferred, fallbacks int64) {
	g := s.postgres().group
	return g.deferred.Load(), g.fallbacks.Load()
}

// Waiting returns how many writes wait for a PostgreSQL store's group
// runners.
func Waiting(s *Store) int { return s.postgres().group.waiting() }
