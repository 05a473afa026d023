package fleet_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// route builds a vehicle's reports, one every 30 seconds, heading east
// from 13.0 E, 52.0 N.
type route struct {
	t        time.Time
	lat, lon float64
	odo      *float64
	pts      []fleet.Point
}

const reportEvery = 30 * time.Second

func newRoute(t0 time.Time) *route { return &route{t: t0, lat: 52.0, lon: 13.0} }

// kmToLon is the longitude that km east makes at the route's latitude.
func (r *route) kmToLon(km float64) float64 {
	return km / (fleet.EarthRadiusM / 1000 * math.Cos(r.lat*math.Pi/180) * math.Pi / 180)
}

func (r *route) report(speed float64) {
	sp := speed
	p := fleet.Point{Latitude: r.lat, Longitude: r.lon, Timestamp: r.t, Speed: &sp}
	if r.odo != nil {
		o := *r.odo
		p.OdometerKm = &o
	}
	r.pts = append(r.pts, p)
}

// drive reports for d at kmh, moving between reports.
func (r *route) drive(d time.Duration, kmh float64) *route {
	for end := r.t.Add(d); r.t.Before(end); {
		r.step(kmh)
		r.report(kmh)
	}
	return r
}

// step moves the time and the position on by one report at kmh.
func (r *route) step(kmh float64) {
	km := kmh * reportEvery.Hours()
	r.lon += r.kmToLon(km)
	if r.odo != nil {
		*r.odo += km
	}
	r.t = r.t.Add(reportEvery)
}

// stand reports for d at speed 0 in place.
func (r *route) stand(d time.Duration) *route {
	for end := r.t.Add(d); r.t.Before(end); {
		r.t = r.t.Add(reportEvery)
		r.report(0)
	}
	return r
}

// silent moves on for d at kmh without reporting (a tunnel at kmh > 0).
func (r *route) silent(d time.Duration, kmh float64) *route {
	for end := r.t.Add(d); r.t.Before(end); {
		r.step(kmh)
	}
	return r
}

// gcKm is the great-circle sum over pts.
func gcKm(pts []fleet.Point) float64 {
	sum := 0.0
	for i := 1; i < len(pts); i++ {
		sum += fleet.DistanceM(pts[i-1].Latitude, pts[i-1].Longitude, pts[i].Latitude, pts[i].Longitude) / 1000
	}
	return sum
}

type tripRig struct {
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	v     fleet.Vehicle
	t0    time.Time
}

