package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

func backupCommand() command {
	return command{
		name:    "backup",
		summary: "copy a SQLite store while it serves, and check the copy",
		about: "Writes a consistent copy of the SQLite store --db names to the new file --to (VACUUM INTO:\n" +
			"one snapshot, every transaction committed before it began and none after) while a server\n" +
			"keeps serving from the store, then runs the checks of `fleetserver check` on the copy and\n" +
			"prints its size and what it holds. Restore: stop the server, replace the store's file with\n" +
			"the copy (removing the old file's -wal and -shm files), `fleetserver check`, start.\n" +
			"For PostgreSQL it prints the pg_dump command to use instead and exits non-zero.",
		example: "fleetserver backup --db sqlite:/var/lib/fleet/fleet.db --to /backups/fleet-2026-11-23.db",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			to := f.fs.String("to", "", "the new file to write the copy to (`PATH`; it must not exist)")
			f.require("to")
			return func(ctx context.Context, args []string) error {
				if err := noArgs("backup", args); err != nil {
					return err
				}
				switch {
				case strings.HasPrefix(*dsn, "postgres://"), strings.HasPrefix(*dsn, "postgresql://"):
					fmt.Fprintf(c.stdout, "PostgreSQL stores are backed up with pg_dump, which copies a live database consistently:\n\n  %s\n\n"+
						"Restore into an empty database with: pg_restore --dbname 'postgres://USER@HOST:PORT/DB' %s\n",
						pgDumpCommand(*dsn, *to), shellQuote(*to))
					return fmt.Errorf("backup makes copies of SQLite stores only: use pg_dump for %s", fleetstore.Redact(*dsn))
				case !strings.HasPrefix(*dsn, "sqlite:"):
					return usagef("backup", "backup copies SQLite stores (sqlite:PATH), not %s", fleetstore.Redact(*dsn))
				}
				if err := mustExist(*dsn); err != nil {
					return err
				}
				src := strings.TrimPrefix(*dsn, "sqlite:")
				if err := sqlstore.BackupSQLite(ctx, src, *to); err != nil {
					return err
				}
				fi, err := os.Stat(*to)
				if err != nil {
					return err
				}
				copyDSN := "sqlite:" + *to
				store, err := sqlstore.Open(ctx, copyDSN)
				if err != nil {
					return fmt.Errorf("the copy %s does not open: %w", *to, err)
				}
				defer store.Close()
				if err := store.Check(ctx); err != nil {
					return fmt.Errorf("the copy %s is damaged: %w", *to, err)
				}
				counts, err := store.Counts(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "backup of %s written to %s: %s, check ok\n", src, *to, byteSize(fi.Size()))
				for _, tc := range counts {
					fmt.Fprintf(c.stdout, "  %-20s %d\n", tc.Table, tc.Rows)
				}
				return nil
			}
		},
	}
}

// pgDumpCommand is the pg_dump command line that backs up the database of
// dsn to path (custom format, for pg_restore), with any password left out:
// pg_dump reads it from PGPASSWORD or ~/.pgpass.
func pgDumpCommand(dsn, path string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		q := u.Query()
		q.Del("password")
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	return "pg_dump --format=custom --file=" + shellQuote(path) + " " + shellQuote(dsn)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// byteSize writes n bytes for people: "512 B", "3.4 MB".
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
