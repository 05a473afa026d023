package fleethttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// call is one request as a route sees it.
type call struct {
	w    http.ResponseWriter
	r    *http.Request
	p    fleet.Principal
	body []byte
	h    *Handler
	rid  string
	// validated: the route is a GET of one resource, whose 200 carries
	// an ETag and may be answered 304 (route.validated).
	validated bool
}

func (c *call) ok(status int, data any) error {
	if c.validated {
		writeJSONTagged(c.w, c.r, status, envelope{Success: true, Data: data})
		return nil
	}
	writeJSON(c.w, status, envelope{Success: true, Data: data})
	return nil
}

func (c *call) list(data any, next string, hasMore bool) error {
	pg := &pagination{HasMore: hasMore}
	if next != "" {
		pg.NextCursor = &next
	}
	writeJSON(c.w, http.StatusOK, envelope{Success: true, Data: data, Pagination: pg})
	return nil
}

// query parses the query string; a malformed one is invalid_request, and
// so is one whose values hold control characters (checkQueryText).
func (c *call) query() (url.Values, error) {
	q, err := url.ParseQuery(c.r.URL.RawQuery)
	if err != nil {
		return nil, fleet.Errorf(fleet.CodeInvalidRequest, "The query string is malformed.")
	}
	return q, checkQueryText(q)
}

// listQuery parses the query string of a list endpoint once: its limit and
// cursor, and the values, for the endpoint's own filters.
func (c *call) listQuery() (url.Values, fleet.ListQuery, error) {
	q, err := c.query()
	if err != nil {
		return nil, fleet.ListQuery{}, err
	}
	lq := fleet.ListQuery{Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, lq, fleet.Errorf(fleet.CodeInvalidRequest, "limit must be a positive whole number.")
		}
		lq.Limit = n
	}
	return q, lq, nil
}

// wrap turns a route into an http.Handler: it reads the body of requests
// that carry one, applies Idempotency-Key to POSTs, and writes the error a
// route returns.
func (h *Handler) wrap(index int, rt route) http.Handler {
	limit, timeout := rt.maxBody, h.bodyTimeout
	if limit == 0 {
		limit = MaxBody
	}
	if limit > MaxBody {
		timeout = h.batchBodyTimeout
	}
	var known, repeatable []string // the query parameters the route takes; those that take several values
	for _, p := range rt.doc.query {
		if p.in == "" || p.in == "query" {
			known = append(known, p.name)
			if p.repeatable() {
				repeatable = append(repeatable, p.name)
			}
		}
	}
	if rt.doc.tokenAuth {
		known = append(known, tokenParam)
	}
	validated := rt.validated()
	// Every answer of a deprecated route says so, 401 and 429 included: a
	// client learns it before its key works.
	deprecation := deprecationHeaders(rt.doc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		if deprecation != nil {
			hd := w.Header()
			for k, v := range deprecation {
				hd[k] = v
			}
		}
		if !h.admitted(w, r, st) {
			return
		}
		st.route = index
		if err := checkQuery(r.URL.RawQuery, known, repeatable); err != nil {
			writeError(w, h.log, st.requestID, err)
			return
		}
		c := &st.call
		*c = call{w: w, r: r, p: st.principal, h: h, rid: st.requestID, validated: validated}
		if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
			b, err := readBody(w, r, limit, timeout)
			if err != nil {
				writeError(w, h.log, st.requestID, err)
				return
			}
			c.body = b
		}
		if idem := r.Header.Get("Idempotency-Key"); idem != "" && r.Method == http.MethodPost {
			h.idempotent(c, rt, idem)
			return
		}
		if err := rt.serve(c); err != nil {
			writeError(w, h.log, st.requestID, err)
		}
	})
}

