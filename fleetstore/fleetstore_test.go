package fleetstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// Every DSN the storage table lists opens the store it names, and that
// store works.
func TestOpenEveryDSN(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "fleet.db")
	dsns := map[string]func(fleet.Store) bool{
		"memory:":        func(s fleet.Store) bool { _, ok := s.(*memstore.Store); return ok },
		"sqlite:" + file: func(s fleet.Store) bool { _, ok := s.(*sqlstore.Store); return ok },
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		dsns[pgtest.NewSchema(t, pgtest.DSN(t))] = func(s fleet.Store) bool { _, ok := s.(*sqlstore.Store); return ok }
	}
	for dsn, isKind := range dsns {
		is := is.New(t)
		s, err := fleetstore.Open(ctx, dsn)
		is.NoErr(err)
		is.True(isKind(s))
		svc := fleet.NewService(s, fleet.Options{})
		a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme"})
		is.NoErr(err)
		_, err = svc.Operator().Account(ctx, a.ID)
		is.NoErr(err) // the store keeps what it is given
		is.NoErr(s.Close())
	}
	_, err := os.Stat(file)
	is.New(t).NoErr(err) // the SQLite store really wrote its file
}

// Errors quote the DSN whole, bar its password.
func TestOpenErrorsShowTheDSN(t *testing.T) {
	is := is.New(t)
	_, err := fleetstore.Open(context.Background(), "mysql://fleet:hunter2@db.internal:3306/fleet")
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "mysql://fleet:***@db.internal:3306/fleet"))
	is.True(!strings.Contains(err.Error(), "hunter2"))
	_, err = fleetstore.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "no", "such", "dir", "fleet.db"))
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "/no/such/dir/fleet.db")) // the whole path
}

func TestRedact(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable": "postgres://u:***@h:5432/db?sslmode=disable",
		"postgres://u@h/db?password=secret":             "postgres://u@h/db?password=***",
		"postgres://u@h/db":                             "postgres://u@h/db",
		"sqlite:/var/lib/fleet/fleet.db":                "sqlite:/var/lib/fleet/fleet.db",
		"memory:":                                       "memory:",
	} {
		is.Equal(fleetstore.Redact(in), want)
	}
}
