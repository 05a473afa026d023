package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunNotify checks the notifications area: notification rules and report
// schedules (fleet.NotifyTx), and the mail outbox (QueueMail's one row per
// rule and window, bounded; claims with a lease that no concurrent claim
// shares; outcomes stored only while the lease holds; one report run per
// period; unsubscribe tokens; purges).
func RunNotify(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"NotificationRuleRoundTrip", testNotificationRuleRoundTrip},
		{"NotificationRulesScoped", testNotificationRulesScoped},
		{"QueueMailOneRowPerWindow", testQueueMailOneRowPerWindow},
		{"QueueMailRollsBack", testQueueMailRollsBack},
		{"ClaimMailLease", testClaimMailLease},
		{"ClaimMailConcurrent", testClaimMailConcurrent},
		{"RecordMailLease", testRecordMailLease},
		{"ReportScheduleRoundTrip", testReportScheduleRoundTrip},
		{"QueueReportOncePerPeriod", testQueueReportOncePerPeriod},
		{"MailUnsubscribe", testMailUnsubscribe},
		{"PurgeMail", testPurgeMail},
		{"DeleteUserDeletesTheirRules", testDeleteUserDeletesTheirRules},
	})
}

// MustUser stores a new user of the account and returns it.
func MustUser(tb testing.TB, s fleet.Store, accountID, email string) fleet.User {
	tb.Helper()
	u := NewUser(accountID, email)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateUser(u) }); err != nil {
		tb.Fatalf("create user: %v", err)
	}
	return u
}

// NewNotificationRule returns a rule of the user that is not stored yet.
func NewNotificationRule(accountID, userID string) fleet.NotificationRule {
	return fleet.NotificationRule{
		ID: fleet.NewID(fleet.PrefixNotificationRule), AccountID: accountID, UserID: userID,
		Events: []string{fleet.EventAlertCreated}, AlertTypes: []fleet.AlertType{}, VehicleIDs: []string{}, Tags: []string{},
		Channel: fleet.ChannelEmail, DigestMinutes: 5, Enabled: true, CreatedAt: T0,
	}
}

// MustNotificationRule stores a new rule of the user and returns it.
func MustNotificationRule(tb testing.TB, s fleet.Store, accountID, userID string) fleet.NotificationRule {
	tb.Helper()
	r := NewNotificationRule(accountID, userID)
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateNotificationRule(r) }); err != nil {
		tb.Fatalf("create notification rule: %v", err)
	}
	return r
}

// queued is the outbox write of event n for the rule, due at at.
func queued(r fleet.NotificationRule, n int, at time.Time) fleet.MailQueued {
	return fleet.MailQueued{
		ID: fleet.NewID(fleet.PrefixMail), AccountID: r.AccountID, RuleID: r.ID, UserID: r.UserID, Phase: fleet.PhaseNotice,
		WindowEnd: at.Add(5 * time.Minute), CreatedAt: at,
		Count: 1, Items: []fleet.MailItem{{EventID: fmt.Sprintf("evt_%d", n), Type: fleet.EventAlertCreated, At: at, Text: fmt.Sprintf("event %d", n), Path: "/alerts"}},
	}
}

