package fleetweb_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testlog"
	"github.com/fleetkit/fleetapi/internal/testpass"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

const (
	adminPassword  = "correct-badger-staple-9"
	viewerPassword = "quiet-viewer-watches-7"
	otherPassword  = "another-account-admin-3"
)

// syncBuffer is a log sink the tests read after the fact.
type syncBuffer = testlog.Buffer

type env struct {
	svc       *fleet.Service
	store     *memstore.Store
	srv       *httptest.Server
	accA      fleet.Account
	accB      fleet.Account
	keyA      fleet.NewKey
	logs      *syncBuffer
	opts      fleetweb.Options
	webServer http.Handler
}

// newEnv serves the dashboard over TLS (so that Secure cookies travel) on a
// memstore with two accounts: A with an admin and a viewer, B with an admin.
func newEnv(t *testing.T, opts fleetweb.Options) *env {
	t.Helper()
	return newEnvWith(t, fleet.Options{}, opts)
}

// newEnvWith is newEnv with the service's options (its Logger is set).
func newEnvWith(t *testing.T, svcOpts fleet.Options, opts fleetweb.Options) *env {
	t.Helper()
	ctx := context.Background()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := memstore.New()
	svcOpts.Logger = log
	if svcOpts.Passwords == nil {
		svcOpts.Passwords = testpass.Cheap() // people sign in in every test
	}
	svc := fleet.NewService(st, svcOpts)
	op := svc.Operator()
	a, ka, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bravo"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		acc, email, pw string
		role           fleet.Role
	}{{a.ID, "admin@acme.test", adminPassword, fleet.RoleAdmin}, {a.ID, "viewer@acme.test", viewerPassword, fleet.RoleViewer},
		{b.ID, "admin@bravo.test", otherPassword, fleet.RoleAdmin}} {
		if _, _, err := op.CreateUser(ctx, u.acc, fleet.UserParams{Email: u.email, Role: u.role}, u.pw); err != nil {
			t.Fatal(err)
		}
	}
	opts.Logger = log
	web := fleetweb.New(svc, opts)
	srv := httptest.NewTLSServer(web)
	t.Cleanup(srv.Close)
	return &env{svc: svc, store: st, srv: srv, accA: a, accB: b, keyA: ka, logs: logs, opts: opts, webServer: web}
}

// client returns a browser-like client with its own cookie jar that does
// not follow redirects.
func (e *env) client(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: e.srv.Client().Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, method, url string, form url.Values, headers ...string) resp {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, string(b)}
}

func (e *env) signIn(t *testing.T, c *http.Client, email, password string) resp {
	t.Helper()
	return do(t, c, "POST", e.srv.URL+"/sign-in", url.Values{"email": {email}, "password": {password}, "next": {"/"}})
}

func (e *env) signedIn(t *testing.T, email, password string) *http.Client {
	t.Helper()
	c := e.client(t)
	if r := e.signIn(t, c, email, password); r.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d %s", email, r.status, r.body)
	}
	return c
}

func (e *env) keys(t *testing.T, acc fleet.Account) []fleet.Key {
	t.Helper()
	l, err := e.svc.Operator().Keys(context.Background(), acc.ID, fleet.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

var secretRE = regexp.MustCompile(`fleet_[0-9A-Za-z]{38}`)

func TestSessionCookieFlags(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	r := e.signIn(t, e.client(t), "admin@acme.test", adminPassword)
	is.Equal(r.status, http.StatusSeeOther)
	set := r.header.Get("Set-Cookie")
	is.True(strings.HasPrefix(set, "__Host-fleet_session="))
	for _, flag := range []string{"Path=/", "Secure", "HttpOnly", "SameSite=Lax"} {
		is.True(strings.Contains(set, flag)) // each flag is set
	}
	is.True(!strings.Contains(set, "Domain=")) // __Host- forbids a domain

	e2 := newEnv(t, fleetweb.Options{InsecureCookies: true})
	r = e2.signIn(t, e2.client(t), "admin@acme.test", adminPassword)
	set = r.header.Get("Set-Cookie")
	is.True(strings.HasPrefix(set, "fleet_session="))
	is.True(!strings.Contains(set, "Secure"))
	is.True(strings.Contains(set, "HttpOnly"))
}

func TestSessionFixationImpossible(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	u, _ := url.Parse(e.srv.URL)

	// An id planted in the browser before sign-in is replaced, and means
	// nothing afterwards.
	c := e.client(t)
	planted := strings.Repeat("A", 43)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "__Host-fleet_session", Value: planted, Path: "/", Secure: true}})
	is.Equal(e.signIn(t, c, "admin@acme.test", adminPassword).status, http.StatusSeeOther)
	var got string
	for _, ck := range c.Jar.Cookies(u) {
		got = ck.Value
	}
	is.True(got != planted && got != "")
	_, err := e.svc.Session(context.Background(), planted)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)

	// A session the browser had before signing in again ends: the new
	// sign-in gets a new id.
	before := got
	is.Equal(e.signIn(t, c, "admin@acme.test", adminPassword).status, http.StatusSeeOther)
	for _, ck := range c.Jar.Cookies(u) {
		got = ck.Value
	}
	is.True(got != before)
	_, err = e.svc.Session(context.Background(), before)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
}

func TestCrossSiteRequestsRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	form := url.Values{"name": {"forged"}, "environment": {"production"}, "permissions": {"*"}}
	n := len(e.keys(t, e.accA))

	r := do(t, c, "POST", e.srv.URL+"/settings/api-keys", form, "Sec-Fetch-Site", "cross-site")
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", form, "Origin", "https://evil.example")
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys/"+e.keyA.Key.ID+"/revoke", url.Values{}, "Sec-Fetch-Site", "cross-site")
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/sign-out", url.Values{}, "Sec-Fetch-Site", "cross-site")
	is.Equal(r.status, http.StatusForbidden)
	is.Equal(len(e.keys(t, e.accA)), n) // nothing created
	is.True(e.keys(t, e.accA)[0].RevokedAt == nil)

	// The same form from the dashboard's own pages goes through.
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", form, "Sec-Fetch-Site", "same-origin", "Origin", e.srv.URL)
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(len(e.keys(t, e.accA)), n+1)
}

func TestSignInThrottledSameMessage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.client(t)
	wrong := e.signIn(t, c, "admin@acme.test", "not the password at all")
	unknown := e.signIn(t, c, "nobody@acme.test", adminPassword)
	is.Equal(wrong.status, http.StatusUnauthorized)
	is.Equal(unknown.status, http.StatusUnauthorized)
	msg := regexp.MustCompile(`(?s)<div class="error" role="alert">.*?</div>`)
	is.Equal(msg.FindString(wrong.body), msg.FindString(unknown.body)) // the same message
	is.True(msg.FindString(wrong.body) != "")
	for range fleet.LoginFailures - 1 {
		e.signIn(t, c, "admin@acme.test", "still not the password")
	}
	r := e.signIn(t, c, "admin@acme.test", adminPassword)
	is.Equal(r.status, http.StatusTooManyRequests) // even the right password, from this address, for now
	is.True(strings.Contains(r.body, "Too many failed sign-ins"))
	after, err := strconv.Atoi(r.header.Get("Retry-After"))
	is.NoErr(err)
	is.True(after > int(fleet.LoginWindow.Seconds())-60 && after <= int(fleet.LoginWindow.Seconds())) // seconds until the window has room
	is.True(r.header.Get("Set-Cookie") == "")
}

// Ten and more wrong passwords for a person from one address do not keep
// her out: her right password from another address signs her in, again
// and again (the per-e-mail brake only slows her attempt), while the
// guesser's address stays refused for her e-mail address.
func TestSignInNotLockedOutByAnotherAddress(t *testing.T) {
	is := is.New(t)
	var slept []time.Duration
	var mu sync.Mutex
	e := newEnvWith(t, fleet.Options{Sleep: func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return nil
	}}, fleetweb.Options{ClientAddr: func(r *http.Request) string { return r.Header.Get("X-Test-Client") }})
	signIn := func(password, addr string) resp {
		return do(t, e.client(t), "POST", e.srv.URL+"/sign-in",
			url.Values{"email": {"admin@acme.test"}, "password": {password}, "next": {"/"}}, "X-Test-Client", addr)
	}
	for round := range 2 {
		guesser := "198.51.100." + strconv.Itoa(round)
		for range fleet.LoginFailures + 2 {
			r := signIn("not the password at all", guesser)
			is.True(r.status == http.StatusUnauthorized || r.status == http.StatusTooManyRequests)
		}
		r := signIn(adminPassword, guesser)
		is.Equal(r.status, http.StatusTooManyRequests) // the guesser's address, for this person
		is.True(r.header.Get("Retry-After") != "")
		r = signIn(adminPassword, "192.0.2.10")
		is.Equal(r.status, http.StatusSeeOther) // signed in from her own address
		is.True(strings.Contains(r.header.Get("Set-Cookie"), "fleet_session="))
		mu.Lock()
		is.True(len(slept) == round+1 && slept[round] <= fleet.MaxLoginDelay) // slowed, not refused
		mu.Unlock()
	}
}

