package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

var ctx = context.Background()

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) fleet.Store { return MustOpenSQLite(t) })
}

func TestPostgres(t *testing.T) {
	dsn := postgresDSN(t)
	storetest.Run(t, func(t *testing.T) fleet.Store { return MustOpen(t, NewPostgresSchema(t, dsn)) })
}

// MustOpenSQLite opens a store on a new file in a temporary directory.
func MustOpenSQLite(tb testing.TB) *sqlstore.Store {
	tb.Helper()
	return MustOpen(tb, "sqlite:"+filepath.Join(tb.TempDir(), "fleet.db"))
}

// MustOpen opens a store on dsn and closes it when the test ends.
func MustOpen(tb testing.TB, dsn string) *sqlstore.Store {
	tb.Helper()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// postgresDSN returns the DSN in FLEET_TEST_POSTGRES, or skips the test.
func postgresDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("FLEET_TEST_POSTGRES")
	if dsn == "" {
		tb.Skip("FLEET_TEST_POSTGRES is not set: skipping PostgreSQL tests")
	}
	return dsn
}

// NewPostgresSchema creates a schema with a random name in the database dsn
// names, drops it when the test ends, and returns a DSN whose connections
// use it, so that each test has a database of its own.
func NewPostgresSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatalf("connect to postgres: %v", err)
	}
	tb.Cleanup(func() { admin.Close() })
	var b [8]byte
	rand.Read(b[:])
	schema := "fleet_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("parse FLEET_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// dialects runs fn for SQLite and, when FLEET_TEST_POSTGRES is set,
// PostgreSQL, each with a function returning the DSN of a new, empty
// database.
func dialects(t *testing.T, fn func(t *testing.T, newDSN func(t *testing.T) string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "fleet.db") })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := postgresDSN(t)
		fn(t, func(t *testing.T) string { return NewPostgresSchema(t, dsn) })
	})
}

func TestOpenRefusesUnknownDSN(t *testing.T) {
	for _, dsn := range []string{"", "fleet.db", "mysql://x", "memory:", "sqlite:", "sqlite::memory:", "sqlite:a.db?mode=ro", "sqlite:file:a.db"} {
		t.Run(dsn, func(t *testing.T) {
			is := is.New(t)
			_, err := sqlstore.Open(ctx, dsn)
			is.True(err != nil) // refused
		})
	}
}

func TestDialect(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		is.Equal(s.Dialect(), t.Name()[len("TestDialect/"):])
		is.NoErr(s.Ping(ctx))
	})
}
