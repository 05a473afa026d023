// Package pgtest gives tests a PostgreSQL database of their own: the DSN in
// FLEET_TEST_POSTGRES (the test is skipped with a clear message when it is
// unset) and a fresh schema in it per test, dropped when the test ends, so
// that runs and parallel packages never collide.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// EnvVar names the environment variable that holds the test database's DSN.
const EnvVar = "FLEET_TEST_POSTGRES"

// DSN returns the DSN in FLEET_TEST_POSTGRES, or skips the test.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		tb.Skip(EnvVar + " is not set: skipping PostgreSQL tests")
	}
	return dsn
}

// NewSchema creates a schema with a random name in the database dsn names,
// drops it when the test ends, and returns a DSN whose connections use it
// (its search_path).
func NewSchema(tb testing.TB, dsn string) string {
	tb.Helper()
	ctx := context.Background()
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
		tb.Fatalf("parse %s: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// NewDSN returns the DSN of a fresh schema of its own for the test, or skips
// the test when FLEET_TEST_POSTGRES is unset.
func NewDSN(tb testing.TB) string {
	tb.Helper()
	return NewSchema(tb, DSN(tb))
}
