package fleetweb_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// A manager registers a tracker to a vehicle and is told what to type
// into it (the server's host from the public URL, each protocol's port,
// the Traccar Client's URL); sees its last report with its attributes;
// moves it to another vehicle, detaches it, and removes it after a
// question naming it. Bad input is answered beside its field and creates
// nothing; a viewer is offered none of it and is refused a forged post.
func TestDeviceForms(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	listeners := []fleetweb.DeviceListener{
		{Protocol: "osmand", Port: 5055, Transports: []string{"http"}},
		{Protocol: "teltonika", Port: 5027, Transports: []string{"tcp", "udp"}},
	}
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{MapTiles: "off", PublicURL: "https://fleet.example.com",
		DeviceListeners: func() []fleetweb.DeviceListener { return listeners }})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	truck, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	van, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Van 2"})
	is.NoErr(err)
	taken, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accB), fleet.Vehicle{Name: "Bravo's"})
	is.NoErr(err)
	_, err = e.svc.CreateDevice(ctx, fleet.SystemPrincipal(e.accB), fleet.Device{Identifier: "862000000000001", VehicleID: taken.ID})
	is.NoErr(err)
	devices := func() []fleet.Device {
		l, err := e.svc.ListDevices(ctx, p, fleet.DeviceFilter{}, fleet.ListQuery{Limit: 100})
		is.NoErr(err)
		return l.Items
	}

	c := e.manager(t)
	is.True(strings.Contains(do(t, c, "GET", e.srv.URL+"/vehicles/"+truck.ID, nil).body, `href="/vehicles/`+truck.ID+`/devices/new">Register a device</a>`))
	form := do(t, c, "GET", e.srv.URL+"/vehicles/"+truck.ID+"/devices/new", nil)
	is.Equal(form.status, http.StatusOK)
	is.True(strings.Contains(form.body, `<tr id="connect-teltonika"`))
	is.True(strings.Contains(form.body, "<code>fleet.example.com</code>"))
	is.True(strings.Contains(form.body, "<code>5027</code>"))
	is.True(strings.Contains(form.body, "TCP or UDP"))
	is.True(strings.Contains(form.body, "<code>http://fleet.example.com:5055</code>")) // the Traccar Client's URL

	for _, tc := range []struct {
		identifier, say string
		status          int
	}{
		{"", "Identifier ", http.StatusUnprocessableEntity},
		{"bad id!", "Identifier ", http.StatusUnprocessableEntity},
		{strings.Repeat("9", 33), "Identifier ", http.StatusUnprocessableEntity},
		{"862000000000001", "is registered already", http.StatusConflict}, // another account's: taken, not whose
	} {
		r := do(t, c, "POST", e.srv.URL+"/vehicles/"+truck.ID+"/devices", url.Values{"identifier": {tc.identifier}, "name": {"Cab"}, "protocol": {"teltonika"}})
		is.Equal(r.status, tc.status) // tc.identifier
		body := html.UnescapeString(r.body)
		i := strings.Index(body, `id="identifier-error"`)
		is.True(i > 0) // beside the field
		is.True(strings.Contains(body[i:], tc.say))
		is.True(strings.Contains(body, `value="Cab"`)) // kept
		is.True(!strings.Contains(body, "Bravo"))
	}
	is.Equal(len(devices()), 0)
	// Another account's vehicle is not found.
	is.Equal(do(t, c, "POST", e.srv.URL+"/vehicles/"+taken.ID+"/devices", url.Values{"identifier": {"356307042441013"}}).status, http.StatusNotFound)

	r := do(t, c, "POST", e.srv.URL+"/vehicles/"+truck.ID+"/devices", url.Values{"identifier": {"356307042441013"}, "name": {"<b>Cab</b>"}, "protocol": {"teltonika"}})
	is.Equal(r.status, http.StatusSeeOther)
	ds := devices()
	is.Equal(len(ds), 1)
	dev := ds[0]
	is.Equal(dev.VehicleID, truck.ID)
	page := follow(t, c, e.srv.URL, r)
	is.True(strings.Contains(page.body, "&lt;b&gt;Cab&lt;/b&gt; is registered to Truck 7."))
	is.True(strings.Contains(page.body, `<tr id="connect-teltonika" class="chosen"`))
	is.True(strings.Contains(page.body, "No report yet."))

	sp := 42.0
	_, err = e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: dev.Identifier, Protocol: "teltonika",
		Positions: []fleet.DevicePosition{{Latitude: 52.52, Longitude: 13.405, Timestamp: clock.Now().Add(-time.Minute), Valid: true, Speed: &sp,
			Attrs: fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("battery_voltage", 12.6)}}}})
	is.NoErr(err)
	page = do(t, c, "GET", e.srv.URL+"/devices/"+dev.ID, nil)
	is.True(strings.Contains(page.body, "<dt>Speed</dt><dd>42 km/h</dd>"))
	is.True(strings.Contains(page.body, "yes, as a location of its vehicle"))
	is.True(strings.Contains(page.body, `<code>battery_voltage</code></td><td data-label="Value">12.6</td>`))
	is.True(strings.Contains(page.body, `<code>ignition</code></td><td data-label="Value">true</td>`))

	// Move it to the van, then to no vehicle; another account's vehicle is
	// a mistake beside the field.
	r = do(t, c, "POST", e.srv.URL+"/devices/"+dev.ID, url.Values{"vehicle_id": {van.ID}, "name": {"Cab"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.True(strings.Contains(follow(t, c, e.srv.URL, r).body, "Cab reports for Van 2 from its next message on."))
	r = do(t, c, "POST", e.srv.URL+"/devices/"+dev.ID, url.Values{"vehicle_id": {taken.ID}, "name": {"Cab"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `id="vehicle_id-error"`))
	r = do(t, c, "POST", e.srv.URL+"/devices/"+dev.ID, url.Values{"vehicle_id": {""}, "name": {"Cab"}})
	is.Equal(r.status, http.StatusSeeOther)
	got, err := e.svc.Device(ctx, p, dev.ID)
	is.NoErr(err)
	is.Equal(got.VehicleID, "")

	// A viewer sees the device, is offered nothing, and a forged post is
	// refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	vp := do(t, viewer, "GET", e.srv.URL+"/devices/"+dev.ID, nil)
	is.Equal(vp.status, http.StatusOK)
	is.True(!strings.Contains(vp.body, "Save device"))
	is.True(!strings.Contains(do(t, viewer, "GET", e.srv.URL+"/vehicles/"+truck.ID, nil).body, "Register a device"))
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/devices/"+dev.ID+"/delete", url.Values{}).status, http.StatusForbidden)
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/vehicles/"+truck.ID+"/devices", url.Values{"identifier": {"356307042441099"}}).status, http.StatusForbidden)
	// Another account's admin does not find it.
	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "GET", e.srv.URL+"/devices/"+dev.ID, nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/devices/"+dev.ID+"/delete", url.Values{}).status, http.StatusNotFound)

	// Remove it, after a question naming it.
	ask := do(t, c, "GET", e.srv.URL+"/devices/"+dev.ID+"/delete", nil)
	is.True(strings.Contains(ask.body, "Remove the device <strong>Cab</strong> (identifier <code>356307042441013</code>)?"))
	r = do(t, c, "POST", e.srv.URL+"/devices/"+dev.ID+"/delete", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(len(devices()), 0)
}

// Without device listeners, the page says how to start them.
func TestDevicePagesWithoutListeners(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{MapTiles: "off"})
	v, err := e.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	r := do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"/devices/new", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "This server listens for no trackers: start it with <code>--devices</code>"))
}

// With Options.UnknownDevices an admin sees the devices that tried to
// reach the server unregistered and registers one to a vehicle from its
// row; a manager or a viewer does not see the server's record, and
// without the option there is no such page.
func TestUnknownDevicesRegisterThis(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{UnknownDevices: true})
	ctx := context.Background()
	v, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	known, err := e.svc.DeviceEdge().Known(ctx, "356307042441013", "teltonika", "192.0.2.7:4000")
	is.NoErr(err)
	is.True(!known)

	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	is.True(strings.Contains(do(t, admin, "GET", e.srv.URL+"/vehicles", nil).body, `href="/devices/unknown">Unknown devices</a>`))
	list := do(t, admin, "GET", e.srv.URL+"/devices/unknown", nil)
	is.Equal(list.status, http.StatusOK)
	is.True(strings.Contains(list.body, "<code>356307042441013</code>"))
	is.True(strings.Contains(list.body, "192.0.2.7"))
	is.True(strings.Contains(list.body, `href="/devices/new?identifier=356307042441013&amp;protocol=teltonika">Register this…`))

	form := do(t, admin, "GET", e.srv.URL+"/devices/new?identifier=356307042441013&protocol=teltonika", nil)
	is.True(strings.Contains(form.body, `value="356307042441013"`))
	r := do(t, admin, "POST", e.srv.URL+"/devices", url.Values{"identifier": {"356307042441013"}, "vehicle_id": {""}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `id="vehicle_id-error" class="field-error">Vehicle is required: choose the vehicle it rides in.`))
	r = do(t, admin, "POST", e.srv.URL+"/devices", url.Values{"identifier": {"356307042441013"}, "vehicle_id": {v.ID}})
	is.Equal(r.status, http.StatusSeeOther)
	known, err = e.svc.DeviceEdge().Known(ctx, "356307042441013", "teltonika", "192.0.2.7:4000")
	is.NoErr(err)
	is.True(known)

	manager := e.manager(t)
	is.Equal(do(t, manager, "GET", e.srv.URL+"/devices/unknown", nil).status, http.StatusForbidden)
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	is.Equal(do(t, viewer, "GET", e.srv.URL+"/devices/unknown", nil).status, http.StatusForbidden)
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/devices", url.Values{"identifier": {"356307042441099"}, "vehicle_id": {v.ID}}).status, http.StatusForbidden)

	off := newEnv(t, fleetweb.Options{})
	is.Equal(do(t, off.signedIn(t, "admin@acme.test", adminPassword), "GET", off.srv.URL+"/devices/unknown", nil).status, http.StatusNotFound)
}
