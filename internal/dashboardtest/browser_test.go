package dashboardtest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testpass"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// hostileName is a vehicle name an API client could set to attack the
// dashboard's people: it must show as text.
const hostileName = `Van 4 <img src=x onerror="window.pwned=1">`

const (
	adminEmail     = "ada@acme.test"
	adminPassword  = "harbour-lights-at-dusk"
	viewerEmail    = "vic@acme.test"
	viewerPassword = "viewer-sees-all-things"
)

// browser returns the path of a Chromium, or skips the test saying why.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("FLEET_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if os.Getenv("FLEET_REQUIRE_BROWSER") != "" {
		t.Fatal("no Chromium found, and FLEET_REQUIRE_BROWSER is set: install Debian's chromium package or set FLEET_CHROMIUM")
	}
	t.Skip("no Chromium found (install Debian's chromium package, or set FLEET_CHROMIUM): the browser tests are skipped")
	return ""
}

// tile is a plain map tile the test server serves, so that the map has a
// background without reaching the network.
var tile = func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			c := color.RGBA{0xee, 0xf0, 0xe8, 0xff}
			if x%64 == 0 || y%64 == 0 {
				c = color.RGBA{0xd8, 0xdc, 0xd0, 0xff}
			}
			if x == 0 || y == 0 {
				c = color.RGBA{0xc4, 0xc9, 0xbc, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}()

type world struct {
	// now is the service's clock (middayClock): the times a test makes
	// come from it, never from time.Now.
	now     func() time.Time
	svc     *fleet.Service
	srv     *httptest.Server
	account fleet.Account
	seedKey string
	vehicle fleet.Vehicle
	// tileReferers are the Referer headers the tile server was sent.
	tileReferers *recorder
}

// recorder keeps strings that several goroutines add.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.seen = append(r.seen, s)
	r.mu.Unlock()
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// setup is what a test's world differs in.
type setup struct {
	plan        fleet.Plan // pro when ""
	brokenTiles bool       // the tile server answers 404
	// insecureWebhooks lets webhook endpoints be http on loopback, where
	// the tests' receivers listen.
	insecureWebhooks bool
	signup           bool // the sign-up page is open
}

// serve starts the API and the dashboard on one loopback server, as
// fleetserver mounts them, with a pro account, its admin and viewer, and
// vehicles that have reported once.
func serve(t *testing.T) *world { return serveWith(t, setup{}) }

func serveWith(t *testing.T, cfg setup) *world {
	t.Helper()
	ctx := context.Background()
	if cfg.plan == "" {
		cfg.plan = fleet.PlanPro
	}
	now := middayClock(t, testZone)
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: now, Webhooks: fleet.WebhookOptions{Insecure: cfg.insecureWebhooks},
		Passwords: testpass.Cheap()})
	op := svc.Operator()
	a, nk, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: cfg.plan})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		email, pw string
		role      fleet.Role
	}{{adminEmail, adminPassword, fleet.RoleAdmin}, {viewerEmail, viewerPassword, fleet.RoleViewer}} {
		if _, _, err := op.CreateUser(ctx, a.ID, fleet.UserParams{Email: u.email, Name: "Test", Role: u.role}, u.pw); err != nil {
			t.Fatal(err)
		}
	}
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7", LicensePlate: "B-FL 7"})
	if err != nil {
		t.Fatal(err)
	}
	speed := 42.0
	if _, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 52.5200, Longitude: 13.4050, Timestamp: now().Add(-time.Minute).UTC(), Speed: &speed}}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Van 2", "Van 3", hostileName} { // around the truck, so that its move stays in view
		w, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		zero := 0.0
		if _, err := svc.IngestLocations(ctx, p, w.ID, []fleet.Point{{Latitude: []float64{52.50, 52.545, 52.505}[i], Longitude: []float64{13.36, 13.45, 13.44}[i], Timestamp: now().Add(-time.Minute).UTC(), Speed: &zero}}); err != nil {
			t.Fatal(err)
		}
	}
	api := fleethttp.NewHandler(svc)
	var web http.Handler
	referers := &recorder{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/v1" || strings.HasPrefix(path, "/v1/") || path == "/healthz" || path == "/readyz":
			api.ServeHTTP(w, r)
		case strings.HasPrefix(path, "/tiles/") && cfg.brokenTiles:
			http.NotFound(w, r)
		case strings.HasPrefix(path, "/tiles/"):
			referers.add(r.Header.Get("Referer"))
			w.Header().Set("Content-Type", "image/png")
			w.Write(tile)
		default:
			web.ServeHTTP(w, r)
		}
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	web = fleetweb.New(svc, fleetweb.Options{InsecureCookies: true, MapTiles: srv.URL + "/tiles/{z}/{x}/{y}.png", MapAttribution: "test tiles",
		Signup: cfg.signup, UnknownDevices: true, DeviceListeners: func() []fleetweb.DeviceListener {
			return []fleetweb.DeviceListener{{Protocol: "osmand", Port: 5055, Transports: []string{"http"}}, {Protocol: "teltonika", Port: 5027, Transports: []string{"tcp", "udp"}}}
		}})
	return &world{now: now, svc: svc, srv: srv, account: a, seedKey: nk.Secret, vehicle: v, tileReferers: referers}
}

