package fleetweb

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// A vehicle's page: its details, its devices with their last report, a
// day's trips and stops as tables and on a map, and its open alerts and
// work orders. The day is a day of the person's time zone (zoneOf), today
// unless ?day= names another.

// Bounds on what a vehicle's page reads for one day.
const (
	maxDayTrips   = 500
	maxDayPoints  = 2 * fleet.MaxHistoryLimit // the map's track: two pages of history
	maxDevices    = 100
	vehicleAlerts = 20 // of each status, open and acknowledged
	vehicleOrders = 20
)

type detail struct{ Label, Value string }

type deviceRow struct {
	Device    fleet.Device
	Name      string // the name, or the identifier
	Protocol  string // "Teltonika", "—"
	LastSeen  string
	Ago       string
	HasReport bool
	Stored    bool
	Why       string // why the last report was not stored, in words
}

type tripRow struct {
	N                   int
	Start, End          string // times of day; End "" while in progress
	From, To            string // coordinates
	Distance, Took, Max string
	InProgress          bool
}

// vehicleAlert is an alert on its vehicle's page: opened in the person's
// time zone.
type vehicleAlert struct {
	alertRow
	Opened string
}

type stopRow struct {
	N          int
	Start, End string // End "" while the vehicle still stands there
	Took       string
	Where      string
}

// dayTrack is what the page's map draws: each trip's path, the stops, and
// the vehicle's latest position.
type dayTrack struct {
	Trips    [][][2]float64 `json:"trips"`
	Stops    []trackStop    `json:"stops"`
	Position *trackStop     `json:"position"`
}

type trackStop struct {
	Lat   float64 `json:"lat"`
	Lon   float64 `json:"lon"`
	Label string  `json:"label"`
}

type vehicleData struct {
	Vehicle    fleet.Vehicle
	Status     fleet.VehicleStatus
	LastReport string
	Ago        string
	Stale      bool // the last report is older than StaleAfter
	Speed      string
	Position   string
	Details    []detail
	Devices    []deviceRow
	MoreDevs   bool

	Day, DayLabel, Zone        string
	PrevDay, NextDay, TodayURL string // "" where there is none
	Today                      bool
	Trips                      []tripRow
	MoreTrips                  bool
	Stops                      []stopRow
	Totals                     string // "3 trips, 42.1 km, 1 h 05 min moving"
	Track                      dayTrack
	MorePoints                 bool
	BeyondReach                bool // the day is older than the plan keeps history
	Reach                      int  // days

	Alerts     []vehicleAlert
	MoreAlerts bool
	Orders     []fleet.WorkOrder
	MoreOrders bool

	// Driver is who drives the vehicle now (ID "" when no one); Drivers
	// are those an admin may assign, by name, MoreDrivers whether the
	// account has more than the page lists.
	Driver      fleet.Driver
	Drivers     []fleet.Driver
	MoreDrivers bool

	Tiles, Attribution string
}

// vehiclePage shows one of the account's vehicles.
func (h *Handler) vehiclePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	p := us.Principal()
	v, err := h.svc.Vehicle(ctx, p, r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	loc, tz, zerr := zoneOf(r)
	now := h.svc.Now()
	pg := page{Title: v.Name, Nav: "vehicles", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			pg.Notice = s
		}
	}
	status := http.StatusOK
	day, derr := readDay(r.URL.Query().Get("day"), now, loc)
	if err := joinAddress(zerr, derr); err != nil {
		errorPage(&pg, err)
		status = statusOf(err)
	}
	d := vehicleData{Vehicle: v, Status: v.Status, LastReport: "never", Speed: "—", Position: "—",
		Tiles: h.opts.MapTiles, Attribution: h.opts.MapAttribution, Zone: loc.String(), Track: dayTrack{Trips: [][][2]float64{}, Stops: []trackStop{}}}
	if v.LastLocation != nil {
		l := v.LastLocation
		d.LastReport, d.Ago, d.Position = localTime(l.Timestamp, loc), ago(l.Timestamp, now), coords(l.Latitude, l.Longitude)
		d.Stale = v.Status != fleet.StatusOffline && stale(l.Timestamp, now)
		d.Track.Position = &trackStop{Lat: l.Latitude, Lon: l.Longitude, Label: v.Name + " · " + string(v.Status) + " · " + localTime(l.Timestamp, loc)}
	}
	if v.Speed != nil {
		d.Speed = speed(*v.Speed)
	}
	d.Details = vehicleDetails(v, loc)
	steps := []func() error{
		func() error { return h.vehicleDevices(ctx, p, v.ID, loc, now, &d) },
		func() error { return h.vehicleDay(ctx, p, v.ID, day, tz, loc, now, &d) },
		func() error { return h.vehicleAlerts(ctx, p, v.ID, loc, &d) },
		func() error { return h.vehicleOrders(ctx, p, v.ID, &d) },
		func() error { return h.vehicleDriver(ctx, us, v, &d) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			h.fail(w, r, &us, err)
			return
		}
	}
	pg.Data = d
	h.render(w, status, "vehicle", pg)
}

