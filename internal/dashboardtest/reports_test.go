package dashboardtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A viewer makes a report of two vehicles chosen with the keyboard (the
// arrow keys, Shift to choose more): the table has their trips and no
// other vehicle's, and the CSV it downloads has the table's rows.
func TestReportOfChosenVehiclesInBrowser(t *testing.T) {
	widths(t, func(t *testing.T, width int64) {
		is := is.New(t)
		w := serve(t)
		forgetHostile(t, w)
		ctx := context.Background()
		p := fleet.SystemPrincipal(w.account)
		start := w.now().Add(-3 * time.Hour).UTC().Truncate(time.Minute)
		for i, name := range []string{"Alpha", "Bravo", "Van 9"} { // Alpha and Bravo first by name
			v, err := w.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: name})
			is.NoErr(err)
			var pts []fleet.Point
			fast, slow := 40.0, 0.0
			for j := range 10 {
				pts = append(pts, fleet.Point{Latitude: 52.5 + float64(j)*0.001, Longitude: 13.4 + float64(i)*0.01, Timestamp: start.Add(time.Duration(j) * time.Minute), Speed: &fast})
			}
			for j := range 7 {
				pts = append(pts, fleet.Point{Latitude: 52.509, Longitude: 13.4 + float64(i)*0.01, Timestamp: start.Add(time.Duration(10+j) * time.Minute), Speed: &slow})
			}
			_, err = w.svc.IngestLocations(ctx, p, v.ID, pts)
			is.NoErr(err)
		}
		b := open(t, w)
		b.hold(width)
		b.signIn(viewerEmail, viewerPassword)
		b.run("open reports", chromedp.Navigate(b.base+"/reports"), chromedp.WaitVisible(byLabel("Vehicles")),
			chromedp.SetValue(byLabel("Report"), "trips"),
			chromedp.Focus(byLabel("Vehicles")),
			chromedp.KeyEvent(kb.ArrowDown),
			chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(input.ModifierShift)))
		var chosen []string
		b.eval("read the choice", `[...document.getElementById("vehicle_id").selectedOptions].map(o => o.text)`, &chosen)
		is.Equal(chosen, []string{"Alpha", "Bravo"})
		b.press("show the report", button("Show report"))
		var table string
		b.run("read the table", chromedp.Text("#report-rows", &table))
		is.True(strings.Contains(table, "Alpha"))
		is.True(strings.Contains(table, "Bravo"))
		is.True(!strings.Contains(table, "Van 9"))
		var rows, csvRows int
		b.eval("count the rows", `document.querySelectorAll("#report-rows tbody tr").length`, &rows)
		is.Equal(rows, 2)
		b.eval("download the CSV", `fetch(document.querySelector("a[download]").href).then(r => r.text()).then(t => t.trim().split("\r\n").length - 1)`, &csvRows)
		is.Equal(csvRows, rows)
		b.eval("read the choice kept", `[...document.getElementById("vehicle_id").selectedOptions].map(o => o.text)`, &chosen)
		is.Equal(chosen, []string{"Alpha", "Bravo"})
		if width < 800 {
			b.fitsPhone("reports of chosen vehicles", "Show report", "Download CSV")
		}
		b.cspKept()
		b.shot("reports-vehicles")
	})
}
