package fleethttp

import (
	"bytes"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strconv"

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
}

func (c *call) ok(status int, data any) error {
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
	limit := rt.maxBody
	if limit == 0 {
		limit = MaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		st.route = index
		c := &call{w: w, r: r, p: st.principal, h: h, rid: st.requestID}
		if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
			b, err := readBody(w, r, limit)
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

// idempotent runs a POST made with an Idempotency-Key: a repeat of a
// finished request replays its response; a server error is not remembered,
// so that a retry runs again.
func (h *Handler) idempotent(c *call, rt route, idemKey string) {
	hash := sha256.New()
	hash.Write([]byte(c.r.Method + " " + c.r.URL.Path + "?" + c.r.URL.RawQuery + "\n"))
	hash.Write(c.body)
	var sum [32]byte
	hash.Sum(sum[:0])
	ctx := c.r.Context()
	prev, err := h.svc.BeginIdempotent(ctx, c.p, idemKey, sum)
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
	if rec.status >= 500 || rec.status == 0 {
		if err := h.svc.AbandonIdempotent(ctx, c.p, idemKey); err != nil {
			h.log.Error("forget idempotency key", "request_id", c.rid, "err", err)
		}
		return
	}
	if err := h.svc.FinishIdempotent(ctx, c.p, idemKey, rec.status, rec.buf.Bytes()); err != nil {
		h.log.Error("store idempotent response", "request_id", c.rid, "err", err)
	}
}

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