// readDay reads ?day= (YYYY-MM-DD) as the start of that day in loc; today's
// when it is empty, or not a date (then with a validation error).
func readDay(s string, now time.Time, loc *time.Location) (time.Time, error) {
	y, m, dd := now.In(loc).Date()
	today := time.Date(y, m, dd, 0, 0, 0, 0, loc)
	if s == "" {
		return today, nil
	}
	t, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		var v fleet.Validator
		v.Add("day", "must be a date, YYYY-MM-DD")
		return today, badAddress(v.Err())
	}
	return t, nil
}

func coords(lat, lon float64) string {
	return strconv.FormatFloat(lat, 'f', 5, 64) + ", " + strconv.FormatFloat(lon, 'f', 5, 64)
}

func vehicleDetails(v fleet.Vehicle, loc *time.Location) []detail {
	var out []detail
	add := func(label, value string) {
		if value != "" {
			out = append(out, detail{label, value})
		}
	}
	add("License plate", v.LicensePlate)
	add("VIN", v.VIN)
	add("Make", v.Make)
	add("Model", v.Model)
	if v.Year != nil {
		add("Year", strconv.Itoa(*v.Year))
	}
	if v.OdometerKm != nil {
		add("Odometer", num(int(*v.OdometerKm))+" km")
	}
	add("External id", v.ExternalID)
	add("Added", localTime(v.CreatedAt, loc))
	add("Vehicle id", v.ID)
	return out
}

// protocolNames are the device protocols as their makers write them.
var protocolNames = map[string]string{
	"teltonika": "Teltonika", "osmand": "OsmAnd", "gt06": "GT06", "h02": "H02", "queclink": "Queclink", "gps103": "GPS103",
}

// reasonWords say why a device's report was not stored.
var reasonWords = map[string]string{
	fleet.ReasonDuplicate:             "a duplicate of a stored report",
	fleet.ReasonTooOld:                "older than the plan keeps history",
	fleet.ReasonNoFix:                 "no GPS fix",
	fleet.ReasonFuture:                "ahead of the server's clock",
	fleet.ReasonNoVehicle:             "the device had no vehicle",
	fleet.ReasonPointsAllowance:       "the hourly allowance of location points was spent",
	fleet.ReasonDevicePointsAllowance: "the device's hourly allowance of location points was spent",
}

func (h *Handler) vehicleDevices(ctx context.Context, p fleet.Principal, vehicleID string, loc *time.Location, now time.Time, d *vehicleData) error {
	l, err := h.svc.ListDevices(ctx, p, fleet.DeviceFilter{VehicleID: vehicleID}, fleet.ListQuery{Limit: maxDevices})
	if err != nil {
		return err
	}
	d.MoreDevs = l.HasMore
	for _, dev := range l.Items {
		row := deviceRow{Device: dev, Name: dev.Name, Protocol: "—", LastSeen: "never"}
		if row.Name == "" {
			row.Name = dev.Identifier
		}
		if dev.Protocol != "" {
			row.Protocol = protocolNames[dev.Protocol]
			if row.Protocol == "" {
				row.Protocol = dev.Protocol
			}
		}
		if dev.LastSeenAt != nil {
			row.LastSeen, row.Ago = localTime(*dev.LastSeenAt, loc), ago(*dev.LastSeenAt, now)
		}
		if rep := dev.LastReport; rep != nil {
			row.HasReport, row.Stored = true, rep.Stored
			if !rep.Stored {
				row.Why = reasonWords[rep.Reason]
				if row.Why == "" {
					row.Why = rep.Reason
				}
			}
		}
		d.Devices = append(d.Devices, row)
	}
	return nil
}

