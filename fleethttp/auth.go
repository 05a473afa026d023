package fleethttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// admit authenticates the request and takes it from the key's hourly
// allowance (or, for a request without a valid key, from its address's),
// setting the rate-limit headers on the response. It reports whether the
// request may go on; when not, the response is written. A route that takes
// a stream token (the live stream) is authenticated by the token when the
// GET has no Authorization header: the token is spent, and the request is
// the key's that made it. A HEAD does not spend a token.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, st *state) bool {
	header := r.Header.Get("Authorization")
	secret, found := bearer(header)
	var p fleet.Principal
	var authErr error
	if token, ok := h.streamTokenOf(r); ok && header == "" {
		p, authErr = h.svc.Edge().RedeemStreamToken(r.Context(), token)
	} else if found {
		p, authErr = h.svc.Authenticate(r.Context(), secret)
	} else if h.headWithToken(r) {
		authErr = fleet.Errorf(fleet.CodeUnauthorized, "A stream token is spent by the GET that opens the stream, not by HEAD, which leaves it unused: send Authorization: Bearer <API_KEY> with a HEAD.")
	} else {
		authErr = fleet.Errorf(fleet.CodeUnauthorized, "The API key is invalid or missing: send Authorization: Bearer <API_KEY>.")
	}
	if authErr == nil {
		return h.admitKey(w, r, st, p)
	}
	if fleet.ErrorCode(authErr) != fleet.CodeUnauthorized {
		writeError(w, h.log, st.requestID, authErr)
		return false
	}
	if h.svc.Edge().AddressLimit() == 0 { // the brake is off: no window, no headers
		writeError(w, h.log, st.requestID, authErr)
		return false
	}
	q, err := h.svc.Edge().AdmitAddress(r.Context(), clientAddr(r))
	if err != nil {
		writeError(w, h.log, st.requestID, err)
		return false
	}
	setQuotaHeaders(w.Header(), &st.quotaHdr, q, h.svc.Now())
	if !q.Allowed {
		h.tooMany(w, st, q, "Too many requests without a valid API key from this address; retry after %d seconds.")
		return false
	}
	writeError(w, h.log, st.requestID, authErr)
	return false
}

// admitKey takes a request of the principal's key from its hourly
// allowance.
func (h *Handler) admitKey(w http.ResponseWriter, r *http.Request, st *state, p fleet.Principal) bool {
	q, err := h.svc.Edge().Admit(r.Context(), p)
	if err != nil {
		writeError(w, h.log, st.requestID, err)
		return false
	}
	st.principal, st.authed = p, true
	setQuotaHeaders(w.Header(), &st.quotaHdr, q, h.svc.Now())
	if !q.Allowed {
		h.tooMany(w, st, q, "Rate limit exceeded. Retry after %d seconds.")
		return false
	}
	return true
}

// tooMany answers 429 with Retry-After; message takes the seconds to wait.
func (h *Handler) tooMany(w http.ResponseWriter, st *state, q fleet.Quota, message string) {
	n := q.RetryAfter(h.svc.Now())
	e := fleet.Errorf(fleet.CodeRateLimitExceeded, message, n)
	e.RetryAfter = time.Duration(n) * time.Second
	writeError(w, h.log, st.requestID, e)
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	const p = "bearer "
	if len(header) <= len(p) || !strings.EqualFold(header[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(header[len(p):]), true
}

// setQuotaHeaders writes the rate-limit headers, spelled exactly as the
// contract writes them (so they are set on the map, not canonicalised).
func setQuotaHeaders(hd http.Header, backing *[6]string, q fleet.Quota, now time.Time) {
	// The six values are written into one buffer and cut from one
	// string, held in the request's own array: one allocation.
	var buf [192]byte
	b := buf[:0]
	var ends [6]int
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	ends[0] = len(b)
	b = strconv.AppendInt(b, int64(q.Remaining), 10)
	ends[1] = len(b)
	b = strconv.AppendInt(b, int64(q.Used), 10)
	ends[2] = len(b)
	b = strconv.AppendInt(b, q.ResetUnix(), 10)
	ends[3] = len(b)
	b = append(b, `"hourly";q=`...)
	b = append(b, b[:ends[0]]...)
	b = append(b, ";w=3600"...)
	ends[4] = len(b)
	b = append(b, `"hourly";r=`...)
	b = append(b, b[ends[0]:ends[1]]...)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, int64(q.SecondsToReset(now)), 10)
	ends[5] = len(b)
	all := string(b)
	v := backing[:]
	start := 0
	for i, end := range ends {
		v[i], start = all[start:end], end
	}
	hd["X-RateLimit-Limit"] = v[0:1:1]
	hd["X-RateLimit-Remaining"] = v[1:2:2]
	hd["X-RateLimit-Used"] = v[2:3:3]
	hd["X-RateLimit-Reset"] = v[3:4:4]
	hd["RateLimit-Policy"] = v[4:5:5]
	hd["RateLimit"] = v[5:6:6]
}
