package memstore_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/memstore"
)

// BenchmarkPointMemory stores 1,000,000 points (100 vehicles x 10,000) and
// reports the heap they take per point (target <= 64 bytes).
func BenchmarkPointMemory(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		s := memstore.New()
		a := storetest.MustAccount(b, s)
		var ids []string
		for range 100 {
			ids = append(ids, storetest.MustVehicle(b, s, a.ID, "v").ID)
		}
		batch := make([]fleet.Point, 10_000)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, id := range ids {
			for j := range batch {
				sp, hd := 50.0, 90.0
				batch[j] = fleet.Point{Latitude: 52, Longitude: 13, Timestamp: storetest.T0.Add(time.Duration(j) * time.Second), Speed: &sp, Heading: &hd}
			}
			if err := s.Update(ctx, func(tx fleet.Tx) error { _, err := tx.InsertPoints(id, batch); return err }); err != nil {
				b.Fatal(err)
			}
		}
		batch = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "bytes/point")
		runtime.KeepAlive(s)
	}
}
