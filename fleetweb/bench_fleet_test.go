package fleetweb_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
)

// BenchmarkFleetPages renders the pages that run the fleet for a manager
// of an account of 10,000 vehicles (memstore): the vehicle's forms, the
// device's registration and page (whose Vehicle choice lists 5,000 by
// name), the Maintenance page, a work order's and a schedule's pages, the
// Reports page, empty, with a week's summary of every vehicle and of two
// chosen, and the pickers' search (/vehicles/choices, 1,111 vehicles
// match "truck 1"). The baseline, measured in the same run, is reading the 10,000
// vehicles through ListVehicles and writing them as JSON. Each reports
// ms/render.
//
//	go test ./fleetweb -run '^$' -bench FleetPages -benchtime 20x
func BenchmarkFleetPages(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	svc, p, secret := bigFleet(b, "memstore", n, fleet.RoleManager)
	l, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, fleet.ListQuery{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	v := l.Items[0]
	dev, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: v.ID})
	if err != nil {
		b.Fatal(err)
	}
	all, err := listAll(ctx, svc, p)
	if err != nil {
		b.Fatal(err)
	}
	last := all[len(all)-1] // beyond the pickers' 5,000
	wo, err := svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: last.ID, Title: "Brakes"})
	if err != nil {
		b.Fatal(err)
	}
	days := 180
	sch, err := svc.CreateSchedule(ctx, p, fleet.Schedule{VehicleID: last.ID, Name: "Oil change", IntervalDays: &days})
	if err != nil {
		b.Fatal(err)
	}
	web := fleetweb.New(svc, fleetweb.Options{InsecureCookies: true, DeviceListeners: func() []fleetweb.DeviceListener {
		return []fleetweb.DeviceListener{{Protocol: "teltonika", Port: 5027, Transports: []string{"tcp", "udp"}}}
	}})
	render := func(b *testing.B, path string) {
		for b.Loop() {
			req := httptest.NewRequest("GET", path, nil)
			req.AddCookie(&http.Cookie{Name: "fleet_session", Value: secret})
			w := httptest.NewRecorder()
			web.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/render")
	}
	b.Run("baseline-list-as-json", func(b *testing.B) { baselineListAsJSON(b, svc, p, n) })
	b.Run("add-vehicle", func(b *testing.B) { render(b, "/vehicles/new") })
	b.Run("edit-vehicle", func(b *testing.B) { render(b, "/vehicles/"+v.ID+"/edit") })
	b.Run("delete-vehicle", func(b *testing.B) { render(b, "/vehicles/"+v.ID+"/delete") })
	b.Run("register-device", func(b *testing.B) { render(b, "/vehicles/"+v.ID+"/devices/new") })
	b.Run("device", func(b *testing.B) { render(b, "/devices/"+dev.ID) })
	b.Run("maintenance", func(b *testing.B) { render(b, "/maintenance") })
	b.Run("reports-form", func(b *testing.B) { render(b, "/reports") })
	b.Run("reports-week-summary", func(b *testing.B) { render(b, "/reports?report=summary") })
	b.Run("reports-chosen-vehicles", func(b *testing.B) {
		render(b, "/reports?report=summary&vehicle_id="+v.ID+"&vehicle_id="+last.ID)
	})
	b.Run("work-order", func(b *testing.B) { render(b, "/maintenance/work-orders/"+wo.ID) })
	b.Run("schedule", func(b *testing.B) { render(b, "/maintenance/schedules/"+sch.ID) })
	b.Run("vehicle-search", func(b *testing.B) { render(b, "/vehicles/choices?q=truck+1") })
}

// baselineListAsJSON is the pages' baseline: reading the account's n
// vehicles through ListVehicles and writing them as plain JSON.
func baselineListAsJSON(b *testing.B, svc *fleet.Service, p fleet.Principal, n int) {
	ctx := context.Background()
	for b.Loop() {
		all, err := listAll(ctx, svc, p)
		if err != nil || len(all) != n {
			b.Fatal(err, len(all))
		}
		if err := json.NewEncoder(io.Discard).Encode(all); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/render")
}

// listAll reads every vehicle of the account.
func listAll(ctx context.Context, svc *fleet.Service, p fleet.Principal) ([]fleet.Vehicle, error) {
	var all []fleet.Vehicle
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, q)
		if err != nil {
			return nil, err
		}
		all = append(all, l.Items...)
		if !l.HasMore {
			return all, nil
		}
		q.Cursor = l.NextCursor
	}
}
