package fleetweb_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"html"
	"io"
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// replayBody is the replay's data as the page's script reads it.
type replayBody struct {
	Zone     string            `json:"zone"`
	Start    int64             `json:"start"`
	Length   int64             `json:"length"`
	More     bool              `json:"more"`
	N        int               `json:"n"`
	T        []*int64          `json:"t"`
	Lat      []*int64          `json:"lat"`
	Lon      []*int64          `json:"lon"`
	Speed    []*int64          `json:"speed"`
	Heading  []*int64          `json:"heading"`
	Odometer []*int64          `json:"odometer"`
	Attrs    []any             `json:"attributes"`
	Names    map[string]string `json:"attribute_names"`
	Trips    []struct {
		N     int    `json:"n"`
		From  int64  `json:"from"`
		To    int64  `json:"to"`
		Label string `json:"label"`
	} `json:"trips"`
	Stops []struct {
		From  int64  `json:"from"`
		Label string `json:"label"`
	} `json:"stops"`
}

// sums undoes a column's differences; NaN where a value is null.
func sums(col []*int64, scale float64, delta bool) []float64 {
	out := make([]float64, len(col))
	var prev int64
	for i, x := range col {
		if x == nil {
			out[i] = math.NaN()
			continue
		}
		v := *x
		if delta {
			prev += v
			v = prev
		}
		out[i] = float64(v) / scale
	}
	return out
}

