package fleet

import (
	"context"
	"strings"
)

// ReportScheduleInput is what a client sets when it creates a schedule:
// the person by UserID or Email (one of them; from the dashboard, their
// own), and the schedule's fields; a nil Enabled is true.
type ReportScheduleInput struct {
	UserID     string
	Email      string
	Frequency  string
	Weekday    string
	Hour       int
	TZ         string
	Report     string
	GroupBy    string
	VehicleIDs []string
	Tags       []string
	Enabled    *bool
}

// ReportSchedulePatch is a JSON merge patch of a schedule.
type ReportSchedulePatch struct {
	Frequency  Optional[string]   `json:"frequency,omitzero"`
	Weekday    Optional[string]   `json:"weekday,omitzero"`
	Hour       Optional[*int]     `json:"hour,omitzero"`
	TZ         Optional[string]   `json:"tz,omitzero"`
	Report     Optional[string]   `json:"report,omitzero"`
	GroupBy    Optional[string]   `json:"group_by,omitzero"`
	VehicleIDs Optional[[]string] `json:"vehicle_ids,omitzero"`
	Tags       Optional[[]string] `json:"tags,omitzero"`
	Enabled    Optional[*bool]    `json:"enabled,omitzero"`
}

// ReportScheduleDeleted is the answer to a deletion.
type ReportScheduleDeleted struct {
	ReportScheduleID string `json:"report_schedule_id"`
	Deleted          bool   `json:"deleted"`
}

func notFoundReportSchedule(id string) error { return NotFound("report schedule", id) }

// CreateReportSchedule stores a schedule for a person of the account.
func (s *Service) CreateReportSchedule(ctx context.Context, p Principal, in ReportScheduleInput) (ReportSchedule, error) {
	if err := p.allow("CreateReportSchedule"); err != nil {
		return ReportSchedule{}, err
	}
	now := s.Now()
	r := ReportSchedule{
		ID: NewID(PrefixReportSchedule), AccountID: p.Account.ID, Frequency: in.Frequency, Weekday: in.Weekday,
		Hour: in.Hour, TZ: in.TZ, Report: in.Report, GroupBy: in.GroupBy, VehicleIDs: in.VehicleIDs, Tags: in.Tags,
		Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now,
	}
	normaliseReportSchedule(&r)
	err := s.update(ctx, func(tx Tx) error {
		err := checkAddressed(tx, p, in.UserID, in.Email, r.VehicleIDs, func(u User, val *Validator) {
			r.UserID = u.ID
			r.validate(val)
		})
		if err != nil {
			return err
		}
		n, err := tx.CountReportSchedules(r.AccountID)
		if err != nil {
			return err
		}
		if n >= MaxReportSchedules {
			return Errorf(CodeConflict, "An account may have at most %d report schedules and this account has %d; delete one first.", MaxReportSchedules, n)
		}
		r.NextRunAt = r.NextRun(now)
		return tx.CreateReportSchedule(r)
	})
	if err != nil {
		return ReportSchedule{}, err
	}
	return r, nil
}

func (s *Service) getReportSchedule(tx NotifyTx, p Principal, id string) (ReportSchedule, error) {
	return getOwned(p, PrefixReportSchedule, id, notFoundReportSchedule, tx.ReportSchedule,
		func(r ReportSchedule) string { return r.UserID })
}

// ReportSchedule returns one of the account's schedules.
func (s *Service) ReportSchedule(ctx context.Context, p Principal, id string) (ReportSchedule, error) {
	if err := p.allow("ReportSchedule"); err != nil {
		return ReportSchedule{}, err
	}
	var r ReportSchedule
	err := s.view(ctx, func(tx Tx) (err error) { r, err = s.getReportSchedule(tx, p, id); return err })
	return r, err
}

// ListReportSchedules lists the account's schedules (of userID alone
// unless it is ""), oldest first.
func (s *Service) ListReportSchedules(ctx context.Context, p Principal, userID string, q ListQuery) (List[ReportSchedule], error) {
	return listOwned(ctx, s, p, "ListReportSchedules", PrefixReportSchedule, userID, q, NotifyTx.ReportSchedules,
		func(r ReportSchedule) string { return r.ID })
}

