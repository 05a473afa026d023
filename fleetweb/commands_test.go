package fleetweb_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// commandsEnv is an env whose service knows teltonika's commands, with a
// vehicle and its device, which has reported over teltonika at speed km/h.
func commandsEnv(t *testing.T, speed float64) (*env, fleet.Vehicle, fleet.Device) {
	t.Helper()
	ctx := context.Background()
	e := newEnvWith(t, fleet.Options{Protocols: map[string]fleet.ProtocolCommands{"teltonika": {
		Types: []string{fleet.CommandEngineStop, fleet.CommandEngineResume, fleet.CommandPositionRequest, fleet.CommandOutput, fleet.CommandCustom}}}},
		fleetweb.Options{})
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: v.ID, Name: "FMB920"})
	if err != nil {
		t.Fatal(err)
	}
	now := e.svc.Now()
	if _, err := e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: d.Identifier, Protocol: "teltonika",
		Positions: []fleet.DevicePosition{{Latitude: 52.5, Longitude: 13.4, Timestamp: now.Add(-time.Second), Speed: &speed, Valid: true}}}); err != nil {
		t.Fatal(err)
	}
	return e, v, d
}

func (e *env) commands(t *testing.T, deviceID string) []fleet.Command {
	t.Helper()
	l, err := e.svc.ListCommands(context.Background(), fleet.SystemPrincipal(e.accA), deviceID, fleet.CommandFilter{}, fleet.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// The vehicle's commands on the dashboard: an admin sends them, an engine
// stop only after a confirmation that names the vehicle and says what
// happens while it moves; a viewer sees them and no controls; another
// account finds nothing.
func TestCommandsOnTheDashboard(t *testing.T) {
	is := is.New(t)
	e, v, d := commandsEnv(t, 54)
	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL + "/vehicles/" + v.ID + "/commands"

	veh := do(t, admin, "GET", e.srv.URL+"/vehicles/"+v.ID, nil)
	is.True(strings.Contains(veh.body, `href="/vehicles/`+v.ID+`/commands">Commands…</a>`))
	r := do(t, admin, "GET", base, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "FMB920 (356307042441013)"))
	is.True(strings.Contains(r.body, "Stop engine…"))
	is.True(strings.Contains(r.body, `<option value="custom">`))
	is.True(!strings.Contains(r.body, `<option value="reboot">`)) // teltonika carries no reboot here

	// Stop: first the confirmation, nothing queued.
	r = do(t, admin, "POST", base, url.Values{"device_id": {d.ID}, "type": {"engine_stop"}})
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Stop the engine of Truck 7?"))
	is.True(strings.Contains(r.body, "10 km/h or more, the stop waits until a report shows it slower"))
	is.Equal(len(e.commands(t, d.ID)), 0)
	// Confirmed: queued, held while the truck drives, and said so.
	r = do(t, admin, "POST", base, url.Values{"device_id": {d.ID}, "type": {"engine_stop"}, "confirm": {"yes"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "The engine stop command is queued for FMB920 (356307042441013). Held: the vehicle&#39;s latest report shows 54 km/h"))
	cmds := e.commands(t, d.ID)
	is.Equal(len(cmds), 1)
	is.Equal(cmds[0].Type, fleet.CommandEngineStop)
	is.True(!cmds[0].Force)
	is.True(strings.HasPrefix(cmds[0].CreatedBy, "usr_")) // the person who sent it
	is.True(strings.Contains(r.body, `id="cmd-`+cmds[0].ID+`"`))
	is.True(strings.Contains(r.body, ">you</code>"))

	// Other commands, and a bad one refused with the reason.
	r = do(t, admin, "POST", base, url.Values{"device_id": {d.ID}, "type": {"output"}, "index": {"2"}, "state": {"on"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "POST", base, url.Values{"device_id": {d.ID}, "type": {"custom"}, "text": {"getver"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "POST", base, url.Values{"device_id": {d.ID}, "type": {"reboot"}})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.body, "cannot carry a reboot command"))
	cmds = e.commands(t, d.ID)
	is.Equal(len(cmds), 3)
	is.Equal(*cmds[1].Index, 2)

	// Cancel one still queued.
	r = do(t, admin, "POST", base+"/"+cmds[0].ID+"/cancel", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(e.commands(t, d.ID)[0].Status, fleet.CommandCancelled)

	// A viewer sees the commands and no controls; a forged form is refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r = do(t, viewer, "GET", base, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `id="cmd-`+cmds[1].ID+`"`))
	is.True(!strings.Contains(r.body, "Stop engine…") && !strings.Contains(r.body, ">Send<") && !strings.Contains(r.body, ">Cancel<"))
	r = do(t, viewer, "POST", base, url.Values{"device_id": {d.ID}, "type": {"engine_stop"}, "confirm": {"yes"}})
	is.Equal(r.status, http.StatusForbidden)
	is.Equal(len(e.commands(t, d.ID)), 3)

	// Another account's admin finds nothing of it.
	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "GET", base, nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", base, url.Values{"device_id": {d.ID}, "type": {"engine_resume"}, "confirm": {"yes"}}).status, http.StatusNotFound)
	is.Equal(len(e.commands(t, d.ID)), 3)
}
