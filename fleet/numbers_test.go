package fleet_test

import (
	"math"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A -0 a client sends (JSON allows it, and it decodes to IEEE negative
// zero) is stored as 0, in every number a request stores: it would
// otherwise be written back as -0, and compare, sort and hash apart from 0
// in the programs that read it.
func TestNegativeZeroIsStoredAsZero(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	negZero := math.Copysign(0, -1)
	nz := func() *float64 { z := negZero; return &z }
	positive := func(what string, f float64) {
		t.Helper()
		if f == 0 && math.Signbit(f) {
			t.Errorf("%s is -0, want 0", what)
		}
	}

	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck", OdometerKm: nz()})
	is.NoErr(err)
	positive("the new vehicle's odometer_km", *v.OdometerKm)
	v, err = svc.UpdateVehicle(ctx, p, v.ID, fleet.VehiclePatch{OdometerKm: fleet.Some(nz())})
	is.NoErr(err)
	positive("the patched vehicle's odometer_km", *v.OdometerKm)

	_, err = svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: negZero, Longitude: negZero, Timestamp: clock.Now(),
		Speed: nz(), Heading: nz(), OdometerKm: nz()}})
	is.NoErr(err)
	h, err := svc.ListHistory(ctx, p, v.ID, fleet.HistoryQuery{})
	is.NoErr(err)
	is.Equal(len(h.Items), 1)
	pt := h.Items[0]
	positive("latitude", pt.Latitude)
	positive("longitude", pt.Longitude)
	positive("speed", *pt.Speed)
	positive("heading", *pt.Heading)
	positive("the point's odometer_km", *pt.OdometerKm)
	v, err = svc.Vehicle(ctx, p, v.ID)
	is.NoErr(err)
	positive("last_location.latitude", v.LastLocation.Latitude)
	positive("last_location.longitude", v.LastLocation.Longitude)

	g, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Depot", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon,
		Rings: [][][]float64{{{negZero, negZero}, {1, negZero}, {1, 1}, {negZero, negZero, negZero}}}}})
	is.NoErr(err)
	for _, pos := range g.Geometry.Rings[0] {
		for _, x := range pos {
			positive("a polygon's coordinate", x)
		}
	}
	c, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Yard", RadiusM: func() *float64 { r := 100.0; return &r }(),
		Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{negZero, negZero}}})
	is.NoErr(err)
	positive("a circle's longitude", c.Geometry.Point[0])
	positive("a circle's latitude", c.Geometry.Point[1])

	w, err := svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "Tyres", OdometerKm: nz()})
	is.NoErr(err)
	positive("the work order's odometer_km", *w.OdometerKm)
	days := 30
	s, err := svc.CreateSchedule(ctx, p, fleet.Schedule{VehicleID: v.ID, Name: "Oil", IntervalDays: &days, LastServiceOdometerKm: nz()})
	is.NoErr(err)
	positive("the schedule's last_service_odometer_km", *s.LastServiceOdometerKm)
}

// external_id is compared and stored in Unicode NFC: two spellings of the
// same text (a precomposed é, or e and a combining acute accent) are the
// same external_id, so the second is a conflict, on create and on update.
func TestExternalIDIsComparedInNFC(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	const nfc, nfd = "Caf\u00e9-7", "Cafe\u0301-7"

	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Van", ExternalID: nfd})
	is.NoErr(err)
	is.Equal(v.ExternalID, nfc) // stored in NFC
	_, err = svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Other van", ExternalID: nfc})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // the same external_id

	w, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck", ExternalID: "T-1"})
	is.NoErr(err)
	_, err = svc.UpdateVehicle(ctx, p, w.ID, fleet.VehiclePatch{ExternalID: fleet.Some(nfd)})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // on update too
	w, err = svc.UpdateVehicle(ctx, p, w.ID, fleet.VehiclePatch{ExternalID: fleet.Some("Cre\u0300me")})
	is.NoErr(err)
	is.Equal(w.ExternalID, "Cr\u00e8me")
	got, err := svc.Vehicle(ctx, p, w.ID)
	is.NoErr(err)
	is.Equal(got.ExternalID, "Cr\u00e8me")
}
