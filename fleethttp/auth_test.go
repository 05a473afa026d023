package fleethttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

func TestAccountWithValidKey(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a, secret := e.account(fleet.PlanPro)
	r := e.do("GET", "/v1/account", secret, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.json()["success"], true)
	d := r.data()
	is.Equal(d["account_id"], a.ID)
	is.Equal(d["company_name"], "Acme Haulage")
	is.Equal(d["plan"], "pro")
	is.Equal(d["api_version"], "v1")
	is.Equal(d["rate_limit_per_hour"], float64(10000))
	is.Equal(d["created_at"], "2026-11-22T10:00:00Z") // UTC with Z, no zero fraction
	is.Equal(r.header.Get("X-RateLimit-Limit"), "10000")
	is.Equal(r.header.Get("X-RateLimit-Remaining"), "9999")
	is.Equal(r.header.Get("X-RateLimit-Used"), "1")
	is.Equal(r.header.Get("X-RateLimit-Reset"), strconv.FormatInt(T0.Add(time.Hour).Unix(), 10))
	is.Equal(r.header.Get("RateLimit-Policy"), `"hourly";q=10000;w=3600`)
	is.Equal(r.header.Get("RateLimit"), `"hourly";r=9999;t=3600`)
	is.True(r.header.Get("X-Request-Id") != "")
}

func TestRateLimitHeadersSpelledAsContract(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanFree)
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1/account", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := e.srv.Client().Do(req)
	is.NoErr(err)
	res.Body.Close()
	// The Go client keeps the names as sent on the wire in the raw map only
	// when they are canonical; look for the exact spelling in a raw dump.
	raw := rawHeaderNames(t, e.srv.URL, secret)
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit"} {
		is.True(raw[name]) // header spelled exactly as the contract writes it
	}
}

func TestAccountAccountFieldsAtPlanOverride(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, nk, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Big", Plan: fleet.PlanFree, RateLimitPerHour: 5000})
	is.NoErr(err)
	r := e.do("GET", "/v1/account", nk.Secret, nil)
	is.Equal(r.data()["rate_limit_per_hour"], float64(5000)) // the account's own higher limit
	is.Equal(r.header.Get("X-RateLimit-Limit"), "5000")
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t)
	_, secret := e.account(fleet.PlanPro)
	unknown := fleet.NewSecret()
	mistyped := secret[:len(secret)-1] + string(rune(secret[len(secret)-1])^1)
	cases := []struct{ name, header string }{
		{"missing", ""},
		{"not bearer", "Basic " + secret},
		{"empty bearer", "Bearer "},
		{"malformed", "Bearer not-a-key"},
		{"bad checksum", "Bearer " + mistyped},
		{"unknown", "Bearer " + unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("GET", "/v1/account", "", nil, "Authorization", tc.header)
			is.Equal(r.status, http.StatusUnauthorized)
			is.Equal(r.errCode(), "unauthorized")
			is.True(strings.Contains(r.errMessage(), "invalid"))            // message says the key is invalid
			is.Equal(r.header.Get("X-RateLimit-Limit"), "60")               // limited per client address
			is.True(r.json()["error"].(map[string]any)["request_id"] != "") // request id in the body
		})
	}
}

func TestUnauthorizedLimitedPerAddress(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	for i := 1; i <= 60; i++ {
		r := e.do("GET", "/v1/account", "", nil)
		is.Equal(r.status, http.StatusUnauthorized)
		is.Equal(r.header.Get("X-RateLimit-Remaining"), strconv.Itoa(60-i))
	}
	r := e.do("GET", "/v1/vehicles", "fleet_guess", nil)
	is.Equal(r.status, http.StatusTooManyRequests) // the 61st guess is braked
	is.Equal(r.errCode(), "rate_limit_exceeded")
	is.Equal(r.header.Get("Retry-After"), "3600")
	// It says what it is, not the plan's limit.
	is.Equal(r.errMessage(), "Too many requests without a valid API key from this address; retry after 3600 seconds.")

	_, secret := e.account(fleet.PlanFree)
	is.Equal(e.do("GET", "/v1/account", secret, nil).status, http.StatusOK) // a valid key is not braked
}

