package fleetweb

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The Reports page: trips, stops, and daily summaries (by vehicle or by
// driver) over a range of days of the person's time zone, for the
// vehicles (or drivers) chosen or all, as a table and as CSV. The CSV is fleet's (fleet.WriteCSV
// and the reports' rows), the same as the API's text/csv answers and a
// scheduled report's attachment.

// The kinds of report the page makes.
const (
	reportTrips         = "trips"
	reportStops         = "stops"
	reportSummary       = "summary"
	reportDriverSummary = "drivers"
)

// Bounds of the Reports page.
const (
	maxReportRows  = fleet.MaxSummaryLimit // rows of a CSV
	maxReportShown = 500                   // rows of the table; the CSV has them all
	maxReportDays  = 31
	// maxReportChosen is how many vehicles, or drivers, one report may
	// name; more is every one.
	maxReportChosen = 100
)

var reportKinds = []struct{ Key, Label string }{
	{reportSummary, "Daily summary by vehicle"},
	{reportDriverSummary, "Daily summary by driver"},
	{reportTrips, "Trips"},
	{reportStops, "Stops"},
}

// reportForm is the report's choice as typed, with its mistakes by field.
type reportChoice struct {
	Report, From, To      string
	VehicleIDs, DriverIDs []string // none: every one
	Errors                map[string]string
}

type reportData struct {
	Form     reportChoice
	Kinds    []struct{ Key, Label string }
	Vehicles []vehicleChoice
	More     bool            // the account has more vehicles than Vehicles lists
	Drivers  []vehicleChoice // the account's drivers, by name
	Zone     string
	Ran      bool // a report was asked for and made
	Header   []string
	Rows     [][]string
	Total    int
	CSVURL   string
}

// readReport reads the page's query; a report is made only when the query
// asks for one (?report=). The days default to the last seven.
func readReport(r *http.Request, loc *time.Location, now time.Time) (c reportChoice, from, to time.Time, asked bool) {
	q := r.URL.Query()
	c = reportChoice{Report: q.Get("report"), From: q.Get("from"), To: q.Get("to"), VehicleIDs: chosen(q["vehicle_id"]),
		DriverIDs: chosen(q["driver_id"]), Errors: map[string]string{}}
	today := now.In(loc)
	if c.To == "" {
		c.To = today.Format(time.DateOnly)
	}
	if c.From == "" {
		c.From = today.AddDate(0, 0, -6).Format(time.DateOnly)
	}
	asked = c.Report != ""
	if !asked {
		c.Report = reportSummary
	}
	known := false
	for _, k := range reportKinds {
		known = known || k.Key == c.Report
	}
	if !known {
		c.Errors["report"] = "Report must be one of the list."
	}
	var err error
	if from, err = time.ParseInLocation(time.DateOnly, c.From, loc); err != nil {
		c.Errors["from"] = "From must be a date such as 2026-11-23."
	}
	if to, err = time.ParseInLocation(time.DateOnly, c.To, loc); err != nil {
		c.Errors["to"] = "To must be a date such as 2026-11-23."
	}
	if c.Errors["from"] == "" && c.Errors["to"] == "" {
		switch {
		case to.Before(from):
			c.Errors["to"] = "To must be on or after From."
		case to.Sub(from) >= maxReportDays*24*time.Hour:
			c.Errors["to"] = "To must be at most " + strconv.Itoa(maxReportDays) + " days after From."
		}
	}
	switch {
	case len(c.VehicleIDs) > maxReportChosen:
		c.Errors["vehicle_id"] = "Vehicles: choose at most " + strconv.Itoa(maxReportChosen) + ", or none for every vehicle."
	case (c.Report == reportTrips || c.Report == reportStops) && len(c.VehicleIDs) == 0:
		c.Errors["vehicle_id"] = "Vehicles: choose at least one for trips and stops."
	case c.Report == reportDriverSummary && len(c.VehicleIDs) > 1:
		c.Errors["vehicle_id"] = "Vehicles: a summary by driver is of one vehicle's trips, or of every vehicle's."
	}
	if len(c.DriverIDs) > maxReportChosen {
		c.Errors["driver_id"] = "Drivers: choose at most " + strconv.Itoa(maxReportChosen) + ", or none for every driver."
	}
	return c, from, to.AddDate(0, 0, 1).Add(-time.Microsecond), asked
}

// noSuchDriver is a chosen driver the account does not have.
type noSuchDriver struct{ error }

func (e noSuchDriver) Unwrap() error { return e.error }

// chosen are the ids a list of choices sent, each once, in order; empty
// ones (an "every one" choice) are dropped.
func chosen(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// reportsPage shows the form and, when asked, the report as a table, or
// as CSV (?format=csv).
func (h *Handler) reportsPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	pr := us.Principal()
	loc, _, _ := zoneOf(r)
	c, from, to, asked := readReport(r, loc, h.svc.Now())
	d := reportData{Form: c, Kinds: reportKinds, Zone: loc.String()}
	p := page{Title: "Reports", Nav: "reports", User: &us}
	status := http.StatusOK
	if asked && len(c.Errors) == 0 {
		header, rows, total, err := h.report(ctx, pr, c, from, to, loc)
		if err != nil {
			if code := fleet.ErrorCode(err); code != fleet.CodeNotFound && code != fleet.CodeValidation && code != fleet.CodeInvalidRequest {
				h.fail(w, r, &us, err)
				return
			}
			errorPage(&p, err)
			if fleet.ErrorCode(err) == fleet.CodeNotFound {
				if _, ok := errors.AsType[noSuchDriver](err); ok {
					d.Form.Errors["driver_id"] = "Drivers: there is no such driver."
				} else {
					d.Form.Errors["vehicle_id"] = "Vehicles: there is no such vehicle."
				}
				p.Error = "Please correct the form:"
			}
			status = statusOf(err)
		} else if r.URL.Query().Get("format") == "csv" {
			b, err := fleet.WriteCSV(header, rows)
			if err != nil {
				h.fail(w, r, &us, err)
				return
			}
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="`+c.Report+"-"+c.From+"-"+c.To+`.csv"`)
			w.Write(b)
			return
		} else {
			d.Ran, d.Total = true, total
			d.Header, d.Rows = h.shown(ctx, pr, header, rows[:min(len(rows), maxReportShown)], loc)
			q := r.URL.Query()
			q.Set("format", "csv")
			d.CSVURL = "/reports?" + q.Encode()
		}
	} else if asked {
		p.Error = "Please correct the form:"
		status = http.StatusUnprocessableEntity
	}
	var err error
	if d.Vehicles, d.More, err = h.vehicleChoices(ctx, pr); err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Vehicles = h.withChosen(ctx, pr, d.Vehicles, c.VehicleIDs...)
	drivers, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Driver], error) {
		return h.svc.ListDrivers(ctx, pr, fleet.DriverFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	for _, dr := range drivers {
		d.Drivers = append(d.Drivers, vehicleChoice{ID: dr.ID, Name: dr.Name})
	}
	p.Data = d
	h.render(w, status, "reports", p)
}

// report reads the chosen report's rows, as fleet's CSV writes them, at
// most maxReportRows, and how many there are: of each chosen vehicle in
// turn (in the order of their ids, as a report of every vehicle orders
// them), or of every vehicle at once.
func (h *Handler) report(ctx context.Context, p fleet.Principal, c reportChoice, from, to time.Time, loc *time.Location) ([]string, [][]string, int, error) {
	var rows [][]string
	switch c.Report {
	case reportTrips, reportStops:
		for _, vid := range c.VehicleIDs {
			if len(rows) >= maxReportRows {
				break
			}
			q := fleet.TripQuery{From: &from, To: &to, Limit: fleet.MaxPageLimit}
			for len(rows) < maxReportRows {
				var next string
				var more bool
				if c.Report == reportTrips {
					l, err := h.svc.ListTrips(ctx, p, vid, q)
					if err != nil {
						return nil, nil, 0, err
					}
					for _, t := range l.Items {
						rows = append(rows, fleet.TripCSVRow(t))
					}
					next, more = l.NextCursor, l.HasMore
				} else {
					l, err := h.svc.ListStops(ctx, p, vid, q)
					if err != nil {
						return nil, nil, 0, err
					}
					for _, s := range l.Items {
						rows = append(rows, fleet.StopCSVRow(s))
					}
					next, more = l.NextCursor, l.HasMore
				}
				if !more {
					break
				}
				q.Cursor = next
			}
		}
		rows = rows[:min(len(rows), maxReportRows)]
		if c.Report == reportTrips {
			return fleet.TripCSVHeader, rows, len(rows), nil
		}
		return fleet.StopCSVHeader, rows, len(rows), nil
	case reportDriverSummary:
		for _, id := range c.DriverIDs {
			if _, err := h.svc.Driver(ctx, p, id); err != nil {
				return nil, nil, 0, noSuchDriver{err}
			}
		}
		q := fleet.SummaryQuery{From: &from, To: &to, TZ: loc.String(), Limit: maxReportRows}
		if len(c.VehicleIDs) == 1 {
			q.VehicleID = c.VehicleIDs[0]
		}
		l, err := h.svc.DriverSummary(ctx, p, q)
		if err != nil {
			return nil, nil, 0, err
		}
		for _, r := range l.Items {
			if len(c.DriverIDs) == 0 || r.DriverID != nil && slices.Contains(c.DriverIDs, *r.DriverID) {
				rows = append(rows, fleet.DriverSummaryCSVRow(r))
			}
		}
		return fleet.DriverSummaryCSVHeader, rows, len(rows), nil
	}
	vehicles := c.VehicleIDs
	if len(vehicles) == 0 {
		vehicles = []string{""} // every vehicle
	}
	for _, vid := range vehicles {
		l, err := h.svc.Summary(ctx, p, fleet.SummaryQuery{From: &from, To: &to, VehicleID: vid, TZ: loc.String(), GroupBy: "day", Limit: maxReportRows - len(rows)})
		if err != nil {
			return nil, nil, 0, err
		}
		for _, r := range l.Items {
			rows = append(rows, fleet.SummaryCSVRow(r))
		}
		if len(rows) >= maxReportRows {
			break
		}
	}
	return fleet.SummaryCSVHeader, rows, len(rows), nil
}

// shown words a report's rows for the page's table: a vehicle or a
// driver by name, a time in the person's zone, a column's name in words.
// The CSV keeps the ids and RFC 3339 times.
func (h *Handler) shown(ctx context.Context, p fleet.Principal, header []string, rows [][]string, loc *time.Location) ([]string, [][]string) {
	out := make([]string, len(header))
	for i, col := range header {
		out[i] = columnWords[col]
		if out[i] == "" {
			out[i] = strings.ToUpper(col[:1]) + strings.ReplaceAll(col[1:], "_", " ")
		}
	}
	vehicles, drivers := map[string]string{}, map[string]string{}
	shown := make([][]string, len(rows))
	for ri, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = v
			switch col := header[i]; {
			case v == "":
				cells[i] = "—"
			case col == "vehicle_id":
				if n, err := h.vehicleName(ctx, p, v, vehicles); err == nil {
					cells[i] = n
				}
			case col == "driver_id":
				if n, ok := drivers[v]; ok {
					cells[i] = n
				} else if d, err := h.svc.Driver(ctx, p, v); err == nil {
					drivers[v], cells[i] = d.Name, d.Name
				}
			default:
				if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
					cells[i] = localTime(t, loc)
				}
			}
		}
		shown[ri] = cells
	}
	return out, shown
}

// columnWords are the words of the reports' columns where the column's
// name is not enough.
var columnWords = map[string]string{
	"vehicle_id": "Vehicle", "driver_id": "Driver", "trip_id": "Trip", "start_timestamp": "Started", "end_timestamp": "Ended",
	"distance_km": "Distance (km)", "duration_seconds": "Duration (s)", "moving_seconds": "Moving (s)", "max_speed": "Top speed (km/h)",
	"avg_speed": "Average speed (km/h)", "driving_seconds": "Driving (s)", "stopped_seconds": "Stopped (s)", "idling_seconds": "Idling (s)",
	"start": "From", "end": "Until",
}
