package fleethttp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"
)

var (
	deprecatedOn = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	sunsetOn     = time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC)
)

// legacyRoutes are routes the API does not have: one deprecated with a
// sunset date and a successor, one deprecated without a date of removal.
func legacyRoutes(h *Handler) []route {
	return []route{
		{method: "GET", pattern: "/v1/legacy/account", useCase: "Account", serve: h.getAccount, doc: opDoc{id: "getLegacyAccount", summary: "The account, at its old address", tag: tagAccount,
			out: Account{}, outDesc: "The account.",
			deprecated: true, deprecatedAt: deprecatedOn, sunset: sunsetOn, replacement: "/v1/account"}},
		{method: "GET", pattern: "/v1/legacy/whoami", useCase: "Account", serve: h.getAccount, doc: opDoc{id: "getWhoami", summary: "The account, another old address", tag: tagAccount,
			out: Account{}, outDesc: "The account.", deprecated: true, deprecatedAt: deprecatedOn}},
	}
}

func withLegacyRoutes(h *Handler) { h.extraRoutes = legacyRoutes }

func legacyServer(t *testing.T, opts ...Option) (base, secret string) {
	t.Helper()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, nk, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(svc, append([]Option{withLegacyRoutes, WithLogger(slog.New(slog.DiscardHandler))}, opts...)...))
	t.Cleanup(srv.Close)
	return srv.URL, nk.Secret
}

func getWith(t *testing.T, url, secret string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// A deprecated route works as before and says so: Deprecation with the
// date (RFC 9745), and once removal is decided Sunset (RFC 8594) and the
// successor's Link. A route that is not deprecated carries none of them.
func TestDeprecatedRouteAnswersDeprecationHeaders(t *testing.T) {
	is := is.New(t)
	base, secret := legacyServer(t)

	res := getWith(t, base+"/v1/legacy/account", secret)
	is.Equal(res.StatusCode, http.StatusOK) // still works
	is.Equal(res.Header.Get("Deprecation"), "@1796083200")
	is.Equal(res.Header.Get("Sunset"), "Fri, 31 Dec 2027 00:00:00 GMT")
	is.Equal(res.Header.Get("Link"), `</v1/account>; rel="successor-version"`)
	sunset, err := http.ParseTime(res.Header.Get("Sunset"))
	is.NoErr(err)
	is.True(sunset.Equal(sunsetOn))

	res = getWith(t, base+"/v1/legacy/whoami", secret)
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Deprecation"), "@1796083200")
	is.Equal(res.Header.Get("Sunset"), "") // no date of removal yet
	is.Equal(res.Header.Get("Link"), "")

	res = getWith(t, base+"/v1/legacy/account", "") // no key: 401, and still told
	is.Equal(res.StatusCode, http.StatusUnauthorized)
	is.Equal(res.Header.Get("Deprecation"), "@1796083200")
	is.Equal(res.Header.Get("Sunset"), "Fri, 31 Dec 2027 00:00:00 GMT")
	res = getWith(t, base+"/v1/legacy/account", "fleet_"+strings.Repeat("x", 38)) // a key that does not exist
	is.Equal(res.StatusCode, http.StatusUnauthorized)
	is.Equal(res.Header.Get("Deprecation"), "@1796083200")

	for _, path := range []string{"/v1/account", "/v1/vehicles", "/healthz"} {
		res = getWith(t, base+path, secret)
		is.Equal(res.StatusCode, http.StatusOK)
		is.Equal(res.Header.Get("Deprecation"), "") // not deprecated
		is.Equal(res.Header.Get("Sunset"), "")
	}
}

// The document marks a deprecated operation, states its headers and says
// when it goes and what replaces it; other operations stay unmarked.
func TestDeprecatedRouteInTheDocument(t *testing.T) {
	is := is.New(t)
	h := &Handler{}
	b, err := generateOpenAPI(append(h.routeTable(), legacyRoutes(h)...))
	is.NoErr(err)
	doc, err := openapi3.NewLoader().LoadFromData(b)
	is.NoErr(err)
	is.NoErr(doc.Validate(context.Background()))

	op := doc.Paths.Find("/legacy/account").Get
	is.True(op.Deprecated)
	is.True(strings.Contains(op.Description, "Deprecated** since 2026-12-01"))
	is.True(strings.Contains(op.Description, "removed after 2027-12-31"))
	is.True(strings.Contains(op.Description, "use `/account` instead"))
	hd := op.Responses.Status(200).Value.Headers
	is.Equal(hd["Deprecation"].Value.Schema.Value.Const, "@1796083200")
	is.Equal(hd["Sunset"].Value.Schema.Value.Const, "Fri, 31 Dec 2027 00:00:00 GMT")
	is.True(hd["Link"] != nil)

	op = doc.Paths.Find("/legacy/whoami").Get
	is.True(op.Deprecated)
	hd = op.Responses.Status(200).Value.Headers
	is.True(hd["Deprecation"] != nil)
	is.True(hd["Sunset"] == nil)

	is.True(!doc.Paths.Find("/account").Get.Deprecated)
	var raw map[string]any
	is.NoErr(json.Unmarshal(OpenAPI, &raw))
	is.True(!strings.Contains(string(OpenAPI), `"/legacy/`)) // the served document has no test route
}

// The generator refuses a deprecation its headers could not state, or one
// shorter than the compatibility rules promise.
func TestGeneratorRefusesBadDeprecations(t *testing.T) {
	h := &Handler{}
	for _, c := range []struct {
		name string
		set  func(*opDoc)
		want string
	}{
		{"no date", func(d *opDoc) { d.deprecatedAt = time.Time{}; d.sunset = time.Time{}; d.replacement = "" }, "without deprecatedAt"},
		{"sunset before", func(d *opDoc) { d.sunset = deprecatedOn.AddDate(0, 0, -1) }, "is not after"},
		{"sunset too soon", func(d *opDoc) { d.sunset = deprecatedOn.AddDate(0, 6, 0) }, "sooner than 365 days"},
		{"successor without sunset", func(d *opDoc) { d.sunset = time.Time{} }, "set sunset"},
		{"successor not a path", func(d *opDoc) { d.replacement = "https://example.com/v1/account" }, "not a path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			rts := legacyRoutes(h)[:1]
			c.set(&rts[0].doc)
			_, err := generateOpenAPI(append(h.routeTable(), rts...))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), c.want))
		})
	}
}