// TestAnonymousBrakeOff: with Options.AddressLimit at AddressLimitOff,
// requests without a valid key are never braked (401 without rate-limit
// headers, as there is no window), while keys keep their allowance.
func TestAnonymousBrakeOff(t *testing.T) {
	is := is.New(t)
	e := newEnvOn(t, memstore.New(), testclock.New(T0), func(o *fleet.Options) { o.AddressLimit = fleet.AddressLimitOff })
	for range 100 {
		r := e.do("GET", "/v1/account", "fleet_guess", nil)
		is.Equal(r.status, http.StatusUnauthorized)
		is.Equal(r.header.Get("X-RateLimit-Limit"), "")
	}
	_, secret := e.account(fleet.PlanFree)
	r := e.do("GET", "/v1/account", secret, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("X-RateLimit-Limit"), "1000")
}

func TestUnknownRouteAndMethod(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanPro)

	r := e.do("GET", "/v1/nothing/here", secret, nil)
	is.Equal(r.status, http.StatusNotFound)
	is.Equal(r.errCode(), "not_found")
	is.Equal(r.header.Get("X-RateLimit-Remaining"), "9999") // 404s carry the headers and count

	r = e.do("PUT", "/v1/account", secret, map[string]any{})
	is.Equal(r.status, http.StatusMethodNotAllowed)
	is.Equal(r.errCode(), "method_not_allowed")
	is.Equal(r.header.Get("Allow"), "GET, HEAD")

	r = e.do("PATCH", "/v1/api_keys", secret, map[string]any{})
	is.Equal(r.status, http.StatusMethodNotAllowed)
	is.Equal(r.header.Get("Allow"), "GET, POST, HEAD")

	r = e.do("GET", "/v1/nothing", "", nil)
	is.Equal(r.status, http.StatusUnauthorized) // without a key, nothing is revealed
}

func TestInsufficientPermissions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	limited := e.keyWith(admin, "vehicles:read")

	r := e.do("GET", "/v1/api_keys", limited, nil)
	is.Equal(r.status, http.StatusForbidden)
	is.Equal(r.errCode(), "insufficient_permissions")
	is.True(strings.Contains(r.errMessage(), "keys:read")) // says which permission
	is.Equal(e.do("GET", "/v1/account", limited, nil).status, http.StatusOK)

	writer := e.keyWith(admin, "keys:write")
	is.Equal(e.do("GET", "/v1/api_keys", writer, nil).status, http.StatusOK) // write implies read
}

func TestRateLimitExceeded(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanFree)
	for i := 0; i < 1000; i++ {
		if r := e.do("GET", "/v1/account", secret, nil); r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, r.status)
		}
	}
	e.clock.Advance(10 * time.Minute)
	r := e.do("GET", "/v1/account", secret, nil)
	is.Equal(r.status, http.StatusTooManyRequests)
	is.Equal(r.errCode(), "rate_limit_exceeded")
	is.Equal(r.header.Get("Retry-After"), "3000")
	is.Equal(r.errMessage(), "Rate limit exceeded. Retry after 3000 seconds.")
	is.Equal(r.header.Get("X-RateLimit-Remaining"), "0")
	is.Equal(r.header.Get("X-RateLimit-Used"), "1000") // the 429 is not counted

	e.clock.Advance(50 * time.Minute) // the window ends
	r = e.do("GET", "/v1/account", secret, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.header.Get("X-RateLimit-Remaining"), "999")
	is.Equal(r.header.Get("X-RateLimit-Reset"), strconv.FormatInt(T0.Add(2*time.Hour).Unix(), 10))
}

// TestRateLimitExactUnderConcurrency: with Remaining at R, of 50 simultaneous
// requests exactly R succeed.
func TestRateLimitExactUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	_, secret := e.account(fleet.PlanFree)
	checkRateLimitExact(t, []*env{e}, secret)
}

