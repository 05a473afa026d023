package fleetweb_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

var whsecRE = regexp.MustCompile(`whsec_`)

// shownSecret returns the signing secret a page shows, "" when none.
func shownSecret(body string) string {
	m := regexp.MustCompile(`<input id="new-secret" class="mono" readonly value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// receiver is a webhook endpoint on loopback that answers every delivery
// with status, and keeps the last one it got.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	last *http.Request
	body []byte
}

func newReceiver(t *testing.T, status int) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.last, rc.body = r, b
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// signedWith reports whether the last delivery was signed with secret.
func (rc *receiver) signedWith(secret string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.last == nil {
		return false
	}
	h := rc.last.Header
	return fleet.VerifyWebhook(secret, h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), rc.body, time.Now()) == nil
}

// proAccount adds a pro account (which has webhooks) with an admin and a
// viewer, admin@NAME.test and viewer@NAME.test, signed in.
func (e *env) proAccount(t *testing.T, name string) (fleet.Account, *http.Client, *http.Client) {
	t.Helper()
	ctx := context.Background()
	pro, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: name, Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range fleet.Roles() {
		email := string(role) + "@" + name + ".test"
		if _, _, err := e.svc.Operator().CreateUser(ctx, pro.ID, fleet.UserParams{Email: email, Role: role}, adminPassword); err != nil {
			t.Fatal(err)
		}
	}
	return pro, e.signedIn(t, "admin@"+name+".test", adminPassword), e.signedIn(t, "viewer@"+name+".test", adminPassword)
}

func (e *env) webhooks(t *testing.T, acc fleet.Account) []fleet.Webhook {
	t.Helper()
	l, err := e.svc.ListWebhooks(context.Background(), fleet.SystemPrincipal(acc), fleet.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// An admin adds an endpoint (its secret shown once), sends it a test
// event, sees the delivery fail and when it is retried, or fail for good,
// with the event's type, disables and enables it, rotates its secret
// (shown once) and deletes it after a confirmation.
func TestAdminManagesWebhookEndpoints(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnvWith(t, fleet.Options{Webhooks: fleet.WebhookOptions{Insecure: true}}, fleetweb.Options{})
	pro, admin, _ := e.proAccount(t, "prolog")
	broken, gone := newReceiver(t, http.StatusInternalServerError), newReceiver(t, http.StatusGone)
	sender := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true})

	r := do(t, admin, "GET", e.srv.URL+"/webhooks", nil)
	is.True(strings.Contains(r.body, "No webhook endpoints yet."))
	is.True(strings.Contains(r.body, `<label for="url">Endpoint URL</label>`))

	// Bad input: said, nothing made, the form kept.
	r = do(t, admin, "POST", e.srv.URL+"/webhooks", url.Values{"url": {"ftp://example.com/x"}, "events": {"alert.created"}, "description": {"Ops"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "Endpoint URL must use https."))
	is.True(strings.Contains(r.body, `value="Ops"`))
	r = do(t, admin, "POST", e.srv.URL+"/webhooks", url.Values{"url": {broken.URL}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "Events must name at least one event type"))
	is.Equal(len(e.webhooks(t, pro)), 0)

	// Added: the secret once, after the redirect.
	r = do(t, admin, "POST", e.srv.URL+"/webhooks", url.Values{"url": {broken.URL}, "events": {"alert.created", "trip.completed"}, "description": {"Ops room"}})
	is.Equal(r.status, http.StatusSeeOther)
	shown := r.header.Get("Location")
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	secret := shownSecret(r.body)
	is.True(strings.HasPrefix(secret, "whsec_") && len(secret) == 50)
	is.True(strings.Contains(r.body, "Copy this secret now."))
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	is.True(whsecRE.FindString(r.body) == "")
	is.True(strings.Contains(r.body, "was shown once"))
	hooks := e.webhooks(t, pro)
	is.Equal(len(hooks), 1)
	wh := hooks[0]
	is.Equal(wh.Events, []string{"alert.created", "trip.completed"})
	is.True(strings.Contains(r.body, `<code class="nowrap">alert.created</code>, <code class="nowrap">trip.completed</code>`))

	// A test event, sent to a receiver that answers 500: failed, retried
	// later, and the next attempt waits.
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/test", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "A test event is on its way to "+broken.URL))
	is.True(regexp.MustCompile(`<td data-label="Event" class="title"><code class="nowrap" title="evt_[0-9a-z]+">webhook.test</code>`).MatchString(r.body)) // the event's type, its id only in the title

	_, err := sender.RunOnce(ctx)
	is.NoErr(err)
	is.True(broken.signedWith(secret)) // the secret shown is the one that signs
	r = do(t, admin, "GET", e.srv.URL+"/webhooks", nil)
	is.True(strings.Contains(r.body, `<span class="badge dl-retrying">retrying</span>`))
	is.True(strings.Contains(r.body, "The endpoint answered 500."))
	is.True(strings.Contains(r.body, "retried at "))
	is.True(strings.Contains(r.body, `<span class="badge dl-pending">pending</span>`)) // attempt 2, due
	is.True(strings.Contains(r.body, "2 of 10"))

	// Another, answering 410: failed for good.
	other, err := e.svc.CreateWebhook(ctx, fleet.SystemPrincipal(pro), fleet.Webhook{URL: gone.URL, Events: []string{"*"}, Enabled: true})
	is.NoErr(err)
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+other.ID+"/test", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	_, err = sender.RunOnce(ctx)
	is.NoErr(err)
	r = do(t, admin, "GET", e.srv.URL+"/webhooks", nil)
	is.True(strings.Contains(r.body, `<span class="badge dl-failed">failed</span>`))
	is.True(strings.Contains(r.body, "none: it gave up"))
	is.True(strings.Contains(r.body, "The endpoint answered 410."))

	// Disable, and a test is refused; enable again.
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/disable", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, broken.URL+" is disabled"))
	is.True(strings.Contains(r.body, `action="/webhooks/`+wh.ID+`/enable"`))
	is.True(!strings.Contains(r.body, `action="/webhooks/`+wh.ID+`/test"`))
	got, err := e.svc.Webhook(ctx, fleet.SystemPrincipal(pro), wh.ID)
	is.NoErr(err)
	is.True(!got.Enabled)
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/test", url.Values{})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.body, "is disabled; enable it first"))
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/enable", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	got, _ = e.svc.Webhook(ctx, fleet.SystemPrincipal(pro), wh.ID)
	is.True(got.Enabled)

	// Rotate: a new secret, once.
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/rotate-secret", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	shown = r.header.Get("Location")
	r = do(t, admin, "GET", e.srv.URL+shown, nil)
	rotated := shownSecret(r.body)
	is.True(strings.HasPrefix(rotated, "whsec_") && rotated != secret)
	is.True(strings.Contains(r.body, "The old secret keeps signing too for 24 hours"))
	is.True(whsecRE.FindString(do(t, admin, "GET", e.srv.URL+shown, nil).body) == "")
	is.Equal(do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/test", url.Values{}).status, http.StatusSeeOther)
	_, err = sender.RunOnce(ctx)
	is.NoErr(err)
	is.True(broken.signedWith(rotated)) // the new secret signs
	is.True(broken.signedWith(secret))  // and the old one too, for a while

	// Delete, after a confirmation.
	r = do(t, admin, "GET", e.srv.URL+"/webhooks/"+wh.ID+"/delete", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Delete the endpoint</button>"))
	is.Equal(len(e.webhooks(t, pro)), 2)
	r = do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/delete", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, admin, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, broken.URL+" is deleted, with its deliveries log."))
	is.Equal(len(e.webhooks(t, pro)), 1)
	is.Equal(do(t, admin, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/delete", url.Values{}).status, http.StatusNotFound)
}

// A viewer sees the endpoints and their deliveries and is offered nothing
// to change; every change forged from the viewer's browser is refused, and
// another account's admin finds no endpoint of this one.
func TestWebhookEndpointsChangedByTheirAdminsOnly(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	e := newEnv(t, fleetweb.Options{})
	pro, _, viewer := e.proAccount(t, "prolog")
	wh, err := e.svc.CreateWebhook(ctx, fleet.SystemPrincipal(pro), fleet.Webhook{URL: "https://93.184.215.14/fleet", Events: []string{"*"}, Enabled: true})
	is.NoErr(err)
	r := do(t, viewer, "GET", e.srv.URL+"/webhooks", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "https://93.184.215.14/fleet"))
	for _, offered := range []string{`method="post" action="/webhooks`, "Add endpoint", "Send a test event", "Rotate secret", "Delete…", ">Disable<"} {
		if strings.Contains(r.body, offered) {
			t.Errorf("a viewer is offered %s", offered)
		}
	}
	is.Equal(do(t, viewer, "GET", e.srv.URL+"/webhooks/"+wh.ID+"/delete", nil).status, http.StatusForbidden)
	for _, path := range []string{"/webhooks", "/webhooks/" + wh.ID + "/test", "/webhooks/" + wh.ID + "/disable",
		"/webhooks/" + wh.ID + "/enable", "/webhooks/" + wh.ID + "/rotate-secret", "/webhooks/" + wh.ID + "/delete"} {
		r := do(t, viewer, "POST", e.srv.URL+path, url.Values{"url": {"https://93.184.215.15/x"}, "events": {"*"}})
		if r.status != http.StatusForbidden {
			t.Errorf("POST %s by a viewer: %d", path, r.status)
		}
		is.True(whsecRE.FindString(r.body) == "")
	}
	hooks := e.webhooks(t, pro)
	is.Equal(len(hooks), 1)
	is.True(hooks[0].Enabled)
	l, err := e.svc.ListDeliveries(ctx, fleet.SystemPrincipal(pro), wh.ID, fleet.DeliveryFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 0) // no test was sent

	other := e.signedIn(t, "admin@bravo.test", otherPassword) // a free account: no webhooks at all
	is.Equal(do(t, other, "POST", e.srv.URL+"/webhooks/"+wh.ID+"/delete", url.Values{}).status, http.StatusForbidden)
	_, admin2, _ := e.proAccount(t, "third")
	for _, path := range []string{"/test", "/disable", "/rotate-secret", "/delete"} {
		is.Equal(do(t, admin2, "POST", e.srv.URL+"/webhooks/"+wh.ID+path, url.Values{}).status, http.StatusNotFound)
	}
	is.Equal(do(t, admin2, "GET", e.srv.URL+"/webhooks/"+wh.ID+"/delete", nil).status, http.StatusNotFound)
	is.True(!strings.Contains(do(t, admin2, "GET", e.srv.URL+"/webhooks", nil).body, "93.184.215.14"))
	is.Equal(len(e.webhooks(t, pro)), 1)
}