// vehicleDay reads the day's trips, stops and track.
func (h *Handler) vehicleDay(ctx context.Context, p fleet.Principal, vehicleID string, day time.Time, tz string, loc *time.Location, now time.Time, d *vehicleData) error {
	end := day.AddDate(0, 0, 1).Add(-time.Microsecond)
	y, m, dd := now.In(loc).Date()
	today := time.Date(y, m, dd, 0, 0, 0, 0, loc)
	d.Day, d.DayLabel, d.Today = day.Format(time.DateOnly), day.Format("Monday 2 January 2006"), day.Equal(today)
	at := func(t time.Time) string {
		q := url.Values{"day": {t.Format(time.DateOnly)}}
		if tz != "" {
			q.Set("tz", tz)
		}
		return "/vehicles/" + vehicleID + "?" + q.Encode()
	}
	reach := p.Account.Plan.Limits().HistoryReach
	d.Reach = int(reach / (24 * time.Hour))
	d.BeyondReach = end.Before(now.Add(-reach))
	if !d.BeyondReach {
		d.PrevDay = at(day.AddDate(0, 0, -1))
	}
	if day.Before(today) {
		d.NextDay, d.TodayURL = at(day.AddDate(0, 0, 1)), at(today)
	}
	if d.BeyondReach || day.After(now) {
		return nil
	}
	q := fleet.TripQuery{From: &day, To: &end, Limit: fleet.MaxPageLimit}
	trips, more, err := upTo(maxDayTrips, func(cursor string) (fleet.List[fleet.Trip], error) {
		q.Cursor = cursor
		return h.svc.ListTrips(ctx, p, vehicleID, q)
	})
	if err != nil {
		return err
	}
	d.MoreTrips = more
	stops, _, err := upTo(maxDayTrips, func(cursor string) (fleet.List[fleet.Stop], error) {
		q.Cursor = cursor
		return h.svc.ListStops(ctx, p, vehicleID, q)
	})
	if err != nil {
		return err
	}
	hq := fleet.HistoryQuery{From: &day, To: &end, Limit: fleet.MaxHistoryLimit}
	points, more, err := upTo(maxDayPoints, func(cursor string) (fleet.List[fleet.Point], error) {
		hq.Cursor = cursor
		return h.svc.ListHistory(ctx, p, vehicleID, hq)
	})
	if err != nil {
		return err
	}
	d.MorePoints = more

	var km float64
	var moving time.Duration
	for i, t := range trips {
		row := tripRow{N: i + 1, Start: dayClock(t.Start.Timestamp, day, loc), From: coords(t.Start.Latitude, t.Start.Longitude),
			Distance: strconv.FormatFloat(t.DistanceKm, 'f', 1, 64) + " km", Took: duration(time.Duration(t.DurationSeconds * float64(time.Second))),
			Max: speed(t.MaxSpeed), InProgress: t.Status == fleet.TripInProgress}
		if !row.InProgress {
			row.End, row.To = dayClock(t.End.Timestamp, day, loc), coords(t.End.Latitude, t.End.Longitude)
		}
		d.Trips = append(d.Trips, row)
		km += t.DistanceKm
		moving += time.Duration(t.MovingSeconds * float64(time.Second))
		// The trip's path: the day's reports from its start to its end
		// (to the latest report while it is in progress).
		last := t.End.Timestamp
		if row.InProgress {
			last = end
		}
		var path [][2]float64
		j, _ := slices.BinarySearchFunc(points, t.Start.Timestamp, func(pt fleet.Point, at time.Time) int { return pt.Timestamp.Compare(at) })
		for ; j < len(points) && !points[j].Timestamp.After(last); j++ {
			path = append(path, [2]float64{points[j].Latitude, points[j].Longitude})
		}
		if len(path) > 0 {
			d.Track.Trips = append(d.Track.Trips, path)
		}
	}
	d.Totals = plural(len(trips), "trip", "trips") + ", " + strconv.FormatFloat(km, 'f', 1, 64) + " km, " + duration(moving) + " moving"
	for i, s := range stops {
		row := stopRow{N: i + 1, Start: dayClock(s.Start, day, loc), Where: coords(s.Location.Latitude, s.Location.Longitude),
			Took: duration(time.Duration(s.DurationSeconds * float64(time.Second)))}
		label := "Stopped from " + row.Start
		if s.End != nil {
			row.End = dayClock(*s.End, day, loc)
			label += " to " + row.End
		}
		d.Stops = append(d.Stops, row)
		d.Track.Stops = append(d.Track.Stops, trackStop{Lat: s.Location.Latitude, Lon: s.Location.Longitude, Label: label + " (" + row.Took + ")"})
	}
	return nil
}