func newTripRig(t *testing.T, store fleet.Store) *tripRig {
	t.Helper()
	is := is.New(t)
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	clock := testclock.New(t0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	r := &tripRig{svc: svc, clock: clock, p: fleet.SystemPrincipal(a), t0: t0}
	r.v, err = svc.CreateVehicle(ctx, r.p, fleet.Vehicle{Name: "Van"})
	is.NoErr(err)
	return r
}

// ingest sends pts in batches of n, the clock at each batch's last report.
func (r *tripRig) ingest(t *testing.T, pts []fleet.Point, n int) {
	t.Helper()
	for i := 0; i < len(pts); i += n {
		b := append([]fleet.Point(nil), pts[i:min(i+n, len(pts))]...)
		if last := b[len(b)-1].Timestamp; last.After(r.clock.Now()) {
			r.clock.Set(last)
		}
		if _, err := r.svc.IngestLocations(ctx, r.p, r.v.ID, b); err != nil {
			t.Fatalf("ingest: %v", err)
		}
	}
}

func (r *tripRig) trips(t *testing.T) []fleet.Trip {
	t.Helper()
	from := r.t0.Add(-time.Hour)
	to := r.clock.Now()
	l, err := r.svc.ListTrips(ctx, r.p, r.v.ID, fleet.TripQuery{From: &from, To: &to, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (r *tripRig) events(t *testing.T, typ string) []fleet.Trip {
	t.Helper()
	l, err := r.svc.ListEvents(ctx, r.p, fleet.EventFilter{Type: typ}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []fleet.Trip
	for _, e := range l.Items {
		var tr fleet.Trip
		if err := json.Unmarshal(e.Data, &tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// metre is how far a distance the service answers may be from the exact
// sum: it keeps distances to the metre.
const metre = 0.0005

func TestTripDriveAndStop(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		rt := newRoute(r.t0)
		rt.report(0)
		rt.drive(20*time.Minute, 60)
		r.ingest(t, rt.pts, 7)
		trips := r.trips(t)
		is.Equal(len(trips), 1)
		tr := trips[0]
		is.Equal(tr.Status, fleet.TripInProgress)
		is.True(tr.Start.Timestamp.Equal(rt.pts[1].Timestamp)) // the first moving report
		is.True(tr.End.Timestamp.Equal(rt.t))
		is.True(near(tr.DistanceKm, 19.5, 0.01)) // 39 steps of half a minute at 60 km/h
		is.Equal(tr.Points, 40)
		is.Equal(len(r.events(t, fleet.EventTripStarted)), 1)
		is.Equal(len(r.events(t, fleet.EventTripCompleted)), 0)

		end := rt.t
		n := len(rt.pts)
		rt.stand(6 * time.Minute)
		r.ingest(t, rt.pts[n:], 3)
		trips = r.trips(t)
		is.Equal(len(trips), 1)
		is.Equal(trips[0].Status, fleet.TripCompleted)
		is.True(trips[0].End.Timestamp.Equal(end)) // at its last moving report
		is.Equal(trips[0].DistanceKm, tr.DistanceKm)
		done := r.events(t, fleet.EventTripCompleted)
		is.Equal(len(done), 1)
		is.Equal(done[0].ID, tr.ID)
		is.True(near(done[0].AvgSpeed, 60, 0.5))
		is.Equal(done[0].MaxSpeed, 60.0)
	})
}

func TestTripLightStopDeliveryStopTunnelOffline(t *testing.T) {
	cases := []struct {
		name   string
		build  func(rt *route)
		trips  int
		stops  int
		onePtr bool
	}{
		{"stop at a light stays one trip", func(rt *route) {
			rt.drive(10*time.Minute, 50).stand(3*time.Minute).drive(10*time.Minute, 50).stand(6 * time.Minute)
		}, 1, 1, true},
		{"delivery stop makes a new trip", func(rt *route) {
			rt.drive(10*time.Minute, 50).stand(8*time.Minute).drive(10*time.Minute, 50).stand(6 * time.Minute)
		}, 2, 2, false},
		{"tunnel gap stays one trip", func(rt *route) {
			rt.drive(10*time.Minute, 50).silent(8*time.Minute, 50).drive(10*time.Minute, 50).stand(6 * time.Minute)
		}, 1, 1, true},
		{"offline gap makes a new trip", func(rt *route) {
			rt.drive(10*time.Minute, 50).silent(40*time.Minute, 0).drive(10*time.Minute, 50).stand(6 * time.Minute)
		}, 2, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			onStores(t, func(t *testing.T, store fleet.Store) {
				is := is.New(t)
				r := newTripRig(t, store)
				rt := newRoute(r.t0)
				tc.build(rt)
				r.ingest(t, rt.pts, 5)
				trips := r.trips(t)
				is.Equal(len(trips), tc.trips)
				want := fleet.SegmentTrips(r.p.Account.ID, rt.pts, r.clock.Now(), fleet.StatusThresholds{})
				is.Equal(len(want), tc.trips) // the incremental trips are the reference's
				total := 0.0
				for i := range trips {
					is.Equal(trips[i].Status, fleet.TripCompleted)
					is.True(trips[i].Start.Timestamp.Equal(want[i].Start.Timestamp))
					is.True(trips[i].End.Timestamp.Equal(want[i].End.Timestamp))
					is.True(near(trips[i].DistanceKm, want[i].DistanceKm, 1e-9))
					is.True(near(trips[i].MovingSeconds, want[i].MovingSeconds, 1e-6))
					total += trips[i].DistanceKm
				}
				// The whole drive's distance: every moving step, the tunnel's too.
				if tc.onePtr {
					is.True(near(total, gcKm(rt.pts[:len(rt.pts)-12]), float64(len(trips))*metre))
				}
				from, to := r.t0, r.clock.Now()
				stops, err := r.svc.ListStops(ctx, r.p, r.v.ID, fleet.TripQuery{From: &from, To: &to})
				is.NoErr(err)
				is.Equal(len(stops.Items), tc.stops)
				for i, st := range stops.Items {
					is.True(st.Start.Equal(trips[i].End.Timestamp))
					is.True(st.DurationSeconds >= 300)
					if i+1 < len(trips) {
						is.True(st.End.Equal(trips[i+1].Start.Timestamp))
					} else {
						is.Equal(st.End, nil) // still standing
					}
				}
			})
		})
	}
}

func TestTripGPSJumpsIgnored(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		rt := newRoute(r.t0)
		rt.drive(20*time.Minute, 60)
		clean := gcKm(rt.pts)
		pts := append([]fleet.Point(nil), rt.pts...)
		for _, i := range []int{10, 25} { // 50 km off in 30 s
			j := pts[i]
			j.Latitude += 0.45
			j.Timestamp = j.Timestamp.Add(time.Second)
			pts = append(pts[:i+1], append([]fleet.Point{j}, pts[i+1:]...)...)
		}
		r.ingest(t, pts, 9)
		trips := r.trips(t)
		is.Equal(len(trips), 1)
		is.Equal(trips[0].IgnoredPoints, 2)
		is.Equal(trips[0].Points, len(rt.pts))
		is.True(near(trips[0].DistanceKm, clean, metre))
		is.Equal(trips[0].MaxSpeed, 60.0)
	})
}

func TestTripOutOfOrderBatches(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		rt := newRoute(r.t0)
		rt.drive(10*time.Minute, 50).stand(3*time.Minute).drive(10*time.Minute, 50).stand(8*time.Minute).
			drive(10*time.Minute, 40).silent(40*time.Minute, 0).drive(5*time.Minute, 30)
		r.clock.Set(rt.t)
		// Batches of 10 sent last first, then two batches swapped.
		var batches [][]fleet.Point
		for i := 0; i < len(rt.pts); i += 10 {
			batches = append(batches, rt.pts[i:min(i+10, len(rt.pts))])
		}
		order := []int{3, 1, 0, 2}
		for i := len(batches) - 1; i >= 4; i-- {
			r.ingest(t, batches[i], 10)
		}
		for _, i := range order {
			r.ingest(t, batches[i], 10)
		}
		got := r.trips(t)
		want := fleet.SegmentTrips(r.p.Account.ID, rt.pts, r.clock.Now(), fleet.StatusThresholds{})
		is.Equal(len(got), 3)
		is.Equal(len(want), 3)
		for i := range want {
			is.True(got[i].Start.Timestamp.Equal(want[i].Start.Timestamp))
			is.True(got[i].End.Timestamp.Equal(want[i].End.Timestamp))
			is.True(near(got[i].DistanceKm, want[i].DistanceKm, 1e-9))
			is.Equal(got[i].Points, want[i].Points)
			is.Equal(got[i].Status, want[i].Status)
		}
		is.Equal(got[2].Status, fleet.TripInProgress)
		// Every trip stored was announced; the completed ones as such.
		started := map[string]bool{}
		for _, e := range r.events(t, fleet.EventTripStarted) {
			started[e.ID] = true
		}
		for _, tr := range got {
			is.True(started[tr.ID])
		}
	})
}

func TestTripLateReportsBeyondWindowDoNotReopen(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		old := newRoute(r.t0)
		old.drive(10*time.Minute, 50)
		rt := newRoute(r.t0.Add(30 * time.Hour))
		rt.drive(10*time.Minute, 50).stand(6 * time.Minute)
		r.ingest(t, rt.pts, 50)
		is.Equal(len(r.trips(t)), 1)
		r.ingest(t, old.pts, 50) // 30 hours before the last trip's end
		is.Equal(len(r.trips(t)), 1)

		// Within the window, late reports make their trip.
		mid := newRoute(r.t0.Add(20 * time.Hour))
		mid.drive(10*time.Minute, 50).stand(6 * time.Minute)
		r.ingest(t, mid.pts, 50)
		trips := r.trips(t)
		is.Equal(len(trips), 2)
		is.True(trips[0].Start.Timestamp.Equal(mid.pts[0].Timestamp))
		is.Equal(trips[0].Status, fleet.TripCompleted)
	})
}

