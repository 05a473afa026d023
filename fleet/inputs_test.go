package fleet_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The service refuses what the API refuses, with the same error and field:
// every rule on input lives here, so a program calling the service directly
// gets the rules an HTTP client gets. Each case is a bad input of the API's
// bad-input catalogue, given to the use case directly.
func TestServiceRefusesWhatTheAPIRefuses(t *testing.T) {
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	pt := func(edit func(*fleet.Point)) []fleet.Point {
		speed := 40.0
		x := fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: now, Speed: &speed}
		edit(&x)
		return []fleet.Point{x}
	}
	f := func(x float64) *float64 { return &x }
	n := func(x int) *int { return &x }
	past := now.Add(-time.Hour)
	cases := []struct {
		name  string
		call  func() error
		code  string
		field string
	}{
		{"vehicle without a name", func() error { _, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{}); return err }, fleet.CodeValidation, "name"},
		{"vehicle with a short VIN", func() error { _, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "x", VIN: "ABC"}); return err }, fleet.CodeValidation, "vin"},
		{"vehicle from before 1900", func() error { _, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "x", Year: n(1850)}); return err }, fleet.CodeValidation, "year"},
		{"vehicle with a NUL in a tag", func() error {
			_, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "x", Tags: []string{"a", "b\x00"}})
			return err
		}, fleet.CodeValidation, "tags[1]"},
		{"vehicle patch clearing the name", func() error {
			_, err := svc.UpdateVehicle(ctx, p, v.ID, fleet.VehiclePatch{Name: fleet.Some("")})
			return err
		}, fleet.CodeValidation, "name"},
		{"point without latitude", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Latitude = fleet.NoCoordinate }))
			return err
		}, fleet.CodeValidation, "locations[0].latitude"},
		{"point without longitude", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Longitude = fleet.NoCoordinate }))
			return err
		}, fleet.CodeValidation, "locations[0].longitude"},
		{"point without timestamp", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Timestamp = time.Time{} }))
			return err
		}, fleet.CodeValidation, "locations[0].timestamp"},
		{"point in the future", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Timestamp = now.Add(time.Hour) }))
			return err
		}, fleet.CodeValidation, "locations[0].timestamp"},
		{"point with latitude 91", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Latitude = 91 }))
			return err
		}, fleet.CodeValidation, "locations[0].latitude"},
		{"point with heading 360", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.Heading = f(360) }))
			return err
		}, fleet.CodeValidation, "locations[0].heading"},
		{"point of another vehicle in a vehicle's batch", func() error {
			_, err := svc.IngestLocations(ctx, p, v.ID, pt(func(x *fleet.Point) { x.VehicleID = fleet.NewID(fleet.PrefixVehicle) }))
			return err
		}, fleet.CodeValidation, "locations[0].vehicle_id"},
		{"bulk point without a vehicle", func() error { _, err := svc.IngestBulk(ctx, p, pt(func(*fleet.Point) {})); return err }, fleet.CodeValidation, "locations[0].vehicle_id"},
		{"empty batch", func() error { _, err := svc.IngestLocations(ctx, p, v.ID, nil); return err }, fleet.CodeValidation, "locations"},
		{"history page too large", func() error {
			_, err := svc.ListHistory(ctx, p, v.ID, fleet.HistoryQuery{Limit: fleet.MaxHistoryLimit + 1})
			return err
		}, fleet.CodeInvalidRequest, ""},
		{"list page too large", func() error {
			_, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, fleet.ListQuery{Limit: fleet.MaxPageLimit + 1})
			return err
		}, fleet.CodeInvalidRequest, ""},
		{"garbage cursor", func() error {
			_, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, fleet.ListQuery{Cursor: "garbage"})
			return err
		}, fleet.CodeInvalidRequest, ""},
		{"unknown status filter", func() error {
			_, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{Status: "parked"}, fleet.ListQuery{})
			return err
		}, fleet.CodeInvalidRequest, ""},
		{"key without a name", func() error { _, err := svc.CreateKey(ctx, p, fleet.KeyParams{}); return err }, fleet.CodeValidation, "name"},
		{"key with an unknown permission", func() error {
			_, err := svc.CreateKey(ctx, p, fleet.KeyParams{Name: "x", Permissions: []string{"everything"}})
			return err
		}, fleet.CodeValidation, "permissions[0]"},
		{"key that expired already", func() error {
			_, err := svc.CreateKey(ctx, p, fleet.KeyParams{Name: "x", ExpiresAt: &past})
			return err
		}, fleet.CodeValidation, "expires_at"},
		{"rotation with a negative grace", func() error { _, err := svc.RotateKey(ctx, p, "key_x", -time.Second); return err }, fleet.CodeValidation, "grace_period_seconds"},
		{"rotation with too long a grace", func() error {
			_, err := svc.RotateKey(ctx, p, "key_x", fleet.MaxRotationGrace+time.Second)
			return err
		}, fleet.CodeValidation, "grace_period_seconds"},
		{"usage of 169 hours", func() error { _, err := svc.KeyUsage(ctx, p, "key_x", fleet.MaxUsageHours+1); return err }, fleet.CodeInvalidRequest, ""},
		{"work order without a title", func() error {
			_, err := svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID})
			return err
		}, fleet.CodeValidation, "title"},
		{"work order with a cost but no currency", func() error {
			cost := int64(100)
			_, err := svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: v.ID, Title: "t", CostCents: &cost})
			return err
		}, fleet.CodeValidation, "currency"},
		{"work order of another account's vehicle", func() error {
			_, err := svc.CreateWorkOrder(ctx, p, fleet.WorkOrder{VehicleID: fleet.NewID(fleet.PrefixVehicle), Title: "t"})
			return err
		}, fleet.CodeValidation, "vehicle_id"},
		{"schedule without an interval", func() error {
			_, err := svc.CreateSchedule(ctx, p, fleet.Schedule{VehicleID: v.ID, Name: "Oil"})
			return err
		}, fleet.CodeValidation, "interval_days"},
		{"custom alert without a message", func() error { _, err := svc.CreateAlert(ctx, p, fleet.Alert{}); return err }, fleet.CodeValidation, "message"},
		// Over HTTP this one is a 400: a JSON value of the wrong type, which
		// the decoder names; to a program it is a value the rule refuses.
		{"custom alert whose data is no object", func() error {
			_, err := svc.CreateAlert(ctx, p, fleet.Alert{Message: "m", Data: json.RawMessage(`[1]`)})
			return err
		}, fleet.CodeValidation, "data"},
		{"rule of an unknown type", func() error {
			_, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: "flooding"}, nil)
			return err
		}, fleet.CodeValidation, "type"},
		{"speeding rule without a threshold", func() error {
			_, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding}, nil)
			return err
		}, fleet.CodeValidation, "threshold_kmh"},
		{"geofence ring not closed", func() error {
			_, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "g", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon,
				Rings: [][][]float64{{{13, 52}, {14, 52}, {14, 53}, {13, 53}}}}})
			return err
		}, fleet.CodeValidation, "geometry.coordinates[0]"},
		{"webhook on plain http", func() error {
			_, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "http://hooks.example.com/x", Enabled: true})
			return err
		}, fleet.CodeValidation, "url"},
		{"webhook for an unknown event type", func() error {
			_, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "https://8.8.8.8/x", Events: []string{"vehicle.exploded"}, Enabled: true})
			return err
		}, fleet.CodeValidation, "events[0]"},
		{"device without an identifier", func() error { _, err := svc.CreateDevice(ctx, p, fleet.Device{}); return err }, fleet.CodeValidation, "identifier"},
		{"device identifier of 33 characters", func() error {
			_, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: strings.Repeat("1", fleet.MaxIdentifier+1)})
			return err
		}, fleet.CodeValidation, "identifier"},
		{"device identifier with a space", func() error {
			_, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307 042441013"})
			return err
		}, fleet.CodeValidation, "identifier"},
		{"device with a NUL in its name", func() error {
			_, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: "a1", Name: "a\x00b"})
			return err
		}, fleet.CodeValidation, "name"},
		{"device of another account's vehicle", func() error {
			_, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: "a2", VehicleID: fleet.NewID(fleet.PrefixVehicle)})
			return err
		}, fleet.CodeValidation, "vehicle_id"},
		{"device of no vehicle id", func() error {
			_, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: "a3", VehicleID: "truck 7"})
			return err
		}, fleet.CodeValidation, "vehicle_id"},
		{"device list by a malformed identifier", func() error {
			_, err := svc.ListDevices(ctx, p, fleet.DeviceFilter{Identifier: "a b"}, fleet.ListQuery{})
			return err
		}, fleet.CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := c.call()
			is.Equal(fleet.ErrorCode(err), c.code)
			if c.field != "" {
				var fe *fleet.Error
				is.True(errors.As(err, &fe))
				fields := []string{}
				for _, d := range fe.Details {
					fields = append(fields, d.Field)
				}
				is.True(strings.Contains(strings.Join(fields, " "), c.field)) // names the field as the API does
			}
		})
	}
}
