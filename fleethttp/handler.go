// Package fleethttp is the HTTP adapter of the fleet core: the /v1 API
// handler (routes, middleware, JSON, errors), the OpenAPI document, and Client,
// the Go SDK. It is the only package of the module that knows HTTP.
package fleethttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Option configures a Handler.
type Option func(*Handler)

// WithLogger sets where access and error logs go (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option { return func(h *Handler) { h.log = l } }

// WithBodyTimeouts sets how long a request body may take to arrive, from
// when the handler starts reading it: body for ordinary bodies, batch for
// location batches (the routes with the MaxBatchBody limit). A body still
// arriving when its time is up is cut off: the request is answered 400
// invalid_request, naming the limit, and the connection is closed. Zero
// keeps the default (DefaultBodyTimeout, DefaultBatchBodyTimeout). Every
// request with a body gets the body timeout from its start, whatever
// answers it (LimitBodyTime): one answered without reading its body (a
// 401, 404, 405, 415 or 429) closes its connection at once.
func WithBodyTimeouts(body, batch time.Duration) Option {
	return func(h *Handler) {
		if body > 0 {
			h.bodyTimeout = body
		}
		if batch > 0 {
			h.batchBodyTimeout = batch
		}
	}
}

// Body limits of the contract.
const (
	MaxBody      = 1 << 20 // 1 MiB
	MaxBatchBody = 8 << 20 // 8 MiB, for location batches
)

// How long a request body may take to arrive by default (see
// WithBodyTimeouts).
const (
	DefaultBodyTimeout      = 30 * time.Second
	DefaultBatchBodyTimeout = 120 * time.Second
)

// Handler serves the /v1 API, and the health checks /healthz and /readyz
// (also under /v1, where generated clients look for them).
type Handler struct {
	svc     *fleet.Service
	log     *slog.Logger
	mux     *http.ServeMux
	routes  []route
	ridPre  string        // random per handler, so ids differ across servers
	ridSeq  atomic.Uint64 // then a counter: no system call per request
	metrics *metrics

	bodyTimeout, batchBodyTimeout time.Duration

	version    string   // what Fleet-Version says (WithVersion)
	versionHdr []string // its header value, made once

	// extraRoutes, when set, adds routes after the route table's (tests
	// use it for routes the API does not have, such as a deprecated one).
	extraRoutes func(*Handler) []route
	cors        map[string]bool // allowed origins (WithCORSOrigins); nil: CORS off
	tokenPaths  map[string]bool // paths of the routes that take a stream token
	corsExpose  string
	publicURL   string   // the dashboard's address (WithPublicURL); "": the request's
	gzip        gzipPool // compressors, reused across answers
	openAPITag  string   // the OpenAPI document's ETag
}

// NewHandler returns the HTTP handler of the API over svc.
func NewHandler(svc *fleet.Service, opts ...Option) *Handler {
	h := &Handler{svc: svc, log: slog.Default(), mux: http.NewServeMux(),
		bodyTimeout: DefaultBodyTimeout, batchBodyTimeout: DefaultBatchBodyTimeout, version: ModuleVersion()}
	for _, o := range opts {
		o(h)
	}
	h.versionHdr = []string{headerSafe(h.version)}
	var b [6]byte
	rand.Read(b[:])
	h.ridPre = "req_" + hex.EncodeToString(b[:]) + "_"
	h.corsExpose = corsExposeHeaders()
	h.openAPITag = entityTag(OpenAPI)
	h.routes = h.routeTable()
	if h.extraRoutes != nil {
		h.routes = append(h.routes, h.extraRoutes(h)...)
	}
	h.metrics = newMetrics(h.routes)
	h.tokenPaths = map[string]bool{}
	for i, rt := range h.routes {
		h.mux.Handle(rt.method+" "+rt.pattern, h.wrap(i+1, rt))
		if rt.doc.tokenAuth {
			if strings.Contains(rt.pattern, "{") || rt.method != http.MethodGet {
				panic("fleethttp: a route that takes a stream token is a GET without wildcards: " + rt.pattern)
			}
			h.tokenPaths[rt.pattern] = true
		}
	}
	// What no route matches falls through to noRoute (404, or 405 with Allow).
	h.mux.HandleFunc("/", h.noRoute)
	return h
}

type ctxKey struct{}

// state is what the pipeline learns about a request as it goes.
type state struct {
	requestID string
	principal fleet.Principal
	authed    bool
	route     int          // 1 + the index of the route that took the request; 0 if none
	sw        statusWriter // one allocation for the request's bookkeeping
	gz        gzipWriter   // compresses the answer when the client accepts gzip
	gzipping  bool         // the answer is compressed once it reaches GzipMinBytes
	call      call         // the route's view of the request, made by its wrapper
	admission bool         // admit has run (and let the request in)
	// Backing arrays of header values the request answers with, so that
	// setting them allocates nothing more.
	ridHdr   [1]string
	quotaHdr [6]string
}

func stateOf(r *http.Request) *state { return r.Context().Value(ctxKey{}).(*state) }

// Header values every answer carries, made once.
var (
	nosniff            = []string{"nosniff"}
	noStore            = []string{"no-store"}
	varyAcceptEncoding = []string{"Accept-Encoding"}
)

