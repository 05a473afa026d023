package fleetweb

import (
	"compress/gzip"
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// A vehicle's day replayed on the map: the page (controls, map, the
// timeline of trips and stops, and the same trips and stops as tables),
// and its data, which the page's script fetches: every report of the day
// in a compact form (replayData).

// maxReplayPoints bounds the reports a replay reads: a day of one report a
// second, and some to spare.
const maxReplayPoints = 100_000

type replayPageData struct {
	Vehicle                      fleet.Vehicle
	Day, DayLabel, Zone          string
	PrevDay, NextDay, VehicleDay string
	DataURL                      string
	Trips                        []replaySpan
	Stops                        []replaySpan
	BeyondReach                  bool
	Reach                        int
	Tiles, Attribution           string
	// First is the day's first report in the data's form (replayData),
	// with the trips and stops: the page draws its first frame from it
	// while the day's reports load. Bounds ([south, west, north, east])
	// hold it and the trips' and stops' places, where the map opens.
	First, Bounds string
}

// replaySpan is a trip or a stop on the replay's timeline: its times in ms
// from the start of the day, and how the page names it.
type replaySpan struct {
	N     int    `json:"n"`
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Label string `json:"label"`
	Start string `json:"-"`
	End   string `json:"-"`
	Took  string `json:"-"`
	What  string `json:"-"` // distance of a trip, place of a stop
	// Places are where it started and ended (a trip), or where it stood.
	Places [][2]float64 `json:"-"`
}

// replayDay reads the day of the request: the vehicle, its zone, the day's
// start and end, and the ?tz= that chose the zone.
func (h *Handler) replayDay(r *http.Request, us fleet.UserSession) (v fleet.Vehicle, loc *time.Location, tz string, day, end time.Time, err error) {
	v, err = h.svc.Vehicle(r.Context(), us.Principal(), r.PathValue("vehicle_id"))
	if err != nil {
		return
	}
	loc, tz, zerr := zoneOf(r)
	day, derr := readDay(r.URL.Query().Get("day"), h.svc.Now(), loc)
	end = day.AddDate(0, 0, 1).Add(-time.Microsecond)
	err = joinAddress(zerr, derr)
	return
}

// replayPage shows the replay of a vehicle's day.
func (h *Handler) replayPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	v, loc, tz, day, end, err := h.replayDay(r, us)
	if v.ID == "" {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: v.Name + ": replay", Nav: "vehicles", User: &us}
	status := http.StatusOK
	if err != nil {
		errorPage(&p, err)
		status = statusOf(err)
	}
	now := h.svc.Now()
	q := url.Values{}
	if tz != "" {
		q.Set("tz", tz)
	}
	at := func(path string, t time.Time) string {
		q.Set("day", t.Format(time.DateOnly))
		return path + "?" + q.Encode()
	}
	base := "/vehicles/" + url.PathEscape(v.ID)
	d := replayPageData{Vehicle: v, Day: day.Format(time.DateOnly), DayLabel: day.Format("Monday 2 January 2006"), Zone: loc.String(),
		DataURL: at(base+"/replay/data", day), VehicleDay: at(base, day), Tiles: h.opts.MapTiles, Attribution: h.opts.MapAttribution}
	reach := us.Account.Plan.Limits().HistoryReach
	d.Reach = int(reach / (24 * time.Hour))
	d.BeyondReach = end.Before(now.Add(-reach))
	if !d.BeyondReach {
		d.PrevDay = at(base+"/replay", day.AddDate(0, 0, -1))
	}
	if day.AddDate(0, 0, 1).Before(now) {
		d.NextDay = at(base+"/replay", day.AddDate(0, 0, 1))
	}
	if !d.BeyondReach {
		if d.Trips, d.Stops, err = h.replaySpans(ctx, us.Principal(), v.ID, day, end, loc); err != nil {
			h.fail(w, r, &us, err)
			return
		}
		if d.First, d.Bounds, err = h.replayFirst(ctx, us.Principal(), v.ID, day, end, loc, d.Trips, d.Stops); err != nil {
			h.fail(w, r, &us, err)
			return
		}
	}
	p.Data = d
	h.render(w, status, "replay", p)
}

