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
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetweb"
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
	svc     *fleet.Service
	srv     *httptest.Server
	account fleet.Account
	seedKey string
	vehicle fleet.Vehicle
}

// serve starts the API and the dashboard on one loopback server, as
// fleetserver mounts them, with an account, its admin and viewer, and a
// vehicle that has reported once.
func serve(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	op := svc.Operator()
	a, nk, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
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
	if _, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 52.5200, Longitude: 13.4050, Timestamp: time.Now().Add(-time.Minute).UTC(), Speed: &speed}}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"Van 2", "Van 3", hostileName} { // around the truck, so that its move stays in view
		w, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		zero := 0.0
		if _, err := svc.IngestLocations(ctx, p, w.ID, []fleet.Point{{Latitude: []float64{52.50, 52.545, 52.505}[i], Longitude: []float64{13.36, 13.45, 13.44}[i], Timestamp: time.Now().Add(-time.Minute).UTC(), Speed: &zero}}); err != nil {
			t.Fatal(err)
		}
	}
	api := fleethttp.NewHandler(svc)
	var web http.Handler
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/v1" || strings.HasPrefix(path, "/v1/") || path == "/healthz" || path == "/readyz":
			api.ServeHTTP(w, r)
		case strings.HasPrefix(path, "/tiles/"):
			w.Header().Set("Content-Type", "image/png")
			w.Write(tile)
		default:
			web.ServeHTTP(w, r)
		}
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	web = fleetweb.New(svc, fleetweb.Options{InsecureCookies: true, MapTiles: srv.URL + "/tiles/{z}/{x}/{y}.png", MapAttribution: "test tiles"})
	return &world{svc: svc, srv: srv, account: a, seedKey: nk.Secret, vehicle: v}
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

func screenshot(dir, name string, width, height int64) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var buf []byte
		if err := chromedp.EmulateViewport(width, height).Do(ctx); err != nil {
			return err
		}
		if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
			return err
		}
		if err := chromedp.EmulateViewport(1280, 900).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), buf, 0o644)
	})
}

// signIn fills the sign-in form and waits for the overview.
func signIn(base, email, password string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(base + "/sign-in"),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, email, chromedp.ByID),
		chromedp.SendKeys(`#password`, password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`//h1[text()="Overview"]`),
	}
}

