package fleethttp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// shareLink creates a share link of the vehicle through the API and returns
// its data.
func (e *env) shareLink(key, vehicleID string, expires time.Time) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/share_links", key, map[string]any{"vehicle_id": vehicleID, "expires_at": expires})
	if r.status != http.StatusCreated {
		e.t.Fatalf("create share link: %d %s", r.status, r.body)
	}
	return r.data()
}

// tokenOf returns the token a share link's url carries.
func tokenOf(t *testing.T, url string) string {
	t.Helper()
	i := strings.LastIndex(url, "/s/")
	if i < 0 {
		t.Fatalf("%q is not a share link's url", url)
	}
	return url[i+len("/s/"):]
}

func TestShareLinksAPI(t *testing.T) {
	is := is.New(t)
	e := newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithPublicURL("https://fleet.example.com"))
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van 3")

	d := e.shareLink(key, veh, T0.Add(8*time.Hour))
	id := d["share_link_id"].(string)
	is.True(strings.HasPrefix(id, "shr_"))
	is.Equal(d["vehicle_id"], veh)
	is.Equal(d["status"], "active")
	is.Equal(d["expires_at"], "2026-11-22T18:00:00Z")
	is.Equal(d["created_at"], "2026-11-22T10:00:00Z")
	is.Equal(d["revoked_at"], nil)
	url := d["url"].(string)
	is.True(strings.HasPrefix(url, "https://fleet.example.com/s/"))
	token := tokenOf(t, url)
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	is.NoErr(err)
	is.Equal(len(raw), 32) // 32 random bytes, base64url

	// Never the url again.
	for _, path := range []string{"/v1/share_links", "/v1/share_links/" + id, "/v1/share_links?vehicle_id=" + veh} {
		r := e.do("GET", path, key, nil)
		is.Equal(r.status, http.StatusOK)
		is.True(!bytes.Contains(r.body, []byte(token))) // path
		is.True(!bytes.Contains(r.body, []byte(`"url"`)))
	}
	list := e.do("GET", "/v1/share_links", key, nil).list()
	is.Equal(len(list), 1)
	is.Equal(list[0].(map[string]any)["share_link_id"], id)

	r := e.do("DELETE", "/v1/share_links/"+id, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["status"], "revoked")
	is.Equal(r.data()["revoked_at"], "2026-11-22T10:00:00Z")
	e.clock.Advance(time.Minute)
	r = e.do("DELETE", "/v1/share_links/"+id, key, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["revoked_at"], "2026-11-22T10:00:00Z") // revoking again changes nothing
	is.Equal(e.do("GET", "/v1/share_links/"+id, key, nil).data()["status"], "revoked")
	is.Equal(len(e.do("GET", "/v1/share_links?status=revoked", key, nil).list()), 1)
	is.Equal(len(e.do("GET", "/v1/share_links?status=active", key, nil).list()), 0)
	is.Equal(e.do("GET", "/v1/share_links?status=gone", key, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/share_links?vehicle_id=van", key, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/share_links/shr_nope", key, nil).status, http.StatusNotFound)
	is.Equal(e.do("DELETE", "/v1/share_links/"+strings.Repeat("x", 40), key, nil).status, http.StatusNotFound)
}