// ServeHTTP runs every request through: request id, recover, access log,
// then (for the API) authentication and quota, routing, and the route.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := &state{requestID: h.requestID(r)}
	hd := w.Header()
	st.ridHdr[0] = st.requestID
	hd["X-Request-Id"] = st.ridHdr[:]
	hd[VersionHeader] = h.versionHdr
	// API answers are for one caller: no content sniffing, no caching on
	// the way (routes that may be cached, such as the OpenAPI document,
	// set their own Cache-Control).
	hd["X-Content-Type-Options"] = nosniff
	hd["Cache-Control"] = noStore
	hd["Vary"] = varyAcceptEncoding // any answer may be compressed (addVary adds to it)
	st.sw.ResponseWriter = w
	gzipping := r.Method != http.MethodHead && acceptsGzip(r)
	if gzipping {
		st.gzipping = true
		st.gz = gzipWriter{ResponseWriter: w, pool: &h.gzip}
		st.sw.ResponseWriter = &st.gz
	}
	sw := &st.sw
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, st))
	// A body must arrive within the body timeout, and an answer given
	// without reading it closes the connection (LimitBodyTime).
	if g := guardBody(w, r, h.bodyTimeout); g != nil {
		r.Body = g
		defer g.done()
	}
	h.metrics.inFlight.Add(1)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("panic", "request_id", st.requestID, "panic", p)
			if !sw.wrote {
				writeError(sw, h.log, st.requestID, fleet.Errorf(fleet.CodeInternal, "panic"))
			}
		}
		if gzipping {
			st.gz.finish()
		}
		h.metrics.inFlight.Add(-1)
		h.metrics.observe(st.route, sw.status(), time.Since(start))
		h.access(r, st, sw, start)
	}()
	h.serve(sw, r, st)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, st *state) {
	if h.corsRequest(w, r) {
		return // an allowed preflight: answered before any key or allowance
	}
	switch r.URL.Path {
	case "/healthz", "/v1/healthz":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		}
	case "/readyz", "/v1/readyz":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			if err := h.svc.Ready(r.Context()); err != nil {
				w.Header()["Retry-After"] = unavailableRetryAfter
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		}
	case "/v1/openapi.json":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			serveOpenAPI(w, r, h.openAPITag)
			return
		}
	}
	if p := r.URL.Path; !canonicalPath(p) || !strings.HasPrefix(p, "/") || r.Method == http.MethodConnect {
		// What ServeMux would answer itself (a redirect to the cleaned
		// path, which may be another resource; a request URI of "*"; a
		// CONNECT) is admitted here, before the mux sees it.
		if !h.admitted(w, r, st) {
			return
		}
		if !canonicalPath(p) {
			// An API answers for the path it was asked.
			writeError(w, h.log, st.requestID, fleet.Errorf(fleet.CodeNotFound, "No route %s %s.", r.Method, p))
			return
		}
	}
	// The mux finds the route once; its wrapper (wrap) or noRoute admits
	// the request, after setting a deprecated route's headers.
	h.mux.ServeHTTP(w, r)
}

// admitted runs admit once for the request: a request admitted before the
// mux is not charged again by its route.
func (h *Handler) admitted(w http.ResponseWriter, r *http.Request, st *state) bool {
	if st.admission {
		return true
	}
	st.admission = true
	return h.admit(w, r, st)
}

// canonicalPath reports whether p has no empty, "." or ".." segment.
func canonicalPath(p string) bool {
	for seg := range strings.SplitSeq(strings.TrimPrefix(p, "/"), "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.Contains(p, "//")
}

// noRoute answers a request that no route matches: 405 with Allow when the
// path exists under other methods, else 404.
func (h *Handler) noRoute(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	if !h.admitted(w, r, st) {
		return
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := h.mux.Handler(probe); p != "" && p != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		if containsStr(allow, http.MethodGet) {
			allow = append(allow, http.MethodHead)
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, h.log, st.requestID, fleet.Errorf(fleet.CodeMethodNotAllowed, "Method %s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	writeError(w, h.log, st.requestID, fleet.Errorf(fleet.CodeNotFound, "No route %s %s.", r.Method, r.URL.Path))
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// requestID returns the client's X-Request-Id when it is sane (1 to 128
// visible ASCII characters), else a new one.
func (h *Handler) requestID(r *http.Request) string {
	if v := r.Header.Get("X-Request-Id"); v != "" && len(v) <= 128 {
		ok := true
		for i := 0; i < len(v); i++ {
			if v[i] <= ' ' || v[i] > '~' {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return h.ridPre + strconv.FormatUint(h.ridSeq.Add(1), 36)
}

func (h *Handler) access(r *http.Request, st *state, sw *statusWriter, start time.Time) {
	if !h.log.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs,
		slog.String("request_id", st.requestID),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", sw.status()),
		slog.Int64("bytes", sw.n),
		slog.Duration("duration", time.Since(start)),
		slog.String("remote", clientAddr(r)),
	)
	if r.URL.RawQuery != "" {
		// A stream token in the query is a credential: never logged.
		attrs = append(attrs, slog.String("query", redactQuery(r.URL.RawQuery)))
	}
	if st.authed {
		attrs = append(attrs, slog.String("key_id", st.principal.Key.ID), slog.String("account_id", st.principal.Account.ID))
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
}

// clientAddr is the address a request came from (its TCP peer).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	code  int
	n     int64
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.code, w.wrote = http.StatusOK, true
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

func (w *statusWriter) status() int {
	if !w.wrote {
		return http.StatusOK
	}
	return w.code
}

// Unwrap lets http.ResponseController reach the connection (flushing for
// the event stream, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wrote {
			w.code, w.wrote = http.StatusOK, true
		}
		f.Flush()
	}
}