func getMails(t *testing.T, s fleet.Store, accountID, ruleID string) []fleet.Mail {
	t.Helper()
	var ms []fleet.Mail
	if err := s.View(ctx, func(tx fleet.Tx) (err error) {
		ms, err = tx.Mails(accountID, ruleID, fleet.Page{Limit: 1000})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ms
}

func testNotificationRuleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := NewNotificationRule(a.ID, u.ID)
	r.AlertTypes = []fleet.AlertType{fleet.AlertSpeeding}
	r.VehicleIDs = []string{"veh_1"}
	r.Tags = []string{"north"}
	r.QuietHours = &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateNotificationRule(r) })
	err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateNotificationRule(r) })
	is.Equal(code(err), fleet.CodeConflict) // the id exists

	var got fleet.NotificationRule
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { got, err = tx.NotificationRule(a.ID, r.ID); return err })
	is.Equal(got, r) // every field round-trips

	r.Enabled, r.DigestMinutes, r.QuietHours = false, 30, nil
	r.UserID = "usr_other" // not mutable
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateNotificationRule(r) })
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { got, err = tx.NotificationRule(a.ID, r.ID); return err })
	is.Equal(got.Enabled, false)
	is.Equal(got.DigestMinutes, 30)
	is.Equal(got.QuietHours, nil)
	is.Equal(got.UserID, u.ID) // the person stays

	var on []fleet.NotificationRule
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { on, err = tx.EnabledNotificationRules(a.ID); return err })
	is.Equal(len(on), 0) // a disabled rule is not read for events

	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteNotificationRule(a.ID, r.ID) })
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.NotificationRule(a.ID, r.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteNotificationRule(a.ID, r.ID) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testNotificationRulesScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	ua, ua2 := MustUser(t, s, a.ID, "a1@example.com"), MustUser(t, s, a.ID, "a2@example.com")
	ub := MustUser(t, s, b.ID, "b@example.com")
	r1 := MustNotificationRule(t, s, a.ID, ua.ID)
	r2 := MustNotificationRule(t, s, a.ID, ua2.ID)
	r3 := MustNotificationRule(t, s, a.ID, ua.ID)
	rb := MustNotificationRule(t, s, b.ID, ub.ID)
	err := s.View(ctx, func(tx fleet.Tx) error {
		_, err := tx.NotificationRule(a.ID, rb.ID)
		is.Equal(code(err), fleet.CodeNotFound) // another account's rule
		all, err := tx.NotificationRules(a.ID, "", fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(all), 3)
		is.Equal(all[0].ID, r1.ID) // id order
		mine, err := tx.NotificationRules(a.ID, ua.ID, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(mine), 2) // the person's own
		is.Equal(mine[1].ID, r3.ID)
		page, err := tx.NotificationRules(a.ID, "", fleet.Page{Limit: 1, After: r1.ID})
		is.NoErr(err)
		is.Equal(len(page), 1)
		is.Equal(page[0].ID, r2.ID) // after the cursor
		n, err := tx.CountNotificationRules(a.ID)
		is.NoErr(err)
		is.Equal(n, 3)
		byID, err := tx.NotificationRulesByID([]string{r2.ID, rb.ID, "ntf_missing"})
		is.NoErr(err)
		is.Equal(len(byID), 2) // of any account; missing ones left out
		return nil
	})
	is.NoErr(err)
	r := rb
	r.AccountID = a.ID
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateNotificationRule(r) })
	is.Equal(code(err), fleet.CodeNotFound) // cannot change another account's rule
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteNotificationRule(a.ID, rb.ID) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func testQueueMailOneRowPerWindow(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r, other := MustNotificationRule(t, s, a.ID, u.ID), MustNotificationRule(t, s, a.ID, u.ID)
	const n = fleet.MailItemsKept + 70
	for i := range n {
		mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, i, T0.Add(time.Duration(i)*time.Second))) })
	}
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(other, 0, T0)) })
	ms := getMails(t, s, a.ID, r.ID)
	is.Equal(len(ms), 1) // one row for the rule's window, whatever the number of events
	m := ms[0]
	is.Equal(m.Count, n)                        // every event counted
	is.Equal(len(m.Items), fleet.MailItemsKept) // the first few kept
	is.Equal(m.Items[0].Text, "event 0")
	is.Equal(m.Items[fleet.MailItemsKept-1].Text, fmt.Sprintf("event %d", fleet.MailItemsKept-1))
	is.True(m.Open)
	is.Equal(m.Phase, fleet.PhaseNotice)
	is.Equal(m.Status, fleet.MailPending)
	is.True(m.NextAttemptAt.Equal(T0))                  // the first event's notice is due at once
	is.True(m.WindowEnd.Equal(T0.Add(5 * time.Minute))) // the window is the first event's
	is.Equal(len(getMails(t, s, a.ID, other.ID)), 1)    // another rule has its own row

	// A transaction's events of a rule come as one write: a count and the
	// first items; the list stops at MailItemsKept whatever the writes.
	g := MustNotificationRule(t, s, a.ID, u.ID)
	for _, k := range []int{fleet.MailItemsKept - 5, 10, 3} {
		q := queued(g, 0, T0)
		q.Count, q.Items = k*2, nil
		for i := range k {
			q.Items = append(q.Items, fleet.MailItem{EventID: fmt.Sprintf("evt_%d", i), Type: fleet.EventAlertCreated, At: T0, Text: fmt.Sprintf("batch %d", k), Path: "/"})
		}
		mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(q) })
	}
	gm := getMails(t, s, a.ID, g.ID)
	is.Equal(len(gm), 1)
	is.Equal(gm[0].Count, 2*(fleet.MailItemsKept-5+10+3)) // every event counted
	is.Equal(len(gm[0].Items), fleet.MailItemsKept)       // the list bounded
	is.Equal(gm[0].Items[fleet.MailItemsKept-5].Text, "batch 10")

	// A rule's row held for quiet hours is due at their end.
	q := MustNotificationRule(t, s, a.ID, u.ID)
	held := queued(q, 0, T0)
	held.Phase, held.WindowEnd = fleet.PhaseDigest, T0.Add(9*time.Hour)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(held) })
	hm := getMails(t, s, a.ID, q.ID)[0]
	is.True(hm.NextAttemptAt.Equal(T0.Add(9 * time.Hour)))
	is.Equal(hm.Phase, fleet.PhaseDigest)
}

