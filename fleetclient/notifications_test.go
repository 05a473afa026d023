package fleetclient_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// The client's notification methods against the real handler.
func TestClientNotifications(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a, key := e.account(fleet.PlanPro)
	u, _, err := e.svc.Operator().CreateUser(ctx, a.ID, fleet.UserParams{Email: "ana@example.com", Name: "Ana", Role: fleet.RoleViewer}, "")
	is.NoErr(err)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()))

	var people []fleet.Person
	for p, err := range c.Users(ctx) {
		is.NoErr(err)
		people = append(people, p)
	}
	is.True(len(people) >= 1)
	found := false
	for _, p := range people {
		found = found || p.UserID == u.ID && p.Email == "ana@example.com"
	}
	is.True(found) // the person is listed with their address

	r, err := c.CreateNotificationRule(ctx, fleetclient.NotificationRuleParams{Email: "ana@example.com", Events: []string{fleet.EventAlertCreated},
		AlertTypes: []fleet.AlertType{fleet.AlertSpeeding}, QuietHours: &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}})
	is.NoErr(err)
	is.Equal(r.UserID, u.ID) // named by e-mail
	is.Equal(r.DigestMinutes, fleet.DefaultDigestMinutes)
	is.True(r.Enabled)
	fifteen := 15
	r, err = c.UpdateNotificationRule(ctx, r.ID, fleet.NotificationRulePatch{DigestMinutes: fleet.Some(&fifteen), QuietHours: fleet.Optional[*fleet.QuietHours]{Set: true}})
	is.NoErr(err)
	is.Equal(r.DigestMinutes, 15)
	is.Equal(r.QuietHours, nil) // null cleared it
	got, err := c.NotificationRule(ctx, r.ID)
	is.NoErr(err)
	is.Equal(got.DigestMinutes, 15)
	n := 0
	for _, err := range c.NotificationRules(ctx, u.ID) {
		is.NoErr(err)
		n++
	}
	is.Equal(n, 1)
	_, err = c.CreateNotificationRule(ctx, fleetclient.NotificationRuleParams{Email: "ana@example.com\r\nBcc: x@example.com", Events: []string{fleet.EventAlertCreated}})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // a header injection is refused
	is.NoErr(c.DeleteNotificationRule(ctx, r.ID))
	_, err = c.NotificationRule(ctx, r.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)

	s, err := c.CreateReportSchedule(ctx, fleetclient.ReportScheduleParams{UserID: u.ID, Frequency: fleet.FrequencyWeekly, Weekday: "friday",
		Hour: 17, TZ: "Europe/Berlin", Report: fleet.ReportTrips})
	is.NoErr(err)
	is.Equal(s.Weekday, "friday")
	is.True(s.NextRunAt.After(T0))
	eight := 8
	s, err = c.UpdateReportSchedule(ctx, s.ID, fleet.ReportSchedulePatch{Hour: fleet.Some(&eight)})
	is.NoErr(err)
	is.Equal(s.Hour, 8)
	got2, err := c.ReportSchedule(ctx, s.ID)
	is.NoErr(err)
	is.Equal(got2.Hour, 8)
	for _, err := range c.ReportSchedules(ctx, "") {
		is.NoErr(err)
	}
	is.NoErr(c.DeleteReportSchedule(ctx, s.ID))
}
