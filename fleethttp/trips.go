package fleethttp

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// mediaCSV is what a client sends in Accept to have a report as CSV.
const mediaCSV = "text/csv"

// NextCursorHeader carries, on a CSV page, the cursor of the next page
// (absent on the last page): CSV has no envelope to hold it.
const NextCursorHeader = "Next-Cursor"

// wantsCSV reports whether the request's Accept names text/csv.
func wantsCSV(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(mt), mediaCSV) {
				return true
			}
		}
	}
	return false
}

// writeCSV writes a header row and rows (RFC 4180: CRLF line ends, fields
// quoted where they must be).
func (c *call) writeCSV(header []string, rows [][]string, next string) error {
	b, err := fleet.WriteCSV(header, rows)
	if err != nil {
		return err
	}
	buf := bytes.NewBuffer(b)
	h := c.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8; header=present")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	if next != "" {
		h.Set(NextCursorHeader, next)
	}
	c.w.WriteHeader(http.StatusOK)
	c.w.Write(buf.Bytes())
	return nil
}

// tripQuery reads from, to, cursor and limit.
func tripQuery(q url.Values) (fleet.TripQuery, error) {
	tq := fleet.TripQuery{Cursor: q.Get("cursor")}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"from", &tq.From}, {"to", &tq.To}} {
		if s := q.Get(p.name); s != "" {
			t, err := parseTime(p.name, s)
			if err != nil {
				return tq, err
			}
			*p.dst = &t
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return tq, fleet.Errorf(fleet.CodeInvalidRequest, "limit must be a whole number from 1 to %d.", fleet.MaxPageLimit)
		}
		tq.Limit = n
	}
	return tq, nil
}

var tripCSVHeader = fleet.TripCSVHeader

func (h *Handler) listTrips(c *call) error {
	tq, err := vehicleTripQuery(c)
	if err != nil {
		return err
	}
	l, err := h.svc.ListTrips(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), tq)
	if err != nil {
		return err
	}
	return listOrCSV(c, l, tripCSVHeader, fleet.TripCSVRow)
}

var stopCSVHeader = fleet.StopCSVHeader

func (h *Handler) listStops(c *call) error {
	tq, err := vehicleTripQuery(c)
	if err != nil {
		return err
	}
	l, err := h.svc.ListStops(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), tq)
	if err != nil {
		return err
	}
	return listOrCSV(c, l, stopCSVHeader, fleet.StopCSVRow)
}

// vehicleTripQuery reads the query of a vehicle's trips or stops.
func vehicleTripQuery(c *call) (fleet.TripQuery, error) {
	q, err := c.query()
	if err != nil {
		return fleet.TripQuery{}, err
	}
	return tripQuery(q)
}

// listOrCSV answers a page as the JSON list, or with Accept: text/csv as
// CSV: header, then a row of each item.
func listOrCSV[T any](c *call, l fleet.List[T], header []string, row func(T) []string) error {
	if !wantsCSV(c.r) {
		return c.list(l.Items, l.NextCursor, l.HasMore)
	}
	rows := make([][]string, len(l.Items))
	for i, it := range l.Items {
		rows[i] = row(it)
	}
	return c.writeCSV(header, rows, l.NextCursor)
}

func (h *Handler) getTrip(c *call) error {
	q, err := c.query()
	if err != nil {
		return err
	}
	var pq fleet.TripPointsQuery
	pq.Cursor = q.Get("points_cursor")
	if s := q.Get("points_limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fleet.Errorf(fleet.CodeInvalidRequest, "points_limit must be a whole number from 1 to %d.", fleet.MaxHistoryLimit)
		}
		if n == 0 {
			n = -1 // not the default: out of range
		}
		pq.Limit = n
	}
	var d fleet.TripDetail
	switch inc := q.Get("include"); inc {
	case "":
		if q.Has("points_limit") || q.Has("points_cursor") {
			return fleet.Errorf(fleet.CodeInvalidRequest, "points_limit and points_cursor page the trip's points: they need include=points.")
		}
		d, err = h.svc.Trip(c.r.Context(), c.p, c.r.PathValue("trip_id"), false)
	case "points":
		d, err = h.svc.TripPoints(c.r.Context(), c.p, c.r.PathValue("trip_id"), pq)
	default:
		return fleet.Errorf(fleet.CodeInvalidRequest, "include must be points.")
	}
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

var summaryCSVHeader = fleet.SummaryCSVHeader

var driverSummaryCSVHeader = fleet.DriverSummaryCSVHeader

// summaryItem is a row of the summary in the document: a SummaryRow, or
// with group_by=driver a DriverSummaryRow.
type summaryItem struct{}