// replayFirst is the day's first report in the data's form, with the
// trips and stops, and the bounds of it and of their places; "" when the
// day has no report. Reading one report is what the page adds to its
// time: the whole day is the data's.
func (h *Handler) replayFirst(ctx context.Context, p fleet.Principal, vehicleID string, day, end time.Time, loc *time.Location, trips, stops []replaySpan) (first, bounds string, err error) {
	l, err := h.svc.ListHistory(ctx, p, vehicleID, fleet.HistoryQuery{From: &day, To: &end, Limit: 1})
	if err != nil || len(l.Items) == 0 {
		return "", "", err
	}
	pt := &l.Items[0]
	enc := replayEncoder{day: day}
	enc.add(pt)
	box := [4]float64{pt.Latitude, pt.Longitude, pt.Latitude, pt.Longitude}
	for _, spans := range [][]replaySpan{trips, stops} {
		for _, s := range spans {
			for _, pl := range s.Places {
				box = [4]float64{min(box[0], pl[0]), min(box[1], pl[1]), max(box[2], pl[0]), max(box[3], pl[1])}
			}
		}
	}
	b := []byte{'['}
	for i, x := range box {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x, 'f', 6, 64)
	}
	return string(enc.finish(end, loc.String(), trips, stops)), string(append(b, ']')), nil
}

// replaySpans reads the day's trips and stops as the timeline shows them.
func (h *Handler) replaySpans(ctx context.Context, p fleet.Principal, vehicleID string, day, end time.Time, loc *time.Location) (trips, stops []replaySpan, err error) {
	q := fleet.TripQuery{From: &day, To: &end, Limit: fleet.MaxPageLimit}
	ts, _, err := upTo(maxDayTrips, func(cursor string) (fleet.List[fleet.Trip], error) {
		q.Cursor = cursor
		return h.svc.ListTrips(ctx, p, vehicleID, q)
	})
	if err != nil {
		return nil, nil, err
	}
	ss, _, err := upTo(maxDayTrips, func(cursor string) (fleet.List[fleet.Stop], error) {
		q.Cursor = cursor
		return h.svc.ListStops(ctx, p, vehicleID, q)
	})
	if err != nil {
		return nil, nil, err
	}
	ms := func(t time.Time) int64 { return max(0, min(t.Sub(day).Milliseconds(), end.Sub(day).Milliseconds())) }
	now := h.svc.Now()
	for i, t := range ts {
		s := replaySpan{N: i + 1, From: ms(t.Start.Timestamp), To: ms(now), Start: dayClock(t.Start.Timestamp, day, loc), End: "in progress",
			Took: duration(time.Duration(t.DurationSeconds * float64(time.Second))), What: strconv.FormatFloat(t.DistanceKm, 'f', 1, 64) + " km",
			Places: [][2]float64{{t.Start.Latitude, t.Start.Longitude}}}
		if t.Status != fleet.TripInProgress {
			s.To, s.End = ms(t.End.Timestamp), dayClock(t.End.Timestamp, day, loc)
			s.Places = append(s.Places, [2]float64{t.End.Latitude, t.End.Longitude})
		}
		s.Label = "Trip " + strconv.Itoa(s.N) + ", " + s.Start + " to " + s.End + ", " + s.What
		trips = append(trips, s)
	}
	for i, st := range ss {
		s := replaySpan{N: i + 1, From: ms(st.Start), To: ms(now), Start: dayClock(st.Start, day, loc), End: "still there",
			Took: duration(time.Duration(st.DurationSeconds * float64(time.Second))), What: coords(st.Location.Latitude, st.Location.Longitude),
			Places: [][2]float64{{st.Location.Latitude, st.Location.Longitude}}}
		if st.End != nil {
			s.To, s.End = ms(*st.End), dayClock(*st.End, day, loc)
		}
		s.Label = "Stop " + strconv.Itoa(s.N) + ", " + s.Start + " to " + s.End + " (" + s.Took + ")"
		stops = append(stops, s)
	}
	return trips, stops, nil
}

