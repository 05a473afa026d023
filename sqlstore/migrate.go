package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The schema, one file per step, named NNNN_what.sql; see the first file for
// how they are written for both dialects.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema.
type migration struct {
	version int64
	name    string
	sql     string
	// dialect, when the file's first line is "-- dialect: NAME", is the one
	// dialect it runs on; the other records it as applied.
	dialect string
}

// dialectLine starts a migration that runs on one dialect alone.
const dialectLine = "-- dialect: "

// migrations returns the embedded migrations in version order.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlstore: migration %s: name must be NNNN_what.sql", base)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		m := migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)}
		if first, _, _ := strings.Cut(m.sql, "\n"); strings.HasPrefix(first, dialectLine) {
			m.dialect = strings.TrimSpace(strings.TrimPrefix(first, dialectLine))
			if m.dialect != Postgres && m.dialect != SQLite {
				return nil, fmt.Errorf("sqlstore: migration %s: no dialect %q", base, m.dialect)
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("sqlstore: migrations %s and %s have the same version", out[i-1].name, out[i].name)
		}
	}
	return out, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    BIGINT PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)`

// Migrate applies the migrations the database has not had yet, in order,
// each in its own transaction that also records it in schema_migrations.
// Several processes may migrate the same database at once: on PostgreSQL an
// advisory lock, on SQLite the write lock, lets one apply each step and the
// others see it applied. Open calls Migrate; `fleetserver migrate` calls it
// on its own.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if err := s.inMigrationTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.d.ddl(createMigrationsTable))
		return err
	}); err != nil {
		return fmt.Errorf("sqlstore: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := s.inMigrationTx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, s.d.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil // applied before, or by another process just now
			}
			if m.dialect == "" || m.dialect == s.d.name {
				if _, err := tx.ExecContext(ctx, s.d.ddl(m.sql)); err != nil {
					return err
				}
			}
			_, err := tx.ExecContext(ctx, s.d.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
				m.version, m.name, toDB(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("sqlstore: migration %s: %w", m.name, err)
		}
	}
	return nil
}

// inMigrationTx runs fn in a write transaction that holds the migration
// lock.
func (s *Store) inMigrationTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// A migration (an index over a large table) may take longer than a
	// request's statement_timeout (Options.Timeout): it has none.
	if set := s.d.setStatementTimeout(0); set != "" {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			return err
		}
	}
	if lock := s.d.migrationLock(); lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return err
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// AppliedMigrations returns the versions recorded in schema_migrations, in
// order.
func (s *Store) AppliedMigrations(ctx context.Context) ([]int64, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read schema_migrations: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