func testQueueMailRollsBack(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := MustNotificationRule(t, s, a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 0, T0)) })
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.QueueMail(queued(r, 1, T0)); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	ms := getMails(t, s, a.ID, r.ID)
	is.Equal(ms[0].Count, 1) // the failed transaction's event is not counted
	is.Equal(len(ms[0].Items), 1)
}

func testClaimMailLease(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := MustNotificationRule(t, s, a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 0, T0)) })
	none, err := s.ClaimMail(ctx, T0.Add(-time.Second), T0.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(none), 0) // not due yet
	until := T0.Add(2 * time.Minute)
	got, err := s.ClaimMail(ctx, T0, until, 10)
	is.NoErr(err)
	is.Equal(len(got), 1)
	is.True(got[0].NextAttemptAt.Equal(until)) // leased
	is.True(got[0].Open)                       // a notice's window stays open
	again, err := s.ClaimMail(ctx, T0.Add(time.Minute), T0.Add(3*time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(again), 0) // the lease holds
	// The notice is sent: the row waits for the window's end, open.
	m := got[0]
	end := m.WindowEnd
	m.Phase, m.Noticed, m.NextAttemptAt = fleet.PhaseDigest, true, &end
	held, err := s.RecordMail(ctx, []fleet.MailRecord{{Mail: m, Lease: until}})
	is.NoErr(err)
	is.Equal(held, []bool{true})
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 1, T0.Add(time.Minute))) })
	is.Equal(len(getMails(t, s, a.ID, r.ID)), 1) // still the same window
	// At the window's end the digest is claimed, and the window closes.
	dg, err := s.ClaimMail(ctx, end, end.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(dg), 1)
	is.Equal(dg[0].Count, 2)
	is.Equal(dg[0].Open, false)
	is.True(dg[0].Noticed)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 2, end)) })
	ms := getMails(t, s, a.ID, r.ID)
	is.Equal(len(ms), 2) // an event after the window closed opens a new one
	is.Equal(ms[1].Count, 1)
	is.Equal(ms[1].Phase, fleet.PhaseNotice)
}

func testClaimMailConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	const rules = 20
	for range rules {
		r := MustNotificationRule(t, s, a.ID, u.ID)
		mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 0, T0)) })
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				got, err := s.ClaimMail(ctx, T0, T0.Add(time.Minute), 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[m.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	is.Equal(len(seen), rules) // every mail claimed
	for id, n := range seen {
		is.Equal(n, 1) // by one claim only
		_ = id
	}
}

func testRecordMailLease(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := MustNotificationRule(t, s, a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 0, T0)) })
	until := T0.Add(time.Minute)
	got, err := s.ClaimMail(ctx, T0, until, 10)
	is.NoErr(err)
	m := got[0]
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 1, T0)) }) // meanwhile
	m.Status, m.Open, m.Error, m.Attempts, m.NextAttemptAt = fleet.MailFailed, false, "550 no such user", 1, nil
	m.Count, m.Items = 99, nil // not the record's to change
	held, err := s.RecordMail(ctx, []fleet.MailRecord{{Mail: m, Lease: until.Add(time.Second)}})
	is.NoErr(err)
	is.Equal(held, []bool{false}) // another lease: not stored
	held, err = s.RecordMail(ctx, []fleet.MailRecord{{Mail: m, Lease: until}})
	is.NoErr(err)
	is.Equal(held, []bool{true})
	stored := getMails(t, s, a.ID, r.ID)[0]
	is.Equal(stored.Status, fleet.MailFailed)
	is.Equal(stored.Error, "550 no such user")
	is.Equal(stored.Attempts, 1)
	is.Equal(stored.Count, 2) // the event added meanwhile stays
	is.Equal(len(stored.Items), 2)
	held, err = s.RecordMail(ctx, []fleet.MailRecord{{Mail: m, Lease: until}})
	is.NoErr(err)
	is.Equal(held, []bool{false}) // no longer pending
	left, err := s.ClaimMail(ctx, T0.Add(time.Hour), T0.Add(2*time.Hour), 10)
	is.NoErr(err)
	is.Equal(len(left), 0) // a failed mail is not claimed again
}