func TestShareLinksBadInput(t *testing.T) {
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van 3")
	_, otherKey := e.account(fleet.PlanPro)
	otherVeh := e.vehicle(otherKey, "Not yours")
	now := e.clock.Now()
	for _, tc := range []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"past", map[string]any{"vehicle_id": veh, "expires_at": now.Add(-time.Minute)}, 422, fleet.CodeValidation, "expires_at"},
		{"now", map[string]any{"vehicle_id": veh, "expires_at": now}, 422, fleet.CodeValidation, "expires_at"},
		{"over 7 days", map[string]any{"vehicle_id": veh, "expires_at": now.Add(7*24*time.Hour + time.Second)}, 422, fleet.CodeValidation, "expires_at"},
		{"30 days", map[string]any{"vehicle_id": veh, "expires_at": now.Add(30 * 24 * time.Hour)}, 422, fleet.CodeValidation, "expires_at"},
		{"no expiry", map[string]any{"vehicle_id": veh}, 422, fleet.CodeValidation, "expires_at"},
		{"null expiry", map[string]any{"vehicle_id": veh, "expires_at": nil}, 422, fleet.CodeValidation, "expires_at"},
		{"no vehicle", map[string]any{"expires_at": now.Add(time.Hour)}, 422, fleet.CodeValidation, "vehicle_id"},
		{"another account's vehicle", map[string]any{"vehicle_id": otherVeh, "expires_at": now.Add(time.Hour)}, 404, fleet.CodeNotFound, ""},
		{"garbage vehicle", map[string]any{"vehicle_id": "veh_../../etc", "expires_at": now.Add(time.Hour)}, 404, fleet.CodeNotFound, ""},
		{"expiry not a time", map[string]any{"vehicle_id": veh, "expires_at": "tomorrow"}, 400, fleet.CodeInvalidRequest, ""},
		{"unknown field", map[string]any{"vehicle_id": veh, "expires_at": now.Add(time.Hour), "url": "https://evil.example"}, 400, fleet.CodeInvalidRequest, ""},
		{"malformed", `{"vehicle_id":`, 400, fleet.CodeInvalidRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := e.do("POST", "/v1/share_links", key, tc.body)
			is.Equal(r.status, tc.status)
			is.Equal(r.errCode(), tc.code)
			if tc.field != "" {
				is.True(strings.Contains(string(r.body), `"field":"`+tc.field+`"`)) // names the field
			}
		})
	}
	is := is.New(t)
	is.Equal(len(e.do("GET", "/v1/share_links", key, nil).list()), 0) // nothing made
	is.Equal(len(e.do("GET", "/v1/share_links", otherKey, nil).list()), 0)
	// Exactly 7 days is allowed.
	is.Equal(e.do("POST", "/v1/share_links", key, map[string]any{"vehicle_id": veh, "expires_at": now.Add(7 * 24 * time.Hour)}).status, http.StatusCreated)
	// Another account's link is not found, and stays.
	id := e.shareLink(otherKey, otherVeh, now.Add(time.Hour))["share_link_id"].(string)
	is.Equal(e.do("GET", "/v1/share_links/"+id, key, nil).status, http.StatusNotFound)
	is.Equal(e.do("DELETE", "/v1/share_links/"+id, key, nil).status, http.StatusNotFound)
	is.Equal(e.do("GET", "/v1/share_links/"+id, otherKey, nil).data()["status"], "active")
}

func TestShareLinkURLFromTheRequest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t) // no public URL: the request's
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van 3")
	url := e.shareLink(key, veh, T0.Add(time.Hour))["url"].(string)
	is.True(strings.HasPrefix(url, e.srv.URL+"/s/"))
	r := e.do("POST", "/v1/share_links", key, map[string]any{"vehicle_id": veh, "expires_at": T0.Add(time.Hour)}, "X-Forwarded-Proto", "https")
	is.True(strings.HasPrefix(r.data()["url"].(string), "https://"+strings.TrimPrefix(e.srv.URL, "http://")+"/s/"))
}

// TestShareTokenIsNotStored reads every file of a SQLite store after a
// link is made: the token is nowhere, as text or as its bytes; its
// SHA-256 is there.
func TestShareTokenIsNotStored(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	store, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(dir, "fleet.db"))
	is.NoErr(err)
	e := newEnvOn(t, store, testclock.New(T0))
	_, key := e.account(fleet.PlanPro)
	veh := e.vehicle(key, "Van 3")
	token := tokenOf(t, e.shareLink(key, veh, T0.Add(time.Hour))["url"].(string))
	raw, err := base64.RawURLEncoding.DecodeString(token)
	is.NoErr(err)
	hash := sha256.Sum256([]byte(token))

	var all []byte
	read := func() {
		all = all[:0]
		files, err := os.ReadDir(dir)
		is.NoErr(err)
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f.Name()))
			is.NoErr(err)
			all = append(all, b...)
		}
	}
	read()                                // open, with its write-ahead log
	is.True(bytes.Contains(all, hash[:])) // what is kept: the search finds what is there
	is.True(!bytes.Contains(all, []byte(token)))
	is.True(!bytes.Contains(all, raw))
	is.NoErr(store.Close())
	read() // closed, the log folded in
	is.True(bytes.Contains(all, hash[:]))
	is.True(!bytes.Contains(all, []byte(token)))
	is.True(!bytes.Contains(all, raw))
}
