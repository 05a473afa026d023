package fleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

type notifyWorld struct {
	store   *memstore.Store
	clock   *testclock.Clock
	svc     *fleet.Service
	acc     fleet.Account
	p       fleet.Principal
	user    fleet.User
	vehicle fleet.Vehicle
}

func newNotifyWorld(t *testing.T) *notifyWorld {
	t.Helper()
	ctx := context.Background()
	w := &notifyWorld{store: memstore.New(), clock: testclock.New(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))}
	w.svc = fleet.NewService(w.store, fleet.Options{Now: w.clock.Now})
	var err error
	if w.acc, _, err = w.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro}); err != nil {
		t.Fatal(err)
	}
	w.p = fleet.SystemPrincipal(w.acc)
	if w.user, _, err = w.svc.Operator().CreateUser(ctx, w.acc.ID, fleet.UserParams{Email: "ana@example.com", Role: fleet.RoleViewer}, ""); err != nil {
		t.Fatal(err)
	}
	if w.vehicle, err = w.svc.CreateVehicle(ctx, w.p, fleet.Vehicle{Name: "Truck 7", Tags: []string{"north"}}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *notifyWorld) mails(t *testing.T) []fleet.Mail {
	t.Helper()
	var ms []fleet.Mail
	if err := w.store.View(context.Background(), func(tx fleet.Tx) (err error) {
		ms, err = tx.Mails(w.acc.ID, "", fleet.Page{Limit: 1000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ms
}

// A rule's input is checked whole: 422 naming each bad field, nothing
// stored.
func TestNotificationRuleValidation(t *testing.T) {
	ctx := context.Background()
	w := newNotifyWorld(t)
	other, _, err := w.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := w.svc.Operator().CreateUser(ctx, other.ID, fleet.UserParams{Email: "bo@other.example", Role: fleet.RoleAdmin}, "")
	if err != nil {
		t.Fatal(err)
	}
	otherVehicle, err := w.svc.CreateVehicle(ctx, fleet.SystemPrincipal(other), fleet.Vehicle{Name: "Theirs"})
	if err != nil {
		t.Fatal(err)
	}
	five, zero := 5, 0
	for _, c := range []struct {
		name  string
		in    fleet.NotificationRuleInput
		field string
	}{
		{"no person", fleet.NotificationRuleInput{Events: []string{fleet.EventAlertCreated}}, "user_id"},
		{"both", fleet.NotificationRuleInput{UserID: w.user.ID, Email: "ana@example.com", Events: []string{fleet.EventAlertCreated}}, "email"},
		{"another account's person", fleet.NotificationRuleInput{UserID: stranger.ID, Events: []string{fleet.EventAlertCreated}}, "user_id"},
		{"another account's address", fleet.NotificationRuleInput{Email: "bo@other.example", Events: []string{fleet.EventAlertCreated}}, "email"},
		{"CR LF in the address", fleet.NotificationRuleInput{Email: "ana@example.com\r\nBcc: x@evil.example", Events: []string{fleet.EventAlertCreated}}, "email"},
		{"a display name", fleet.NotificationRuleInput{Email: "Ana <ana@example.com>", Events: []string{fleet.EventAlertCreated}}, "email"},
		{"no events", fleet.NotificationRuleInput{UserID: w.user.ID}, "events"},
		{"an unknown event", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{"alert.exploded"}}, "events[0]"},
		{"an unknown alert type", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, AlertTypes: []fleet.AlertType{"meteor"}}, "alert_types[0]"},
		{"another account's vehicle", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, VehicleIDs: []string{otherVehicle.ID}}, "vehicle_ids[0]"},
		{"a digest of 0", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, DigestMinutes: &zero}, "digest_minutes"},
		{"a tag with a newline", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, Tags: []string{"a\nb"}}, "tags[0]"},
		{"a channel of its own", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, Channel: "sms"}, "channel"},
		{"quiet hours in no zone", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, DigestMinutes: &five,
			QuietHours: &fleet.QuietHours{TZ: "Local", From: "22:00", To: "07:00"}}, "quiet_hours.tz"},
		{"quiet hours at 24:00", fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated},
			QuietHours: &fleet.QuietHours{TZ: "UTC", From: "24:00", To: "07:00"}}, "quiet_hours.from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := w.svc.CreateNotificationRule(ctx, w.p, c.in)
			is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
			fe, ok := err.(*fleet.Error)
			is.True(ok)
			named := false
			for _, d := range fe.Details {
				named = named || d.Field == c.field
			}
			is.True(named) // the error names the field
		})
	}
	l, err := w.svc.ListNotificationRules(ctx, w.p, "", fleet.ListQuery{})
	is.New(t).NoErr(err)
	is.New(t).Equal(len(l.Items), 0) // nothing stored
}

