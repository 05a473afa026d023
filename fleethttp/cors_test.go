package fleethttp_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

const appOrigin = "https://app.example.com"

func newCORSEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithCORSOrigins([]string{appOrigin, "http://localhost:5173"}))
}

// raw sends a request that the OpenAPI document does not describe (a
// preflight) and returns the response with its body read.
func (e *env) raw(method, path string, hdr ...string) (*http.Response, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			out = append(out, k)
		}
	}
	return out
}

// A preflight from an allowed origin is 204 before any key is looked at,
// with the path's methods and the headers a browser app sends, and it
// spends nothing: neither the address's allowance for requests without a
// key, nor the key's when one is (needlessly) sent.
func TestCORSPreflightIsAnsweredBeforeAuthAndSpendsNothing(t *testing.T) {
	is := is.New(t)
	e := newCORSEnv(t)
	_, secret := e.account(fleet.PlanFree)

	anon := e.do("GET", "/v1/account", "", nil)
	is.Equal(anon.status, http.StatusUnauthorized)
	usedAnon, _ := strconv.Atoi(anon.header.Get("X-RateLimit-Used"))
	keyed := e.do("GET", "/v1/account", secret, nil)
	usedKey, _ := strconv.Atoi(keyed.header.Get("X-RateLimit-Used"))

	for range 5 {
		res, body := e.raw("OPTIONS", "/v1/vehicles", "Origin", appOrigin,
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, idempotency-key")
		is.Equal(res.StatusCode, http.StatusNoContent)
		is.Equal(body, "")
		is.Equal(res.Header.Get("Access-Control-Allow-Origin"), appOrigin) // the exact origin, never *
		is.Equal(res.Header.Get("Access-Control-Allow-Methods"), "GET, POST, HEAD")
		allowed := res.Header.Get("Access-Control-Allow-Headers")
		for _, h := range []string{"Authorization", "Content-Type", "Idempotency-Key", "Last-Event-ID"} {
			is.True(strings.Contains(allowed, h)) // allows the header
		}
		is.Equal(res.Header.Get("Access-Control-Max-Age"), strconv.Itoa(fleethttp.CORSMaxAge))
		is.True(strings.Contains(res.Header.Get("Vary"), "Origin"))
		is.Equal(res.Header.Get("Access-Control-Allow-Credentials"), "") // no cookies
		is.Equal(res.Header.Get("X-RateLimit-Used"), "")                 // counted nowhere
	}
	// A preflight that carries a key is still answered without it.
	res, _ := e.raw("OPTIONS", "/v1/vehicles/veh_x", "Origin", appOrigin, "Access-Control-Request-Method", "PATCH", "Authorization", "Bearer "+secret)
	is.Equal(res.StatusCode, http.StatusNoContent)
	is.Equal(res.Header.Get("Access-Control-Allow-Methods"), "GET, PATCH, DELETE, HEAD")

	anon = e.do("GET", "/v1/account", "", nil)
	n, _ := strconv.Atoi(anon.header.Get("X-RateLimit-Used"))
	is.Equal(n, usedAnon+1) // the preflights took nothing from the address's allowance
	keyed = e.do("GET", "/v1/account", secret, nil)
	n, _ = strconv.Atoi(keyed.header.Get("X-RateLimit-Used"))
	is.Equal(n, usedKey+1) // nor from the key's
}

// Actual responses to an allowed origin name it and expose the headers a
// script needs; errors too (a 401 or 429 must be readable by the page).
func TestCORSResponsesToAnAllowedOrigin(t *testing.T) {
	is := is.New(t)
	e := newCORSEnv(t)
	_, secret := e.account(fleet.PlanFree)
	for _, tc := range []struct {
		secret, origin string
		status         int
	}{
		{secret, appOrigin, http.StatusOK},
		{"", appOrigin, http.StatusUnauthorized},
		{secret, "http://localhost:5173", http.StatusOK},
	} {
		r := e.do("GET", "/v1/account", tc.secret, nil, "Origin", tc.origin)
		is.Equal(r.status, tc.status)
		is.Equal(r.header.Get("Access-Control-Allow-Origin"), tc.origin)
		is.True(strings.Contains(r.header.Get("Vary"), "Origin"))
		exposed := strings.Split(r.header.Get("Access-Control-Expose-Headers"), ", ")
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset",
			"RateLimit-Policy", "RateLimit", "Retry-After", "X-Request-Id", "Idempotent-Replayed"} {
			is.True(contains(exposed, h)) // exposes the header
		}
		is.Equal(r.header.Get("Access-Control-Allow-Methods"), "") // only preflights list methods
	}
	// A replayed POST: the page can read Idempotent-Replayed.
	body := map[string]any{"name": "Truck 1"}
	first := e.do("POST", "/v1/vehicles", secret, body, "Origin", appOrigin, "Idempotency-Key", "k1")
	is.Equal(first.status, http.StatusCreated)
	again := e.do("POST", "/v1/vehicles", secret, body, "Origin", appOrigin, "Idempotency-Key", "k1")
	is.Equal(again.header.Get("Idempotent-Replayed"), "true")
	is.Equal(again.header.Get("Access-Control-Allow-Origin"), appOrigin)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Other origins get no CORS headers, and their preflight is no 204: it is
// an ordinary request without a key. So is every request when no origin
// is configured.
func TestCORSOtherOriginsGetNothing(t *testing.T) {
	is := is.New(t)
	e := newCORSEnv(t)
	off := newEnv(t)
	for _, srv := range []*env{e, off} {
		_, secret := srv.account(fleet.PlanFree)
		for _, origin := range []string{"https://evil.example.com", "https://app.example.com.evil.net", "http://app.example.com", "null"} {
			res, _ := srv.raw("OPTIONS", "/v1/vehicles", "Origin", origin, "Access-Control-Request-Method", "GET")
			is.True(res.StatusCode != http.StatusNoContent)
			is.Equal(corsHeaders(res.Header), nil) // no CORS header on the preflight
			r := srv.do("GET", "/v1/account", secret, nil, "Origin", origin)
			is.Equal(r.status, http.StatusOK)
			is.Equal(corsHeaders(r.header), nil) // nor on the response
		}
	}
	// With CORS off, an allowed-looking origin gets nothing either.
	res, _ := off.raw("OPTIONS", "/v1/vehicles", "Origin", appOrigin, "Access-Control-Request-Method", "GET")
	is.Equal(res.StatusCode, http.StatusUnauthorized)
	is.Equal(corsHeaders(res.Header), nil)
	is.True(!strings.Contains(res.Header.Get("Vary"), "Origin")) // the answer does not depend on Origin
}

// A preflight for a path the API does not serve is not approved.
func TestCORSPreflightOfUnknownPath(t *testing.T) {
	is := is.New(t)
	e := newCORSEnv(t)
	res, _ := e.raw("OPTIONS", "/v1/nothing/here", "Origin", appOrigin, "Access-Control-Request-Method", "GET")
	is.True(res.StatusCode != http.StatusNoContent)
	is.Equal(res.Header.Get("Access-Control-Allow-Methods"), "")
	res, _ = e.raw("OPTIONS", "/v1/openapi.json", "Origin", appOrigin, "Access-Control-Request-Method", "GET")
	is.Equal(res.StatusCode, http.StatusNoContent)
	is.Equal(res.Header.Get("Access-Control-Allow-Methods"), "GET, HEAD")
}

func TestParseOrigins(t *testing.T) {
	is := is.New(t)
	got, err := fleethttp.ParseOrigins(" https://App.Example.com/ ,http://localhost:5173,https://x.example:443,, http://[::1]:8080")
	is.NoErr(err)
	is.Equal(got, []string{"https://app.example.com", "http://localhost:5173", "https://x.example", "http://[::1]:8080"})
	for _, bad := range []string{"*", "app.example.com", "ftp://x.example", "https://x.example/app", "https://x.example?a=1",
		"https://user@x.example", "https://x.example:99999", "https://", "https://x.example#f"} {
		_, err := fleethttp.ParseOrigins(bad)
		is.True(err != nil) // refused
		if err != nil {
			is.True(strings.Contains(err.Error(), "scheme://host")) // says what an origin looks like
		}
	}
	none, err := fleethttp.ParseOrigins("")
	is.NoErr(err)
	is.Equal(len(none), 0)
}

// A page can send every request header the document offers (If-None-Match
// among them) and read every response header it describes (ETag,
// Fleet-Version, the rate-limit headers...): the CORS lists cover the
// document, so a header added there and not here fails.
func TestCORSCoversTheDocumentsHeaders(t *testing.T) {
	is := is.New(t)
	doc := loadDoc(t)
	requestHeaders, responseHeaders := map[string]bool{}, map[string]bool{}
	for name := range doc.Components.Headers {
		responseHeaders[name] = true
	}
	for _, p := range doc.Components.Parameters {
		if p.Value.In == "header" {
			requestHeaders[p.Value.Name] = true
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value.In == "header" {
					requestHeaders[p.Value.Name] = true
				}
			}
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					for name := range r.Value.Headers {
						responseHeaders[name] = true
					}
				}
			}
		}
	}
	is.True(requestHeaders["If-None-Match"] && requestHeaders["Idempotency-Key"])
	is.True(responseHeaders["ETag"] && responseHeaders["Fleet-Version"])
	responseHeaders["Deprecation"], responseHeaders["Sunset"], responseHeaders["Link"] = true, true, true // on deprecated routes
	responseHeaders[fleethttp.NextCursorHeader] = true                                                    // on CSV pages

	e := newCORSEnv(t)
	_, secret := e.account(fleet.PlanFree)
	res, _ := e.raw("OPTIONS", "/v1/vehicles/veh_x", "Origin", appOrigin, "Access-Control-Request-Method", "GET",
		"Access-Control-Request-Headers", "authorization, if-none-match")
	is.Equal(res.StatusCode, http.StatusNoContent)
	allowed := strings.Split(res.Header.Get("Access-Control-Allow-Headers"), ", ")
	for h := range requestHeaders {
		if !slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, h) }) {
			t.Errorf("the preflight does not allow the request header %s", h)
		}
	}
	r := e.do("GET", "/v1/account", secret, nil, "Origin", appOrigin)
	is.Equal(r.status, http.StatusOK)
	exposed := strings.Split(r.header.Get("Access-Control-Expose-Headers"), ", ")
	for h := range responseHeaders {
		if !slices.ContainsFunc(exposed, func(a string) bool { return strings.EqualFold(a, h) }) {
			t.Errorf("the response header %s is not exposed", h)
		}
	}
	// The page revalidates its copy: If-None-Match with the ETag it read.
	tag := r.header.Get("ETag")
	is.True(tag != "")
	again := e.do("GET", "/v1/account", secret, nil, "Origin", appOrigin, "If-None-Match", tag)
	is.Equal(again.status, http.StatusNotModified)
	is.Equal(again.header.Get("Access-Control-Allow-Origin"), appOrigin)
}