func TestTripSweepCompletesSilentTrip(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		rt := newRoute(r.t0)
		rt.drive(10*time.Minute, 50)
		r.ingest(t, rt.pts, 50)
		is.Equal(r.trips(t)[0].Status, fleet.TripInProgress)
		r.clock.Advance(29 * time.Minute)
		_, err := r.svc.Jobs().Sweep(ctx)
		is.NoErr(err)
		is.Equal(r.trips(t)[0].Status, fleet.TripInProgress) // not silent long enough
		r.clock.Advance(time.Minute)
		_, err = r.svc.Jobs().Sweep(ctx)
		is.NoErr(err)
		is.Equal(r.trips(t)[0].Status, fleet.TripCompleted)
		is.Equal(len(r.events(t, fleet.EventTripCompleted)), 1)
	})
}

// A known route: 120 reports along a polyline bending every 10 reports.
func TestTripDistanceAccuracy(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		var pts []fleet.Point
		lat, lon, odo := 48.1, 11.5, 1000.0
		at := r.t0
		for i := range 120 {
			sp := 54.0
			o := odo
			pts = append(pts, fleet.Point{Latitude: lat, Longitude: lon, Timestamp: at, Speed: &sp, OdometerKm: &o})
			bearing := float64(i/10) * 30 * math.Pi / 180
			lat += 0.0045 * math.Cos(bearing) // about 0.5 km per step
			lon += 0.0045 * math.Sin(bearing) / math.Cos(lat*math.Pi/180)
			odo += 0.5
			at = at.Add(reportEvery)
		}
		noOdo := make([]fleet.Point, len(pts))
		for i, p := range pts {
			p.OdometerKm = nil
			noOdo[i] = p
		}
		want := gcKm(pts)
		r.ingest(t, noOdo, 13)
		tr := r.trips(t)[0]
		is.True(math.Abs(tr.DistanceKm-want)/want < 0.005) // within 0.5 % of the great-circle sum
		is.Equal(tr.StartOdometerKm, nil)

		r2 := newTripRig(t, store)
		r2.ingest(t, pts, 13)
		tr = r2.trips(t)[0]
		is.Equal(tr.DistanceKm, *pts[119].OdometerKm-*pts[0].OdometerKm) // the odometer difference, exactly
		is.Equal(*tr.StartOdometerKm, 1000.0)
		is.Equal(*tr.EndOdometerKm, 1000.0+119*0.5)
	})
}

