package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// defaultDSN is the embedded default: a SQLite file in the working
// directory, created on first run.
const defaultDSN = "sqlite:fleet.db"

// openStore opens the store a DSN names, applying pending migrations.
func openStore(ctx context.Context, dsn string) (fleet.Store, error) {
	switch {
	case dsn == "memory:" || dsn == "memory":
		return memstore.New(), nil
	case strings.HasPrefix(dsn, "sqlite:"), strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", redactDSN(dsn), err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown store %q (want sqlite:PATH, memory: or postgres://...)", redactDSN(dsn))
}
