package fleetweb_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

func TestMapEventsFollowTheAccountOnTheSession(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	pa, pb := fleet.SystemPrincipal(e.accA), fleet.SystemPrincipal(e.accB)
	va, err := e.svc.CreateVehicle(ctx, pa, fleet.Vehicle{Name: "A1"})
	is.NoErr(err)
	vb, err := e.svc.CreateVehicle(ctx, pb, fleet.Vehicle{Name: "B1"})
	is.NoErr(err)

	c := e.signedIn(t, "admin@acme.test", adminPassword)
	page := do(t, c, "GET", e.srv.URL+"/map", nil)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(page.body, `id="veh-`+va.ID+`"`))
	is.True(!strings.Contains(page.body, vb.ID)) // only the account's vehicles

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", e.srv.URL+"/map/events", nil)
	res, err := c.Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "text/event-stream")
	rd := bufio.NewReader(res.Body)
	line, err := rd.ReadString('\n')
	is.NoErr(err)
	is.Equal(line, "retry: 3000\n") // the stream is open: what is posted now reaches it

	now := time.Now().UTC()
	_, err = e.svc.IngestLocations(ctx, pb, vb.ID, []fleet.Point{{Latitude: 1, Longitude: 1, Timestamp: now}})
	is.NoErr(err)
	attrs := fleet.Attributes{fleet.BoolAttr(fleet.AttrIgnition, true), fleet.NumberAttr(fleet.AttrPowerV, 12.6)}.Sort()
	_, err = e.svc.IngestLocations(ctx, pa, va.ID, []fleet.Point{{Latitude: 48.1, Longitude: 11.5, Timestamp: now, Attributes: attrs}})
	is.NoErr(err)
	var data string
	for data == "" {
		line, err := rd.ReadString('\n')
		is.NoErr(err)
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
	is.True(strings.Contains(data, `"vehicle_id":"`+va.ID+`"`)) // the account's report, the other's never
	is.True(strings.Contains(data, `"latitude":48.1`))
	is.True(strings.Contains(data, `"attributes":["Ignition on","Power 12.6 V"]`)) // in words, for the marker's popup
	page = do(t, c, "GET", e.srv.URL+"/map", nil)
	is.True(strings.Contains(page.body, `"attributes":["Ignition on","Power 12.6 V"]`)) // and on the page's first list
}

