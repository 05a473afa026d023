package sqlstore_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// benchStores runs bench for memstore, the baseline measured in the same
// run, then for SQLite and, when FLEET_TEST_POSTGRES is set, PostgreSQL,
// each sequentially and in parallel. The database benchmarks also report
// their time per operation as a multiple of the baseline's ("x_memstore").
func benchStores(b *testing.B, bench func(b *testing.B, s fleet.Store, parallel bool)) {
	type store struct {
		name string
		open func(b *testing.B) fleet.Store
	}
	stores := []store{
		{"memstore", func(b *testing.B) fleet.Store { return memstore.New() }},
		{"sqlite", func(b *testing.B) fleet.Store {
			return MustOpen(b, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
		}},
	}
	if dsn := os.Getenv(pgtest.EnvVar); dsn != "" {
		stores = append(stores, store{"postgres", func(b *testing.B) fleet.Store { return MustOpen(b, pgtest.NewSchema(b, dsn)) }})
	}
	base := map[bool]float64{} // ns/op of memstore, by parallel
	for _, st := range stores {
		for _, parallel := range []bool{false, true} {
			name := st.name
			if parallel {
				name += "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				bench(b, st.open(b), parallel)
				nsPerOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if st.name == "memstore" {
					base[parallel] = nsPerOp // the last, longest run wins
				} else if base[parallel] > 0 {
					b.ReportMetric(nsPerOp/base[parallel], "x_memstore")
				}
			})
		}
	}
}

func BenchmarkKeyByHash(b *testing.B) {
	benchStores(b, func(b *testing.B, s fleet.Store, parallel bool) {
		a := storetest.MustAccount(b, s)
		k := storetest.MustKey(b, s, a.ID)
		b.ReportAllocs()
		b.ResetTimer()
		if parallel {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := s.KeyByHash(ctx, k.Hash); err != nil {
						b.Error(err)
						return
					}
				}
			})
			return
		}
		for b.Loop() {
			if _, _, err := s.KeyByHash(ctx, k.Hash); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTakeQuota(b *testing.B) {
	benchStores(b, func(b *testing.B, s fleet.Store, parallel bool) {
		const limit = 1 << 40 // never refused: every call counts
		b.ReportAllocs()
		b.ResetTimer()
		if parallel {
			// One subject per goroutine, as requests of different keys.
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				subject := fmt.Sprintf("key_bench_%d", n.Add(1))
				for pb.Next() {
					if _, err := s.TakeQuota(ctx, subject, limit, storetest.T0); err != nil {
						b.Error(err)
						return
					}
				}
			})
			return
		}
		for b.Loop() {
			if _, err := s.TakeQuota(ctx, "key_bench", limit, storetest.T0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIngestPoints measures location ingest through the store — one
// Update that calls InsertPoints with a batch of 1,000 points — against a
// plain loop of a prepared INSERT of the same rows in one transaction, on
// the same database through the same driver, batch by batch interleaved
// in one run (each batch for a vehicle of its own side, into the same
// table). It reports points/s of each and ratio = store / plain (target
// >= 0.5).
func BenchmarkIngestPoints(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "fleet.db")
		s := MustOpen(b, "sqlite:"+path)
		// The store's writer connection: WAL, synchronous=FULL, one writer.
		plain, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"+
			"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		plain.SetMaxOpenConns(1)
		defer plain.Close()
		benchIngest(b, s, plain, `INSERT INTO points (vehicle_id, ts, lat, lon, speed, heading, odometer_km)
			VALUES (?, ?, ?, ?, ?, ?, ?)`)
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := pgtest.NewDSN(b)
		s := MustOpen(b, dsn)
		plain, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer plain.Close()
		benchIngest(b, s, plain, `INSERT INTO points (vehicle_id, ts, lat, lon, speed, heading, odometer_km)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`)
	})
}

func benchIngest(b *testing.B, s *sqlstore.Store, plain *sql.DB, insert string) {
	const batch = 1000
	a := storetest.MustAccount(b, s)
	mine := storetest.MustVehicle(b, s, a.ID, "store")
	theirs := storetest.MustVehicle(b, s, a.ID, "plain")
	f := func(v float64) *float64 { return &v }
	points := func(round int) []fleet.Point {
		pts := make([]fleet.Point, batch)
		for i := range pts {
			pts[i] = fleet.Point{Latitude: 52 + float64(i)/1e4, Longitude: 13 + float64(i)/1e4,
				Timestamp: storetest.T0.Add(time.Duration(round*batch+i) * time.Second),
				Speed:     f(42.5), Heading: f(90), OdometerKm: f(float64(round*batch + i))}
		}
		return pts
	}
	viaStore := func(pts []fleet.Point) {
		err := s.Update(ctx, func(tx fleet.Tx) error {
			stored, err := tx.InsertPoints(mine.ID, pts)
			if err == nil && len(stored) != len(pts) {
				err = fmt.Errorf("stored %d of %d points", len(stored), len(pts))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	viaPlain := func(pts []fleet.Point) {
		tx, err := plain.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, insert)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pts {
			if _, err := stmt.ExecContext(ctx, theirs.ID, p.Timestamp.UnixMicro(), p.Latitude, p.Longitude,
				*p.Speed, *p.Heading, *p.OdometerKm); err != nil {
				b.Fatal(err)
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	var tStore, tPlain time.Duration
	round := 0
	for b.Loop() {
		pts := points(round)
		// Alternate which goes first, so that neither always pays for
		// what the other left (a WAL checkpoint, a cold cache).
		for i := range 2 {
			t0 := time.Now()
			if (round+i)%2 == 0 {
				viaStore(pts)
				tStore += time.Since(t0)
			} else {
				viaPlain(pts)
				tPlain += time.Since(t0)
			}
		}
		round++
	}
	n := float64(round * batch)
	b.ReportMetric(n/tStore.Seconds(), "store-points/s")
	b.ReportMetric(n/tPlain.Seconds(), "plain-points/s")
	b.ReportMetric(float64(tPlain)/float64(tStore), "ratio")
}