// checkQuery refuses a query string that is malformed, names a parameter
// the route does not take, or gives a parameter that takes one value more
// than once: bodies are strict, and so are queries (a typo such as
// ?tags=north would otherwise return the whole list, and of ?limit=5&limit=500
// one value or the other would be taken silently).
func checkQuery(raw string, known, repeatable []string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return fleet.Errorf(fleet.CodeInvalidRequest, "The query string is malformed.")
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return checkRepeats(q, repeatable)
	}
	slices.Sort(unknown)
	takes := "no query parameters"
	if len(known) > 0 {
		takes = "only " + strings.Join(known, ", ")
	}
	e := fleet.Errorf(fleet.CodeInvalidRequest, "Unknown query parameter %q: this endpoint takes %s.", unknown[0], takes)
	for _, k := range unknown {
		e.Details = append(e.Details, fleet.FieldError{Field: k, Message: "is not a query parameter of this endpoint"})
	}
	return e
}

// checkRepeats refuses a parameter given more than once, unless it is
// repeatable, naming it.
func checkRepeats(q url.Values, repeatable []string) error {
	var twice []string
	for k, v := range q {
		if len(v) > 1 && !slices.Contains(repeatable, k) {
			twice = append(twice, k)
		}
	}
	if len(twice) == 0 {
		return nil
	}
	slices.Sort(twice)
	e := fleet.Errorf(fleet.CodeInvalidRequest, "Query parameter %q is given %d times: it takes one value.", twice[0], len(q[twice[0]]))
	for _, k := range twice {
		e.Details = append(e.Details, fleet.FieldError{Field: k, Message: "is given more than once; it takes one value"})
	}
	return e
}

// idempotent runs a POST made with an Idempotency-Key: a repeat of a
// finished request replays its response; a server error or a 429 is not
// remembered, so that a retry runs again.
func (h *Handler) idempotent(c *call, rt route, idemKey string) {
	hash := sha256.New()
	hash.Write([]byte(c.r.Method + " " + c.r.URL.Path + "?" + c.r.URL.RawQuery + "\n"))
	hash.Write(c.body)
	var sum [32]byte
	hash.Sum(sum[:0])
	// Stored responses are sealed with a key derived from the request's
	// own secret, which the server does not keep.
	secret, _ := bearer(c.r.Header.Get("Authorization"))
	seal := fleet.SealKeyFor(secret)
	prev, err := h.svc.Edge().BeginIdempotent(c.r.Context(), c.p, seal, idemKey, sum)
	if err != nil {
		writeError(c.w, h.log, c.rid, err)
		return
	}
	if prev != nil {
		hd := c.w.Header()
		hd["Idempotent-Replayed"] = []string{"true"}
		hd["Content-Type"] = jsonContentType
		c.w.WriteHeader(prev.Status)
		c.w.Write(prev.Body)
		return
	}
	rec := &recorder{ResponseWriter: c.w}
	c.w = rec
	if err := rt.serve(c); err != nil {
		writeError(rec, h.log, c.rid, err)
	}
	// The outcome is recorded whatever the client's connection does: a
	// client gone after the work committed must find its retry replayed,
	// not refused as in progress, nor run twice.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.Context()), recordTimeout)
	defer cancel()
	// Nor is a 429: the same request may succeed once the window has
	// turned (a batch refused for the points allowance).
	if rec.status >= 500 || rec.status == 0 || rec.status == http.StatusTooManyRequests {
		if err := h.svc.Edge().AbandonIdempotent(ctx, c.p, idemKey); err != nil {
			h.log.Error("forget idempotency key", "request_id", c.rid, "err", err)
		}
		return
	}
	if err := h.svc.Edge().FinishIdempotent(ctx, c.p, seal, idemKey, rec.status, rec.buf.Bytes()); err != nil {
		h.log.Error("store idempotent response", "request_id", c.rid, "err", err)
	}
}

// recordTimeout bounds the recording of an idempotent request's outcome,
// which does not end with the client's connection.
const recordTimeout = 10 * time.Second

// recorder passes a response through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.buf.Write(b)
	return r.ResponseWriter.Write(b)
}
