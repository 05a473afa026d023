package fleet

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// The mail sender's side of the outbox: claim due mail with a lease, get
// what each says (the person, the events, the report's CSV) and record
// what the SMTP server answered.

// MailJob is a claimed mail with what rendering it needs.
type MailJob struct {
	Mail Mail
	// Lease is the mail's NextAttemptAt as claimed: the outcome is stored
	// only while it holds.
	Lease time.Time
	// To and Name are the person's address and name; Company the
	// account's name.
	To, Name, Company string
	// Digest says the mail lists what a window gathered; otherwise it
	// tells of Items[0] alone (a notice) or is a report.
	Digest bool
	// Items are the events the mail tells of; More how many more the
	// window gathered beyond those listed.
	Items []MailItem
	More  int
	// Vehicles names the items' vehicles (id -> name).
	Vehicles map[string]string
	// Rule is the notification rule of a notification; Schedule the
	// schedule of a report, with Report its file.
	Rule     *NotificationRule
	Schedule *ReportSchedule
	Report   *ReportFile
	// UnsubscribeToken is the one-click unsubscribe token this attempt
	// carries (its hash is stored with the mail).
	UnsubscribeToken string
}

// ReportFile is a scheduled report's run: its CSV and what it covers.
type ReportFile struct {
	Name     string // the attachment's file name
	CSV      []byte
	Rows     int
	From, To time.Time
	// Truncated says that the report had more than MaxReportRows rows.
	Truncated bool
}

// MaxReportRows is how many rows a report e-mail's CSV holds at most.
const MaxReportRows = 50_000

// MailOutcome is what sending a mail came to: nil Err for accepted;
// Temporary for an answer worth retrying (an SMTP 4xx, a connection that
// failed or timed out), otherwise a permanent failure (5xx).
type MailOutcome struct {
	Err       error
	Temporary bool
}

