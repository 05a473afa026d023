package fleetweb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// The pickers' search finds the account's vehicles by name or plate, by
// name, at most 20 and says when more match; another account's are not
// found, and a text the API refuses is refused.
func TestVehicleSearch(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	for i := range 25 {
		_, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Van %02d", 25-i)})
		is.NoErr(err)
	}
	zulu, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Zulu <b>wagon</b>", LicensePlate: "B-ZU 1"})
	is.NoErr(err)
	_, err = e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accB), fleet.Vehicle{Name: "Zulu of Bravo", LicensePlate: "B-ZU 2"})
	is.NoErr(err)
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	type answer struct {
		Vehicles []struct{ ID, Name, LicensePlate string } `json:"vehicles"`
		More     bool                                      `json:"more"`
	}
	search := func(q string) (int, answer) {
		r := do(t, c, "GET", e.srv.URL+"/vehicles/choices?q="+url.QueryEscape(q), nil)
		var a answer
		if r.status == http.StatusOK {
			is.Equal(r.header.Get("Content-Type"), "application/json")
			is.NoErr(json.Unmarshal([]byte(r.body), &a))
		}
		return r.status, a
	}
	status, a := search("b-zu")
	is.Equal(status, http.StatusOK)
	is.Equal(len(a.Vehicles), 1) // by plate, this account's only
	is.Equal(a.Vehicles[0].ID, zulu.ID)
	is.Equal(a.Vehicles[0].Name, "Zulu <b>wagon</b>")
	is.True(!a.More)
	_, a = search("van")
	is.Equal(len(a.Vehicles), 20)
	is.True(a.More)
	is.Equal(a.Vehicles[0].Name, "Van 01") // by name
	is.Equal(a.Vehicles[19].Name, "Van 20")
	_, a = search("  ")
	is.Equal(len(a.Vehicles), 0)
	_, a = search("bravo")
	is.Equal(len(a.Vehicles), 0)
	r := do(t, c, "GET", e.srv.URL+"/vehicles/choices?q=%00", nil)
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.body, `"error":`))
	anon := do(t, e.client(t), "GET", e.srv.URL+"/vehicles/choices?q=van", nil)
	is.Equal(anon.status, http.StatusSeeOther) // to the sign-in
}

// In an account of more vehicles than the pickers list, each picker has
// the search, and a vehicle beyond the list that a form chose (found by
// the search) stays chosen when the page shows the form again.
func TestPickersKeepAVehicleBeyondTheList(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	for i := range 5_000 {
		_, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Car %04d", i)})
		is.NoErr(err)
	}
	zulu, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Zulu wagon"}) // the last: beyond the list
	is.NoErr(err)
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	chosen := `<option value="` + zulu.ID + `" selected>Zulu wagon`
	for _, tc := range []struct {
		method, path string
		form         url.Values
	}{
		{"GET", "/maintenance", nil},
		{"GET", "/maintenance?vehicle_id=" + zulu.ID, nil},
		{"POST", "/maintenance/work-orders", url.Values{"vehicle_id": {zulu.ID}, "title": {""}, "priority": {"low"}}},
		{"GET", "/reports?report=trips&vehicle_id=" + zulu.ID, nil},
		{"GET", "/devices/new", nil},
		{"POST", "/devices", url.Values{"vehicle_id": {zulu.ID}, "identifier": {""}}},
		{"POST", "/rules", url.Values{"type": {"speeding"}, "severity": {"warning"}, "threshold_kmh": {"fast"}, "vehicle_ids": {zulu.ID}}},
		{"POST", "/notifications/rules", url.Values{"user_id": {""}, "vehicle_ids": {zulu.ID}, "digest_minutes": {"often"}}},
	} {
		r := do(t, c, tc.method, e.srv.URL+tc.path, tc.form)
		is.True(strings.Contains(r.body, " data-vehicle-search")) // tc.path
		is.True(strings.Contains(r.body, "of the account's vehicles are listed; find any other by its name or plate."))
		if strings.Contains(tc.path, zulu.ID) || tc.form.Get("vehicle_id") != "" || tc.form.Get("vehicle_ids") != "" {
			is.True(strings.Contains(r.body, chosen)) // tc.path keeps the vehicle chosen
		}
	}
}
