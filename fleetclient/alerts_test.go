package fleetclient_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

func TestClientAlertsAgainstTheRealHandler(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()
	veh := vehicle(t, c, "Truck")

	r := 150.0
	g, err := c.CreateGeofence(ctx, fleet.Geofence{Name: "Gate", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13.4, 52.5}}, RadiusM: &r})
	is.NoErr(err)
	is.True(fleet.ValidID(fleet.PrefixGeofence, g.ID))
	is.Equal(g.Geometry.Point, []float64{13.4, 52.5})
	is.Equal(*g.RadiusM, 150.0)
	_, err = c.CreateGeofence(ctx, fleet.Geofence{Name: "Bad", Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13.4, 52.5}}})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	g, err = c.UpdateGeofence(ctx, g.ID, fleet.GeofencePatch{Name: fleet.Optional[string]{Set: true, Value: "Main gate"}})
	is.NoErr(err)
	is.Equal(g.Name, "Main gate")
	got, err := c.Geofence(ctx, g.ID)
	is.NoErr(err)
	is.Equal(got.Name, "Main gate")

	limit := 80.0
	speed, err := c.CreateAlertRule(ctx, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &limit, VehicleIDs: []string{veh}})
	is.NoErr(err)
	is.True(speed.Enabled)
	is.Equal(speed.VehicleIDs, []string{veh})
	for _, typ := range []fleet.AlertType{fleet.AlertGeofenceEnter, fleet.AlertGeofenceExit} {
		_, err := c.CreateAlertRule(ctx, fleet.AlertRule{Type: typ, GeofenceID: g.ID, Severity: fleet.SeverityInfo})
		is.NoErr(err)
	}
	rules := collect(t, c.AlertRules(ctx, fleet.AlertRuleFilter{}))
	is.Equal(len(rules), 3) // two pages
	is.Equal(len(collect(t, c.AlertRules(ctx, fleet.AlertRuleFilter{GeofenceID: g.ID}))), 2)
	off := false
	speed, err = c.UpdateAlertRule(ctx, speed.ID, fleet.AlertRulePatch{Enabled: fleet.Optional[*bool]{Set: true, Value: &off}})
	is.NoErr(err)
	is.True(!speed.Enabled)
	err = c.DeleteGeofence(ctx, g.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // rules name it

	t0 := e.clock.Now().Add(-time.Minute)
	_, err = c.IngestLocations(ctx, veh, []fleet.Point{
		{Latitude: 52.6, Longitude: 13.4, Timestamp: t0},
		{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(time.Second), Speed: ptrF(120)},
	})
	is.NoErr(err)
	as := collect(t, c.Alerts(ctx, fleet.AlertFilter{}))
	is.Equal(len(as), 1) // the enter alert; the speeding rule is off
	is.Equal(as[0].Type, fleet.AlertGeofenceEnter)
	is.Equal(as[0].VehicleID, veh)

	custom, err := c.CreateAlert(ctx, fleet.Alert{Message: "Check tyres", Severity: fleet.SeverityCritical, Data: json.RawMessage(`{"axle":1}`)})
	is.NoErr(err)
	is.Equal(custom.Type, fleet.AlertCustom)
	is.Equal(string(custom.Data), `{"axle":1}`)
	ack, err := c.AcknowledgeAlert(ctx, custom.ID)
	is.NoErr(err)
	is.Equal(ack.Status, fleet.AlertAcknowledged)
	res, err := c.ResolveAlert(ctx, custom.ID)
	is.NoErr(err)
	is.Equal(res.Status, fleet.AlertResolved)
	_, err = c.AcknowledgeAlert(ctx, custom.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	one, err := c.Alert(ctx, custom.ID)
	is.NoErr(err)
	is.Equal(one.Status, fleet.AlertResolved)
	is.Equal(len(collect(t, c.Alerts(ctx, fleet.AlertFilter{Status: fleet.AlertOpen}))), 1)
	is.Equal(len(collect(t, c.Alerts(ctx, fleet.AlertFilter{From: e.clock.Now(), Severity: fleet.SeverityCritical}))), 1)

	for _, r := range rules {
		is.NoErr(c.DeleteAlertRule(ctx, r.ID))
	}
	is.NoErr(c.DeleteGeofence(ctx, g.ID))
	is.Equal(len(collect(t, c.Geofences(ctx))), 0)
	_, err = c.AlertRule(ctx, speed.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}
