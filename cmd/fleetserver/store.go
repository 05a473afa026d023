package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
)

const defaultDSN = "memory:"

// openStore opens the store a DSN names.
func openStore(ctx context.Context, dsn string) (fleet.Store, error) {
	switch {
	case dsn == "memory:" || dsn == "memory":
		return memstore.New(), nil
	case strings.HasPrefix(dsn, "sqlite:"), strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return nil, fmt.Errorf("store %q: this build has no SQL store", dsn)
	}
	return nil, fmt.Errorf("unknown store %q (want sqlite:PATH, memory: or postgres://...)", dsn)
}