func TestChangePasswordRenewsTheSession(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	other := e.signedIn(t, "admin@acme.test", adminPassword)
	u, _ := url.Parse(e.srv.URL)
	before := c.Jar.Cookies(u)[0].Value

	r := do(t, c, "POST", e.srv.URL+"/settings/password", url.Values{"current_password": {"wrong-current-password"}, "new_password": {"brand-new-passphrase"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "current_password"))
	r = do(t, c, "POST", e.srv.URL+"/settings/password", url.Values{"current_password": {adminPassword}, "new_password": {"brand-new-passphrase"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.True(c.Jar.Cookies(u)[0].Value != before)                                     // a new session for this browser
	is.Equal(do(t, c, "GET", e.srv.URL+"/", nil).status, http.StatusOK)              // which works
	is.Equal(do(t, other, "GET", e.srv.URL+"/", nil).status, http.StatusSeeOther)    // the other browser is signed out
	is.Equal(e.signIn(t, e.client(t), "admin@acme.test", adminPassword).status, 401) // the old password is gone
}

func TestSignUpWhenEnabled(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{Signup: true})
	c := e.client(t)
	is.Equal(do(t, c, "GET", e.srv.URL+"/sign-up", nil).status, http.StatusOK)
	r := do(t, c, "POST", e.srv.URL+"/sign-up", url.Values{"company": {"Newco"}, "email": {"admin@acme.test"}, "password": {"newco-first-passphrase"}})
	is.Equal(r.status, http.StatusConflict) // the address has a user
	r = do(t, c, "POST", e.srv.URL+"/sign-up", url.Values{"company": {"Newco"}, "email": {"me@newco.test"}, "password": {"password1234"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "too common"))
	r = do(t, c, "POST", e.srv.URL+"/sign-up", url.Values{"company": {"Newco"}, "email": {"me@newco.test"}, "password": {"newco-first-passphrase"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, c, "GET", e.srv.URL+"/settings/api-keys?welcome=1", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Keys of Newco"))
	is.True(strings.Contains(r.body, `id="generate"`)) // its first admin makes its first key here
	r = do(t, c, "GET", e.srv.URL+"/", nil)
	is.True(strings.Contains(r.body, "free"))
}

func TestOverviewShowsThisHoursUsage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p, err := e.svc.Authenticate(ctx, e.keyA.Secret)
	is.NoErr(err)
	for range 3 {
		_, err := e.svc.Edge().Admit(ctx, p)
		is.NoErr(err)
	}
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, c, "GET", e.srv.URL+"/", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "3 / 1,000")) // this hour's requests of the key against the free plan's allowance
	r = do(t, c, "GET", e.srv.URL+"/settings/api-keys/"+e.keyA.Key.ID, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `<dd id="this-hour">3 of 1,000 requests</dd>`))
	is.True(strings.Contains(r.body, "<svg"))
	// The table of the last 7 days has 7 rows, as its chart has 7 days,
	// whatever the hour (168 hours span 8 calendar dates).
	table := r.body[strings.Index(r.body, `<table id="days">`):]
	table = table[:strings.Index(table, "</table>")]
	is.Equal(strings.Count(table, `<th scope="row">`), 7)
	is.True(strings.Contains(table, "<td>3</td>"))
}

func TestAlertsAcknowledgeAndResolve(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	al, err := e.svc.CreateAlert(ctx, fleet.SystemPrincipal(e.accA), fleet.Alert{Type: fleet.AlertCustom, Severity: fleet.SeverityWarning, Message: "Door open at depot"})
	is.NoErr(err)
	status := func() fleet.AlertStatus {
		a, err := e.svc.Alert(ctx, fleet.SystemPrincipal(e.accA), al.ID)
		is.NoErr(err)
		return a.Status
	}

	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, viewer, "GET", e.srv.URL+"/alerts", nil)
	is.True(strings.Contains(r.body, "Door open at depot"))
	is.True(!strings.Contains(r.body, "/acknowledge")) // no buttons for a viewer
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/alerts/"+al.ID+"/acknowledge", url.Values{}).status, http.StatusForbidden)
	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "POST", e.srv.URL+"/alerts/"+al.ID+"/resolve", url.Values{}).status, http.StatusNotFound)
	is.True(!strings.Contains(do(t, other, "GET", e.srv.URL+"/alerts?status=all", nil).body, "Door open"))
	is.Equal(status(), fleet.AlertOpen)

	admin := e.signedIn(t, "admin@acme.test", adminPassword)
	r = do(t, admin, "POST", e.srv.URL+"/alerts/"+al.ID+"/acknowledge", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(status(), fleet.AlertAcknowledged)
	r = do(t, admin, "POST", e.srv.URL+"/alerts/"+al.ID+"/acknowledge", url.Values{})
	is.Equal(r.status, http.StatusConflict) // the state machine's refusal
	r = do(t, admin, "POST", e.srv.URL+"/alerts/"+al.ID+"/resolve", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(status(), fleet.AlertResolved)
	r = do(t, admin, "GET", e.srv.URL+"/alerts", nil)
	is.True(strings.Contains(r.body, "No open alerts"))
}

func TestWebhookDeliveriesLog(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, c, "GET", e.srv.URL+"/webhooks", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "The free plan does not include webhooks."))

	pro, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Prolog", Plan: fleet.PlanPro})
	is.NoErr(err)
	_, _, err = e.svc.Operator().CreateUser(ctx, pro.ID, fleet.UserParams{Email: "viewer@prolog.test"}, viewerPassword)
	is.NoErr(err)
	p := fleet.SystemPrincipal(pro)
	wh, err := e.svc.CreateWebhook(ctx, p, fleet.Webhook{URL: "https://93.184.215.14/fleet", Events: []string{"*"}, Enabled: true, Description: "Ops <b>room</b>"})
	is.NoErr(err)
	_, err = e.svc.TestWebhook(ctx, p, wh.ID)
	is.NoErr(err)
	c = e.signedIn(t, "viewer@prolog.test", viewerPassword)
	r = do(t, c, "GET", e.srv.URL+"/webhooks", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "https://93.184.215.14/fleet"))
	is.True(strings.Contains(r.body, "Ops &lt;b&gt;room&lt;/b&gt;")) // text, escaped
	is.True(strings.Contains(r.body, `<span class="badge dl-pending">pending</span>`))
}
