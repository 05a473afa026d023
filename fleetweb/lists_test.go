package fleetweb_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// A secret waits for its page for its session only, is taken by the first
// view, and is gone after five minutes whether viewed or not.
func TestShownOnceIsTheSessionsAndExpires(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Now().UTC())
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	other := e.signedIn(t, "admin@acme.test", adminPassword) // the same person, another browser
	create := func(name string) string {
		t.Helper()
		r := do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {name}, "environment": {"production"}, "permissions": {"*"}})
		is.Equal(r.status, http.StatusSeeOther)
		return r.header.Get("Location")
	}
	shown := create("First")
	r := do(t, other, "GET", e.srv.URL+shown, nil)
	is.True(secretRE.FindString(r.body) == "") // not another session's
	r = do(t, c, "GET", e.srv.URL+shown, nil)
	is.True(secretRE.FindString(r.body) != "") // still there for its own

	shown = create("Second")
	clock.Advance(5 * time.Minute)
	r = do(t, c, "GET", e.srv.URL+shown, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(secretRE.FindString(r.body) == "") // gone after five minutes
	is.True(strings.Contains(r.body, "shown once"))
}

// /login and /signin lead to /sign-in, keeping a next of this site only.
func TestLoginLeadsToSignIn(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.client(t)
	for path, want := range map[string]string{
		"/login":                      "/sign-in",
		"/signin":                     "/sign-in",
		"/login?next=%2Falerts":       "/sign-in?next=%2Falerts",
		"/login?next=%2F%2Fevil.test": "/sign-in",
	} {
		r := do(t, c, "GET", e.srv.URL+path, nil)
		is.Equal(r.status, http.StatusMovedPermanently)
		is.Equal(r.header.Get("Location"), want)
	}
}

// A live map over the plan's streams is told why in its stream, in a
// person's words; a client that is not an EventSource gets the status.
func TestMapEventsOverTheLimitSayWhy(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	us, _, err := e.svc.SignIn(ctx, "admin@acme.test", adminPassword, "192.0.2.1")
	is.NoErr(err)
	for range 2 { // the free plan's live streams per key
		sub, err := e.svc.Subscribe(ctx, us.Principal(), nil, "")
		is.NoErr(err)
		defer sub.Close()
	}
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	const msg = "You have 2 live maps open, the most the free plan allows; close one first."
	r := do(t, c, "GET", e.srv.URL+"/map/events", nil, "Accept", "text/event-stream")
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "event: refused\n"))
	is.True(strings.Contains(r.body, msg))
	is.True(!strings.Contains(r.body, "API key"))
	r = do(t, c, "GET", e.srv.URL+"/map/events", nil)
	is.Equal(r.status, http.StatusTooManyRequests)
	is.True(strings.Contains(r.body, msg))
	r = do(t, e.client(t), "GET", e.srv.URL+"/map/events", nil, "Accept", "text/event-stream")
	is.True(strings.Contains(r.body, "event: refused\n")) // signed out: said too, not retried for ever
	is.True(strings.Contains(r.body, `"status":401`))
}

// /alerts lists the newest first, a page at a time, with a count; the way
// back from acknowledging keeps the tab and the page.
func TestAlertsNewestFirstPaged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	var ids []string
	for i := 1; i <= 60; i++ {
		a, err := e.svc.CreateAlert(ctx, fleet.SystemPrincipal(e.accA), fleet.Alert{Type: fleet.AlertCustom, Severity: fleet.SeverityInfo, Message: fmt.Sprintf("Door %d open.", i)})
		is.NoErr(err)
		ids = append(ids, a.ID)
	}
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	r := do(t, c, "GET", e.srv.URL+"/alerts", nil)
	is.True(strings.Contains(r.body, "60 open alerts"))
	is.True(strings.Index(r.body, "Door 60 open.") < strings.Index(r.body, "Door 11 open."))
	is.True(!strings.Contains(r.body, "Door 10 open."))
	is.True(strings.Contains(r.body, `href="/alerts?before=`+ids[10]+`&amp;status=open"`)) // Older
	is.True(!strings.Contains(r.body, ">Newer<"))
	r = do(t, c, "GET", e.srv.URL+"/alerts?status=open&before="+ids[10], nil)
	is.True(strings.Contains(r.body, "Door 1 open.") && strings.Contains(r.body, "Door 10 open."))
	is.True(!strings.Contains(r.body, "Door 11 open."))
	is.True(strings.Contains(r.body, ">Newer<"))
	is.True(!strings.Contains(r.body, ">Older<"))
	r = do(t, c, "POST", e.srv.URL+"/alerts/"+ids[3]+"/acknowledge", url.Values{"back": {"status=open&before=" + ids[10]}})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/alerts?before="+ids[10]+"&done=acknowledged&status=open")
	r = do(t, c, "POST", e.srv.URL+"/alerts/"+ids[4]+"/acknowledge", url.Values{"back": {"status=nonsense&before=javascript:x"}})
	is.Equal(r.header.Get("Location"), "/alerts?done=acknowledged&status=open") // only a tab and an alert id go back
	r = do(t, c, "GET", e.srv.URL+"/", nil)
	is.True(strings.Contains(r.body, "58 open alerts"))
	is.True(strings.Contains(r.body, "Door 60 open.") && !strings.Contains(r.body, "Door 40 open."))
}

// "Revoke both" revokes a rotation's two keys; the notice names them.
func TestRevokeBoth(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	old, err := e.svc.CreateKey(ctx, p, fleet.KeyParams{Name: "Billing", Permissions: []string{fleet.PermAll}})
	is.NoErr(err)
	rot, err := e.svc.RotateKey(ctx, p, old.Key.ID, time.Hour)
	is.NoErr(err)
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	r := do(t, c, "GET", e.srv.URL+"/settings/api-keys/"+rot.Key.ID+"/revoke", nil)
	is.True(strings.Contains(r.body, "Revoke both"))
	is.True(strings.Contains(r.body, old.Key.Prefix))
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r = do(t, viewer, "POST", e.srv.URL+"/settings/api-keys/"+rot.Key.ID+"/revoke", url.Values{"both": {"1"}})
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys/"+rot.Key.ID+"/revoke", url.Values{"both": {"1"}})
	is.Equal(r.status, http.StatusSeeOther)
	for _, s := range []string{old.Secret, rot.Secret} {
		_, err := e.svc.Authenticate(ctx, s)
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	r = do(t, c, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "Both keys named “Billing” ("+rot.Key.Prefix+"… and "+old.Key.Prefix+"…) are revoked"))
}
