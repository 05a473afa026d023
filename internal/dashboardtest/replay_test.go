package dashboardtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// dayOfSeconds stores a day of one report a second (86,400) for v, from
// midnight of day in loc: parked until 07:00, driving until 11:30, parked
// until 12:30, driving until 17:00, parked after; the speed wanders, the
// heading turns, the odometer counts, and a parked tracker's position
// jitters as a real one's does.
func (w *world) dayOfSeconds(t *testing.T, v fleet.Vehicle, day time.Time) []fleet.Point {
	t.Helper()
	rnd := rand.New(rand.NewPCG(7, 23))
	lat, lon, heading, speed, odo, fuel := 52.52, 13.405, 90.0, 0.0, 48_211.0, 80.0
	pts := make([]fleet.Point, 0, 86_400)
	for s := range 86_400 {
		h := float64(s) / 3600
		driving := h >= 7 && h < 11.5 || h >= 12.5 && h < 17
		if driving {
			speed = math.Max(8, math.Min(90, speed+rnd.NormFloat64()*2))
			heading = math.Mod(heading+rnd.NormFloat64()*3+360, 360)
			d := speed / 3600 / 111.32 // degrees of latitude this second
			lat += d * math.Cos(heading*math.Pi/180)
			lon += d * math.Sin(heading*math.Pi/180) / math.Cos(lat*math.Pi/180)
			odo += speed / 3600
		} else {
			speed = 0
		}
		jitter := func() float64 { return rnd.NormFloat64() * 0.00001 }
		// What a tracker says besides: the ignition, the power (which
		// wanders by a tenth of a volt), the fuel left.
		power := 12.4
		if driving {
			power = 13.8
		}
		power = math.Round((power+rnd.NormFloat64()*0.05)*10) / 10
		fuel = math.Max(5, fuel-speed/3600*0.08)
		attrs := fleet.Attributes{fleet.NumberAttr("fuel_level", math.Round(fuel)), fleet.BoolAttr("ignition", driving), fleet.NumberAttr("power_v", power)}
		spd, hdg, km := math.Round(speed*10)/10, math.Mod(math.Round(heading), 360), math.Round(odo*1000)/1000
		pts = append(pts, fleet.Point{VehicleID: v.ID, Latitude: lat + jitter(), Longitude: lon + jitter(),
			Timestamp: day.Add(time.Duration(s) * time.Second).UTC(), Speed: &spd, Heading: &hdg, OdometerKm: &km, Attributes: attrs})
	}
	p := fleet.SystemPrincipal(w.account)
	for i := 0; i < len(pts); i += fleet.MaxPointsPerBulkBatch {
		res, err := w.svc.IngestBulk(context.Background(), p, pts[i:min(i+fleet.MaxPointsPerBulkBatch, len(pts))])
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted != min(fleet.MaxPointsPerBulkBatch, len(pts)-i) {
			t.Fatalf("%d of the points stored", res.Accepted)
		}
	}
	return pts
}

