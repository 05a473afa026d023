package fleetclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// A newer server within /v1 may add response members, enumeration values,
// event types and headers (docs/compatibility.md): the Go
// client reads such answers, keeping what it knows.
func TestClientIgnoresWhatANewerServerAdds(t *testing.T) {
	is := is.New(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/vehicles/veh_1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Fleet-Version", "v0.9.0")
		w.Header().Set("Fleet-Something-New", "1")
		w.Write([]byte(`{"success":true,"data":{"vehicle_id":"veh_1","name":"Truck 1","vin":"","make":"","model":"","year":null,
			"license_plate":"","external_id":"","tags":["north"],"odometer_km":12.5,"status":"towed","speed":null,"last_location":null,
			"created_at":"2026-11-22T10:00:00Z","updated_at":"2026-11-22T10:00:00Z",
			"fuel_level_pct":42,"driver":{"driver_id":"drv_1","name":"Ann"}},"meta":{"new":true}}`))
	})
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"success":true,"data":[{"event_id":"evt_1","type":"vehicle.towed","created_at":"2026-11-22T10:00:00Z","data":{"vehicle_id":"veh_1"},"severity":"info"}],
			"pagination":{"next_cursor":null,"has_more":false,"total_estimate":1}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := fleetclient.NewClient(srv.URL, "fleet_unused")

	v, err := c.Vehicle(context.Background(), "veh_1")
	is.NoErr(err)
	is.Equal(v.Name, "Truck 1")
	is.Equal(*v.OdometerKm, 12.5)
	is.Equal(v.Tags, []string{"north"})
	is.Equal(v.Status, fleet.VehicleStatus("towed")) // an unknown status is kept as it came

	var events []fleet.Event
	for e, err := range c.Events(context.Background(), "", time.Time{}) {
		is.NoErr(err)
		events = append(events, e)
	}
	is.Equal(len(events), 1)
	is.Equal(events[0].Type, "vehicle.towed") // an unknown event type too
	is.Equal(string(events[0].Data), `{"vehicle_id":"veh_1"}`)
}
