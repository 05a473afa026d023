package dashboardtest

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// Alerts read in words: the vehicle's name, not its id, and "Speeding" or
// "Left geofence Depot", not speeding or geofence_exit. Acknowledging from
// a tab stays on that tab. Numbers have thousands separators.
func TestAlertsReadInWords(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	ctx := context.Background()
	p := fleet.SystemPrincipal(w.account)
	depot, err := w.svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Depot",
		Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: [][][]float64{{{13.40, 52.51}, {13.42, 52.51}, {13.42, 52.53}, {13.40, 52.53}, {13.40, 52.51}}}}})
	is.NoErr(err)
	limit := 80.0
	_, err = w.svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, Severity: fleet.SeverityWarning, ThresholdKmh: &limit}, nil)
	is.NoErr(err)
	_, err = w.svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertGeofenceExit, Severity: fleet.SeverityInfo, GeofenceID: depot.ID}, nil)
	is.NoErr(err)
	fast, slow := 95.0, 30.0
	now := w.now().UTC()
	_, err = w.svc.IngestLocations(ctx, p, w.vehicle.ID, []fleet.Point{ // out of the depot, too fast
		{Latitude: 52.5205, Longitude: 13.4100, Timestamp: now.Add(-20 * time.Second), Speed: &slow},
		{Latitude: 52.5400, Longitude: 13.4300, Timestamp: now.Add(-10 * time.Second), Speed: &fast},
	})
	is.NoErr(err)
	l, err := w.svc.ListAlerts(ctx, p, fleet.AlertFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 2)

	b := open(t, w)
	b.signIn(adminEmail, adminPassword)
	page := b.text()
	is.True(strings.Contains(page, "Left geofence Depot"))
	is.True(!strings.Contains(page, "veh_"))
	is.True(strings.Contains(page, "10,000")) // the pro plan's hourly allowance
	b.shot("overview")
	b.run("open the open alerts", chromedp.Navigate(b.base+"/alerts"), chromedp.WaitVisible(row("Speeding")))
	var table string
	b.run("read the alerts", chromedp.Text(`//table`, &table))
	for _, want := range []string{"Speeding", "Left geofence Depot", "Truck 7"} {
		is.True(strings.Contains(table, want))
	}
	for _, never := range []string{"veh_", "speeding", "geofence_exit", "_"} {
		is.True(!strings.Contains(table, never))
	}
	b.shot("alerts")
	b.press("acknowledge the speeding", row("Speeding")+button("Acknowledge"))
	u, err := url.Parse(b.url())
	is.NoErr(err)
	is.Equal(u.Query().Get("status"), "open") // still the open tab
	page = b.text()
	is.True(!strings.Contains(page, "Speeding")) // which no longer lists it
	is.True(strings.Contains(page, "Left geofence Depot"))
	is.True(strings.Contains(page, "1 open alert"))
}
