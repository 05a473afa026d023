package fleethttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/internal/testlog"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// T0 is when every test starts.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// env is a real server on loopback over a memstore, with a settable clock;
// every response it receives is validated against the OpenAPI document.
type env struct {
	t      *testing.T
	store  fleet.Store
	clock  *testclock.Clock
	svc    *fleet.Service
	h      *fleethttp.Handler
	srv    *httptest.Server
	router routers.Router
	logs   *syncBuffer
}

// syncBuffer is a log sink the tests read after the fact.
type syncBuffer = testlog.Buffer

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, memstore.New(), testclock.New(T0))
}

// newEnvOn starts a server over store; servers on the same store act as one
// service. opts are fleet.Options changes (func(*fleet.Options)) and
// handler options (fleethttp.Option).
func newEnvOn(t *testing.T, store fleet.Store, clock *testclock.Clock, opts ...any) *env {
	t.Helper()
	e := &env{t: t, store: store, clock: clock, logs: &syncBuffer{}}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := fleet.Options{Now: clock.Now, Logger: log, Webhooks: fleet.WebhookOptions{Insecure: true, SecretKeys: testSecretKeys(t)}}
	hopts := []fleethttp.Option{fleethttp.WithLogger(log)}
	for _, opt := range opts {
		switch f := opt.(type) {
		case func(*fleet.Options):
			f(&o)
		case fleethttp.Option:
			hopts = append(hopts, f)
		default:
			t.Fatalf("newEnvOn: unknown option %T", opt)
		}
	}
	e.svc = fleet.NewService(store, o)
	e.h = fleethttp.NewHandler(e.svc, hopts...)
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(e.srv.Close)
	// Whatever a test did, no key or webhook secret reached the log.
	t.Cleanup(func() {
		if m := secretPattern.FindString(e.logs.String()); m != "" {
			t.Errorf("a secret was logged: %s...", m[:12])
		}
	})
	e.router = openAPIRouter(t, e.srv.URL)
	return e
}

