package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// migrationRows returns what schema_migrations holds: version -> applied_at.
func migrationRows(t *testing.T, driver, dsn string) map[int64]int64 {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT version, applied_at FROM schema_migrations`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var v, at int64
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		out[v] = at
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigrationsRecordedOnce(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "fleet.db")
	s, err := sqlstore.Open(ctx, "sqlite:"+path)
	is.NoErr(err)
	applied, err := s.AppliedMigrations(ctx)
	is.NoErr(err)
	is.True(len(applied) >= 1) // the first Open applies every migration
	is.Equal(applied[0], int64(1))
	is.NoErr(s.Close())
	first := migrationRows(t, "sqlite", path)
	is.Equal(len(first), len(applied)) // each recorded once

	s = MustOpen(t, "sqlite:"+path) // opening again applies nothing
	is.NoErr(s.Migrate(ctx))        // nor does migrating again
	again, err := s.AppliedMigrations(ctx)
	is.NoErr(err)
	is.Equal(again, applied)
	is.Equal(migrationRows(t, "sqlite", path), first) // same rows, same applied_at
}

// TestMigrationOfOneDialect: a migration whose first line names a dialect
// (0026, PostgreSQL's write path) runs there and is recorded as applied on
// the other: on PostgreSQL a point's vehicle has no foreign key, the
// vehicles' and trips' pages keep room for updates and the feed's reports
// are stored uncompressed; SQLite's schema keeps its foreign key.
func TestMigrationOfOneDialect(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "fleet.db")
	MustOpen(t, "sqlite:"+path)
	is.True(migrationRows(t, "sqlite", path)[26] > 0) // recorded
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	defer db.Close()
	var keys int
	is.NoErr(db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_list('points')`).Scan(&keys))
	is.Equal(keys, 1) // not run here

	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	MustOpen(t, dsn)
	is.True(migrationRows(t, "pgx", dsn)[26] > 0)
	pg, err := sql.Open("pgx", dsn)
	is.NoErr(err)
	defer pg.Close()
	is.NoErr(pg.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_constraint WHERE conrelid = 'points'::regclass AND contype = 'f'`).Scan(&keys))
	is.Equal(keys, 0)
	var opts string
	is.NoErr(pg.QueryRowContext(ctx, `SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'trips'::regclass`).Scan(&opts))
	is.Equal(opts, "fillfactor=80")
	var storage string
	is.NoErr(pg.QueryRowContext(ctx, `SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'live_reports'::regclass AND attname = 'items'`).Scan(&storage))
	is.Equal(storage, "e") // external: out of line, uncompressed
}

// TestConcurrentOpen starts several stores on one new database at once, as
// servers starting together do: each migration is applied exactly once and
// every store works.
func TestConcurrentOpen(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		dsn := newDSN(t)
		const n = 4
		stores := make([]*sqlstore.Store, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { stores[i], errs[i] = sqlstore.Open(ctx, dsn) })
		}
		wg.Wait()
		for i := range n {
			is.NoErr(errs[i]) // every concurrent Open succeeds
			t.Cleanup(func() { stores[i].Close() })
		}
		applied, err := stores[0].AppliedMigrations(ctx)
		is.NoErr(err)
		for _, s := range stores[1:] {
			got, err := s.AppliedMigrations(ctx)
			is.NoErr(err)
			is.Equal(got, applied)
		}
		seen := map[int64]bool{}
		for _, v := range applied {
			is.True(!seen[v]) // recorded once
			seen[v] = true
		}
		a := storetest.MustAccount(t, stores[n-1])
		storetest.MustKey(t, stores[0], a.ID)
	})
}

// TestSurvivesReopen checks that what a SQLite store holds, rate-limit
// windows included, is there after Close and Open.
func TestSurvivesReopen(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	s, err := sqlstore.Open(ctx, dsn)
	is.NoErr(err)

	a := storetest.MustAccount(t, s)
	k := storetest.NewKey(a.ID)
	expires := time.Date(2027, 1, 2, 3, 4, 5, 123456000, time.FixedZone("X", 5*3600))
	k.ExpiresAt = &expires
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(k) }))
	is.NoErr(s.RecordUsage(ctx, []fleet.Usage{{KeyID: k.ID, Hour: storetest.T0, Requests: 4, Rejected: 1, LastUsedAt: storetest.T0.Add(time.Minute)}}))
	_, _, err = s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: k.ID, Key: "i1", RequestHash: [32]byte{7}, CreatedAt: storetest.T0})
	is.NoErr(err)
	is.NoErr(s.FinishIdempotency(ctx, k.ID, "i1", 201, []byte(`{"a":1}`)))
	start := storetest.T0.Add(3 * time.Second)
	for range 3 {
		_, err := s.TakeQuota(ctx, k.ID, 5, start)
		is.NoErr(err)
	}
	is.NoErr(s.Close())
	_, err = s.TakeQuota(ctx, k.ID, 5, start)
	is.True(err != nil) // a closed store refuses

	s = MustOpen(t, dsn)
	got, acc, err := s.KeyByHash(ctx, k.Hash)
	is.NoErr(err)
	is.Equal(acc.ID, a.ID)
	is.Equal(got.Name, k.Name)
	is.True(got.ExpiresAt.Equal(expires))        // same instant
	is.Equal(got.ExpiresAt.Location(), time.UTC) // returned in UTC
	is.Equal(got.ExpiresAt.Nanosecond(), 123456000)
	is.True(got.LastUsedAt.Equal(storetest.T0.Add(time.Minute)))

	usage, err := s.Usage(ctx, k.ID, storetest.T0)
	is.NoErr(err)
	is.Equal(len(usage), 1)
	is.Equal(usage[0].Requests, 4)

	prev, found, err := s.BeginIdempotency(ctx, fleet.IdempotencyRecord{KeyID: k.ID, Key: "i1", CreatedAt: storetest.T0.Add(time.Hour)})
	is.NoErr(err)
	is.True(found)
	is.Equal(prev.Status, 201)
	is.Equal(string(prev.Body), `{"a":1}`)
	is.Equal(prev.RequestHash, [32]byte{7})

	q, err := s.TakeQuota(ctx, k.ID, 5, start.Add(time.Minute))
	is.NoErr(err)
	is.Equal(q.Used, 4)                          // the window went on: no fresh hour after a restart
	is.True(q.Reset.Equal(start.Add(time.Hour))) // and it still ends when it did
}

// TestQuotaSavedOnlyWhenChanged: a second store on the same file that takes
// no quota (a command-line tool) does not overwrite the windows on Close.
func TestQuotaSavedOnlyWhenChanged(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	tool, err := sqlstore.Open(ctx, dsn) // loads no windows yet
	is.NoErr(err)
	server, err := sqlstore.Open(ctx, dsn)
	is.NoErr(err)
	_, err = server.TakeQuota(ctx, "key_x", 10, storetest.T0)
	is.NoErr(err)
	is.NoErr(server.Close())
	is.NoErr(tool.Close())
	s := MustOpen(t, dsn)
	q, err := s.TakeQuota(ctx, "key_x", 10, storetest.T0)
	is.NoErr(err)
	is.Equal(q.Used, 2)
}

func TestErrorCodes(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		a := storetest.MustAccount(t, s)
		k := storetest.MustKey(t, s, a.ID)

		orphan := storetest.NewKey(fleet.NewID(fleet.PrefixAccount))
		err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(orphan) })
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // foreign key: no such account

		sameID := storetest.NewKey(a.ID)
		sameID.ID = k.ID
		err = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateKey(sameID) })
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // same id

		err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Key(a.ID, "key_nope"); return err })
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
		is.True(!errors.Is(err, sql.ErrNoRows)) // no driver error leaks

		err = s.View(ctx, func(tx fleet.Tx) error { return tx.UpdateKey(k) })
		is.True(err != nil) // writes fail in View
	})
}

// TestConflictLeavesTransactionUsable: after a conflict fn may go on and
// commit what else it did, on PostgreSQL (where a failed statement would
// abort the transaction) as on SQLite and memstore.
func TestConflictLeavesTransactionUsable(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		a := storetest.MustAccount(t, s)
		b := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "B", Plan: fleet.PlanFree, CreatedAt: storetest.T0}
		err := s.Update(ctx, func(tx fleet.Tx) error {
			err := tx.CreateAccount(a)
			is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
			return tx.CreateAccount(b)
		})
		is.NoErr(err)
		err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(b.ID); return err })
		is.NoErr(err) // committed
	})
}

// TestUpdateIsolated: concurrent read-modify-write transactions lose no
// update (on PostgreSQL some are aborted and run again).
func TestUpdateIsolated(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		a := storetest.MustAccount(t, s)
		k := storetest.MustKey(t, s, a.ID)
		const n = 12
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				errs <- s.Update(ctx, func(tx fleet.Tx) error {
					cur, err := tx.Key(a.ID, k.ID)
					if err != nil {
						return err
					}
					cur.Name += "x"
					return tx.UpdateKey(cur)
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			is.NoErr(err)
		}
		var got fleet.Key
		is.NoErr(s.View(ctx, func(tx fleet.Tx) (err error) { got, err = tx.Key(a.ID, k.ID); return err }))
		is.Equal(len(got.Name), len(k.Name)+n) // every update counted
	})
}

// TestTxUsesUpdateContext: the statements of a transaction run with the
// context given to Update.
func TestTxUsesUpdateContext(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		a := storetest.MustAccount(t, s)
		c, cancel := context.WithCancel(ctx)
		err := s.Update(c, func(tx fleet.Tx) error {
			cancel()
			_, err := tx.Account(a.ID)
			return err
		})
		is.True(err != nil) // the cancelled context stops the statement
		is.True(fleet.ErrorCode(err) != fleet.CodeNotFound)
	})
}

// TestPanicRollsBack: a panic in fn rolls the transaction back and leaves
// the store usable (on SQLite, the one writer connection is freed).
func TestPanicRollsBack(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		s := MustOpen(t, newDSN(t))
		a := fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: "P", Plan: fleet.PlanFree, CreatedAt: storetest.T0}
		func() {
			defer func() { is.True(recover() != nil) }()
			s.Update(ctx, func(tx fleet.Tx) error {
				if err := tx.CreateAccount(a); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err })
		is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // rolled back
		storetest.MustAccount(t, s)                        // and the store still writes
	})
}

// TestQuotaSharedAcrossStores: several servers on one PostgreSQL database
// hand out exactly the allowance between them.
func TestQuotaSharedAcrossStores(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	servers := []*sqlstore.Store{MustOpen(t, dsn), MustOpen(t, dsn), MustOpen(t, dsn)}
	const limit, perServer = 25, 20
	var wg sync.WaitGroup
	allowed := make(chan bool, len(servers)*perServer)
	for _, s := range servers {
		for range perServer {
			wg.Go(func() {
				q, err := s.TakeQuota(ctx, "key_shared", limit, storetest.T0)
				allowed <- err == nil && q.Allowed
			})
		}
	}
	wg.Wait()
	close(allowed)
	n := 0
	for ok := range allowed {
		if ok {
			n++
		}
	}
	is.Equal(n, limit) // exactly the allowance, across servers
	q, err := servers[0].TakeQuota(ctx, "key_shared", limit, storetest.T0.Add(time.Minute))
	is.NoErr(err)
	is.True(!q.Allowed)
	is.Equal(q.Used, limit)
}

// TestConcurrentIngestOfDifferentVehicles: writers that each read, extend
// and update a vehicle of their own, as location ingest does, all succeed
// at once; on PostgreSQL they do not abort each other for serialisation
// (they used to, often enough to exhaust the retries and fail requests).
func TestConcurrentIngestOfDifferentVehicles(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		dsn := newDSN(t)
		s := MustOpen(t, dsn)
		a := storetest.MustAccount(t, s)
		const writers, batches, size = 4, 25, 100
		var runs atomic.Int64
		var wg sync.WaitGroup
		vs := make([]fleet.Vehicle, writers)
		for w := range vs {
			vs[w] = storetest.MustVehicle(t, s, a.ID, fmt.Sprintf("Truck %d", w))
		}
		if s.Dialect() == sqlstore.Postgres {
			// Statistics, as autovacuum gathers them, tell the planner
			// that a sequential scan of so small a table is cheapest.
			db, err := sql.Open("pgx", dsn)
			is.NoErr(err)
			_, err = db.ExecContext(ctx, "ANALYZE")
			is.NoErr(err)
			db.Close()
		}
		for w, v := range vs {
			wg.Go(func() {
				for b := range batches {
					pts := make([]fleet.Point, size)
					for i := range pts {
						pts[i] = fleet.Point{VehicleID: v.ID, Latitude: 52, Longitude: 13,
							Timestamp: storetest.T0.Add(time.Duration(b*size+i) * time.Second)}
					}
					err := s.Update(ctx, func(tx fleet.Tx) error {
						runs.Add(1)
						cur, err := tx.Vehicle(a.ID, v.ID)
						if err != nil {
							return err
						}
						if _, err := tx.InsertPoints(v.ID, pts); err != nil {
							return err
						}
						last := pts[len(pts)-1]
						cur.LastLocation = &fleet.Position{Latitude: last.Latitude, Longitude: last.Longitude, Timestamp: last.Timestamp}
						cur.UpdatedAt = last.Timestamp
						return tx.UpdateVehicle(cur)
					})
					if err != nil {
						t.Errorf("writer %d batch %d: %v", w, b, err)
						return
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%d transactions ran %d times", writers*batches, runs.Load())
		is.True(runs.Load() <= writers*batches*11/10) // few re-runs, if any
	})
}
