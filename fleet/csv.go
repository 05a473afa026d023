package fleet

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"time"
)

// The CSV forms of reports: one header and one row function a report, so
// that the API's text/csv answers and the CSV attached to a scheduled
// report's e-mail are the same.

// TripCSVHeader is the header row of trips as CSV.
var TripCSVHeader = []string{"trip_id", "vehicle_id", "status", "start_timestamp", "start_latitude", "start_longitude",
	"end_timestamp", "end_latitude", "end_longitude", "distance_km", "duration_seconds", "moving_seconds", "max_speed",
	"avg_speed", "start_odometer_km", "end_odometer_km", "points", "ignored_points", "driver_id"}

// TripCSVRow is a trip as a CSV row.
func TripCSVRow(t Trip) []string {
	return []string{t.ID, t.VehicleID, string(t.Status), csvTime(&t.Start.Timestamp), csvFloat(t.Start.Latitude),
		csvFloat(t.Start.Longitude), csvTime(&t.End.Timestamp), csvFloat(t.End.Latitude), csvFloat(t.End.Longitude),
		csvFloat(t.DistanceKm), csvFloat(t.DurationSeconds), csvFloat(t.MovingSeconds), csvFloat(t.MaxSpeed),
		csvFloat(t.AvgSpeed), csvOptFloat(t.StartOdometerKm), csvOptFloat(t.EndOdometerKm),
		strconv.Itoa(t.Points), strconv.Itoa(t.IgnoredPoints), csvText(t.DriverID)}
}

// StopCSVHeader is the header row of stops as CSV.
var StopCSVHeader = []string{"vehicle_id", "start", "end", "duration_seconds", "latitude", "longitude"}

// StopCSVRow is a stop as a CSV row.
func StopCSVRow(s Stop) []string {
	return []string{s.VehicleID, csvTime(&s.Start), csvTime(s.End), csvFloat(s.DurationSeconds),
		csvFloat(s.Location.Latitude), csvFloat(s.Location.Longitude)}
}

// SummaryCSVHeader is the header row of the summary as CSV. New columns
// go last, so that a spreadsheet reading columns by position goes on
// working.
var SummaryCSVHeader = []string{"vehicle_id", "day", "distance_km", "trips", "driving_seconds", "stopped_seconds",
	"max_speed", "first_departure", "last_arrival", "idling_seconds"}

// SummaryCSVRow is a summary row as a CSV row.
func SummaryCSVRow(r SummaryRow) []string {
	return []string{r.VehicleID, r.Day, csvFloat(r.DistanceKm), strconv.Itoa(r.Trips), csvFloat(r.DrivingSeconds),
		csvFloat(r.StoppedSeconds), csvFloat(r.MaxSpeed), csvTime(r.FirstDeparture), csvTime(r.LastArrival), csvFloat(r.IdlingSeconds)}
}

// DriverSummaryCSVHeader is the header row of the summary by driver.
var DriverSummaryCSVHeader = []string{"driver_id", "day", "distance_km", "trips", "driving_seconds", "idling_seconds",
	"max_speed", "first_departure", "last_arrival"}

// DriverSummaryCSVRow is a row of the summary by driver as a CSV row.
func DriverSummaryCSVRow(r DriverSummaryRow) []string {
	return []string{csvText(r.DriverID), r.Day, csvFloat(r.DistanceKm), strconv.Itoa(r.Trips), csvFloat(r.DrivingSeconds),
		csvFloat(r.IdlingSeconds), csvFloat(r.MaxSpeed), csvTime(r.FirstDeparture), csvTime(r.LastArrival)}
}

// AlertCSVHeader is the header row of alerts as CSV.
var AlertCSVHeader = []string{"alert_id", "type", "severity", "status", "vehicle_id", "rule_id", "message",
	"created_at", "acknowledged_at", "resolved_at"}

// AlertCSVRow is an alert as a CSV row.
func AlertCSVRow(a Alert) []string {
	return []string{a.ID, string(a.Type), string(a.Severity), string(a.Status), a.VehicleID, a.RuleID, a.Message,
		csvTime(&a.CreatedAt), csvTime(a.AcknowledgedAt), csvTime(a.ResolvedAt)}
}

// WriteCSV returns header and rows as CSV (RFC 4180: CRLF line ends,
// fields quoted where they must be).
func WriteCSV(header []string, rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func csvFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func csvOptFloat(f *float64) string {
	if f == nil {
		return ""
	}
	return csvFloat(*f)
}

func csvText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
