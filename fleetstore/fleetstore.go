// Package fleetstore opens the fleet.Store a data source name (DSN) names,
// the way fleetserver's --db does, for programs that embed Fleet and let
// their users choose a store:
//
//	memory:                         memstore: in memory, gone when the process exits
//	sqlite:PATH                     sqlstore on a SQLite file, created on first use
//	postgres://USER@HOST:5432/DB    sqlstore on PostgreSQL (postgresql:// too)
//
// Opening a SQL store applies the schema migrations it lacks.
package fleetstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// DefaultDSN is fleetserver's default store: a SQLite file in the working
// directory.
const DefaultDSN = "sqlite:fleet.db"

// Open opens the store dsn names. Its errors quote the DSN whole, with any
// password replaced (Redact).
func Open(ctx context.Context, dsn string) (fleet.Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// Options are the settings of OpenWith.
type Options struct {
	// Timeout bounds every call into a SQL store (see sqlstore.Options);
	// a call past it fails as unavailable. 0: no bound. The memory store
	// has nothing to wait for.
	Timeout time.Duration
}

// OpenWith is Open with settings.
func OpenWith(ctx context.Context, dsn string, o Options) (fleet.Store, error) {
	switch {
	case dsn == "memory:", dsn == "memory":
		return memstore.New(), nil
	case strings.HasPrefix(dsn, "sqlite:"), strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err := sqlstore.OpenWith(ctx, dsn, sqlstore.Options{Timeout: o.Timeout})
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", Redact(dsn), err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown store %q: want memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB", Redact(dsn))
}

// Redact returns dsn with any password replaced by "***": the one in a
// URL's user information, and a password parameter of its query.
func Redact(dsn string) string { return sqlstore.Redact(dsn) }