// ClaimMail claims for a sender, until now + lease, up to limit mails due
// at the clock's time, and returns what sending each needs. A mail whose
// rule or schedule was deleted or turned off, or whose person left, fails
// at once; a digest with nothing left to tell completes at once; neither
// is returned.
func (j Jobs) ClaimMail(ctx context.Context, lease time.Duration, limit int) ([]MailJob, error) {
	s := j.s
	now := s.Now()
	ms, err := s.store.ClaimMail(ctx, now, now.Add(lease), limit)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	var jobs []MailJob
	var done []MailRecord
	err = s.view(ctx, func(tx Tx) error {
		jobs, done = jobs[:0], done[:0]
		var ruleIDs, schedIDs []string
		for _, m := range ms {
			if m.Kind == MailReport {
				schedIDs = append(schedIDs, m.RuleID)
			} else {
				ruleIDs = append(ruleIDs, m.RuleID)
			}
		}
		rules, err := tx.NotificationRulesByID(ruleIDs)
		if err != nil {
			return err
		}
		scheds, err := tx.ReportSchedulesByID(schedIDs)
		if err != nil {
			return err
		}
		ruleOf := map[string]*NotificationRule{}
		for i := range rules {
			ruleOf[rules[i].ID] = &rules[i]
		}
		schedOf := map[string]*ReportSchedule{}
		for i := range scheds {
			schedOf[scheds[i].ID] = &scheds[i]
		}
		for _, m := range ms {
			job := MailJob{Mail: m, Lease: *m.NextAttemptAt}
			gone := ""
			var userID string
			if m.Kind == MailReport {
				job.Schedule = schedOf[m.RuleID]
				switch {
				case job.Schedule == nil:
					gone = "The report schedule was deleted."
				case !job.Schedule.Enabled:
					gone = "The report schedule is turned off."
				default:
					userID = job.Schedule.UserID
				}
			} else {
				job.Rule = ruleOf[m.RuleID]
				switch {
				case job.Rule == nil:
					gone = "The notification rule was deleted."
				case !job.Rule.Enabled:
					gone = "The notification rule is turned off."
				default:
					userID = job.Rule.UserID
				}
			}
			if gone == "" {
				u, err := tx.User(m.AccountID, userID)
				if ErrorCode(err) == CodeNotFound {
					gone = "The person no longer belongs to the account."
				} else if err != nil {
					return err
				}
				job.To, job.Name = u.Email, u.Name
				if gone == "" && CheckRecipient(u.Email) != nil {
					gone = "The person's e-mail address cannot be sent to."
				}
			}
			if gone != "" {
				done = append(done, failedRecord(job, gone))
				continue
			}
			a, err := tx.Account(m.AccountID)
			if err != nil {
				return err
			}
			job.Company = a.CompanyName
			if m.Kind == MailNotification {
				skip := 0
				if m.Noticed {
					skip = 1
				}
				job.Digest = m.Phase == PhaseDigest
				switch {
				case !job.Digest:
					job.Items = m.Items[:min(1, len(m.Items))]
				case m.Count-skip <= 0:
					done = append(done, sentRecord(job, now))
					continue
				default:
					job.Items = m.Items[min(skip, len(m.Items)):]
					job.More = m.Count - skip - len(job.Items)
				}
				job.Vehicles = map[string]string{}
				for _, it := range job.Items {
					if it.VehicleID == "" {
						continue
					}
					if _, ok := job.Vehicles[it.VehicleID]; ok {
						continue
					}
					v, err := tx.Vehicle(m.AccountID, it.VehicleID)
					if err == nil {
						job.Vehicles[v.ID] = v.Name
					} else if ErrorCode(err) != CodeNotFound {
						return err
					} else {
						job.Vehicles[it.VehicleID] = ""
					}
				}
			}
			jobs = append(jobs, job)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(done) > 0 {
		if _, err := s.store.RecordMail(ctx, done); err != nil {
			return nil, err
		}
	}
	for i := range jobs {
		if jobs[i].Schedule == nil {
			continue
		}
		a := Account{ID: jobs[i].Mail.AccountID, CompanyName: jobs[i].Company}
		if err := s.view(ctx, func(tx Tx) (err error) { a, err = tx.Account(a.ID); return err }); err != nil {
			return nil, err
		}
		f, err := s.reportFile(ctx, a, *jobs[i].Schedule, jobs[i].Mail.WindowEnd)
		if err != nil {
			return nil, err
		}
		jobs[i].Report = &f
	}
	hashes := make([][32]byte, len(jobs))
	for i := range jobs {
		jobs[i].UnsubscribeToken, hashes[i] = newUnsubscribeToken()
	}
	err = s.update(ctx, func(tx Tx) error {
		for i, job := range jobs {
			if err := tx.AddMailUnsubscribe(job.Mail.AccountID, job.Mail.ID, hashes[i], now); err != nil && ErrorCode(err) != CodeNotFound {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

func failedRecord(job MailJob, why string) MailRecord {
	m := job.Mail
	m.Status, m.Open, m.Error, m.NextAttemptAt = MailFailed, false, why, nil
	return MailRecord{Mail: m, Lease: job.Lease}
}

func sentRecord(job MailJob, now time.Time) MailRecord {
	m := job.Mail
	m.Status, m.Open, m.Error, m.NextAttemptAt, m.SentAt = MailSent, false, "", nil, &now
	return MailRecord{Mail: m, Lease: job.Lease}
}

// FinishMail records what sending a claimed mail came to, while its lease
// holds (false when it no longer did: another sender may have sent it).
// A notice sent leaves the window's mail due at the window's end, for its
// digest; a digest or a report sent is done. A temporary failure is
// retried after MailRetryAfter, for MailRetryFor from the first failure,
// then fails; a permanent one fails at once.
func (j Jobs) FinishMail(ctx context.Context, job MailJob, out MailOutcome) (bool, error) {
	s := j.s
	now := s.Now()
	rec := finishRecord(job, out, now)
	held, err := s.store.RecordMail(ctx, []MailRecord{rec})
	if err != nil {
		return false, err
	}
	return held[0], nil
}

func finishRecord(job MailJob, out MailOutcome, now time.Time) MailRecord {
	m := job.Mail
	switch {
	case out.Err == nil && m.Phase == PhaseNotice:
		due := m.WindowEnd
		if due.Before(now) {
			due = now
		}
		m.Phase, m.Noticed, m.Attempts, m.FirstAttemptAt, m.Error, m.NextAttemptAt = PhaseDigest, true, 0, nil, "", &due
		m.SentAt = &now
		return MailRecord{Mail: m, Lease: job.Lease}
	case out.Err == nil:
		return sentRecord(job, now)
	}
	m.Attempts++
	m.Error = errorText(out.Err)
	if m.FirstAttemptAt == nil {
		m.FirstAttemptAt = &now
	}
	if !out.Temporary || now.Sub(*m.FirstAttemptAt) >= MailRetryFor {
		m.Status, m.Open, m.NextAttemptAt = MailFailed, false, nil
		return MailRecord{Mail: m, Lease: job.Lease}
	}
	next := now.Add(MailRetryAfter(m.Attempts))
	m.NextAttemptAt = &next
	return MailRecord{Mail: m, Lease: job.Lease}
}

// errorText is an error as a mail's Error keeps it: one line, bounded.
func errorText(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}

// reportFile builds a schedule's run due at runAt: the report of the day
// or week before it, of the schedule's vehicles, as the API's CSV.
func (s *Service) reportFile(ctx context.Context, a Account, r ReportSchedule, runAt time.Time) (ReportFile, error) {
	from, to := r.PeriodOf(runAt)
	f := ReportFile{From: from, To: to}
	var keep func(vehicleID string) bool
	if len(r.VehicleIDs) > 0 || len(r.Tags) > 0 {
		ids := map[string]bool{}
		for _, id := range r.VehicleIDs {
			ids[id] = true
		}
		if len(r.Tags) > 0 {
			err := s.view(ctx, func(tx Tx) error {
				p := Page{Limit: MaxPageLimit}
				for {
					vs, err := tx.Vehicles(a.ID, VehicleFilter{}, p)
					if err != nil {
						return err
					}
					for _, v := range vs {
						if slices.ContainsFunc(v.Tags, func(t string) bool { return slices.Contains(r.Tags, t) }) {
							ids[v.ID] = true
						}
					}
					if len(vs) < p.Limit {
						return nil
					}
					p.After = vs[len(vs)-1].ID
				}
			})
			if err != nil {
				return ReportFile{}, err
			}
		}
		keep = func(id string) bool { return ids[id] }
	} else {
		keep = func(string) bool { return true }
	}
	var header []string
	var rows [][]string
	add := func(row []string) bool {
		if len(rows) >= MaxReportRows {
			f.Truncated = true
			return false
		}
		rows = append(rows, row)
		return true
	}
	day := from.In(mustTZ(r.TZ)).Format("2006-01-02")
	switch r.Report {
	case ReportSummary:
		if r.GroupBy == GroupByDriver {
			header = DriverSummaryCSVHeader
			q := SummaryQuery{From: &from, To: &to, GroupBy: GroupByDriver, TZ: r.TZ, Limit: MaxSummaryLimit}
			for {
				l, err := s.DriverSummary(ctx, SystemPrincipal(a), q)
				if err != nil {
					return ReportFile{}, err
				}
				for _, row := range l.Items {
					if !add(DriverSummaryCSVRow(row)) {
						break
					}
				}
				if !l.HasMore || f.Truncated {
					break
				}
				q.Cursor = l.NextCursor
			}
			break
		}
		header = SummaryCSVHeader
		q := SummaryQuery{From: &from, To: &to, GroupBy: r.GroupBy, TZ: r.TZ, Limit: MaxSummaryLimit}
		for {
			l, err := s.Summary(ctx, SystemPrincipal(a), q)
			if err != nil {
				return ReportFile{}, err
			}
			for _, row := range l.Items {
				if keep(row.VehicleID) && !add(SummaryCSVRow(row)) {
					break
				}
			}
			if !l.HasMore || f.Truncated {
				break
			}
			q.Cursor = l.NextCursor
		}
	case ReportTrips:
		header = TripCSVHeader
		err := s.view(ctx, func(tx Tx) error {
			rows = rows[:0]
			trips, err := tx.AccountTrips(a.ID, "", from, to)
			if err != nil {
				return err
			}
			for _, t := range trips {
				if keep(t.VehicleID) && !add(TripCSVRow(t)) {
					break
				}
			}
			return nil
		})
		if err != nil {
			return ReportFile{}, err
		}
	case ReportAlerts:
		header = AlertCSVHeader
		err := s.view(ctx, func(tx Tx) error {
			rows = rows[:0]
			p := Page{Limit: MaxPageLimit}
			for {
				as, err := tx.Alerts(a.ID, AlertFilter{From: from, To: to.Add(-time.Microsecond)}, p)
				if err != nil {
					return err
				}
				for _, al := range as {
					if keep(al.VehicleID) && !add(AlertCSVRow(al)) {
						return nil
					}
				}
				if len(as) < p.Limit {
					return nil
				}
				p.After = as[len(as)-1].ID
			}
		})
		if err != nil {
			return ReportFile{}, err
		}
	default:
		return ReportFile{}, errors.New("fleet: unknown report " + r.Report)
	}
	b, err := WriteCSV(header, rows)
	if err != nil {
		return ReportFile{}, err
	}
	f.CSV, f.Rows = b, len(rows)
	f.Name = r.Report + "-" + day + ".csv"
	if r.Frequency == FrequencyWeekly {
		f.Name = r.Report + "-week-of-" + day + ".csv"
	}
	return f, nil
}

func mustTZ(name string) *time.Location {
	loc, err := LoadTZ(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// PurgeMail deletes sent and failed mail older than MailRetention, with
// the unsubscribe links it carried.
func (j Jobs) PurgeMail(ctx context.Context) (int, error) {
	return j.s.store.PurgeMail(ctx, j.s.Now().Add(-MailRetention))
}
