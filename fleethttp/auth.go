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
// request may go on; when not, the response is written.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, st *state) bool {
	secret, found := bearer(r.Header.Get("Authorization"))
	var authErr error
	if found {
		p, err := h.svc.Authenticate(r.Context(), secret)
		if err == nil {
			q, err := h.svc.Edge().Admit(r.Context(), p)
			if err != nil {
				writeError(w, h.log, st.requestID, err)
				return false
			}
			st.principal, st.authed = p, true
			setQuotaHeaders(w.Header(), q, h.svc.Now())
			if !q.Allowed {
				h.tooMany(w, st, q, "Rate limit exceeded. Retry after %d seconds.")
				return false
			}
			return true
		}
		if fleet.ErrorCode(err) != fleet.CodeUnauthorized {
			writeError(w, h.log, st.requestID, err)
			return false
		}
		authErr = err
	} else {
		authErr = fleet.Errorf(fleet.CodeUnauthorized, "The API key is invalid or missing: send Authorization: Bearer <API_KEY>.")
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
	setQuotaHeaders(w.Header(), q, h.svc.Now())
	if !q.Allowed {
		h.tooMany(w, st, q, "Too many requests without a valid API key from this address; retry after %d seconds.")
		return false
	}
	writeError(w, h.log, st.requestID, authErr)
	return false
}

// tooMany answers 429 with Retry-After; message takes the seconds to wait.
func (h *Handler) tooMany(w http.ResponseWriter, st *state, q fleet.Quota, message string) {
	n := q.RetryAfter(h.svc.Now())
	w.Header()["Retry-After"] = []string{strconv.Itoa(n)}
	writeError(w, h.log, st.requestID, fleet.Errorf(fleet.CodeRateLimitExceeded, message, n))
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
func setQuotaHeaders(hd http.Header, q fleet.Quota, now time.Time) {
	limit := strconv.Itoa(q.Limit)
	remaining := strconv.Itoa(q.Remaining)
	reset := q.ResetUnix()
	hd["X-RateLimit-Limit"] = []string{limit}
	hd["X-RateLimit-Remaining"] = []string{remaining}
	hd["X-RateLimit-Used"] = []string{strconv.Itoa(q.Used)}
	hd["X-RateLimit-Reset"] = []string{strconv.FormatInt(reset, 10)}
	hd["RateLimit-Policy"] = []string{`"hourly";q=` + limit + ";w=3600"}
	hd["RateLimit"] = []string{`"hourly";r=` + remaining + ";t=" + strconv.Itoa(q.SecondsToReset(now))}
}