// replayData answers the replay's data: the day's reports as columns of
// whole numbers, each the difference from the one before (time in ms from
// the start of the day, latitude and longitude in millionths of a degree,
// speed in tenths of km/h, odometer in metres; heading in whole degrees
// as it is), null where a report had no such value; its attributes as
// what changed since the report before; and the day's trips and stops.
// Gzipped when the browser takes it: a day of one report a second is some
// 300 to 400 KB.
func (h *Handler) replayData(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	v, loc, _, day, end, err := h.replayDay(r, us)
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	reach := us.Account.Plan.Limits().HistoryReach
	enc := replayEncoder{day: day}
	var trips, stops []replaySpan
	if !end.Before(h.svc.Now().Add(-reach)) {
		// The reports are encoded a page at a time, as they are read:
		// only their columns are kept.
		hq := fleet.HistoryQuery{From: &day, To: &end, Limit: fleet.MaxHistoryLimit}
		for {
			l, lerr := h.svc.ListHistory(ctx, us.Principal(), v.ID, hq)
			if err = lerr; err != nil {
				break
			}
			for i := range l.Items {
				enc.add(&l.Items[i])
			}
			if !l.HasMore {
				break
			}
			if enc.n >= maxReplayPoints {
				enc.more = true
				break
			}
			hq.Cursor = l.NextCursor
		}
		if err == nil {
			trips, stops, err = h.replaySpans(ctx, us.Principal(), v.ID, day, end, loc)
		}
	}
	if err != nil {
		h.failJSON(w, r, err)
		return
	}
	body := enc.finish(end, loc.String(), trips, stops)
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r) {
		w.Write(body)
		return
	}
	hd.Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	zw.Write(body)
	zw.Close()
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// failJSON answers a failed data request with the API's status and a
// message for the page's script to show.
func (h *Handler) failJSON(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status >= 500 {
		h.log.Error("dashboard", "path", r.URL.Path, "err", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b := appendJSONString([]byte(`{"error":`), fleet.ErrorMessage(err))
	w.Write(append(b, '}'))
}

// replayEncoder writes the replay's data (see replayData): the reports'
// columns as they are added, then the rest.
type replayEncoder struct {
	day  time.Time
	n    int
	more bool
	cols [len(replayColumns)][]byte
	prev [len(replayColumns)]int64
	// attrs is the column of attributes: 0 where a report's are those of
	// the report before, else an object of those that changed (null for
	// one it no longer has); names are the names seen, with their words.
	attrs     []byte
	prevAttrs fleet.Attributes
	names     map[string]string
}

// replayColumns are the data's columns of reports: each one's name, its
// value of a report as a whole number (false when the report has none),
// and whether it is written as the difference from the one before.
var replayColumns = [...]struct {
	name  string
	value func(p *fleet.Point, day time.Time) (int64, bool)
	delta bool
}{
	{"t", func(p *fleet.Point, day time.Time) (int64, bool) { return p.Timestamp.Sub(day).Milliseconds(), true }, true},
	{"lat", func(p *fleet.Point, _ time.Time) (int64, bool) { return scaled(&p.Latitude, 1e6) }, true},
	{"lon", func(p *fleet.Point, _ time.Time) (int64, bool) { return scaled(&p.Longitude, 1e6) }, true},
	{"speed", func(p *fleet.Point, _ time.Time) (int64, bool) { return scaled(p.Speed, 10) }, true},
	{"heading", func(p *fleet.Point, _ time.Time) (int64, bool) { return scaled(p.Heading, 1) }, false},
	{"odometer", func(p *fleet.Point, _ time.Time) (int64, bool) { return scaled(p.OdometerKm, 1000) }, true},
}

// scaled is *f times by, rounded; false when there is no value.
func scaled(f *float64, by float64) (int64, bool) {
	if f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) {
		return 0, false
	}
	return int64(math.Round(*f * by)), true
}

func (e *replayEncoder) add(p *fleet.Point) {
	for c, col := range replayColumns {
		b := e.cols[c]
		if e.n > 0 {
			b = append(b, ',')
		}
		if x, ok := col.value(p, e.day); !ok {
			b = append(b, "null"...)
		} else {
			if col.delta {
				x, e.prev[c] = x-e.prev[c], x
			}
			b = strconv.AppendInt(b, x, 10)
		}
		e.cols[c] = b
	}
	e.addAttrs(p.Attributes)
	e.n++
}

// addAttrs adds a report's attributes to their column: what changed since
// the report before (both lists are in name order).
func (e *replayEncoder) addAttrs(now fleet.Attributes) {
	b := e.attrs
	if e.n > 0 {
		b = append(b, ',')
	}
	start := len(b)
	b = append(b, '{')
	field := func(name string) {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		if e.names == nil {
			e.names = map[string]string{}
		}
		if _, ok := e.names[name]; !ok {
			e.names[name] = attrWords(name)
		}
	}
	prev := e.prevAttrs
	i, j := 0, 0
	for i < len(prev) || j < len(now) {
		switch {
		case j == len(now) || i < len(prev) && prev[i].Name < now[j].Name:
			field(prev[i].Name)
			b = append(b, "null"...)
			i++
		case i == len(prev) || now[j].Name < prev[i].Name:
			field(now[j].Name)
			b = appendAttr(b, now[j])
			j++
		default:
			if prev[i] != now[j] {
				field(now[j].Name)
				b = appendAttr(b, now[j])
			}
			i++
			j++
		}
	}
	if len(b) == start+1 {
		b = append(b[:start], '0')
	} else {
		b = append(b, '}')
	}
	e.attrs = b
	e.prevAttrs = now
}

func appendAttr(b []byte, a fleet.Attribute) []byte {
	switch a.Kind {
	case fleet.AttrBool:
		return strconv.AppendBool(b, a.Num != 0)
	case fleet.AttrText:
		return appendJSONString(b, a.Text)
	}
	return strconv.AppendFloat(b, a.Num, 'g', -1, 64)
}

// attrNames are the words of the common vocabulary's attributes (API.md
// §14) with their units; another name is shown as its words.
var attrNames = map[string]string{
	"ignition": "Ignition", "motion": "Moving", "alarm": "Alarm", "power_v": "Power (V)", "battery_v": "Battery (V)",
	"battery_level": "Battery (%)", "charging": "Charging", "odometer_km": "Odometer (km)", "trip_odometer_km": "Trip odometer (km)",
	"engine_hours": "Engine hours", "fuel_level": "Fuel (%)", "fuel_l": "Fuel (l)", "fuel_used_l": "Fuel used (l)", "rpm": "Engine (rpm)",
	"obd_speed_kmh": "Bus speed (km/h)", "coolant_temp_c": "Coolant (°C)", "driver_identifier": "Driver key",
	"temp1_c": "Temperature 1 (°C)", "temp2_c": "Temperature 2 (°C)", "temp3_c": "Temperature 3 (°C)", "temp4_c": "Temperature 4 (°C)",
}

func attrWords(name string) string {
	if w, ok := attrNames[name]; ok {
		return w
	}
	w := strings.ReplaceAll(name, "_", " ")
	return strings.ToUpper(w[:1]) + w[1:]
}

// finish writes the whole answer.
func (e *replayEncoder) finish(end time.Time, zone string, trips, stops []replaySpan) []byte {
	size := 256 + 128*(len(trips)+len(stops)) + len(e.attrs) + 64*len(e.names)
	for _, c := range e.cols {
		size += len(c) + 16
	}
	b := make([]byte, 0, size)
	b = append(b, `{"zone":`...)
	b = appendJSONString(b, zone)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, e.day.UnixMilli(), 10)
	b = append(b, `,"length":`...)
	b = strconv.AppendInt(b, end.Sub(e.day).Milliseconds()+1, 10)
	b = append(b, `,"more":`...)
	b = strconv.AppendBool(b, e.more)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(e.n), 10)
	for c, col := range replayColumns {
		b = append(b, `,"`+col.name+`":[`...)
		b = append(b, e.cols[c]...)
		b = append(b, ']')
	}
	b = append(b, `,"attributes":[`...)
	b = append(b, e.attrs...)
	b = append(b, `],"attribute_names":{`...)
	names := make([]string, 0, len(e.names))
	for n := range e.names {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
		b = append(b, ':')
		b = appendJSONString(b, e.names[n])
	}
	b = append(b, '}')
	spans := func(name string, ss []replaySpan) {
		b = append(b, `,"`+name+`":[`...)
		for i, s := range ss {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"n":`...)
			b = strconv.AppendInt(b, int64(s.N), 10)
			b = append(b, `,"from":`...)
			b = strconv.AppendInt(b, s.From, 10)
			b = append(b, `,"to":`...)
			b = strconv.AppendInt(b, s.To, 10)
			b = append(b, `,"label":`...)
			b = appendJSONString(b, s.Label)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	spans("trips", trips)
	spans("stops", stops)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, with <, > and & escaped so
// that it is safe anywhere.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
