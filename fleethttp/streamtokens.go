package fleethttp

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

func (h *Handler) createStreamToken(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	t, err := h.svc.CreateStreamToken(c.r.Context(), c.p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, fleetwire.StreamToken{Token: t.Token, ExpiresAt: t.ExpiresAt})
}

// tokenParam is the query parameter that carries a stream token.
const tokenParam = fleetwire.StreamTokenParam

// streamTokenOf returns the stream token of a GET to a route that takes
// one (opDoc.tokenAuth), if the request carries one. A HEAD's token is not
// taken: it would spend the token that the GET after it needs.
func (h *Handler) streamTokenOf(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet {
		return "", false
	}
	if !h.tokenPaths[r.URL.Path] || !strings.Contains(r.URL.RawQuery, tokenParam) {
		return "", false
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", false
	}
	v, ok := q[tokenParam]
	if !ok {
		return "", false
	}
	if len(v) != 1 {
		return "", true // more than one: no token
	}
	return v[0], true
}

// headWithToken reports whether r is a HEAD that carries a stream token in
// place of a key.
func (h *Handler) headWithToken(r *http.Request) bool {
	return r.Method == http.MethodHead && h.tokenPaths[r.URL.Path] && r.Header.Get("Authorization") == "" &&
		strings.Contains(r.URL.RawQuery, tokenParam) && r.URL.Query().Has(tokenParam)
}

// redactQuery returns a raw query string for the access log with the
// value of every token parameter (in any case or spelling) replaced, and
// of every parameter whose value looks like a stream token or a key secret
// (a credential sent under the wrong name is a credential all the same).
func redactQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		if strings.EqualFold(k, tokenParam) || strings.Contains(v, fleet.StreamTokenPrefix) || strings.Contains(v, fleet.SecretPrefix) {
			parts[i] = url.QueryEscape(k) + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}