// A sign-in form larger than fleetweb.MaxFormBytes is refused with 413
// before it is read whole, and counts no attempt.
func TestSignInFormTooLarge(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.client(t)
	for range fleet.LoginFailures + 1 {
		r := do(t, c, "POST", e.srv.URL+"/sign-in", url.Values{"email": {"admin@acme.test"},
			"password": {strings.Repeat("x", fleetweb.MaxFormBytes)}})
		is.Equal(r.status, http.StatusRequestEntityTooLarge)
	}
	r := e.signIn(t, c, "admin@acme.test", adminPassword)
	is.Equal(r.status, http.StatusSeeOther) // none of them counted
}

func TestPasswordsNeverLogged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{Signup: true})
	c := e.client(t)
	e.signIn(t, c, "admin@acme.test", "a-wrong-password-guess")
	c = e.signedIn(t, "admin@acme.test", adminPassword)
	const next = "a-fresh-password-for-ada"
	r := do(t, c, "POST", e.srv.URL+"/settings/password", url.Values{"current_password": {adminPassword}, "new_password": {next}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, e.client(t), "POST", e.srv.URL+"/sign-up", url.Values{"company": {"Newco"}, "email": {"new@newco.test"}, "password": {"signup-password-newco"}})
	is.Equal(r.status, http.StatusSeeOther)
	// A store that fails makes the handlers log their errors.
	e.store.Close()
	r = e.signIn(t, e.client(t), "admin@acme.test", next)
	is.True(r.status >= 500)
	logs := e.logs.String()
	is.True(strings.Contains(logs, "dashboard")) // the failure was logged...
	for _, pw := range []string{adminPassword, next, "a-wrong-password-guess", "signup-password-newco"} {
		is.True(!strings.Contains(logs, pw)) // ...and no password ever was
	}
}

func TestViewerForgedPostsRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, c, "GET", e.srv.URL+"/settings/api-keys", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, e.keyA.Key.Prefix)) // a viewer sees the keys
	is.True(!strings.Contains(r.body, `id="generate"`))  // and gets no form to make one

	n := len(e.keys(t, e.accA))
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {"forged"}, "environment": {"production"}, "permissions": {"*"}})
	is.Equal(r.status, http.StatusForbidden)
	is.True(strings.Contains(r.body, "Your role is viewer"))
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys/"+e.keyA.Key.ID+"/rotate", url.Values{"grace_seconds": {"0"}})
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys/"+e.keyA.Key.ID+"/revoke", url.Values{})
	is.Equal(r.status, http.StatusForbidden)
	r = do(t, c, "POST", e.srv.URL+"/users", url.Values{"email": {"eve@acme.test"}, "role": {"admin"}})
	is.Equal(r.status, http.StatusForbidden)
	keys := e.keys(t, e.accA)
	is.Equal(len(keys), n)
	is.True(keys[0].RevokedAt == nil && keys[0].ExpiresAt == nil)
	_, err := e.svc.Operator().UserByEmail(context.Background(), "eve@acme.test")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestAccountsIsolated(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@bravo.test", otherPassword)
	base := e.srv.URL + "/settings/api-keys/" + e.keyA.Key.ID
	r := do(t, c, "GET", e.srv.URL+"/settings/api-keys", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(!strings.Contains(r.body, e.keyA.Key.Prefix))
	is.Equal(do(t, c, "GET", base, nil).status, http.StatusNotFound)
	is.Equal(do(t, c, "GET", base+"/revoke", nil).status, http.StatusNotFound)
	is.Equal(do(t, c, "POST", base+"/revoke", url.Values{}).status, http.StatusNotFound)
	is.Equal(do(t, c, "POST", base+"/rotate", url.Values{"grace_seconds": {"0"}}).status, http.StatusNotFound)
	is.True(e.keys(t, e.accA)[0].RevokedAt == nil)
	r = do(t, c, "GET", e.srv.URL+"/users", nil)
	is.True(!strings.Contains(r.body, "acme.test"))
	r = do(t, c, "GET", e.srv.URL+"/", nil)
	is.True(strings.Contains(r.body, "Bravo") && !strings.Contains(r.body, e.accA.ID))
}

func TestSignedOutIsSentToSignIn(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.client(t)
	r := do(t, c, "GET", e.srv.URL+"/settings/api-keys", nil)
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(r.header.Get("Location"), "/sign-in?next=%2Fsettings%2Fapi-keys")
	is.Equal(do(t, c, "GET", e.srv.URL+"/map/events", nil).status, http.StatusUnauthorized)
	is.Equal(do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {"x"}}).status, http.StatusSeeOther)
	is.Equal(do(t, c, "GET", e.srv.URL+"/sign-up", nil).status, http.StatusNotFound) // sign-up is off by default
	// An open redirect through next is refused.
	r = do(t, c, "POST", e.srv.URL+"/sign-in", url.Values{"email": {"admin@acme.test"}, "password": {adminPassword}, "next": {"//evil.example/"}})
	is.Equal(r.header.Get("Location"), "/")
}

func TestGeneratedSecretShownOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	r := do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {"Backend"}, "environment": {"development"},
		"permissions": {"vehicles:read", "keys:read"}, "expires": {"2099-01-01"}})
	is.Equal(r.status, http.StatusSeeOther) // post, redirect...
	is.True(secretRE.FindString(r.body) == "")
	shown := r.header.Get("Location")
	r = do(t, c, "GET", e.srv.URL+shown, nil) // ...get: the secret, once
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("Cache-Control"), "no-store")
	secret := secretRE.FindString(r.body)
	is.True(secret != "")
	p, err := e.svc.Authenticate(context.Background(), secret)
	is.NoErr(err)
	is.Equal(p.Key.Environment, "development")
	is.Equal([]string(p.Key.Permissions), []string{"keys:read", "vehicles:read"})
	is.True(p.Key.ExpiresAt != nil)
	r = do(t, c, "GET", e.srv.URL+"/settings/api-keys", nil)
	is.True(!strings.Contains(r.body, secret)) // never shown again
	is.True(strings.Contains(r.body, p.Key.Prefix))
	r = do(t, c, "GET", e.srv.URL+shown, nil) // not even on its own page, reloaded
	is.Equal(r.status, http.StatusOK)
	is.True(!strings.Contains(r.body, secret))
	is.True(strings.Contains(r.body, "shown once"))

	// Bad input: a clear error, nothing made.
	n := len(e.keys(t, e.accA))
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {""}, "environment": {"staging"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", url.Values{"name": {"x"}, "environment": {"production"}, "permissions": {"root"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, "unknown permission"))
	is.Equal(len(e.keys(t, e.accA)), n)
}

func TestAddUserLinkSignsInOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	r := do(t, c, "POST", e.srv.URL+"/users", url.Values{"email": {"new@acme.test"}, "name": {"Nia"}, "role": {"viewer"}})
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, c, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.Equal(r.status, http.StatusOK)
	link := regexp.MustCompile(`https://[^"]+/welcome\?token=[A-Za-z0-9_-]{43}`).FindString(r.body)
	is.True(link != "")
	token := strings.SplitN(link, "token=", 2)[1]
	nc := e.client(t)
	is.Equal(do(t, nc, "GET", e.srv.URL+"/welcome?token="+token, nil).status, http.StatusOK)
	r = do(t, nc, "POST", e.srv.URL+"/welcome", url.Values{"token": {token}, "password": {"short"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	r = do(t, nc, "POST", e.srv.URL+"/welcome", url.Values{"token": {token}, "password": {"nias-own-passphrase"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.Equal(do(t, nc, "GET", e.srv.URL+"/", nil).status, http.StatusOK)
	r = do(t, e.client(t), "POST", e.srv.URL+"/welcome", url.Values{"token": {token}, "password": {"another-passphrase-x"}})
	is.Equal(r.status, http.StatusUnauthorized) // used once
}

// After signing in, next leads to a path of this site and nowhere else:
// every spelling that a browser would read as another host (a tab or a
// newline it drops, a backslash it reads as a slash, two slashes, a
// scheme), in the query string or its encoded forms, leads to /.
func TestSignInNextStaysOnThisSite(t *testing.T) {
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	for _, tc := range []struct{ raw, want string }{
		{"%2Fsettings%2Fapi-keys", "/settings/api-keys"},
		{"/map%3Fvehicle_id%3Dveh_1", "/map?vehicle_id=veh_1"},
		{"/users", "/users"},
		{"", "/"},
		{"/%09/other.example", "/"},
		{"/%09%09other.example", "/"},
		{"%09//other.example", "/"},
		{"/%0A/other.example", "/"},
		{"/%0D/other.example", "/"},
		{"/%20/other.example", "/"},
		{"/%00/other.example", "/"},
		{"/%7F/other.example", "/"},
		{"//other.example", "/"},
		{"%2F%2Fother.example", "/"},
		{"%2f%2fother.example", "/"},
		{"/%2f%2fother.example", "/"},
		{"%2F%252F%252Fother.example", "/"},
		{"/%2509/other.example", "/"},
		{"/%5Cother.example", "/"},
		{"%5C%5Cother.example", "/"},
		{"/%5C/other.example", "/"},
		{"/%255C/other.example", "/"},
		{"https://other.example/", "/"},
		{"https:other.example", "/"},
		{"https:%2F%2Fother.example", "/"},
		{"javascript:alert(1)", "/"},
		{"other.example", "/"},
		{"/%", "/"},
	} {
		// The transport, not the client: a client refuses to read some of
		// the Locations this test looks for.
		req, err := http.NewRequest("GET", e.srv.URL+"/sign-in?next="+tc.raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ck := range c.Jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
		res, err := c.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != tc.want {
			t.Errorf("next=%s: %d to %q, want %q", tc.raw, res.StatusCode, res.Header.Get("Location"), tc.want)
		}
	}
	// The form's next, as the sign-in page posts it, is held to the same rule.
	form := url.Values{"email": {"admin@acme.test"}, "password": {adminPassword}, "next": {"/\t/other.example"}}
	req, err := http.NewRequest("POST", e.srv.URL+"/sign-in", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Location") != "/" {
		t.Errorf("posted next with a tab: to %q, want /", res.Header.Get("Location"))
	}
}

// With Options.PublicURL set, the addresses the dashboard shows (a new
// person's sign-in link, the keys page's "Try it" line) are on it, whatever
// Host and X-Forwarded-Proto a request carries: a forged Host cannot make
// an admin hand out a sign-in link to another site.
func TestPublicURLWinsOverTheRequestsHost(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{PublicURL: "https://fleet.example.com/"})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	forged := func(method, path string, form url.Values) resp {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, e.srv.URL+path, body)
		is.NoErr(err)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for _, ck := range c.Jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
		req.Host = "other.example" // the client would pick cookies by it
		req.Header.Set("X-Forwarded-Proto", "http")
		res, err := c.Transport.RoundTrip(req)
		is.NoErr(err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{res.StatusCode, res.Header, string(b)}
	}
	r := forged("POST", "/users", url.Values{"email": {"new@acme.test"}, "role": {"viewer"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.True(strings.HasPrefix(r.header.Get("Location"), "/users?shown=")) // a path of the dashboard's, never of the Host
	r = forged("GET", r.header.Get("Location"), nil)
	is.True(regexp.MustCompile(`value="https://fleet.example.com/welcome\?token=[A-Za-z0-9_-]{43}"`).MatchString(r.body)) // the public URL's link
	is.True(!strings.Contains(r.body, "other.example"))
	newKey := url.Values{"name": {"Backend"}, "environment": {"development"}, "permissions": {"vehicles:read"}}
	r = forged("POST", "/settings/api-keys", newKey)
	is.Equal(r.status, http.StatusSeeOther)
	r = forged("GET", r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, "https://fleet.example.com/v1/account")) // the "Try it" line
	is.True(!strings.Contains(r.body, "other.example"))

	// Without it, the address is the request's, as before.
	e = newEnv(t, fleetweb.Options{})
	c = e.signedIn(t, "admin@acme.test", adminPassword)
	r = do(t, c, "POST", e.srv.URL+"/settings/api-keys", newKey)
	is.Equal(r.status, http.StatusSeeOther)
	r = do(t, c, "GET", e.srv.URL+r.header.Get("Location"), nil)
	is.True(strings.Contains(r.body, e.srv.URL+"/v1/account"))
}

func TestParsePublicURL(t *testing.T) {
	is := is.New(t)
	for in, want := range map[string]string{
		"https://fleet.example.com":        "https://fleet.example.com",
		"https://fleet.example.com/":       "https://fleet.example.com",
		"http://127.0.0.1:8080":            "http://127.0.0.1:8080",
		"https://example.com/fleet/":       "https://example.com/fleet",
		"HTTPS://Fleet.Example.com":        "https://Fleet.Example.com",
		"https://[2001:db8::1]:8443/admin": "https://[2001:db8::1]:8443/admin",
	} {
		got, err := fleetweb.ParsePublicURL(in)
		is.NoErr(err) // in
		is.Equal(got, want)
	}
	for _, bad := range []string{"", "fleet.example.com", "/dashboard", "ftp://fleet.example.com", "https://", "https:///x",
		"https://fleet.example.com/?a=b", "https://fleet.example.com/?", "https://fleet.example.com/#top", "https://ada@fleet.example.com",
		"https://fleet.example.com/a b", "https://fleet.example.com/\t", "javascript:alert(1)", "https:fleet.example.com"} {
		_, err := fleetweb.ParsePublicURL(bad)
		is.True(err != nil) // bad
	}
}