// evalStatus runs fetch in the page and returns the response's status.
func evalStatus(js string, status *int) chromedp.Action {
	return chromedp.Evaluate(js, status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
}

func TestDashboardInBrowser(t *testing.T) {
	path := browser(t)
	is := is.New(t)
	w := serve(t)
	dir := shots(t)
	base := w.srv.URL

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// Sign in: the overview shows the account.
	var overview string
	run("sign in", signIn(base, adminEmail, adminPassword), chromedp.Text(`main`, &overview, chromedp.ByQuery))
	is.True(strings.Contains(overview, "Acme Haulage"))
	is.True(strings.Contains(overview, "pro"))
	run("screenshot the overview", screenshot(dir, "overview.png", 1280, 900))

	// Generate a key and read it from the page, once.
	var secret string
	run("generate a key",
		chromedp.Navigate(base+"/settings/api-keys"),
		chromedp.WaitVisible(`#name`, chromedp.ByID),
		chromedp.SendKeys(`#name`, "Browser test key", chromedp.ByID),
		chromedp.SetValue(`#environment`, "production", chromedp.ByID),
		chromedp.Submit(`#name`, chromedp.ByID),
		chromedp.WaitVisible(`#new-secret`, chromedp.ByID),
		chromedp.Value(`#new-secret`, &secret, chromedp.ByID),
	)
	is.True(fleet.CheckSecret(secret))
	run("screenshot the keys page", screenshot(dir, "api-keys.png", 1280, 1100), screenshot(dir, "api-keys-360.png", 360, 800))
	var again string
	run("reload the keys page", chromedp.Navigate(base+"/settings/api-keys"), chromedp.WaitVisible(`#keys`, chromedp.ByID),
		chromedp.OuterHTML(`html`, &again, chromedp.ByQuery))
	is.True(!strings.Contains(again, secret)) // shown only once

	// Call the API with it; the usage page counts the call.
	status, body := w.api(t, "GET", "/v1/account", secret, "")
	is.Equal(status, 200)
	is.True(strings.Contains(body, "Acme Haulage"))
	is.NoErr(w.svc.Jobs().Flush(context.Background())) // as Run does every second
	k := w.keyByPrefix(t, secret)
	is.Equal(k.Environment, "production")
	var dayTotal string
	run("open the key's usage", chromedp.Navigate(base+"/settings/api-keys/"+k.ID),
		chromedp.WaitVisible(`#day-total`, chromedp.ByID), chromedp.Text(`#day-total`, &dayTotal, chromedp.ByID))
	is.Equal(dayTotal, "1 requests, 0 refused")
	var bars int
	run("count the chart's bars", chromedp.Evaluate(`document.querySelectorAll("figure.chart svg rect.req[height]:not([height='0'])").length`, &bars))
	is.Equal(bars, 2) // this hour's bar, in the 24-hour chart and in the 7-day one
	run("screenshot the usage page", screenshot(dir, "usage.png", 1280, 1000))

	// Rotate with the default grace period: both keys work during it.
	var rotated string
	run("rotate the key",
		chromedp.Navigate(base+"/settings/api-keys"),
		chromedp.WaitVisible(`#key-`+k.ID, chromedp.ByID),
		chromedp.Click(`#key-`+k.ID+` form button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#new-secret`, chromedp.ByID),
		chromedp.Value(`#new-secret`, &rotated, chromedp.ByID),
	)
	is.True(fleet.CheckSecret(rotated) && rotated != secret)
	status, _ = w.api(t, "GET", "/v1/account", rotated, "")
	is.Equal(status, 200)
	status, _ = w.api(t, "GET", "/v1/account", secret, "")
	is.Equal(status, 200) // within the hour's grace
	nk := w.keyByPrefix(t, rotated)

	// Revoke the new key, confirming: it gets 401 at once.
	var notice string
	run("revoke the key",
		chromedp.Click(`#key-`+nk.ID+` a.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(`//button[text()="Revoke the key"]`),
		chromedp.Click(`//button[text()="Revoke the key"]`),
		chromedp.WaitVisible(`p.notice`, chromedp.ByQuery),
		chromedp.Text(`p.notice`, &notice, chromedp.ByQuery),
	)
	is.True(strings.Contains(notice, nk.ID))
	status, _ = w.api(t, "GET", "/v1/account", rotated, "")
	is.Equal(status, 401)
	var st string
	run("read the status", chromedp.AttributeValue(`#key-`+nk.ID, "data-status", &st, nil, chromedp.ByID))
	is.Equal(st, "revoked")

	// The live map shows a vehicle move after a location is posted.
	var live string
	run("open the map", chromedp.Navigate(base+"/map"), chromedp.WaitVisible(`#veh-`+w.vehicle.ID, chromedp.ByID),
		chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`#stream-status`, &live, chromedp.ByID))
	is.Equal(live, "live")
	var markerLat float64
	run("read the marker", chromedp.Evaluate(fmt.Sprintf(`window.fleetMap.markers[%q].getLatLng().lat`, w.vehicle.ID), &markerLat))
	is.Equal(markerLat, 52.52)
	point := fmt.Sprintf(`{"locations":[{"latitude":52.5301,"longitude":13.4202,"timestamp":%q,"speed":55}]}`, time.Now().UTC().Format(time.RFC3339Nano))
	status, body = w.api(t, "POST", "/v1/vehicles/"+w.vehicle.ID+"/locations", w.seedKey, point)
	is.True(status == 200 || status == 201 || status == 202) // accepted
	_ = body
	run("watch the vehicle move",
		chromedp.Poll(fmt.Sprintf(`window.fleetMap.markers[%q].getLatLng().lat === 52.5301`, w.vehicle.ID), nil, chromedp.WithPollingTimeout(20*time.Second)))
	var rowLat, pos string
	run("read the list", chromedp.AttributeValue(`#veh-`+w.vehicle.ID, "data-lat", &rowLat, nil, chromedp.ByID),
		chromedp.Text(`#veh-`+w.vehicle.ID+` .pos`, &pos, chromedp.ByQuery))
	is.Equal(rowLat, "52.5301")
	is.Equal(pos, "52.53010, 13.42020")
	var pwned bool
	run("check names are text", chromedp.Evaluate(`window.pwned === 1 || document.querySelector(".leaflet-tooltip img") !== null`, &pwned))
	is.True(!pwned) // a vehicle's name is shown as text, never as HTML
	vs, err := w.svc.ListVehicles(context.Background(), fleet.SystemPrincipal(w.account), fleet.VehicleFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	for _, v := range vs.Items {
		if v.Name == hostileName { // out of the screenshot
			_, err := w.svc.DeleteVehicle(context.Background(), fleet.SystemPrincipal(w.account), v.ID)
			is.NoErr(err)
		}
	}
	run("reload the map", chromedp.Navigate(base+"/map"), chromedp.WaitVisible(`#veh-`+w.vehicle.ID, chromedp.ByID),
		chromedp.Poll(`document.getElementById("stream-status").textContent === "live"`, nil, chromedp.WithPollingTimeout(20*time.Second)))
	run("screenshot the map", screenshot(dir, "map.png", 1280, 800))

	// Sign out; then a viewer cannot generate keys, not even by forging
	// the form's request from the page.
	var url string
	run("sign out", chromedp.Click(`//button[text()="Sign out"]`), chromedp.WaitVisible(`#email`, chromedp.ByID), chromedp.Location(&url))
	is.True(strings.HasSuffix(url, "/sign-in?signed_out=1"))
	run("the keys page wants a sign-in", chromedp.Navigate(base+"/settings/api-keys"), chromedp.WaitVisible(`#email`, chromedp.ByID), chromedp.Location(&url))
	is.True(strings.Contains(url, "/sign-in?next="))

	var hasForm bool
	var forged int
	run("sign in as a viewer", signIn(base, viewerEmail, viewerPassword),
		chromedp.Navigate(base+"/settings/api-keys"), chromedp.WaitVisible(`#keys`, chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("generate") !== null`, &hasForm),
		evalStatus(`fetch("/settings/api-keys", {method: "POST", body: new URLSearchParams({name: "forged", environment: "production", permissions: "*"})}).then(r => r.status)`, &forged),
	)
	is.True(!hasForm)
	is.Equal(forged, 403)
	l, err := w.svc.Operator().Keys(context.Background(), w.account.ID, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	for _, k := range l.Items {
		is.True(k.Name != "forged")
	}
	run("sign the viewer out", chromedp.Click(`//button[text()="Sign out"]`), chromedp.WaitVisible(`#email`, chromedp.ByID))
}
