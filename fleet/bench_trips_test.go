package fleet_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// pointCounter counts the location reports its transactions read.
type pointCounter struct {
	fleet.Store
	points atomic.Int64
}

type pointCountingTx struct {
	fleet.Tx
	s *pointCounter
}

func (s *pointCounter) Update(c context.Context, fn func(fleet.Tx) error) error {
	return s.Store.Update(c, func(tx fleet.Tx) error { return fn(pointCountingTx{tx, s}) })
}

func (s *pointCounter) View(c context.Context, fn func(fleet.Tx) error) error {
	return s.Store.View(c, func(tx fleet.Tx) error { return fn(pointCountingTx{tx, s}) })
}

func (c pointCountingTx) Points(vehicleID string, from, to time.Time, limit int) ([]fleet.Point, error) {
	pts, err := c.Tx.Points(vehicleID, from, to, limit)
	c.s.points.Add(int64(len(pts)) + 1) // a read that finds none counts too
	return pts, err
}

func benchStore(b *testing.B, name string) fleet.Store {
	b.Helper()
	if name == "memstore" {
		return memstore.New()
	}
	s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkIngestTrips measures location ingest with trip tracking against
// the same ingest with it off, on memstore and SQLite. The two run
// interleaved, batch for batch, on two stores of their own, so that both
// see the same machine: "x_untracked" is the throughput with tracking as a
// multiple of the throughput without (target >= 0.85), ns/op the time of
// one tracked batch.
//
// Each operation is one batch: of 10 reports of one vehicle (a device),
// or of one report each of 100 vehicles (a gateway). The vehicles drive
// 20 minutes and stand 6, over and over, so trips start and complete.
func BenchmarkIngestTrips(b *testing.B) {
	for _, store := range []string{"memstore", "sqlite"} {
		for _, shape := range []struct {
			name               string
			vehicles, perBatch int
		}{{"device", 10, 10}, {"gateway", 100, 1}} {
			b.Run(store+"/"+shape.name, func(b *testing.B) {
				off := newIngestBench(b, benchStore(b, store), false, shape.vehicles, shape.perBatch)
				on := newIngestBench(b, benchStore(b, store), true, shape.vehicles, shape.perBatch)
				var tOff, tOn time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					start := time.Now()
					off()
					tOff += time.Since(start)
					b.StartTimer()
					start = time.Now()
					on()
					tOn += time.Since(start)
				}
				b.ReportMetric(float64(tOff)/float64(tOn), "x_untracked")
			})
		}
	}
}

// newIngestBench returns a function that ingests the next batch.
func newIngestBench(b *testing.B, store fleet.Store, tracking bool, vehicles, perBatch int) func() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	fleet.SetTripTracking(svc, tracking)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	ids := make([]string, vehicles)
	for i := range ids {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprint("v", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = v.ID
	}
	// report k of a vehicle: every 10 s, 26-minute cycles of 20 driving.
	report := func(vehicle, k int) fleet.Point {
		at := t0.Add(time.Duration(k) * 10 * time.Second)
		speed := 0.0
		if (k*10)%(26*60) < 20*60 {
			speed = 60
		}
		lon := -170 + math.Mod(13+170+float64(k)*0.0025, 340) // about 170 m east a report (60 km/h for 10 s)
		return fleet.Point{VehicleID: ids[vehicle], Latitude: 52 + float64(vehicle)*0.01, Longitude: lon, Timestamp: at, Speed: &speed}
	}
	ks := make([]int, vehicles)
	round, i := 0, 0
	return func() {
		var batch []fleet.Point
		var err error
		if perBatch > 1 { // a device: one vehicle's next reports
			v := i % vehicles
			i++
			for range perBatch {
				batch = append(batch, report(v, ks[v]))
				ks[v]++
			}
			clock.Set(batch[len(batch)-1].Timestamp)
			_, err = svc.IngestLocations(ctx, p, ids[v], batch)
		} else { // a gateway: every vehicle's next report
			for v := range vehicles {
				batch = append(batch, report(v, round))
			}
			round++
			clock.Set(batch[0].Timestamp)
			_, err = svc.IngestBulk(ctx, p, batch)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummary31Days answers a 31-day summary, by day, for 100
// vehicles with 8 trips a day each (24,800 trips) from the stored trips;
// "points_read" is how many location reports it read (0: none).
func BenchmarkSummary31Days(b *testing.B) {
	for _, store := range []string{"memstore", "sqlite"} {
		b.Run(store, func(b *testing.B) {
			cs := &pointCounter{Store: benchStore(b, store)}
			days, perDay, vehicles := 31, 8, 100
			end := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
			start := end.Add(-time.Duration(days) * 24 * time.Hour)
			a := storetest.MustAccount(b, cs)
			for v := range vehicles {
				veh := storetest.MustVehicle(b, cs, a.ID, fmt.Sprint("v", v))
				err := cs.Update(ctx, func(tx fleet.Tx) error {
					var ts []fleet.Trip
					for d := range days {
						for k := range perDay {
							at := start.Add(time.Duration(d)*24*time.Hour + time.Duration(6+2*k)*time.Hour)
							tr := storetest.NewTrip(a.ID, veh.ID, at, 45*time.Minute)
							tr.Slices = []fleet.TripSlice{{Start: at.Unix(), Km: 10, MovingSeconds: 900},
								{Start: at.Unix() + 900, Km: 10, MovingSeconds: 900}, {Start: at.Unix() + 1800, Km: 10, MovingSeconds: 900}}
							ts = append(ts, tr)
						}
					}
					return tx.PutTrips(ts)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			svc := fleet.NewService(cs, fleet.Options{Now: func() time.Time { return end }})
			p := fleet.SystemPrincipal(a)
			from := start
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				l, err := svc.Summary(ctx, p, fleet.SummaryQuery{From: &from, To: &end, TZ: "Europe/Berlin", Limit: fleet.MaxSummaryLimit})
				if err != nil {
					b.Fatal(err)
				}
				if len(l.Items) < days*vehicles || l.HasMore {
					b.Fatalf("%d rows", len(l.Items))
				}
			}
			b.ReportMetric(float64(cs.points.Load()), "points_read")
		})
	}
}

// TestSummaryReadsNoPoints: the summary is answered from trips alone.
func TestSummaryReadsNoPoints(t *testing.T) {
	is := is.New(t)
	cs := &pointCounter{Store: memstore.New()}
	r := newTripRig(t, cs)
	rt := newRoute(r.t0)
	rt.drive(10*time.Minute, 50).stand(8*time.Minute).drive(10*time.Minute, 50)
	r.ingest(t, rt.pts, 10)
	before := cs.points.Load()
	from, to := r.t0, r.clock.Now()
	sum, err := r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to})
	is.NoErr(err)
	is.Equal(sum.Items[0].Trips, 2)
	is.Equal(cs.points.Load(), before) // no report read
	_, err = r.svc.Trip(ctx, r.p, r.trips(t)[0].ID, true)
	is.NoErr(err)
	is.True(cs.points.Load() > before) // as the counter would show
}