// The replay's data is the day's reports in the browser's zone, each
// value back as it was stored once the differences are summed (a missing
// speed stays missing), gzipped when asked; the page lists the day's trips
// and stops, each with a button that goes to it; another account's vehicle
// is not found.
func TestReplayOfADay(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	e := newEnvWith(t, fleet.Options{Now: func() time.Time { return now }}, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	truck, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	// 09:00 to 09:30 in Berlin (08:00 UTC), one report a second: parked
	// for 10 minutes, then driving.
	from := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var pts []fleet.Point
	for i := range 1800 {
		spd, hdg, odo := 0.0, 90.0, 1000+float64(i)*0.01
		lat, lon := 52.5, 13.4
		if i >= 600 {
			spd = 36.5
			lon += float64(i-600) * 0.0001
		}
		pt := fleet.Point{Latitude: lat, Longitude: lon, Timestamp: from.Add(time.Duration(i) * time.Second), Speed: &spd, Heading: &hdg, OdometerKm: &odo}
		if i == 5 {
			pt.Speed = nil // a report without a speed
		}
		// Telematics: the ignition goes on at 09:09, the power reads
		// 12.6 V from 09:00 and 13.9 V from 09:10, the door alarm once.
		pt.Attributes = fleet.Attributes{fleet.BoolAttr("ignition", i >= 540), fleet.NumberAttr("power_v", 12.6)}
		if i >= 600 {
			pt.Attributes[1] = fleet.NumberAttr("power_v", 13.9)
		}
		if i == 700 {
			pt.Attributes = fleet.Attributes{fleet.TextAttr("alarm", "door"), pt.Attributes[0], pt.Attributes[1]}
		}
		pts = append(pts, pt)
	}
	for i := 0; i < len(pts); i += fleet.MaxPointsPerVehicleBatch {
		_, err := e.svc.IngestLocations(ctx, p, truck.ID, pts[i:min(i+fleet.MaxPointsPerVehicleBatch, len(pts))])
		is.NoErr(err)
	}
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL

	r := do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay?day=2026-11-23&tz=Europe/Berlin", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Monday 23 November 2026"))
	is.True(strings.Contains(r.body, `data-src="/vehicles/`+truck.ID+`/replay/data?day=2026-11-23&amp;tz=Europe%2FBerlin"`))
	is.True(strings.Contains(r.body, ">Play trip 1</button>"))
	is.True(strings.Contains(r.body, `<td data-label="Started">09:10</td>`))
	is.True(strings.Contains(r.body, "Previous day"))
	is.True(!strings.Contains(r.body, "Next day")) // today
	// The first frame's data: the day's first report, and where the map opens.
	first := regexp.MustCompile(`data-first="([^"]*)" data-bounds="([^"]*)"`).FindStringSubmatch(r.body)
	is.True(first != nil)
	var f0 replayBody
	is.NoErr(json.Unmarshal([]byte(html.UnescapeString(first[1])), &f0))
	is.Equal(f0.N, 1)
	is.Equal(f0.T, []*int64{ptr(pts[0].Timestamp.Sub(time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC)).Milliseconds())})
	is.Equal(len(f0.Trips), 1)
	var box [4]float64
	is.NoErr(json.Unmarshal([]byte(first[2]), &box))
	is.True(box[0] <= pts[0].Latitude && pts[0].Latitude <= box[2] && box[1] <= pts[0].Longitude && pts[0].Longitude <= box[3])
	// The vehicle's day links to it.
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"?day=2026-11-23&tz=Europe/Berlin", nil)
	is.True(strings.Contains(r.body, `href="/vehicles/`+truck.ID+`/replay?day=2026-11-23&amp;tz=Europe%2FBerlin">Replay the day</a>`))

	// The data, gzipped.
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay/data?day=2026-11-23&tz=Europe/Berlin", nil, "Accept-Encoding", "gzip")
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("Content-Encoding"), "gzip")
	zr, err := gzip.NewReader(strings.NewReader(r.body))
	is.NoErr(err)
	raw, err := io.ReadAll(zr)
	is.NoErr(err)
	t.Logf("30 minutes of 1-second reports: %d bytes, %d gzipped", len(raw), len(r.body))
	var d replayBody
	is.NoErr(json.Unmarshal(raw, &d))
	is.Equal(d.Zone, "Europe/Berlin")
	is.Equal(d.Start, time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC).UnixMilli()) // midnight in Berlin
	is.Equal(d.Length, int64(24*time.Hour/time.Millisecond))
	is.Equal(d.N, len(pts))
	is.True(!d.More)
	ts, lats, lons := sums(d.T, 1, true), sums(d.Lat, 1e6, true), sums(d.Lon, 1e6, true)
	speeds, heads, odos := sums(d.Speed, 10, true), sums(d.Heading, 1, false), sums(d.Odometer, 1000, true)
	for i, pt := range pts {
		is.Equal(int64(ts[i]), pt.Timestamp.UnixMilli()-d.Start)
		is.True(math.Abs(lats[i]-pt.Latitude) < 1e-6 && math.Abs(lons[i]-pt.Longitude) < 1e-6)
		if pt.Speed == nil {
			is.True(math.IsNaN(speeds[i])) // missing stays missing
		} else {
			is.Equal(speeds[i], *pt.Speed)
		}
		is.Equal(heads[i], 90.0)
		is.True(math.Abs(odos[i]-*pt.OdometerKm) < 1e-3)
	}
	// The attributes: what changed, where it changed; 0 where nothing did.
	changes := map[int]any{}
	for i, a := range d.Attrs {
		if a != float64(0) {
			changes[i] = a
		}
	}
	is.Equal(changes, map[int]any{
		0:   map[string]any{"ignition": false, "power_v": 12.6},
		540: map[string]any{"ignition": true},
		600: map[string]any{"power_v": 13.9},
		700: map[string]any{"alarm": "door"},
		701: map[string]any{"alarm": nil},
	})
	is.Equal(d.Names, map[string]string{"alarm": "Alarm", "ignition": "Ignition", "power_v": "Power (V)"})
	is.Equal(len(d.Trips), 1)
	is.Equal(float64(d.Trips[0].From), ts[600])
	is.True(strings.HasPrefix(d.Trips[0].Label, "Trip 1, 09:10 to "))
	is.True(len(d.Stops) >= 1)

	// Without gzip, the same.
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay/data?day=2026-11-23&tz=Europe/Berlin", nil, "Accept-Encoding", "identity")
	is.Equal(r.header.Get("Content-Encoding"), "")
	is.Equal(r.body, string(raw))

	// Another day of the same account: nothing to replay.
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay/data?day=2026-11-20&tz=UTC", nil, "Accept-Encoding", "identity")
	is.NoErr(json.Unmarshal([]byte(r.body), &d))
	is.Equal(d.N, 0)
	// A day that is not a date is said.
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay/data?day=yesterday", nil, "Accept-Encoding", "identity")
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.body, `"error"`))
	r = do(t, c, "GET", base+"/vehicles/"+truck.ID+"/replay?day=yesterday", nil)
	is.Equal(r.status, http.StatusBadRequest)
	is.True(strings.Contains(r.body, "Day must be a date, YYYY-MM-DD."))

	// Another account's admin finds neither the page nor the data.
	o := e.signedIn(t, "admin@bravo.test", otherPassword)
	r = do(t, o, "GET", base+"/vehicles/"+truck.ID+"/replay", nil)
	is.Equal(r.status, http.StatusNotFound)
	is.True(!strings.Contains(r.body, "Truck 7"))
	r = do(t, o, "GET", base+"/vehicles/"+truck.ID+"/replay/data?day=2026-11-23", nil, "Accept-Encoding", "identity")
	is.Equal(r.status, http.StatusNotFound)
	is.True(!strings.Contains(r.body, "52.5"))
	// Signed out: the data wants a sign-in.
	r = do(t, e.client(t), "GET", base+"/vehicles/"+truck.ID+"/replay/data", nil)
	is.Equal(r.status, http.StatusSeeOther)
}
