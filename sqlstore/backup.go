package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// BackupSQLite writes a consistent copy of the SQLite database at src to
// the new file dst with VACUUM INTO, while other connections (a running
// server) go on reading and writing src: the copy is one snapshot, with
// every transaction committed before it began and none after, compacted
// and without a WAL of its own, and only its owner may read it (mode
// 0600). It opens src with a connection of its own,
// not as a Store, so that it neither migrates src nor touches the state a
// running server keeps in it. dst must not exist.
func BackupSQLite(ctx context.Context, src, dst string) error {
	if src == "" || strings.ContainsAny(src, "?#") || strings.HasPrefix(src, "file:") {
		return fmt.Errorf("sqlstore: backup: want the path of a database file, got %q", src)
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("sqlstore: backup: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("sqlstore: backup: %s exists: give the path of a new file", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sqlstore: backup: %w", err)
	}
	db, err := sql.Open("sqlite", src+fmt.Sprintf("?_pragma=busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	if err != nil {
		return fmt.Errorf("sqlstore: backup: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// The copy must be a Fleet store: a schema_migrations table says so.
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return fmt.Errorf("sqlstore: backup: read %s: %w", src, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: backup: %s is not a Fleet store (no schema_migrations table)", src)
	}
	// The copy holds what the database holds: it is made readable by its
	// owner alone before anything is written to it (VACUUM INTO writes
	// into an empty file).
	f, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sqlstore: backup: %w", err)
	}
	f.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		os.Remove(dst) // no half-written copy left behind
		return fmt.Errorf("sqlstore: backup: %w", err)
	}
	return nil
}

// CountedTables are the tables Counts counts, in the order it reports them.
var CountedTables = []string{"accounts", "api_keys", "vehicles", "points", "events", "geofences", "alert_rules", "alerts",
	"work_orders", "schedules", "webhooks", "webhook_deliveries"}

// TableCount is how many rows a table holds.
type TableCount struct {
	Table string
	Rows  int64
}

// Counts returns how many rows each of CountedTables holds, in one
// snapshot.
func (s *Store) Counts(ctx context.Context) ([]TableCount, error) {
	out := make([]TableCount, 0, len(CountedTables))
	err := s.eng.view(ctx, func(t *tx) error {
		out = out[:0]
		for _, table := range CountedTables {
			var n int64
			if err := t.queryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
				return wrap(err, "count "+table)
			}
			out = append(out, TableCount{table, n})
		}
		return nil
	})
	return out, err
}