// concurrentOK sends n simultaneous GET /v1/account spread over the servers
// and counts the 200s.
func concurrentOK(t *testing.T, servers []*env, secret string, n int) int {
	statuses := simultaneously(t, n, func(i int) (*env, *http.Request) {
		srv := servers[i%len(servers)]
		req, _ := http.NewRequest("GET", srv.srv.URL+"/v1/account", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		return srv, req
	})
	if other := n - statuses[http.StatusOK] - statuses[http.StatusTooManyRequests]; other > 0 {
		t.Errorf("%d responses were neither 200 nor 429: %v", other, statuses)
	}
	return statuses[http.StatusOK]
}

func TestRevokedKeyRefusedAtOnceAndAcrossServers(t *testing.T) {
	store := memstore.New()
	clock := testclock.New(T0)
	checkRevokedAcrossServers(t, newEnvOn(t, store, clock), newEnvOn(t, store, clock), clock)
}

func TestSecretsNeverLogged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanPro)
	created := e.do("POST", "/v1/api_keys", secret, map[string]any{"name": "ci"})
	other := created.data()["key"].(string)
	e.do("GET", "/v1/account", other, nil)
	e.do("GET", "/v1/account", other+"x", nil)
	logs := e.logs.String()
	is.True(strings.Contains(logs, `"path":"/v1/account"`)) // the access log is there
	is.True(!strings.Contains(logs, secret))                // no secret in it
	is.True(!strings.Contains(logs, other))
	is.True(!strings.Contains(logs, other[:30]))
}

func TestRequestID(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanPro)
	r := e.do("GET", "/v1/account", secret, nil, "X-Request-Id", "client-chosen-42")
	is.Equal(r.header.Get("X-Request-Id"), "client-chosen-42")
	r = e.do("GET", "/v1/account", secret, nil, "X-Request-Id", strings.Repeat("a", 129))
	is.True(r.header.Get("X-Request-Id") != strings.Repeat("a", 129)) // too long: replaced
	r = e.do("GET", "/v1/nope", secret, nil, "X-Request-Id", "abc")
	is.Equal(r.json()["error"].(map[string]any)["request_id"], "abc")
}

func TestHealthAndOpenAPI(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	// The health checks answer without a key at the root and under /v1,
	// where clients generated from the document call them.
	for _, path := range []string{"/healthz", "/readyz", "/v1/healthz", "/v1/readyz"} {
		r := e.do("GET", path, "", nil)
		is.Equal(r.status, 200)            // GET path
		is.Equal(r.json()["status"], "ok") // path
	}
	r := e.do("GET", "/v1/openapi.json", "", nil)
	is.Equal(r.status, 200)
	is.Equal(r.json()["openapi"], "3.1.0")
	e.store.Close()
	for _, path := range []string{"/readyz", "/v1/readyz"} {
		r = e.do("GET", path, "", nil)
		is.Equal(r.status, http.StatusServiceUnavailable)
		is.Equal(r.header.Get("Retry-After"), "1")
	}
}

func rawHeaderNames(t *testing.T, url, secret string) map[string]bool {
	t.Helper()
	conn, err := dialRaw(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", secret)
	names := map[string]bool{}
	buf := make([]byte, 8192)
	n, _ := readAll(conn, buf)
	for _, line := range strings.Split(string(buf[:n]), "\r\n") {
		if name, _, ok := strings.Cut(line, ":"); ok {
			names[name] = true
		}
	}
	return names
}

// A request is admitted once, before it is answered, whoever answers it: a
// route, the answer of a path no route has (404, 405), a path that is not
// canonical, or a request URI the mux answers itself. Without a key each is
// a 401; with one, each takes exactly one request from the allowance.
func TestEveryRequestIsAdmittedOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanPro)
	cases := []struct {
		method, target string
		status         int
	}{
		{"GET", "/v1/account", http.StatusOK},
		{"GET", "/v1/no-such-thing", http.StatusNotFound},
		{"DELETE", "/v1/account", http.StatusMethodNotAllowed},
		{"GET", "/v1/./account", http.StatusNotFound},
		{"GET", "/v1//account", http.StatusNotFound},
		{"GET", "*", http.StatusBadRequest},
	}
	used := 0
	usedHeader := "X-RateLimit-Used" // spelled as the contract spells it, not canonical: read from the map as set
	for _, c := range cases {
		for _, key := range []string{"", secret} {
			req := httptest.NewRequest(c.method, "/", nil)
			req.RequestURI, req.URL.Path = c.target, c.target
			req.RemoteAddr = "127.0.0.1:40000"
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			w := httptest.NewRecorder()
			e.h.ServeHTTP(w, req)
			if key == "" {
				is.Equal(w.Code, http.StatusUnauthorized) // no key: nothing else is said
				continue
			}
			used++
			is.Equal(w.Code, c.status)
			is.Equal(w.Header()[usedHeader], []string{strconv.Itoa(used)}) // charged once
		}
	}
}
