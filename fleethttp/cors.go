package fleethttp

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// WithCORSOrigins lets browser pages served from origins call the API
// (cross-origin resource sharing). Each origin is exactly
// scheme://host[:port], as a browser sends it in Origin; use ParseOrigins to
// check a list first (NewHandler panics on an origin it cannot use). None by
// default: without origins, the handler sends no CORS headers at all.
//
// For an allowed origin:
//   - a preflight (OPTIONS with Origin and Access-Control-Request-Method) is
//     answered 204 before authentication: it needs no key and takes nothing
//     from any allowance, neither a key's nor the address's. It allows the
//     methods the path is served with and the request headers
//     CORSAllowHeaders, and may be cached for CORSMaxAge.
//   - every other response carries Access-Control-Allow-Origin with that
//     exact origin (never *), Vary: Origin, and Access-Control-Expose-Headers
//     listing the rate-limit headers, Retry-After, X-Request-Id,
//     Idempotent-Replayed, ETag, Fleet-Version, Next-Cursor and the
//     deprecation headers (Deprecation, Sunset, Link), so a page's script
//     can read them.
//
// Any other origin gets no CORS headers, and its preflight is an ordinary
// request (a browser then refuses the call). No credentials (cookies) are
// allowed: the API authenticates with Authorization, which needs none.
func WithCORSOrigins(origins []string) Option {
	return func(h *Handler) {
		norm, err := ParseOrigins(strings.Join(origins, ","))
		if err != nil {
			panic("fleethttp: WithCORSOrigins: " + err.Error())
		}
		if len(norm) == 0 {
			h.cors = nil
			return
		}
		h.cors = make(map[string]bool, len(norm))
		for _, o := range norm {
			h.cors[o] = true
		}
	}
}

// CORSAllowHeaders are the request headers a preflight allows: every
// header the OpenAPI document offers a client. X-Request-Id is among them
// because the API echoes a client's own id; If-None-Match, so that a page
// can revalidate what it holds (304).
var CORSAllowHeaders = []string{"Authorization", "Content-Type", "Idempotency-Key", "If-None-Match", "Last-Event-ID", "X-Request-Id"}

// CORSMaxAge is how long a browser may cache a preflight's answer.
// (Browsers cap it: Chromium at 2 hours, Firefox at 24.)
const CORSMaxAge = 7200

// corsExposeHeaders are the response headers a page's script may read
// beyond the safelisted ones: every header the OpenAPI document says an
// answer carries (TestCORSExposesWhatTheDocumentDescribes).
func corsExposeHeaders() string {
	names := make([]string, 0, len(rateLimitHeaders)+9)
	for _, rl := range rateLimitHeaders {
		names = append(names, rl.name)
	}
	names = append(names, "Retry-After", "X-Request-Id", "Idempotent-Replayed", "ETag", VersionHeader, NextCursorHeader,
		"Deprecation", "Sunset", "Link")
	return strings.Join(names, ", ")
}

// ParseOrigins parses a comma-separated list of origins (as the server's
// --cors-origins takes it) into their canonical form: lower-case scheme and
// host, no default port, no trailing slash. An origin with a path, query,
// user or fragment, a scheme other than http or https, or "*" is an error
// naming it. Empty items are skipped.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		o, err := canonicalOrigin(item)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func canonicalOrigin(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("origin %q: %s (write scheme://host[:port], e.g. https://app.example.com)", s, why)
	}
	if s == "*" {
		return bad("every origin is not allowed; list each origin")
	}
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil {
		return bad("not a URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return bad("the scheme must be http or https")
	}
	if u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(s, "?") {
		return bad("an origin is a scheme and a host only")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return bad("no host")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return bad("bad port")
		}
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			port = ""
		}
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

// cors applies the CORS rules to a request before anything else sees it.
// It reports whether the request has been answered (an allowed preflight).
func (h *Handler) corsRequest(w http.ResponseWriter, r *http.Request) bool {
	if h.cors == nil {
		return false
	}
	hd := w.Header()
	// The answer depends on Origin wherever CORS is on.
	addVary(hd, "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" || !h.cors[origin] {
		return false
	}
	hd["Access-Control-Allow-Origin"] = []string{origin}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		methods := h.methodsOf(r)
		if len(methods) == 0 {
			return false // no such path: the ordinary answer (404) follows
		}
		hd["Access-Control-Allow-Methods"] = []string{strings.Join(methods, ", ")}
		hd["Access-Control-Allow-Headers"] = []string{strings.Join(CORSAllowHeaders, ", ")}
		hd["Access-Control-Max-Age"] = []string{strconv.Itoa(CORSMaxAge)}
		delete(hd, "Content-Type")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	hd["Access-Control-Expose-Headers"] = []string{h.corsExpose}
	return false
}

// methodsOf lists the methods the request's path is served with.
func (h *Handler) methodsOf(r *http.Request) []string {
	switch r.URL.Path {
	case "/healthz", "/readyz", "/v1/healthz", "/v1/readyz", "/v1/openapi.json":
		return []string{http.MethodGet, http.MethodHead}
	}
	if !canonicalPath(r.URL.Path) {
		return nil
	}
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := h.mux.Handler(probe); p != "" && p != "/" {
			out = append(out, m)
		}
	}
	if containsStr(out, http.MethodGet) {
		out = append(out, http.MethodHead)
	}
	return out
}
