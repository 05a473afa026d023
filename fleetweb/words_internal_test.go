package fleetweb

import (
	"encoding/json"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestFieldSentence(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		field, msg, want string
	}{
		{"name", "must be 1 to 100 characters", "Name must be 1 to 100 characters."},
		{"current_password", "is not your current password", "The current password you typed is not your current password."},
		{"permissions[2]", `unknown permission "root"`, `Permission: unknown permission "root".`},
		{"expires", "must be a date, YYYY-MM-DD", "Expires on must be a date, YYYY-MM-DD."},
		{"odometer_km", "must be between 0 and 100000000.", "Odometer km must be between 0 and 100000000."},
	} {
		is.Equal(fieldSentence(fleet.FieldError{Field: tc.field, Message: tc.msg}), tc.want)
	}
}

func TestNumbersHaveThousandsSeparators(t *testing.T) {
	is := is.New(t)
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567", -4200: "-4,200"} {
		is.Equal(num(n), want)
	}
	is.Equal(plural(1, "open alert", "open alerts"), "1 open alert")
	is.Equal(plural(1200, "open alert", "open alerts"), "1,200 open alerts")
}

func TestAlertWhat(t *testing.T) {
	is := is.New(t)
	data := func(v map[string]any) json.RawMessage { b, _ := json.Marshal(v); return b }
	for _, tc := range []struct {
		a    fleet.Alert
		want string
	}{
		{fleet.Alert{Type: fleet.AlertSpeeding}, "Speeding"},
		{fleet.Alert{Type: fleet.AlertGeofenceExit, Data: data(map[string]any{"geofence_name": "Depot"})}, "Left geofence Depot"},
		{fleet.Alert{Type: fleet.AlertGeofenceEnter, Data: data(map[string]any{"geofence_name": "Yard"})}, "Entered geofence Yard"},
		{fleet.Alert{Type: fleet.AlertGeofenceExit}, "Left a geofence"},
		{fleet.Alert{Type: fleet.AlertMaintenanceOverdue, Data: data(map[string]any{"schedule_name": "Oil change"})}, "Maintenance overdue: Oil change"},
		{fleet.Alert{Type: fleet.AlertVehicleOffline}, "Not reporting"},
		{fleet.Alert{Type: "tyre_pressure"}, "Tyre pressure"},
	} {
		is.Equal(alertWhat(tc.a), tc.want)
	}
}