// NewReportSchedule returns a daily schedule of the user, not stored yet.
func NewReportSchedule(accountID, userID string) fleet.ReportSchedule {
	return fleet.ReportSchedule{
		ID: fleet.NewID(fleet.PrefixReportSchedule), AccountID: accountID, UserID: userID, Frequency: fleet.FrequencyDaily,
		Hour: 7, TZ: "Europe/Berlin", Report: fleet.ReportSummary, GroupBy: fleet.GroupByVehicle,
		VehicleIDs: []string{}, Tags: []string{}, Enabled: true, CreatedAt: T0, NextRunAt: T0.Add(time.Hour),
	}
}

func testReportScheduleRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := NewReportSchedule(a.ID, u.ID)
	r.Frequency, r.Weekday, r.Tags = fleet.FrequencyWeekly, "friday", []string{"north"}
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateReportSchedule(r) })
	var got fleet.ReportSchedule
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { got, err = tx.ReportSchedule(a.ID, r.ID); return err })
	is.Equal(got, r)
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.ReportSchedule(b.ID, r.ID); return err })
	is.Equal(code(err), fleet.CodeNotFound) // another account's

	later := NewReportSchedule(a.ID, u.ID)
	later.NextRunAt = T0.Add(3 * time.Hour)
	off := NewReportSchedule(a.ID, u.ID)
	off.Enabled, off.NextRunAt = false, T0
	mustUpdate(t, s, func(tx fleet.Tx) error {
		if err := tx.CreateReportSchedule(later); err != nil {
			return err
		}
		return tx.CreateReportSchedule(off)
	})
	var due []fleet.ReportSchedule
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { due, err = tx.DueReportSchedules(T0.Add(2*time.Hour), 10); return err })
	is.Equal(len(due), 1) // enabled and due only
	is.Equal(due[0].ID, r.ID)
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { due, err = tx.DueReportSchedules(T0.Add(5*time.Hour), 10); return err })
	is.Equal(len(due), 2)
	is.Equal(due[0].ID, r.ID) // earliest first

	r.Hour, r.NextRunAt, r.Enabled = 9, T0.Add(48*time.Hour), false
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.UpdateReportSchedule(r) })
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { got, err = tx.ReportSchedule(a.ID, r.ID); return err })
	is.Equal(got.Hour, 9)
	is.True(got.NextRunAt.Equal(T0.Add(48 * time.Hour)))
	var n int
	mustUpdate(t, s, func(tx fleet.Tx) (err error) { n, err = tx.CountReportSchedules(a.ID); return err })
	is.Equal(n, 3)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteReportSchedule(a.ID, r.ID) })
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.DeleteReportSchedule(a.ID, r.ID) })
	is.Equal(code(err), fleet.CodeNotFound)
}

func reportMail(r fleet.ReportSchedule, period string) fleet.Mail {
	due := T0
	return fleet.Mail{ID: fleet.NewID(fleet.PrefixMail), AccountID: r.AccountID, Kind: fleet.MailReport, RuleID: r.ID, UserID: r.UserID,
		Phase: fleet.PhaseReport, Status: fleet.MailPending, WindowEnd: T0, Period: period, Items: []fleet.MailItem{},
		NextAttemptAt: &due, CreatedAt: T0}
}

