package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

var ctx = context.Background()

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) fleet.Store { return MustOpenSQLite(t) })
}

func TestPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	storetest.Run(t, func(t *testing.T) fleet.Store { return MustOpen(t, pgtest.NewSchema(t, dsn)) })
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

// dialects runs fn for SQLite and, when FLEET_TEST_POSTGRES is set,
// PostgreSQL, each with a function returning the DSN of a new, empty
// database.
func dialects(t *testing.T, fn func(t *testing.T, newDSN func(t *testing.T) string)) {
	t.Run("sqlite", func(t *testing.T) {
		fn(t, func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "fleet.db") })
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		fn(t, func(t *testing.T) string { return pgtest.NewSchema(t, dsn) })
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