// testSecretKeys are the keys every test server seals webhook secrets
// with: one fixed key, so that servers sharing a store open each other's.
func testSecretKeys(t *testing.T) *fleet.SecretKeys {
	t.Helper()
	k, err := fleet.NewSecretKeys(bytes.Repeat([]byte{0x5e}, fleet.SecretKeyLen))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

var secretPattern = regexp.MustCompile(`fleet_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z+/=]{10,}|fst_[0-9A-Za-z]{10,}`)

var (
	docOnce sync.Once
	docErr  error
	docData *openapi3.T
)

func openAPIRouter(t *testing.T, base string) routers.Router {
	t.Helper()
	docOnce.Do(func() {
		loader := openapi3.NewLoader()
		docData, docErr = loader.LoadFromData(fleethttp.OpenAPI)
		if docErr == nil {
			docErr = docData.Validate(context.Background())
		}
	})
	if docErr != nil {
		t.Fatalf("OpenAPI document: %v", docErr)
	}
	// Paths outside /v1 name their own server; the router does not read
	// path-level servers, so they get a router of their own.
	api, outside := *docData, *docData
	api.Servers = openapi3.Servers{{URL: base + "/v1"}}
	outside.Servers = openapi3.Servers{{URL: base}}
	api.Paths, outside.Paths = openapi3.NewPaths(), openapi3.NewPaths()
	for p, item := range docData.Paths.Map() {
		if len(item.Servers) > 0 {
			outside.Paths.Set(p, item)
		} else {
			api.Paths.Set(p, item)
		}
	}
	var rs multiRouter
	for _, d := range []*openapi3.T{&api, &outside} {
		// The document was validated once above, its examples included;
		// a router of each test validates it again without them, which
		// would cost most of the test's time.
		r, err := legacy.NewRouter(d, openapi3.DisableExamplesValidation())
		if err != nil {
			t.Fatalf("OpenAPI router: %v", err)
		}
		rs = append(rs, r)
	}
	return rs
}

// multiRouter asks each router in turn.
type multiRouter []routers.Router

func (m multiRouter) FindRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	var first error
	for _, r := range m {
		route, params, err := r.FindRoute(req)
		if err == nil {
			return route, params, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, nil, first
}

// account creates an account on plan and returns it with its first key.
func (e *env) account(plan fleet.Plan) (fleet.Account, string) {
	e.t.Helper()
	a, nk, err := e.svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme Haulage", Plan: plan})
	if err != nil {
		e.t.Fatalf("create account: %v", err)
	}
	return a, nk.Secret
}

// keyWith creates a key holding perms in the account of secret.
func (e *env) keyWith(secret string, perms ...string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/api_keys", secret, map[string]any{"name": "limited", "permissions": perms})
	if r.status != http.StatusCreated {
		e.t.Fatalf("create key: %d %s", r.status, r.body)
	}
	return r.data()["key"].(string)
}

type response struct {
	t      *testing.T
	status int
	header http.Header
	body   []byte
}

// json decodes the body.
func (r *response) json() map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		r.t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func (r *response) data() map[string]any {
	r.t.Helper()
	d, ok := r.json()["data"].(map[string]any)
	if !ok {
		r.t.Fatalf("response has no data object: %s", r.body)
	}
	return d
}

func (r *response) list() []any {
	r.t.Helper()
	d, ok := r.json()["data"].([]any)
	if !ok {
		r.t.Fatalf("response has no data array: %s", r.body)
	}
	return d
}

func (r *response) errCode() string {
	r.t.Helper()
	e, ok := r.json()["error"].(map[string]any)
	if !ok {
		r.t.Fatalf("response has no error: %s", r.body)
	}
	return e["code"].(string)
}

func (r *response) errMessage() string {
	return r.json()["error"].(map[string]any)["message"].(string)
}

// do sends a request: body is JSON-encoded unless it is a string or []byte
// (sent as is); hdr is pairs of header names and values.
func (e *env) do(method, path, secret string, body any, hdr ...string) *response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	var sent []byte
	if rd != nil {
		sent, _ = io.ReadAll(rd)
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read body: %v", err)
	}
	r := &response{t: e.t, status: res.StatusCode, header: res.Header, body: b}
	e.validate(req, sent, r)
	return r
}

// validate checks a response against the OpenAPI document: its status is
// documented for the operation, and its headers and body match.
func (e *env) validate(req *http.Request, sent []byte, r *response) {
	e.t.Helper()
	if req.URL.Path == "/healthz" || req.URL.Path == "/readyz" {
		// The document describes them under /v1, and says they are
		// served at the root too.
		req = req.Clone(req.Context())
		req.URL.Path = "/v1" + req.URL.Path
	}
	route, params, err := e.router.FindRoute(req)
	if err != nil {
		// Unknown routes and methods have no operation; their answers must
		// still be the error envelope with the rate-limit headers (keys are
		// checked before routes, so 401 and 429 come first).
		switch r.status {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized, http.StatusTooManyRequests:
		default:
			e.t.Fatalf("%s %s: no operation in the OpenAPI document (%v), status %d", req.Method, req.URL.Path, err, r.status)
		}
		e.validateErrorEnvelope(r)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: r.status, Header: r.header,
		Body: io.NopCloser(bytes.NewReader(r.body)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}); err != nil {
		e.t.Fatalf("%s %s -> %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, r.status, err, r.body)
	}
}

func (e *env) validateErrorEnvelope(r *response) {
	e.t.Helper()
	schema := docData.Components.Schemas["ErrorEnvelope"].Value
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		e.t.Fatalf("error body is not JSON: %s", r.body)
	}
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		e.t.Fatalf("error body does not match ErrorEnvelope: %v: %s", err, r.body)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit", "X-Request-Id"} {
		if r.header.Get(h) == "" {
			e.t.Fatalf("response %d lacks header %s", r.status, h)
		}
	}
}

// simultaneously sends n requests at once, request i built by build and
// sent to its server, and counts the answers by status.
func simultaneously(t *testing.T, n int, build func(i int) (*env, *http.Request)) map[int]int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	start := make(chan struct{})
	for i := range n {
		srv, req := build(i)
		wg.Go(func() {
			<-start
			res, err := srv.srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			statuses[res.StatusCode]++
		})
	}
	close(start)
	wg.Wait()
	return statuses
}