func testQueueReportOncePerPeriod(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := NewReportSchedule(a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateReportSchedule(r) })
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	for range 4 { // four servers find the run due at once
		wg.Go(func() {
			err := s.Update(ctx, func(tx fleet.Tx) error {
				ok, err := tx.QueueReport(reportMail(r, "2026-11-22T06:00:00Z"))
				if ok {
					mu.Lock()
					stored++
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	is.Equal(stored, 1) // one run of the period
	var ok bool
	mustUpdate(t, s, func(tx fleet.Tx) (err error) {
		ok, err = tx.QueueReport(reportMail(r, "2026-11-23T06:00:00Z"))
		return err
	})
	is.True(ok) // the next period is another run
	ms := getMails(t, s, a.ID, r.ID)
	is.Equal(len(ms), 2)
	is.Equal(ms[0].Kind, fleet.MailReport)
	is.Equal(ms[0].Period, "2026-11-22T06:00:00Z")
	got, err := s.ClaimMail(ctx, T0, T0.Add(time.Minute), 10)
	is.NoErr(err)
	is.Equal(len(got), 2) // reports are claimed as any mail
}

func testMailUnsubscribe(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r := MustNotificationRule(t, s, a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r, 0, T0)) })
	m := getMails(t, s, a.ID, r.ID)[0]
	h1, h2 := [32]byte{1}, [32]byte{2}
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.AddMailUnsubscribe(a.ID, m.ID, h1, T0) })
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.AddMailUnsubscribe(a.ID, m.ID, h2, T0.Add(time.Hour)) })
	for _, h := range [][32]byte{h1, h2} {
		var got fleet.Mail
		mustUpdate(t, s, func(tx fleet.Tx) (err error) { got, err = tx.MailByUnsubscribe(h); return err })
		is.Equal(got.ID, m.ID) // every attempt's token stays valid
		is.Equal(got.RuleID, r.ID)
	}
	err := s.View(ctx, func(tx fleet.Tx) error { _, err := tx.MailByUnsubscribe([32]byte{3}); return err })
	is.Equal(code(err), fleet.CodeNotFound)
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.AddMailUnsubscribe(a.ID, m.ID, h1, T0) })
	is.Equal(code(err), fleet.CodeConflict) // a hash is one token's
	err = s.Update(ctx, func(tx fleet.Tx) error { return tx.AddMailUnsubscribe("acc_other", m.ID, [32]byte{4}, T0) })
	is.Equal(code(err), fleet.CodeNotFound) // another account's mail
}

func testPurgeMail(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u := MustUser(t, s, a.ID, "ana@example.com")
	r1, r2 := MustNotificationRule(t, s, a.ID, u.ID), MustNotificationRule(t, s, a.ID, u.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r1, 0, T0)) })
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.QueueMail(queued(r2, 0, T0)) })
	got, err := s.ClaimMail(ctx, T0, T0.Add(time.Minute), 1)
	is.NoErr(err)
	m := got[0]
	m.Status, m.Open, m.NextAttemptAt = fleet.MailSent, false, nil
	_, err = s.RecordMail(ctx, []fleet.MailRecord{{Mail: m, Lease: T0.Add(time.Minute)}})
	is.NoErr(err)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.AddMailUnsubscribe(a.ID, m.ID, [32]byte{9}, T0) })
	n, err := s.PurgeMail(ctx, T0.Add(time.Hour))
	is.NoErr(err)
	is.Equal(n, 1) // the sent one; pending mail stays however old
	is.Equal(len(getMails(t, s, a.ID, "")), 1)
	err = s.View(ctx, func(tx fleet.Tx) error { _, err := tx.MailByUnsubscribe([32]byte{9}); return err })
	is.Equal(code(err), fleet.CodeNotFound) // its token went with it
}

func testDeleteUserDeletesTheirRules(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	u, v := MustUser(t, s, a.ID, "ana@example.com"), MustUser(t, s, a.ID, "bo@example.com")
	MustNotificationRule(t, s, a.ID, u.ID)
	keep := MustNotificationRule(t, s, a.ID, v.ID)
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.CreateReportSchedule(NewReportSchedule(a.ID, u.ID)) })
	mustUpdate(t, s, func(tx fleet.Tx) error { return tx.DeleteUser(a.ID, u.ID) })
	err := s.View(ctx, func(tx fleet.Tx) error {
		rs, err := tx.NotificationRules(a.ID, "", fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(rs), 1) // the person's rules went with them
		is.Equal(rs[0].ID, keep.ID)
		ss, err := tx.ReportSchedules(a.ID, "", fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(ss), 0)
		return nil
	})
	is.NoErr(err)
}
