package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scheduled reports (API.md §17): a person has a report e-mailed daily or
// weekly, at an hour of a day in their time zone, with its CSV attached.
// Each run has a period: its due time. The scheduler (Jobs.QueueReports)
// stores a run's mail once per schedule and period whatever the number of
// servers (NotifyTx.QueueReport), then moves the schedule's NextRunAt on;
// a run missed while no server ran is stored at the next start (the
// latest missed period only, not one a day of the outage).

// Report frequencies.
const (
	FrequencyDaily  = "daily"
	FrequencyWeekly = "weekly"
)

// Report kinds.
const (
	ReportSummary = "summary"
	ReportTrips   = "trips"
	ReportAlerts  = "alerts"
)

// MaxReportSchedules is how many report schedules an account may have.
const MaxReportSchedules = 500

// weekdays are the names Weekday takes, Sunday first as time.Weekday.
var weekdays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// ReportSchedule is a report a person has e-mailed on a schedule.
type ReportSchedule struct {
	ID        string `json:"report_schedule_id"`
	AccountID string `json:"-"`
	UserID    string `json:"user_id"`
	// Frequency is daily or weekly; Weekday (monday...sunday) is the day
	// of a weekly report, "" for a daily one; Hour (0-23) the hour it is
	// sent at, in TZ.
	Frequency string `json:"frequency"`
	Weekday   string `json:"weekday,omitempty"`
	Hour      int    `json:"hour"`
	TZ        string `json:"tz"`
	// Report is summary, trips or alerts; GroupBy, for a summary, is
	// vehicle (one row a vehicle), day (a row a vehicle and day) or driver
	// (a row a driver).
	Report     string    `json:"report"`
	GroupBy    string    `json:"group_by,omitempty"`
	VehicleIDs []string  `json:"vehicle_ids"`
	Tags       []string  `json:"tags"`
	Enabled    bool      `json:"enabled"`
	CreatedAt  time.Time `json:"created_at"`
	// NextRunAt is when the next run is due.
	NextRunAt time.Time `json:"next_run_at"`
}

// Clone returns a copy that shares no memory with r.
func (r ReportSchedule) Clone() ReportSchedule {
	r.VehicleIDs = slices.Clone(r.VehicleIDs)
	r.Tags = slices.Clone(r.Tags)
	return r
}

func normaliseReportSchedule(r *ReportSchedule) {
	r.Frequency = strings.ToLower(strings.TrimSpace(r.Frequency))
	r.Weekday = strings.ToLower(strings.TrimSpace(r.Weekday))
	r.Report = strings.ToLower(strings.TrimSpace(r.Report))
	r.GroupBy = strings.ToLower(strings.TrimSpace(r.GroupBy))
	r.TZ = strings.TrimSpace(r.TZ)
	if r.TZ == "" {
		r.TZ = "UTC"
	}
	if r.Report == ReportSummary && r.GroupBy == "" {
		r.GroupBy = GroupByVehicle
	}
	if r.Frequency == FrequencyWeekly && r.Weekday == "" {
		r.Weekday = "monday"
	}
	dedupe := func(in []string) []string {
		out := []string{}
		for _, s := range in {
			if s = strings.TrimSpace(s); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	r.VehicleIDs, r.Tags = dedupe(r.VehicleIDs), dedupe(r.Tags)
}

func (r *ReportSchedule) validate(val *Validator) {
	val.Check(r.Frequency == FrequencyDaily || r.Frequency == FrequencyWeekly, "frequency", "must be daily or weekly")
	switch r.Frequency {
	case FrequencyDaily:
		val.Check(r.Weekday == "", "weekday", "is for weekly reports only")
	case FrequencyWeekly:
		val.Check(slices.Contains(weekdays, r.Weekday), "weekday", "must be a day of the week, monday to sunday")
	}
	val.Check(r.Hour >= 0 && r.Hour <= 23, "hour", "must be an hour of the day, 0 to 23")
	if _, err := LoadTZ(r.TZ); err != nil {
		val.Add("tz", "must be an IANA time zone such as Europe/Berlin")
	}
	val.Check(slices.Contains([]string{ReportSummary, ReportTrips, ReportAlerts}, r.Report), "report", "must be summary, trips or alerts")
	if r.Report == ReportSummary {
		val.Check(r.GroupBy == GroupByVehicle || r.GroupBy == GroupByDay || r.GroupBy == GroupByDriver, "group_by", "must be vehicle, day or driver")
		val.Check(r.GroupBy != GroupByDriver || len(r.VehicleIDs)+len(r.Tags) == 0, "group_by",
			"a summary by driver covers every vehicle: leave vehicle_ids and tags out, or group by vehicle")
	} else {
		val.Check(r.GroupBy == "", "group_by", "is for summary reports only")
	}
	val.Check(len(r.VehicleIDs) <= MaxRuleFilter, "vehicle_ids", "may name at most %d vehicles", MaxRuleFilter)
	for i, id := range r.VehicleIDs {
		val.Check(ValidID(PrefixVehicle, id), fmt.Sprintf("vehicle_ids[%d]", i), "must be a vehicle id (veh_...)")
	}
	val.Check(len(r.Tags) <= MaxRuleFilter, "tags", "may name at most %d tags", MaxRuleFilter)
	for i, t := range r.Tags {
		val.Check(t != "" && len(t) <= 50 && !hasControl(t), fmt.Sprintf("tags[%d]", i), "must be 1 to 50 characters, none of them control characters")
	}
}

// run walks the schedule's due times from the day of now, a day at a time
// in step's direction (+1 or -1), and returns the first that ok takes, in
// UTC: at most 9 days, which a weekly schedule needs.
func (r *ReportSchedule) run(now time.Time, step int, ok func(t time.Time) bool) time.Time {
	loc := mustTZ(r.TZ)
	y, m, d := now.In(loc).Date()
	var t time.Time
	for i := range 9 {
		t = time.Date(y, m, d+step*i, r.Hour, 0, 0, 0, loc)
		if ok(t) && (r.Frequency != FrequencyWeekly || weekdays[t.Weekday()] == r.Weekday) {
			break
		}
	}
	return t.UTC()
}

// LatestRun returns the latest due time at or before now, in UTC.
func (r *ReportSchedule) LatestRun(now time.Time) time.Time {
	return r.run(now, -1, func(t time.Time) bool { return !t.After(now) })
}

// NextRun returns the first due time after now, in UTC.
func (r *ReportSchedule) NextRun(now time.Time) time.Time {
	return r.run(now, 1, func(t time.Time) bool { return t.After(now) })
}

// PeriodOf returns what the run due at runAt reports on: the day (or
// week) before it, in the schedule's zone.
func (r *ReportSchedule) PeriodOf(runAt time.Time) (from, to time.Time) {
	loc := mustTZ(r.TZ)
	local := runAt.In(loc)
	y, m, d := local.Date()
	days := 1
	if r.Frequency == FrequencyWeekly {
		days = 7
	}
	end := time.Date(y, m, d, 0, 0, 0, 0, loc)
	start := time.Date(y, m, d-days, 0, 0, 0, 0, loc)
	return start.UTC(), end.UTC()
}
