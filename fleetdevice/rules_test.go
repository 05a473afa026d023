package fleetdevice_test

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// TestTeltonikaReportOpensTelematicsAlerts: a Teltonika tracker's report,
// over TCP to the device listener and into the fleet service, opens the
// alerts of the telematics rules its I/O elements call for — power cut
// (I/O 252), tow (246), harsh braking (253), the ignition going on (239)
// outside working hours — and resolves the power cut when the vehicle's
// power (66) is back; the same frame sent again opens nothing.
func TestTeltonikaReportOpensTelematicsAlerts(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 22, 3, 30, 0, 0, time.UTC)) // a Sunday night
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Van 5"})
	is.NoErr(err)
	const imei = "356307042441013"
	_, err = svc.CreateDevice(ctx, p, fleet.Device{Identifier: imei, VehicleID: v.ID})
	is.NoErr(err)
	rule := func(r fleet.AlertRule) string {
		t.Helper()
		r, err := svc.CreateAlertRule(ctx, p, r, nil)
		is.NoErr(err)
		return r.ID
	}
	power := rule(fleet.AlertRule{Type: fleet.AlertPowerCut})
	tow := rule(fleet.AlertRule{Type: fleet.AlertAlarm, RuleParams: fleet.RuleParams{Alarms: []string{"tow"}}})
	harsh := rule(fleet.AlertRule{Type: fleet.AlertHarshDriving})
	night := rule(fleet.AlertRule{Type: fleet.AlertIgnitionOn, RuleParams: fleet.RuleParams{OutsideHours: &fleet.WorkingHours{
		TZ: "Europe/Berlin", Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "07:00", To: "18:00"}}})

	srv := fleetdevice.NewServer(svc.DeviceEdge(), fleetdevice.Options{Now: clock.Now})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	done := make(chan error, 1)
	go func() { done <- srv.ServeTCP(ln, fleetdevice.Teltonika()) }()
	t.Cleanup(func() { srv.Close(); <-done })
	c, err := net.Dial("tcp", ln.Addr().String())
	is.NoErr(err)
	defer c.Close()
	rd := bufio.NewReader(c)
	d := &devicetest.Teltonika{IMEI: imei}
	hello, want := d.Hello()
	_, err = c.Write(hello)
	is.NoErr(err)
	_, err = devicetest.Read(rd, want)
	is.NoErr(err)

	t0 := clock.Now().Add(-10 * time.Minute)
	rec := func(s int, speed float64, io ...devicetest.TeltonikaIO) devicetest.TeltonikaRecord {
		return devicetest.TeltonikaRecord{Point: devicetest.Point{Time: t0.Add(time.Duration(s) * time.Second), Latitude: 52.5, Longitude: 13.4,
			Speed: speed, Satellites: 9, Valid: true}, IO: io}
	}
	ignition := func(on uint64) devicetest.TeltonikaIO { return devicetest.TeltonikaIO{ID: 239, Size: 1, Value: on} }
	mV := func(v uint64) devicetest.TeltonikaIO { return devicetest.TeltonikaIO{ID: 66, Size: 2, Value: v} }
	send := func(recs ...devicetest.TeltonikaRecord) {
		t.Helper()
		_, err := c.Write(d.Codec8(recs))
		is.NoErr(err)
		_, err = devicetest.Read(rd, d.Ack(len(recs)))
		is.NoErr(err)
	}
	frame := []devicetest.TeltonikaRecord{
		rec(0, 0, ignition(0), mV(12600)),
		rec(60, 0, ignition(1), mV(13900)), // on at 04:21 Berlin time on a Sunday
		rec(120, 40, ignition(1), mV(13900)),
		rec(180, 10, ignition(1), mV(13900), devicetest.TeltonikaIO{ID: 253, Size: 1, Value: 2}), // green driving: harsh braking
		rec(240, 0, ignition(0), mV(200), devicetest.TeltonikaIO{ID: 252, Size: 1, Value: 1}),    // unplugged
		rec(300, 3, ignition(0), mV(0), devicetest.TeltonikaIO{ID: 246, Size: 1, Value: 1}),      // towing
	}
	send(frame...)
	l, err := svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	byRule := map[string]fleet.Alert{}
	for _, al := range l.Items {
		byRule[al.RuleID] = al
	}
	is.Equal(len(l.Items), 4)
	for _, id := range []string{power, tow, harsh, night} {
		is.Equal(byRule[id].Status, fleet.AlertOpen)
		is.Equal(byRule[id].VehicleID, v.ID)
	}
	send(frame...) // the device sends it again: nothing new
	l, err = svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	is.Equal(len(l.Items), 4)

	send(rec(400, 0, ignition(0), mV(12500))) // plugged back in
	got, err := svc.Alert(ctx, p, byRule[power].ID)
	is.NoErr(err)
	is.Equal(got.Status, fleet.AlertResolved)
}
