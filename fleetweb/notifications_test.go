package fleetweb_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

func (e *env) rules(t *testing.T, acc fleet.Account) []fleet.NotificationRule {
	t.Helper()
	l, err := e.svc.ListNotificationRules(context.Background(), fleet.SystemPrincipal(acc), "", fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (e *env) userID(t *testing.T, email string) string {
	t.Helper()
	u, err := e.svc.Operator().UserByEmail(context.Background(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// Each person sets their own rules, a viewer included; a mistake comes back
// beside its field with what was typed; an admin sees everyone's; the page
// says when the server sends no e-mail.
func TestPeopleSetTheirOwnNotifications(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{MailNote: "E-mail is off: this server has no --smtp-url, so notification rules are kept and nothing is sent."})
	base := e.srv.URL
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, viewer, "GET", base+"/notifications", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "E-mail is off: this server has no --smtp-url"))
	is.True(strings.Contains(r.body, `id="add-rule"`))
	is.True(!strings.Contains(r.body, `name="user_id"`)) // a viewer sets their own only

	r = follow(t, viewer, base, do(t, viewer, "POST", base+"/notifications/rules", url.Values{
		"events": {"alert.created"}, "alert_types": {"speeding"}, "digest_minutes": {"10"},
		"quiet_from": {"22:00"}, "quiet_to": {"07:00"}, "quiet_tz": {"Europe/Berlin"}, "tags": {"north, south"}}))
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "The rule is saved."))
	rs := e.rules(t, e.accA)
	is.Equal(len(rs), 1)
	is.Equal(rs[0].UserID, e.userID(t, "viewer@acme.test"))
	is.Equal(rs[0].DigestMinutes, 10)
	is.Equal(rs[0].Tags, []string{"north", "south"})
	is.Equal(*rs[0].QuietHours, fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"})

	// Mistakes: beside each field, what was typed kept, nothing stored.
	r = do(t, viewer, "POST", base+"/notifications/rules", url.Values{"digest_minutes": {"0"}, "quiet_from": {"22:00"}, "quiet_to": {"22:00"}, "quiet_tz": {"Mars/Olympus"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	body := html.UnescapeString(r.body)
	is.True(strings.Contains(body, `<p id="events-error" class="field-error">Events must name at least one event type`))
	is.True(strings.Contains(body, `id="digest_minutes-error" class="field-error">Digest window must be from 1 to 1440`))
	is.True(strings.Contains(body, `id="quiet_tz-error" class="field-error">`))
	is.True(strings.Contains(body, `id="quiet_to-error" class="field-error">`))
	is.True(strings.Contains(body, `value="Mars/Olympus"`) && strings.Contains(body, `value="0"`)) // kept
	is.Equal(len(e.rules(t, e.accA)), 1)

	// An admin sees everyone's, and sets one for another person.
	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	r = do(t, admin, "GET", base+"/notifications", nil)
	is.True(strings.Contains(r.body, "viewer@acme.test"))
	is.True(strings.Contains(r.body, `name="user_id"`))
	r = follow(t, admin, base, do(t, admin, "POST", base+"/notifications/rules", url.Values{
		"user_id": {e.userID(t, "admin@acme.test")}, "events": {"vehicle.status_changed"}}))
	is.Equal(r.status, http.StatusOK)
	is.Equal(len(e.rules(t, e.accA)), 2)
	var adminRule string
	for _, ru := range e.rules(t, e.accA) {
		if ru.UserID == e.userID(t, "admin@acme.test") {
			adminRule = ru.ID
		}
	}
	// The viewer sees their own only, and cannot touch the admin's.
	r = do(t, viewer, "GET", base+"/notifications", nil)
	is.True(!strings.Contains(r.body, "vehicle.status_changed of every vehicle"))
	r = do(t, viewer, "POST", base+"/notifications/rules/"+adminRule+"/delete", nil)
	is.Equal(r.status, http.StatusNotFound)
	is.Equal(len(e.rules(t, e.accA)), 2)
	// Turning off and deleting one's own.
	own := e.rules(t, e.accA)[0].ID
	r = follow(t, viewer, base, do(t, viewer, "POST", base+"/notifications/rules/"+own+"/disable", nil))
	is.True(strings.Contains(r.body, "The rule is turned off"))
	r = follow(t, viewer, base, do(t, viewer, "POST", base+"/notifications/rules/"+own+"/delete", nil))
	is.True(strings.Contains(r.body, "The rule is deleted."))
	is.Equal(len(e.rules(t, e.accA)), 1)

	// A scheduled report, and its form's mistakes.
	r = do(t, viewer, "POST", base+"/notifications/reports", url.Values{"report": {"trips"}, "frequency": {"weekly"}, "weekday": {"friday"}, "hour": {"25"}, "tz": {"UTC"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(html.UnescapeString(r.body), `id="hour-error" class="field-error">Hour must be an hour of the day, 0 to 23`))
	is.True(strings.Contains(r.body, `value="25"`))
	r = follow(t, viewer, base, do(t, viewer, "POST", base+"/notifications/reports", url.Values{"report": {"trips"}, "frequency": {"weekly"}, "weekday": {"friday"}, "hour": {"17"}, "tz": {"Europe/Berlin"}}))
	is.True(strings.Contains(r.body, "The report is scheduled."))
	is.True(strings.Contains(r.body, "trips report, every friday at 17:00 Europe/Berlin"))
}

// The one-click link of an e-mail: a GET shows a button and changes
// nothing; a POST without a session (as a mail provider sends it, RFC
// 8058) turns the rule off.
func TestUnsubscribeWithoutSession(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	ru, err := e.svc.CreateNotificationRule(ctx, p, fleet.NotificationRuleInput{Email: "viewer@acme.test", Events: []string{fleet.EventVehicleCreated}})
	is.NoErr(err)
	_, err = e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 1"})
	is.NoErr(err)
	jobs, err := e.svc.Jobs().ClaimMail(ctx, time.Minute, 10)
	is.NoErr(err)
	is.Equal(len(jobs), 1)
	tok := jobs[0].UnsubscribeToken

	anon := e.client(t) // no session
	r := do(t, anon, "GET", e.srv.URL+"/unsubscribe/"+tok, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `<form method="post" action="/unsubscribe/`+tok+`">`))
	is.True(e.rules(t, e.accA)[0].Enabled) // a GET changes nothing
	r = do(t, anon, "POST", e.srv.URL+"/unsubscribe/"+tok, url.Values{"List-Unsubscribe": {"One-Click"}})
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "is turned off"))
	got := e.rules(t, e.accA)[0]
	is.Equal(got.ID, ru.ID)
	is.Equal(got.Enabled, false)
	r = do(t, anon, "POST", e.srv.URL+"/unsubscribe/"+tok, url.Values{"List-Unsubscribe": {"One-Click"}})
	is.Equal(r.status, http.StatusOK) // again: nothing more to do
	r = do(t, anon, "POST", e.srv.URL+"/unsubscribe/"+strings.Repeat("A", 43), nil)
	is.Equal(r.status, http.StatusNotFound)
}
