package sqlstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/memstore"
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
