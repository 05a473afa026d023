package fleethttp_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The device registry over HTTP, on every store; every answer is checked
// against the OpenAPI document by e.do.
func TestDevicesOverHTTP(t *testing.T) {
	onEachStore(t, testDevicesOverHTTP)
}

func testDevicesOverHTTP(t *testing.T, e *env) {
	is := is.New(t)
	_, key := e.account(fleet.PlanFree)
	truck := e.vehicle(key, "Truck 7")
	van := e.vehicle(key, "Van 2")

	r := e.do("POST", "/v1/devices", key, map[string]any{"identifier": "356307042441013", "vehicle_id": truck, "name": "FMB920 cab"})
	is.Equal(r.status, http.StatusCreated)
	d := r.data()
	id := d["device_id"].(string)
	is.True(strings.HasPrefix(id, "dev_"))
	is.Equal(d["identifier"], "356307042441013")
	is.Equal(d["vehicle_id"], truck)
	is.Equal(d["name"], "FMB920 cab")
	is.Equal(d["protocol"], nil)     // never seen
	is.Equal(d["last_seen_at"], nil) // idem
	is.Equal(d["last_report"], nil)
	is.Equal(e.do("GET", "/v1/devices/"+id, key, nil).data()["identifier"], "356307042441013")

	// Taken by whoever: 409; another account's vehicle: 422 naming it.
	_, other := e.account(fleet.PlanPro)
	r = e.do("POST", "/v1/devices", other, map[string]any{"identifier": "356307042441013"})
	is.Equal(r.status, http.StatusConflict)
	is.Equal(r.errCode(), "conflict")
	is.True(namesField(r, "identifier"))
	r = e.do("POST", "/v1/devices", other, map[string]any{"identifier": "356307042441014", "vehicle_id": truck})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(namesField(r, "vehicle_id"))
	is.Equal(e.do("GET", "/v1/devices/"+id, other, nil).status, http.StatusNotFound) // another account's device
	r = e.do("POST", "/v1/devices", key, map[string]any{"identifier": "35630 7042441015"})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(namesField(r, "identifier"))
	r = e.do("POST", "/v1/devices", key, map[string]any{"identifier": "x", "protocol": "gt06"})
	is.Equal(r.status, http.StatusBadRequest) // read-only

	// What the device sent, read back.
	at := e.clock.Now().Add(-30 * time.Second)
	speed, sats := 61.2, 12
	_, err := e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: "356307042441013", Protocol: "teltonika", RemoteAddr: "192.0.2.7:5000",
		Positions: []fleet.DevicePosition{{Latitude: 54.6872, Longitude: 25.2797, Timestamp: at, Speed: &speed, Valid: true, Satellites: &sats,
			Attrs: fleet.Attributes{fleet.BoolAttr("io239", true), fleet.NumberAttr("battery", 12.6), fleet.TextAttr("iccid", "8937204016201234567")}}}})
	is.NoErr(err)
	got := e.do("GET", "/v1/devices/"+id, key, nil)
	// The attributes as the answer has always written them: one object,
	// in name order.
	is.True(bytes.Contains(got.body, []byte(`,"satellites":12,"attributes":{"battery":12.6,"iccid":"8937204016201234567","io239":true}},"stored":true,"reason":null}`)))
	d = got.data()
	is.Equal(d["protocol"], "teltonika")
	is.Equal(d["last_seen_at"], e.clock.Now().Format(time.RFC3339))
	lr := d["last_report"].(map[string]any)
	is.Equal(lr["stored"], true)
	is.Equal(lr["reason"], nil)
	is.Equal(lr["protocol"], "teltonika")
	p := lr["position"].(map[string]any)
	is.Equal(p["timestamp"], at.Format(time.RFC3339))
	is.Equal(p["speed"], 61.2)
	is.Equal(p["heading"], nil)
	is.Equal(p["satellites"], 12.0)
	is.Equal(p["valid"], true)
	is.Equal(p["attributes"], map[string]any{"io239": true, "battery": 12.6, "iccid": "8937204016201234567"})
	hist := e.do("GET", "/v1/vehicles/"+truck+"/locations", key, nil).list()
	is.Equal(len(hist), 1) // stored as the vehicle's location
	is.Equal(hist[0].(map[string]any)["speed"], 61.2)

	noFix := at.Add(10 * time.Second)
	_, err = e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: "356307042441013", Protocol: "gt06", RemoteAddr: "192.0.2.7:5001",
		Positions: []fleet.DevicePosition{{Latitude: 0, Longitude: 0, Timestamp: noFix}}})
	is.NoErr(err)
	lr = e.do("GET", "/v1/devices/"+id, key, nil).data()["last_report"].(map[string]any)
	is.Equal(lr["stored"], false)
	is.Equal(lr["reason"], "no_fix")
	is.Equal(lr["position"].(map[string]any)["attributes"], map[string]any{}) // an object, empty
	is.Equal(e.do("GET", "/v1/devices/"+id, key, nil).data()["protocol"], "gt06")

	// Lists and their filters.
	second := e.do("POST", "/v1/devices", key, map[string]any{"identifier": "H02.4106040008", "vehicle_id": van}).data()["device_id"].(string)
	third := e.do("POST", "/v1/devices", key, map[string]any{"identifier": "traccar-client-7"}).data()["device_id"].(string)
	ids := func(path string) []string {
		var out []string
		for _, x := range e.do("GET", path, key, nil).list() {
			out = append(out, x.(map[string]any)["device_id"].(string))
		}
		return out
	}
	is.Equal(ids("/v1/devices"), []string{id, second, third})
	is.Equal(ids("/v1/devices?vehicle_id="+van), []string{second})
	is.Equal(ids("/v1/devices?identifier=traccar-client-7"), []string{third})
	is.Equal(ids("/v1/devices?identifier=nobody"), []string(nil))
	page := e.do("GET", "/v1/devices?limit=2", key, nil)
	is.Equal(len(page.list()), 2)
	next := page.json()["pagination"].(map[string]any)["next_cursor"].(string)
	is.Equal(ids("/v1/devices?limit=2&cursor="+next), []string{third})
	is.Equal(e.do("GET", "/v1/devices?identifier=a%20b", key, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/devices?vehicle_id=truck", key, nil).status, http.StatusBadRequest)
	is.Equal(len(e.do("GET", "/v1/devices", other, nil).list()), 0) // another account sees none

	// The merge patch: move, detach, rename.
	d = e.do("PATCH", "/v1/devices/"+id, key, map[string]any{"vehicle_id": van}).data()
	is.Equal(d["vehicle_id"], van)
	is.Equal(d["name"], "FMB920 cab") // absent: unchanged
	d = e.do("PATCH", "/v1/devices/"+id, key, map[string]any{"vehicle_id": nil, "name": nil}).data()
	is.Equal(d["vehicle_id"], nil)
	is.Equal(d["name"], nil)
	r = e.do("PATCH", "/v1/devices/"+id, key, map[string]any{"identifier": "other"})
	is.Equal(r.status, http.StatusBadRequest) // fixed at registration
	r = e.do("PATCH", "/v1/devices/"+id, key, map[string]any{"vehicle_id": "veh_nope"})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(namesField(r, "vehicle_id"))

	// Deleting a vehicle detaches its devices.
	is.Equal(e.do("DELETE", "/v1/vehicles/"+van, key, nil).status, http.StatusOK)
	is.Equal(e.do("GET", "/v1/devices/"+second, key, nil).data()["vehicle_id"], nil)

	// The free plan's cap of 10: the 11th is 409 naming it.
	for i := range 7 {
		r = e.do("POST", "/v1/devices", key, map[string]any{"identifier": "cap-" + string(rune('a'+i))})
		is.Equal(r.status, http.StatusCreated)
	}
	r = e.do("POST", "/v1/devices", key, map[string]any{"identifier": "cap-z"})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.errMessage(), "at most 10 devices")) // names the cap

	// Deleting frees a place and the identifier.
	d = e.do("DELETE", "/v1/devices/"+id, key, nil).data()
	is.Equal(d, map[string]any{"device_id": id, "deleted": true})
	is.Equal(e.do("GET", "/v1/devices/"+id, key, nil).status, http.StatusNotFound)
	r = e.do("POST", "/v1/devices", other, map[string]any{"identifier": "356307042441013"})
	is.Equal(r.status, http.StatusCreated)
}