// upTo reads a list's pages from its first, cursor by cursor, until it has
// at least max items or there are no more; more says whether some were
// left unread.
func upTo[T any](max int, page func(cursor string) (fleet.List[T], error)) (items []T, more bool, err error) {
	cursor := ""
	for {
		l, err := page(cursor)
		if err != nil {
			return nil, false, err
		}
		items = append(items, l.Items...)
		if !l.HasMore || len(items) >= max {
			return items, l.HasMore, nil
		}
		cursor = l.NextCursor
	}
}

// vehicleAlerts reads the vehicle's newest open and acknowledged alerts.
func (h *Handler) vehicleAlerts(ctx context.Context, p fleet.Principal, vehicleID string, loc *time.Location, d *vehicleData) error {
	var alerts []fleet.Alert
	for _, st := range []fleet.AlertStatus{fleet.AlertOpen, fleet.AlertAcknowledged} {
		l, err := h.svc.ListAlerts(ctx, p, fleet.AlertFilter{VehicleID: vehicleID, Status: st}, fleet.ListQuery{Limit: vehicleAlerts, Newest: true})
		if err != nil {
			return err
		}
		alerts = append(alerts, l.Items...)
		d.MoreAlerts = d.MoreAlerts || l.HasMore
	}
	slices.SortFunc(alerts, func(a, b fleet.Alert) int { return b.CreatedAt.Compare(a.CreatedAt) })
	rows, err := h.alertRows(ctx, p, alerts)
	for _, a := range rows {
		d.Alerts = append(d.Alerts, vehicleAlert{alertRow: a, Opened: localTime(a.CreatedAt, loc)})
	}
	return err
}

// vehicleDriver reads who drives the vehicle and, for an admin, the
// drivers the page offers to assign, by name.
func (h *Handler) vehicleDriver(ctx context.Context, us fleet.UserSession, v fleet.Vehicle, d *vehicleData) error {
	p := us.Principal()
	if v.DriverID != "" {
		dr, err := h.svc.Driver(ctx, p, v.DriverID)
		if err != nil {
			return err
		}
		d.Driver = dr
	}
	if !us.Can(fleet.PermDriversWrite) {
		return nil
	}
	drivers, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Driver], error) {
		return h.svc.ListDrivers(ctx, p, fleet.DriverFilter{}, q)
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(drivers, func(a, b fleet.Driver) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	d.Drivers, d.MoreDrivers = drivers, more
	return nil
}

// vehicleOrders reads the vehicle's work orders that are not done
// (open, in progress, on hold), newest first.
func (h *Handler) vehicleOrders(ctx context.Context, p fleet.Principal, vehicleID string, d *vehicleData) error {
	orders, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.WorkOrder], error) {
		return h.svc.ListWorkOrders(ctx, p, fleet.WorkOrderFilter{VehicleID: vehicleID}, q)
	})
	if err != nil {
		return err
	}
	for i := len(orders) - 1; i >= 0; i-- {
		if st := orders[i].Status; st == fleet.WorkOrderCompleted || st == fleet.WorkOrderCancelled {
			continue
		}
		if len(d.Orders) == vehicleOrders {
			d.MoreOrders = true
			break
		}
		d.Orders = append(d.Orders, orders[i])
	}
	return nil
}