// testZone is the time zone the browser tests live in (the browser's, by
// emulation, where a page shows a day).
const testZone = "America/New_York"

// middayClock is a clock that runs at the real pace from 12:00 of today in
// zone: a test that makes reports "40 minutes ago" and looks at today's page
// in zone finds them in that day whatever the hour it runs at (from real
// time, such a report made at 00:20 would fall on yesterday).
func middayClock(t *testing.T, zone string) func() time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	y, m, d := started.In(loc).Date()
	offset := time.Date(y, m, d, 12, 0, 0, 0, loc).Sub(started)
	return func() time.Time { return time.Now().Add(offset) }
}

// api calls the API with a key and returns the status and the body.
func (w *world) api(t *testing.T, method, path, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, w.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

func (w *world) keyByPrefix(t *testing.T, secret string) fleet.Key {
	t.Helper()
	l, err := w.svc.Operator().Keys(context.Background(), w.account.ID, fleet.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range l.Items {
		if k.Prefix == secret[:fleet.KeyPrefixLen] {
			return k
		}
	}
	t.Fatalf("no key with the prefix of %s…", secret[:fleet.KeyPrefixLen])
	return fleet.Key{}
}

// shots is where screenshots go: docs/screenshots with FLEET_SCREENSHOTS
// set, else a temporary directory.
func shots(t *testing.T) string {
	if os.Getenv("FLEET_SCREENSHOTS") != "" {
		dir := filepath.Join("..", "..", "docs", "screenshots")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// The whole tour: sign in, generate a key and read it once, call the API
// with it and see the call counted, rotate, revoke, watch a vehicle move on
// the live map, sign out; a viewer gets no form and a forged one is
// refused.
func TestDashboardInBrowser(t *testing.T) {
	is := is.New(t)
	w := serve(t)
	b := open(t, w)

	// Sign in: the overview shows the account.
	b.signIn(adminEmail, adminPassword)
	overview := b.text()
	is.True(strings.Contains(overview, "Acme Haulage"))
	is.True(strings.Contains(overview, "pro"))

	// Generate a key and read it from the page, once.
	secret := b.generateKey("Browser test key", chromedp.SetValue(byLabel("Environment"), "production"))
	is.True(fleet.CheckSecret(secret))
	b.run("open the keys page again", chromedp.Navigate(b.base+"/settings/api-keys"), chromedp.WaitVisible(byLabel("Name")))
	is.True(!strings.Contains(b.text(), secret)) // shown only once

	// Call the API with it; the usage page counts the call.
	status, body := w.api(t, "GET", "/v1/account", secret, "")
	is.Equal(status, 200)
	is.True(strings.Contains(body, "Acme Haulage"))
	is.NoErr(w.svc.Jobs().Flush(context.Background())) // as Run does every second
	k := w.keyByPrefix(t, secret)
	is.Equal(k.Environment, "production")
	b.press("open the key's usage", link("Browser test key"))
	page := b.text()
	is.True(strings.Contains(page, "1 request, 0 refused"))
	var bars int
	b.eval("count the chart's bars", `document.querySelectorAll("figure.chart svg rect.req[height]:not([height='0'])").length`, &bars)
	is.Equal(bars, 2) // this hour's bar, in the 24-hour chart and in the 7-day one
	b.shot("usage")

	// Rotate with the default grace period: both keys work during it.
	var rotated string
	b.run("open the keys", chromedp.Navigate(b.base+"/settings/api-keys"), chromedp.WaitVisible(byLabel("Name")))
	b.press("rotate the key", row(k.Prefix)+button("Rotate"))
	b.run("read the new key", chromedp.Value(byLabel("The new API key"), &rotated))
	is.True(fleet.CheckSecret(rotated) && rotated != secret)
	status, _ = w.api(t, "GET", "/v1/account", rotated, "")
	is.Equal(status, 200)
	status, _ = w.api(t, "GET", "/v1/account", secret, "")
	is.Equal(status, 200) // within the hour's grace
	nk := w.keyByPrefix(t, rotated)

	// Revoke only the new key, confirming: it gets 401 at once, the old
	// one works until its grace ends.
	b.press("revoke the new key", `//tr[td[normalize-space()="`+nk.Prefix+`…"]]`+link("Revoke…"))
	b.press("confirm", button("Revoke only "+nk.Prefix+"…"))
	var notice string
	b.run("read the notice", chromedp.Text(`//p[@role="status"]`, &notice))
	is.True(strings.Contains(notice, "“Browser test key” ("+nk.Prefix+"…) is revoked"))
	status, _ = w.api(t, "GET", "/v1/account", rotated, "")
	is.Equal(status, 401)
	status, _ = w.api(t, "GET", "/v1/account", secret, "")
	is.Equal(status, 200)

	// The live map shows a vehicle move after a location is posted.
	b.run("open the map", chromedp.Navigate(b.base+"/map"), chromedp.WaitVisible(row("Truck 7")),
		chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(15*time.Second)))
	var markerLat float64
	b.eval("read the marker", fmt.Sprintf(`window.fleetMap.markers[%q].getLatLng().lat`, w.vehicle.ID), &markerLat)
	is.Equal(markerLat, 52.52)
	point := fmt.Sprintf(`{"locations":[{"latitude":52.5301,"longitude":13.4202,"timestamp":%q,"speed":55}]}`, w.now().UTC().Format(time.RFC3339Nano))
	status, _ = w.api(t, "POST", "/v1/vehicles/"+w.vehicle.ID+"/locations", w.seedKey, point)
	is.True(status == 200 || status == 201 || status == 202) // accepted
	b.run("watch the vehicle move",
		chromedp.Poll(fmt.Sprintf(`window.fleetMap.markers[%q].getLatLng().lat === 52.5301`, w.vehicle.ID), nil, chromedp.WithPollingTimeout(15*time.Second)))
	var truck string
	b.run("read the list", chromedp.Text(row("Truck 7"), &truck))
	is.True(strings.Contains(truck, "52.53010, 13.42020"))
	var pwned bool
	b.eval("check names are text", `window.pwned === 1 || document.querySelector(".leaflet-tooltip img, .leaflet-marker-pane img") !== null`, &pwned)
	is.True(!pwned) // a vehicle's name is shown as text, never as HTML

	// Sign out; then a viewer cannot generate keys, not even by forging
	// the form's request from the page.
	b.press("sign out", button("Sign out"))
	is.True(strings.HasSuffix(b.url(), "/sign-in?signed_out=1"))
	b.run("the keys page wants a sign-in", chromedp.Navigate(b.base+"/settings/api-keys"), chromedp.WaitVisible(byLabel("Password")))
	is.True(strings.Contains(b.url(), "/sign-in?next="))

	b.signIn(viewerEmail, viewerPassword)
	b.run("open the keys as a viewer", chromedp.Navigate(b.base+"/settings/api-keys"), chromedp.WaitVisible(row(k.Prefix)))
	var hasForm bool
	b.eval("look for the form", `document.evaluate('`+button("Generate key")+`', document, null, 9, null).singleNodeValue !== null`, &hasForm)
	is.True(!hasForm)
	var forged int
	b.eval("forge the form", `fetch("/settings/api-keys", {method: "POST", body: new URLSearchParams({name: "forged", environment: "production", permissions: "*"})}).then(r => r.status)`, &forged)
	is.Equal(forged, 403)
	l, err := w.svc.Operator().Keys(context.Background(), w.account.ID, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	for _, k := range l.Items {
		is.True(k.Name != "forged")
	}
	b.press("sign the viewer out", button("Sign out"))
}
