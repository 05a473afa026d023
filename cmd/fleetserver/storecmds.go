package main

import (
	"context"
	"fmt"

	"github.com/fleetkit/fleetapi/fleetstore"
)

func migrateCommand() command {
	return command{
		name:    "migrate",
		summary: "bring a store's schema up to date",
		about: "Applies the schema migrations the store lacks (embedded in the binary, each once, in order),\n" +
			"as a deployment step; serving does the same when it opens the store. Creates a SQLite file\n" +
			"that does not exist.",
		example: "fleetserver migrate --db postgres://fleet@db.internal:5432/fleet",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			return func(ctx context.Context, args []string) error {
				if err := noArgs("migrate", args); err != nil {
					return err
				}
				store, err := fleetstore.Open(ctx, *dsn) // opening applies pending migrations
				if err != nil {
					return err
				}
				defer store.Close()
				fmt.Fprintf(c.stdout, "store %s is up to date\n", fleetstore.Redact(*dsn))
				return nil
			}
		},
	}
}

func checkCommand() command {
	return command{
		name:    "check",
		summary: "verify a store's integrity",
		about: "Verifies a store: on SQLite PRAGMA integrity_check and foreign_key_check (after a crash, or\n" +
			"before trusting a copied file), on PostgreSQL that it answers. Exits non-zero and says what\n" +
			"it found when something is wrong. A SQLite file that does not exist is an error, not an\n" +
			"empty store.",
		example: "fleetserver check --db sqlite:/var/lib/fleet/fleet.db",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			return func(ctx context.Context, args []string) error {
				if err := noArgs("check", args); err != nil {
					return err
				}
				if err := mustExist(*dsn); err != nil {
					return err
				}
				store, err := fleetstore.Open(ctx, *dsn)
				if err != nil {
					return err
				}
				defer store.Close()
				if ck, ok := store.(interface{ Check(context.Context) error }); ok {
					if err := ck.Check(ctx); err != nil {
						return fmt.Errorf("store %s is damaged: %w", fleetstore.Redact(*dsn), err)
					}
				}
				fmt.Fprintf(c.stdout, "store %s: ok\n", fleetstore.Redact(*dsn))
				return nil
			}
		},
	}
}