// UpdateReportSchedule applies a merge patch to a schedule; the result is
// validated whole. A change of when it runs moves its next run.
func (s *Service) UpdateReportSchedule(ctx context.Context, p Principal, id string, patch ReportSchedulePatch) (ReportSchedule, error) {
	if err := p.allow("UpdateReportSchedule"); err != nil {
		return ReportSchedule{}, err
	}
	now := s.Now()
	var r ReportSchedule
	err := s.update(ctx, func(tx Tx) (err error) {
		r, err = s.getReportSchedule(tx, p, id)
		if err != nil {
			return err
		}
		var val Validator
		set(&r.Frequency, patch.Frequency)
		set(&r.Weekday, patch.Weekday)
		set(&r.TZ, patch.TZ)
		set(&r.Report, patch.Report)
		set(&r.GroupBy, patch.GroupBy)
		set(&r.VehicleIDs, patch.VehicleIDs)
		set(&r.Tags, patch.Tags)
		if patch.Frequency.Set && r.Frequency == FrequencyDaily && !patch.Weekday.Set {
			r.Weekday = ""
		}
		if patch.Report.Set && r.Report != ReportSummary && !patch.GroupBy.Set {
			r.GroupBy = ""
		}
		if patch.Hour.Set {
			if patch.Hour.Value == nil {
				val.Add("hour", "must be an hour of the day, 0 to 23")
			} else {
				r.Hour = *patch.Hour.Value
			}
		}
		if patch.Enabled.Set {
			if patch.Enabled.Value == nil {
				val.Add("enabled", "must be true or false")
			} else {
				r.Enabled = *patch.Enabled.Value
			}
		}
		if patch.TZ.Set && strings.TrimSpace(patch.TZ.Value) == "" {
			val.Add("tz", "must be an IANA time zone such as Europe/Berlin")
		}
		normaliseReportSchedule(&r)
		r.validate(&val)
		if patch.VehicleIDs.Set {
			if err := checkVehicles(tx, r.AccountID, r.VehicleIDs, &val); err != nil {
				return err
			}
		}
		if err := val.Err(); err != nil {
			return err
		}
		r.NextRunAt = r.NextRun(now)
		return tx.UpdateReportSchedule(r)
	})
	if err != nil {
		return ReportSchedule{}, err
	}
	return r, nil
}

// DeleteReportSchedule deletes a schedule.
func (s *Service) DeleteReportSchedule(ctx context.Context, p Principal, id string) (ReportScheduleDeleted, error) {
	if err := p.allow("DeleteReportSchedule"); err != nil {
		return ReportScheduleDeleted{}, err
	}
	err := s.update(ctx, func(tx Tx) error {
		r, err := s.getReportSchedule(tx, p, id)
		if err != nil {
			return err
		}
		return tx.DeleteReportSchedule(r.AccountID, r.ID)
	})
	if err != nil {
		return ReportScheduleDeleted{}, err
	}
	return ReportScheduleDeleted{ReportScheduleID: id, Deleted: true}, nil
}

// QueueReports stores the run of each schedule due at the clock's time,
// once per schedule and period whatever the number of servers, and moves
// each schedule's next run on. A run missed while no server ran is due
// now: the latest missed period runs. It returns how many runs it stored.
func (j Jobs) QueueReports(ctx context.Context) (int, error) {
	s := j.s
	now := s.Now()
	total := 0
	for range 100 { // at most 100 batches a call
		var due []ReportSchedule
		err := s.view(ctx, func(tx Tx) (err error) { due, err = tx.DueReportSchedules(now, 100); return err })
		if err != nil || len(due) == 0 {
			return total, err
		}
		for _, r := range due {
			err := s.update(ctx, func(tx Tx) error {
				cur, err := tx.ReportSchedule(r.AccountID, r.ID)
				if ErrorCode(err) == CodeNotFound {
					return nil
				}
				if err != nil || !cur.Enabled || cur.NextRunAt.After(now) {
					return err
				}
				run := cur.LatestRun(now)
				due := now
				m := Mail{ID: NewID(PrefixMail), AccountID: cur.AccountID, Kind: MailReport, RuleID: cur.ID, UserID: cur.UserID,
					Phase: PhaseReport, Status: MailPending, WindowEnd: run, Period: run.Format(timeLayout),
					Items: []MailItem{}, NextAttemptAt: &due, CreatedAt: now}
				stored, err := tx.QueueReport(m)
				if err != nil {
					return err
				}
				if stored {
					total++
				}
				cur.NextRunAt = cur.NextRun(now)
				return tx.UpdateReportSchedule(cur)
			})
			if err != nil {
				return total, err
			}
		}
		if len(due) < 100 {
			return total, nil
		}
	}
	return total, nil
}

const timeLayout = "2006-01-02T15:04:05Z07:00"