// An account without rules writes nothing to the outbox; a rule takes
// the events it names, of the alert types, vehicles and tags it names.
func TestEventsReachTheOutboxOfMatchingRules(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	w := newNotifyWorld(t)
	w.svc.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "no rules yet"})
	is.Equal(len(w.mails(t)), 0)
	tagged, err := w.svc.CreateNotificationRule(ctx, w.p, fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, Tags: []string{"north"}})
	is.NoErr(err)
	south, err := w.svc.CreateNotificationRule(ctx, w.p, fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}, Tags: []string{"south"}})
	is.NoErr(err)
	vehicles, err := w.svc.CreateNotificationRule(ctx, w.p, fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventVehicleCreated, fleet.EventVehicleUpdated}})
	is.NoErr(err)
	_, err = w.svc.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "north"})
	is.NoErr(err)
	_, err = w.svc.CreateVehicle(ctx, w.p, fleet.Vehicle{Name: "Van"})
	is.NoErr(err)
	byRule := map[string]int{}
	for _, m := range w.mails(t) {
		byRule[m.RuleID] += m.Count
	}
	is.Equal(byRule[tagged.ID], 1)   // the vehicle is tagged north
	is.Equal(byRule[south.ID], 0)    // not south
	is.Equal(byRule[vehicles.ID], 1) // vehicle.created
	// Turned off, a rule takes nothing.
	off := false
	_, err = w.svc.UpdateNotificationRule(ctx, w.p, tagged.ID, fleet.NotificationRulePatch{Enabled: fleet.Some(&off)})
	is.NoErr(err)
	_, err = w.svc.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "north again"})
	is.NoErr(err)
	byRule = map[string]int{}
	for _, m := range w.mails(t) {
		byRule[m.RuleID] += m.Count
	}
	is.Equal(byRule[tagged.ID], 1)
}

// A rule made through one server reaches the events of another sharing the
// store at once: the cache follows the account's configuration version.
func TestRulesOfAnotherServerApplyAtOnce(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	w := newNotifyWorld(t)
	other := fleet.NewService(w.store, fleet.Options{Now: w.clock.Now})
	_, err := other.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "cached: no rules"})
	is.NoErr(err)
	_, err = w.svc.CreateNotificationRule(ctx, w.p, fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}})
	is.NoErr(err)
	_, err = other.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "now mailed"})
	is.NoErr(err)
	ms := w.mails(t)
	is.Equal(len(ms), 1)
	is.Equal(ms[0].Items[0].Text, "now mailed")
}

