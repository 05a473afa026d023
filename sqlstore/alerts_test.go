package sqlstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// TestAlertsAcrossServers: two services on one database act as one. A rule
// created through one server is judged by the other's next ingest (no stale
// copy of the rules), and concurrent ingests of different vehicles each open
// their vehicle's alert once.
func TestAlertsAcrossServers(t *testing.T) {
	dialects(t, func(t *testing.T, newDSN func(t *testing.T) string) {
		is := is.New(t)
		dsn := newDSN(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		one := fleet.NewService(MustOpen(t, dsn), fleet.Options{Now: clock.Now})
		two := fleet.NewService(MustOpen(t, dsn), fleet.Options{Now: clock.Now})
		a, _, err := one.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
		is.NoErr(err)
		p := fleet.SystemPrincipal(a)
		var vs []fleet.Vehicle
		for i := range 4 {
			v, err := one.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", i)})
			is.NoErr(err)
			vs = append(vs, v)
		}
		t0 := clock.Now().Add(-time.Hour)
		speed := func(s float64) *float64 { return &s }
		// Before any rule: nothing.
		_, err = two.IngestLocations(ctx, p, vs[0].ID, []fleet.Point{{Latitude: 52.5, Longitude: 13.4, Timestamp: t0, Speed: speed(130)}})
		is.NoErr(err)
		limit := 90.0
		_, err = one.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &limit}, nil)
		is.NoErr(err)
		g, err := one.CreateGeofence(ctx, p, fleet.Geofence{Name: "Depot", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon,
			Rings: [][][]float64{{{13.0, 52.0}, {13.2, 52.0}, {13.2, 52.2}, {13.0, 52.2}, {13.0, 52.0}}}}})
		is.NoErr(err)
		_, err = one.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID}, nil)
		is.NoErr(err)

		var wg sync.WaitGroup
		for i, v := range vs {
			svc := []*fleet.Service{one, two}[i%2]
			wg.Go(func() {
				var pts []fleet.Point
				for j, s := range []float64{80, 95, 100, 85} {
					pts = append(pts, fleet.Point{Latitude: 52.1, Longitude: 12.9 + 0.1*float64(j), Timestamp: t0.Add(time.Duration(j+1) * time.Minute), Speed: speed(s)})
				}
				if _, err := svc.IngestLocations(ctx, p, v.ID, pts); err != nil {
					t.Errorf("ingest %s: %v", v.ID, err)
				}
			})
		}
		wg.Wait()
		l, err := two.ListAlerts(ctx, p, fleet.AlertFilter{Type: fleet.AlertSpeeding}, fleet.ListQuery{Limit: 500})
		is.NoErr(err)
		is.Equal(len(l.Items), 4) // one per vehicle
		l, err = one.ListAlerts(ctx, p, fleet.AlertFilter{Type: fleet.AlertGeofenceEnter}, fleet.ListQuery{Limit: 500})
		is.NoErr(err)
		is.Equal(len(l.Items), 4) // each drove in from 12.9 (outside) to 13.0 (the edge, inside)

		// The clock alone raises vehicle_offline, from either server, once.
		after := 60
		_, err = two.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertVehicleOffline, AfterMinutes: &after, VehicleIDs: []string{vs[1].ID}}, nil)
		is.NoErr(err)
		clock.Advance(2 * time.Hour)
		var sw sync.WaitGroup
		for _, svc := range []*fleet.Service{one, two} {
			sw.Go(func() {
				if _, err := svc.Jobs().Sweep(ctx); err != nil {
					t.Errorf("sweep: %v", err)
				}
			})
		}
		sw.Wait()
		l, err = one.ListAlerts(ctx, p, fleet.AlertFilter{Type: fleet.AlertVehicleOffline}, fleet.ListQuery{Limit: 500})
		is.NoErr(err)
		is.Equal(len(l.Items), 1)
		is.Equal(l.Items[0].VehicleID, vs[1].ID)
	})
}
