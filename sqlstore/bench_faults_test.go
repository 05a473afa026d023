package sqlstore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// BenchmarkStoreDeadline is what the store's deadline (--store-timeout)
// costs a short read transaction on SQLite: "none" is the baseline,
// measured in the same run; "deadline" reports its time per operation as a
// multiple of it (x_none).
func BenchmarkStoreDeadline(b *testing.B) {
	var base float64
	for _, c := range []struct {
		name    string
		timeout time.Duration
	}{{"none", 0}, {"deadline", sqlstore.DefaultTimeout}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := sqlstore.OpenWith(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"), sqlstore.Options{Timeout: c.timeout})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			a := storetest.MustAccount(b, s)
			b.ResetTimer()
			for b.Loop() {
				if err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.Account(a.ID); return err }); err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if c.timeout == 0 {
				base = ns
			} else if base > 0 {
				b.ReportMetric(ns/base, "x_none")
			}
		})
	}
}