func (h *Handler) summary(c *call) error {
	q, err := c.query()
	if err != nil {
		return err
	}
	tq, err := tripQuery(url.Values{"from": q["from"], "to": q["to"]})
	if err != nil {
		return err
	}
	sq := fleet.SummaryQuery{From: tq.From, To: tq.To, VehicleID: q.Get("vehicle_id"), GroupBy: q.Get("group_by"),
		TZ: q.Get("tz"), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fleet.Errorf(fleet.CodeInvalidRequest, "limit must be a whole number from 1 to %d.", fleet.MaxSummaryLimit)
		}
		sq.Limit = n
	}
	if sq.GroupBy == fleet.GroupByDriver {
		l, err := h.svc.DriverSummary(c.r.Context(), c.p, sq)
		if err != nil {
			return err
		}
		return listOrCSV(c, l, driverSummaryCSVHeader, fleet.DriverSummaryCSVRow)
	}
	l, err := h.svc.Summary(c.r.Context(), c.p, sq)
	if err != nil {
		return err
	}
	return listOrCSV(c, l, summaryCSVHeader, fleet.SummaryCSVRow)
}

func tripParams() []param {
	return []param{
		timeParam("from", "Default: 24 hours before `to`. Clamped to the plan's reach ("+byPlan(func(l fleet.PlanLimits) int { return days(l.HistoryReach) })+" days)."),
		timeParam("to", "Default: now."),
		pageParams()[0], pageParams()[1],
	}
}

// tripPointsParams are the query parameters of GET /v1/trips/{trip_id}.
func tripPointsParams() []param {
	return []param{
		{name: "include", desc: "`points`: add a page of the trip's stored reports from its start to its end, in `locations` (GPS jumps among them included), and `points_pagination`.", schema: o("type", "string", "enum", []string{"points"})},
		{name: "points_limit", desc: "With `include=points`: the most reports in `locations`.", schema: o("type", "integer", "minimum", 1, "maximum", fleet.MaxHistoryLimit, "default", fleet.MaxHistoryLimit)},
		{name: "points_cursor", desc: "With `include=points`: the `points_pagination.next_cursor` of the previous page (or a `next_cursor` of the vehicle's location history: the two are of one form).", schema: o("type", "string")},
	}
}

func descTripPoints() string {
	return "With `include=points`, the trip's reports come a page at a time: at most `points_limit` (" + num(fleet.MaxHistoryLimit) + ", the location history's largest page, by default and at most) in `locations`, in time order, " +
		"and `points_pagination` `{next_cursor, has_more}` as the list endpoints' `pagination`: while `has_more` is true, ask again with `points_cursor` set to `next_cursor`. " +
		"The trip's own fields are those of its latest state on every page. `points_limit` and `points_cursor` without `include=points` are 400 invalid_request."
}

func summaryParams() []param {
	return []param{
		timeParam("from", "Default: 24 hours before `to`. Clamped to the plan's reach ("+byPlan(func(l fleet.PlanLimits) int { return days(l.HistoryReach) })+" days)."),
		timeParam("to", "Default: now."),
		idFilter("vehicle_id", "Only this vehicle (404 if the account has no such vehicle)."),
		{name: "group_by", desc: "`day` (default): a row per vehicle and day in `tz`; `vehicle`: a row per vehicle; `driver`: a row per driver and day in `tz` (`DriverSummaryRow`), whichever vehicle they drove, the trips with no driver in rows whose `driver_id` is null.", schema: o("type", "string", "enum", []string{fleet.GroupByDay, fleet.GroupByVehicle, fleet.GroupByDriver})},
		{name: "tz", desc: "The IANA time zone the days are counted in (Europe/Berlin); default UTC.", schema: o("type", "string")},
		{name: "limit", desc: "Page size (rows).", schema: o("type", "integer", "minimum", 1, "maximum", fleet.MaxSummaryLimit, "default", fleet.DefaultSummaryLimit)},
		pageParams()[1],
	}
}

func descTrips() string {
	th := fleet.DefaultStatusThresholds
	return fmt.Sprintf("A trip starts at the first report at or above %g km/h and ends, at its last such report, once the vehicle has stood still for %s (status `stopped`) or sent nothing for %s (status `offline`); a shorter halt, at a light say, stays within the trip. "+
		"Trips are computed as reports arrive: the open one is `in_progress`, and `trip.started` and `trip.completed` events (the trip as data) go to the event log and to webhooks. "+
		"Reports that arrive late or out of order recompute the trips they fall in from the stored reports; reports older than the end of the vehicle's last trip by more than %s are history only and change no trip. "+
		"A trip that the clock completed (no report for %s) while its reports were still on their way goes on when they arrive, and completes again.",
		th.MovingSpeed, minutes(th.StopAfter), minutes(th.OfflineAfter), fleet.TripReopenWindow, minutes(th.OfflineAfter))
}