// Every response names the server's build, errors and paths outside the
// route table included; a value a header cannot hold is made safe.
func TestFleetVersionOnEveryResponse(t *testing.T) {
	is := is.New(t)
	base, secret := legacyServer(t, WithVersion("v0.3.1 (commit 0123456789ab)"))
	for _, c := range []struct {
		path, secret string
		status       int
	}{
		{"/v1/account", secret, 200},
		{"/v1/account", "", 401},
		{"/v1/nope", secret, 404},
		{"/v1/openapi.json", "", 200},
		{"/healthz", "", 200},
		{"/readyz", "", 200},
	} {
		res := getWith(t, base+c.path, c.secret)
		is.Equal(res.StatusCode, c.status)
		is.Equal(res.Header.Get(VersionHeader), "v0.3.1 (commit 0123456789ab)")
	}

	base, _ = legacyServer(t, WithVersion("v1\r\nX-Injected: yes\u00e9"))
	res := getWith(t, base+"/healthz", "")
	is.Equal(res.Header.Get(VersionHeader), "v1??X-Injected: yes?")
	is.Equal(res.Header.Get("X-Injected"), "")

	base, _ = legacyServer(t) // the default: the module's version from the build information
	res = getWith(t, base+"/healthz", "")
	is.Equal(res.Header.Get(VersionHeader), ModuleVersion())
	is.True(ModuleVersion() != "")
}

func TestModuleVersion(t *testing.T) {
	is := is.New(t)
	dep := &debug.BuildInfo{Main: debug.Module{Path: "example.com/tracker"}, Deps: []*debug.Module{
		{Path: "golang.org/x/text", Version: "v0.41.0"}, {Path: modulePath, Version: "v0.2.1"}}}
	is.Equal(moduleVersion(dep), "v0.2.1") // imported by another program
	dep.Deps[1].Replace = &debug.Module{Path: "../fleetapi"}
	is.Equal(moduleVersion(dep), "v0.2.1") // replaced by a directory: the version it stands for
	dep.Deps[1].Replace = &debug.Module{Path: "example.com/fork", Version: "v0.2.2-fork"}
	is.Equal(moduleVersion(dep), "v0.2.2-fork")
	self := &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "075f69a76f0df18f7a9da799cac412c8d790f4e4"}}}
	is.Equal(moduleVersion(self), "(devel) (commit 075f69a76f0d)") // built from a checkout
	self.Settings = nil
	is.Equal(moduleVersion(self), "(devel)")
}

// A deprecated route says so on a 429 too: a client over its allowance
// learns it as well.
func TestDeprecatedRouteSaysSoWhenLimited(t *testing.T) {
	is := is.New(t)
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, nk, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanFree})
	is.NoErr(err)
	srv := httptest.NewServer(NewHandler(svc, withLegacyRoutes, WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	limit := fleet.PlanFree.Limits().RequestsPerHour
	for i := range limit { // the hour's allowance, spent
		if code := getWith(t, srv.URL+"/v1/legacy/whoami", nk.Secret).StatusCode; code != http.StatusOK {
			t.Fatalf("request %d of %d: %d", i+1, limit, code)
		}
	}
	res := getWith(t, srv.URL+"/v1/legacy/whoami", nk.Secret)
	is.Equal(res.StatusCode, http.StatusTooManyRequests)
	is.Equal(res.Header.Get("Deprecation"), "@1796083200")
	res = getWith(t, srv.URL+"/v1/account", nk.Secret)
	is.Equal(res.StatusCode, http.StatusTooManyRequests)
	is.Equal(res.Header.Get("Deprecation"), "") // not deprecated
}