func TestTripSummaryAcrossMidnightInZone(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		berlin, err := time.LoadLocation("Europe/Berlin")
		is.NoErr(err)
		start := time.Date(2026, 11, 20, 23, 40, 0, 0, berlin).UTC()
		rt := newRoute(start)
		rt.report(0)
		rt.drive(40*time.Minute, 60).stand(6 * time.Minute)
		r.ingest(t, rt.pts, 20)
		trips := r.trips(t)
		is.Equal(len(trips), 1)
		midnight := time.Date(2026, 11, 21, 0, 0, 0, 0, berlin)
		var before []fleet.Point
		for _, p := range rt.pts[1:] { // the trip starts at the first moving report
			if p.Timestamp.Before(midnight) {
				before = append(before, p)
			}
		}
		day1 := gcKm(before)
		from, to := start.Add(-time.Hour), r.clock.Now()
		sum, err := r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, TZ: "Europe/Berlin"})
		is.NoErr(err)
		is.Equal(len(sum.Items), 2)
		is.Equal(sum.Items[0].Day, "2026-11-20")
		is.Equal(sum.Items[1].Day, "2026-11-21")
		is.True(near(sum.Items[0].DistanceKm, day1, metre)) // split by its points
		is.True(near(sum.Items[0].DistanceKm+sum.Items[1].DistanceKm, trips[0].DistanceKm, 2*metre))
		is.Equal(sum.Items[0].Trips, 1)
		is.Equal(sum.Items[1].Trips, 0)
		is.True(sum.Items[0].FirstDeparture.Equal(trips[0].Start.Timestamp))
		is.True(sum.Items[1].LastArrival.Equal(trips[0].End.Timestamp))
		is.True(near(sum.Items[1].StoppedSeconds, to.Sub(trips[0].End.Timestamp).Seconds(), 1e-6))

		// In UTC the whole trip is on the 20th.
		sum, err = r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to})
		is.NoErr(err)
		is.Equal(len(sum.Items), 1)
		is.Equal(sum.Items[0].Day, "2026-11-20")
		byVehicle, err := r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to, GroupBy: fleet.GroupByVehicle})
		is.NoErr(err)
		is.Equal(len(byVehicle.Items), 1)
		is.Equal(byVehicle.Items[0].Day, "")
		is.True(near(byVehicle.Items[0].DistanceKm, trips[0].DistanceKm, metre))

		_, err = r.svc.Summary(ctx, r.p, fleet.SummaryQuery{TZ: "Mars/Olympus"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
		_, err = r.svc.Summary(ctx, r.p, fleet.SummaryQuery{GroupBy: "week"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	})
}

// A jump just before a halt at a light, and one during it, are each
// counted once when the vehicle moves on.
func TestTripJumpsAroundAHalt(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		rt := newRoute(r.t0)
		rt.drive(5*time.Minute, 60)
		halt := len(rt.pts)
		rt.stand(2*time.Minute).drive(5*time.Minute, 60).stand(6 * time.Minute)
		clean := gcKm(rt.pts[:len(rt.pts)-12])
		pts := append([]fleet.Point(nil), rt.pts...)
		far := func(p fleet.Point, speed float64) fleet.Point {
			p.Latitude += 0.45
			p.Timestamp = p.Timestamp.Add(time.Second)
			p.Speed = &speed
			return p
		}
		// A moving jump before the halt, a stationary one and a moving one
		// during it.
		pts = append(pts[:halt], append([]fleet.Point{far(pts[halt-1], 60)}, pts[halt:]...)...)
		pts = append(pts[:halt+2], append([]fleet.Point{far(pts[halt+1], 0), far(pts[halt+2], 60)}, pts[halt+3:]...)...)
		for _, n := range []int{1, 4, 100} {
			t.Run(fmt.Sprint("batches of ", n), func(t *testing.T) {
				is := is.New(t)
				r := newTripRig(t, store)
				r.ingest(t, pts, n)
				trips := r.trips(t)
				is.Equal(len(trips), 1)
				is.Equal(trips[0].IgnoredPoints, 3)
				is.True(near(trips[0].DistanceKm, clean, metre))
			})
		}
		_ = r
	})
}

// Distances are kept to the metre: an odometer that goes from 9612.75 to
// 9613.45 made a trip of 0.7 km, not of 0.7000000000007276, in the trip and
// in the summary (and so in their CSV).
func TestTripDistancesToTheMetre(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		r := newTripRig(t, store)
		odo := 9612.4
		rt := newRoute(r.t0)
		rt.odo = &odo
		rt.report(0)
		rt.drive(90*time.Second, 42) // three steps of 0.35 km: the trip starts at the first
		rt.stand(6 * time.Minute)
		r.ingest(t, rt.pts, 5)
		is.True(*rt.pts[3].OdometerKm-*rt.pts[1].OdometerKm != 0.7) // the noise is there to round away
		trips := r.trips(t)
		is.Equal(len(trips), 1)
		is.Equal(trips[0].DistanceKm, 0.7)
		from, to := r.t0.Add(-time.Hour), r.clock.Now()
		sum, err := r.svc.Summary(ctx, r.p, fleet.SummaryQuery{From: &from, To: &to})
		is.NoErr(err)
		is.Equal(len(sum.Items), 1)
		is.Equal(sum.Items[0].DistanceKm, 0.7)
	})
}