// A day of one report a second replayed in the browser: the page with its
// data weighs at most 2 MB as it travels (gzipped), and the test records
// how soon its first frame is drawn (no assertion on time: the figure goes
// to docs/performance.md). Play, Pause, the speed, the slider and the
// trips' buttons move the readout, which shows the report at that time;
// at 390 px the controls are on screen.
func TestReplayInBrowser(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	forgetHostile(t, w)
	ny, err := time.LoadLocation(testZone)
	is.NoErr(err)
	y, m, d := w.now().In(ny).AddDate(0, 0, -1).Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, ny)
	// A vehicle of its own: it reports the day for the first time, in
	// order (the world's vehicles reported today already).
	truck, err := w.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(w.account), fleet.Vehicle{Name: "Truck 12", LicensePlate: "B-FL 12"})
	is.NoErr(err)
	pts := w.dayOfSeconds(t, truck, day)

	b := open(t, w)
	b.run("live in New York", emulation.SetTimezoneOverride(testZone))
	b.signIn(viewerEmail, viewerPassword)
	b.run("open the vehicle's day", chromedp.Navigate(b.base+"/vehicles/"+truck.ID+"?day="+day.Format(time.DateOnly)), chromedp.WaitVisible(link("Replay the day")))
	b.press("replay it", link("Replay the day"))
	b.run("wait for the first frame", chromedp.Poll(`window.fleetReplay && window.fleetReplay.firstFrameMs > 0`, nil, chromedp.WithPollingTimeout(20*time.Second)))
	var from string
	b.eval("read what the first frame was drawn from", `window.fleetReplay.firstFrom`, &from)
	is.Equal(from, "page") // the page's first report, before the day's data
	b.run("wait for the day's reports", chromedp.Poll(`window.fleetReplay.loaded`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	var fig struct {
		FirstFrameMs float64 `json:"first"`
		DataBytes    float64 `json:"data"`
		DataRaw      float64 `json:"raw"`
		PageBytes    float64 `json:"page"`
		ReadyMs      float64 `json:"ready"`
		N            int     `json:"n"`
		Fetches      int     `json:"fetches"`
	}
	b.eval("read the figures", `(() => {
		const nav = performance.getEntriesByType("navigation")[0];
		const res = performance.getEntriesByType("resource");
		const data = res.find(e => e.name.includes("/replay/data"));
		window.timings = "scripts ready " + Math.round(nav.domContentLoadedEventEnd) + " ms; data asked at " + Math.round(data.startTime) +
			" ms, first byte " + Math.round(data.responseStart) + " ms, last " + Math.round(data.responseEnd) + " ms, read " + Math.round(window.fleetReplay.readyMs) +
			" ms; the trail of " + window.fleetReplay.trailPoints + " points drawn at " + Math.round(window.fleetReplay.trailMs || 0) + " ms";
		return {fetches: res.filter(e => e.name.includes("/replay/data")).length, first: window.fleetReplay.firstFrameMs, ready: window.fleetReplay.readyMs, data: data.encodedBodySize, raw: data.decodedBodySize, n: window.fleetReplay.n,
			page: nav.encodedBodySize + res.reduce((s, e) => s + e.encodedBodySize, 0)};
	})()`, &fig)
	t.Logf("a day of %d reports: data %.0f bytes gzipped (%.0f raw), the page with everything it loads %.0f bytes; first frame %.0f ms after navigation, the day playable at %.0f ms",
		fig.N, fig.DataBytes, fig.DataRaw, fig.PageBytes, fig.FirstFrameMs, fig.ReadyMs)
	var timings string
	b.eval("timings", `window.timings`, &timings)
	t.Log(timings)
	is.Equal(fig.N, len(pts))
	// The preloaded answer is the one the script reads.
	is.Equal(fig.Fetches, 1)
	is.True(fig.DataBytes > 0 && fig.DataBytes < fig.DataRaw) // gzipped
	is.True(fig.PageBytes <= 2<<20)                           // the page loads at most 2 MB
	b.cspKept()

	readout := func() (when, speed, doing string) {
		b.run("read the readout", chromedp.Text("#ro-time", &when), chromedp.Text("#ro-speed", &speed), chromedp.Text("#ro-doing", &doing))
		return
	}
	when, speed, _ := readout()
	is.Equal(when, "00:00:00") // the day's first report
	is.Equal(speed, "0.0 km/h")

	// The slider: noon, parked between the two trips.
	b.run("slide to noon", chromedp.SetValue(byLabel("Time of day"), fmt.Sprint(12*3600)),
		chromedp.Evaluate(`document.getElementById("replay-time").dispatchEvent(new Event("input"))`, nil))
	when, speed, doing := readout()
	is.Equal(when, "12:00:00")
	is.Equal(speed, "0.0 km/h")
	if !strings.HasPrefix(doing, "Stop 1, 11:") {
		t.Errorf("at noon the readout says %q, not the midday stop", doing)
	}

	// Trip 2's button goes to its start and plays it, at the speed chosen.
	b.run("choose 64×", chromedp.SetValue(byLabel("Speed"), "64"))
	b.run("play trip 2", chromedp.Click(button("Play trip 2")),
		chromedp.Poll(`window.fleetReplay.playing && window.fleetReplay.time > 12.5 * 3600 * 1000 + 2000`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	b.run("pause", chromedp.Click(button("Pause")), waitText("Paused."))
	var at1, at2 float64
	b.eval("read the time", `window.fleetReplay.time`, &at1)
	_, speed, doing = readout()
	is.True(strings.HasPrefix(doing, "Trip 2, 12:30 to "))
	is.True(speed != "0.0 km/h")
	var attrs string
	b.run("read the attributes", chromedp.Text("#ro-attributes", &attrs))
	is.True(strings.HasPrefix(attrs, "Fuel (%): ") && strings.Contains(attrs, " · Ignition: yes · Power (V): 13."))
	i := int(at1 / 1000) // one report a second from midnight
	want := fmt.Sprintf("%.1f km/h", *pts[i].Speed)
	if speed != want && i+1 < len(pts) {
		want = fmt.Sprintf("%.1f km/h", *pts[i+1].Speed)
	}
	is.Equal(speed, want) // the report at the replay's time
	b.eval("read the time again", `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(window.fleetReplay.time))))`, &at2)
	is.Equal(at1, at2) // paused: the clock stands
	b.shot("replay")

	// Play from where it stands.
	b.run("play", chromedp.Click(button("Play")), waitText("Playing at 64×."),
		chromedp.Poll(fmt.Sprintf(`window.fleetReplay.time > %f`, at1), nil, chromedp.WithPollingTimeout(10*time.Second)))
	b.run("pause", chromedp.Click(button("Pause")), waitText("Paused."))

	// A phone: the controls on screen.
	b.hold(390)
	b.run("reload", chromedp.Reload(), chromedp.Poll(`window.fleetReplay && window.fleetReplay.firstFrameMs > 0`, nil, chromedp.WithPollingTimeout(20*time.Second)))
	b.fitsPhone("replay", "Play", "Play trip 1", "Go to stop 1")
	b.cspKept()
}