// Quiet hours span midnight in their zone, DST included.
func TestQuietHoursHeldUntil(t *testing.T) {
	q := &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}
	for _, c := range []struct {
		at   time.Time
		held bool
		end  time.Time
	}{
		{time.Date(2026, 11, 23, 20, 59, 0, 0, time.UTC), false, time.Time{}},                                 // 21:59 Berlin
		{time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC), true, time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)}, // 22:00
		{time.Date(2026, 11, 24, 5, 59, 0, 0, time.UTC), true, time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)},
		{time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC), false, time.Time{}},
		// The night DST ends (25 October 2026): 07:00 is 06:00 UTC again.
		{time.Date(2026, 10, 24, 23, 0, 0, 0, time.UTC), true, time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC)},
	} {
		is := is.New(t)
		end, held := q.HeldUntil(c.at)
		is.Equal(held, c.held)
		is.True(end.Equal(c.end))
	}
	day := &fleet.QuietHours{TZ: "UTC", From: "12:00", To: "13:00"}
	_, held := day.HeldUntil(time.Date(2026, 11, 23, 12, 30, 0, 0, time.UTC))
	is.New(t).True(held)
	_, held = day.HeldUntil(time.Date(2026, 11, 23, 13, 30, 0, 0, time.UTC))
	is.New(t).True(!held)
}

// Retries of a 4xx: a minute, then doubling, at most an hour.
func TestMailRetryAfter(t *testing.T) {
	is := is.New(t)
	var got []time.Duration
	for n := 1; n <= 9; n++ {
		got = append(got, fleet.MailRetryAfter(n))
	}
	is.Equal(got, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute,
		time.Hour, time.Hour, time.Hour})
}

// A report's runs: daily or weekly at an hour of a zone; each covers the
// day or week before it.
func TestReportSchedulePeriods(t *testing.T) {
	is := is.New(t)
	weekly := fleet.ReportSchedule{Frequency: fleet.FrequencyWeekly, Weekday: "monday", Hour: 7, TZ: "America/New_York", Report: fleet.ReportSummary, GroupBy: fleet.GroupByVehicle}
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)                                // Wednesday
	is.True(weekly.NextRun(now).Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)))   // Monday 07:00 EST
	is.True(weekly.LatestRun(now).Equal(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))) // the last Monday
	from, to := weekly.PeriodOf(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	is.True(from.Equal(time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC))) // Monday to Monday, midnight EST
	is.True(to.Equal(time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)))
	daily := fleet.ReportSchedule{Frequency: fleet.FrequencyDaily, Hour: 0, TZ: "Europe/Berlin"}
	at := time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC) // midnight after the 23-hour day DST starts
	is.True(daily.LatestRun(at.Add(time.Minute)).Equal(at))
	from, to = daily.PeriodOf(at)
	is.Equal(to.Sub(from), 23*time.Hour) // that day had 23 hours
	is.Equal(fleet.DescribeReportSchedule(weekly), "summary report by vehicle, every monday at 07:00 America/New_York")
}

// failingOutbox is a store whose outbox write fails, as a disk that gives
// out midway would.
type failingOutbox struct{ *memstore.Store }

type failingOutboxTx struct{ fleet.Tx }

var errOutbox = errors.New("the outbox write failed")

func (f failingOutbox) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	return f.Store.Update(ctx, func(tx fleet.Tx) error { return fn(failingOutboxTx{tx}) })
}

func (failingOutboxTx) QueueMail(fleet.MailQueued) error { return errOutbox }

// The outbox is written in the event's transaction: when its write fails,
// the change and its event fail with it, so no event is without its mail.
func TestOutboxCommitsWithTheEvent(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	w := newNotifyWorld(t)
	_, err := w.svc.CreateNotificationRule(ctx, w.p, fleet.NotificationRuleInput{UserID: w.user.ID, Events: []string{fleet.EventAlertCreated}})
	is.NoErr(err)
	broken := fleet.NewService(failingOutbox{w.store}, fleet.Options{Now: w.clock.Now})
	_, err = broken.CreateAlert(ctx, w.p, fleet.Alert{VehicleID: w.vehicle.ID, Message: "lost?"})
	is.True(errors.Is(err, errOutbox))
	alerts, err := w.svc.ListAlerts(ctx, w.p, fleet.AlertFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(alerts.Items), 0) // no alert
	events, err := w.svc.ListEvents(ctx, w.p, fleet.EventFilter{Type: fleet.EventAlertCreated}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(events.Items), 0) // no event
	is.Equal(len(w.mails(t)), 0)
}
