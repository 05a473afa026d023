package fleet_test

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
)

// BenchmarkPointJSON measures writing a point as a page of history writes
// it (fleet.Point.AppendJSON), with 15 typical attributes and without, and
// decoding those attributes from their stored form: the CPU side of
// sqlstore's BenchmarkHistoryPageAttributes, without the database.
func BenchmarkPointJSON(b *testing.B) {
	const n = 1_000
	pts := make([]fleet.Point, n)
	blobs := make([][]byte, n)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range pts {
		speed, heading := 42.5, 180.0
		pts[i] = fleet.Point{Latitude: 52.5 + float64(i)/1e4, Longitude: 13.4, Timestamp: t0.Add(time.Duration(i) * time.Second), Speed: &speed, Heading: &heading}
		blobs[i], _ = storetest.TypicalAttributes(i).AppendBinary(nil)
	}
	var buf []byte
	write := func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for i := range pts {
				buf = pts[i].AppendJSON(append(buf, ','))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
	}
	b.Run("bare", write)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			for i := range pts {
				if err := pts[i].Attributes.UnmarshalBinary(blobs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
	})
	b.Run("attributes", write) // the points now hold their attributes
}