func descSummary() string {
	return "Read from the stored trips, never from the reports. Rows exist for the vehicles with a trip that meets [from, to]. " +
		"`distance_km` and `driving_seconds` fall into days by the trip's reports (a step counts on the day of the report it ends at; trips keep them in 15-minute UTC slices, so zones whose offset is not a multiple of 15 minutes split days to the slice). " +
		"`trips` counts the trips that start in the row's range; `idling_seconds` is the time the vehicle stood within its trips (halts shorter than " + minutes(fleet.DefaultStatusThresholds.StopAfter) + ", at a light or in a jam: a longer one ends the trip and is a stop), on the day of the report each halt's step ends at; `stopped_seconds` is the time of stops within it (before the vehicle's first trip in the range only if it had an earlier trip; after its last trip until `to` or now); `max_speed` is the top speed of the trips driving in it; `first_departure` the earliest trip start and `last_arrival` the latest end of a completed trip in it.\n\n" +
		"With `group_by=driver`, a row sums the trips that started with the driver assigned (a trip's `driver_id`), whichever vehicle, a deleted driver's trips under their id still, and those that started with no driver in rows whose `driver_id` is null, after the others. A driver's rows have no `stopped_seconds` (a stop is a vehicle's). The CSV's columns are then `" + strings.Join(driverSummaryCSVHeader, ",") + "`. " +
		"Trips recorded before idling was kept count no idling."
}

func registerTripComponents(g *generator) {
	whole[fleet.TripStatus](g, "TripStatus", func() *obj {
		return enum([]fleet.TripStatus{fleet.TripInProgress, fleet.TripCompleted}, "in_progress while the trip may grow; completed once it has ended.")
	})
	comp[fleet.TripPlace](g, "TripPlace", output, nil)
	comp[fleet.Trip](g, "Trip", output, func(s *shape) {
		s.describe("A drive from the first moving report to the last one before a stop or a silence.").
			replace("trip_id", id(fleet.PrefixTrip)).replace("status", ref("TripStatus")).
			with("end", "description", "The last moving report so far (in_progress) or of the trip.").
			with("distance_km", "description", fmt.Sprintf("The sum of the great-circle distances between consecutive reports of the trip, reports implying more than %d km/h (GPS jumps) left out; or, when every report of the trip carries one, the odometer difference. In km to the metre (at most three decimals).", fleet.MaxTripSpeed)).
			with("duration_seconds", "description", "From start to end.").
			with("moving_seconds", "description", "The time between consecutive reports of which at least one is at or above the moving speed.").
			with("max_speed", "description", "km/h, the top reported speed.").
			with("avg_speed", "description", "km/h: distance_km over moving_seconds.").
			with("start_odometer_km end_odometer_km", "description", "The odometer at the start and end report, when they carry one.").
			with("points", "description", "Reports the trip is made of.").
			with("ignored_points", "description", fmt.Sprintf("Reports left out as GPS jumps (more than %d km/h from the report before).", fleet.MaxTripSpeed)).
			replace("driver_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver),
				"description", "The driver the vehicle had when the trip started; null when none. It stays when the driver is deleted, as history."))
	})
	comp[fleet.Pagination](g, "PointsPagination", output, func(s *shape) {
		s.describe("Where a page of a trip's points ends.").
			with("next_cursor", "description", "Pass as `points_cursor` to get the next page; null on the last page.")
	})
	comp[fleet.TripDetail](g, "TripDetail", output, func(s *shape) {
		s.describe("A trip; with `include=points`, a page of its reports too.").
			with("locations", "description", "With `include=points`: a page of the trip's reports, in time order.").
			replace("points_pagination", ref("PointsPagination")).
			with("points_pagination", "description", "With `include=points`: whether the trip has reports after `locations`, and the cursor of the next page.")
	})
	comp[fleet.StopLocation](g, "StopLocation", output, nil)
	comp[fleet.Stop](g, "Stop", output, func(s *shape) {
		s.describe("The time a vehicle stood between two trips.").
			with("end", "description", "null while the vehicle stands.")
	})
	comp[fleet.SummaryRow](g, "SummaryRow", output, func(s *shape) {
		s.with("day", "format", "date", "description", "The day in `tz` (group_by=day only).").
			with("distance_km", "description", "In km to the metre (at most three decimals).").
			with("idling_seconds", "description", "The time the vehicle stood within its trips.")
	})
	comp[fleet.DriverSummaryRow](g, "DriverSummaryRow", output, func(s *shape) {
		s.describe("A driver's figures of a day (group_by=driver).").
			replace("driver_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver),
				"description", "The driver the trips started with; null for the trips that started with no driver.")).
			with("day", "format", "date", "description", "The day in `tz`.").
			with("distance_km", "description", "In km to the metre (at most three decimals).").
			with("idling_seconds", "description", "The time the vehicles stood within the driver's trips.")
	})
	whole[summaryItem](g, "SummaryItem", func() *obj {
		return o("oneOf", []any{ref("SummaryRow"), ref("DriverSummaryRow")},
			"description", "A row of the summary: a SummaryRow, or with group_by=driver a DriverSummaryRow.")
	})
}
