package fleethttp_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// sqliteEnv is a server over a SQLite store in a file of its own.
func sqliteEnv(t *testing.T) (*env, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fleet.db")
	store, err := sqlstore.Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return newEnvOn(t, store, testclock.New(T0)), path
}

// A response that holds a secret, stored for replay under an
// Idempotency-Key, does not rest in plain text: read straight from the
// SQLite file, no stored record holds the secret or its prefix. A replay
// with the same key returns it; another key of the account replays nothing.
func TestIdempotentSecretsAreSealedAtRest(t *testing.T) {
	is := is.New(t)
	e, path := sqliteEnv(t)
	_, admin := e.account(fleet.PlanPro)
	keyID := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "to rotate"}).data()["key_id"].(string)
	hookID := e.do("POST", "/v1/webhooks", admin, map[string]any{"url": "http://127.0.0.1:9/hook"}).data()["webhook_id"].(string)

	type call struct {
		path   string
		body   any
		status int
		field  string // where the secret is in data
	}
	calls := []call{
		{"/v1/api_keys", map[string]any{"name": "gateway"}, http.StatusCreated, "key"},
		{"/v1/api_keys/" + keyID + "/rotate", map[string]any{"grace_period_seconds": 60}, http.StatusCreated, "key"},
		{"/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/other"}, http.StatusCreated, "secret"},
		{"/v1/webhooks/" + hookID + "/rotate_secret", nil, http.StatusOK, "secret"},
	}
	var secrets []string
	for i, c := range calls {
		idem := "secret-call-" + string(rune('a'+i))
		r := e.do("POST", c.path, admin, c.body, "Idempotency-Key", idem)
		is.Equal(r.status, c.status) // first call
		secret := r.data()[c.field].(string)
		secrets = append(secrets, secret)

		again := e.do("POST", c.path, admin, c.body, "Idempotency-Key", idem)
		is.Equal(again.header.Get("Idempotent-Replayed"), "true")
		is.Equal(again.data()[c.field], secret) // the replay by the same key returns the secret
		is.Equal(string(again.body), string(r.body))
	}

	// What a reader of the database finds.
	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	defer db.Close()
	rows, err := db.Query(`SELECT key_id, idem_key, request_hash, status, body FROM idempotency`)
	is.NoErr(err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var keyID, idem string
		var hash, body []byte
		var status int
		is.NoErr(rows.Scan(&keyID, &idem, &hash, &status, &body))
		n++
		is.True(!bytes.HasPrefix(body, []byte("{"))) // not plain JSON
		for _, s := range secrets {
			for _, part := range []string{s, s[:12], strings.TrimPrefix(strings.TrimPrefix(s, "fleet_"), "whsec_")[:12]} {
				if bytes.Contains(body, []byte(part)) || strings.Contains(keyID+idem+string(hash), part) {
					t.Fatalf("the stored record %s holds a secret or its prefix in plain text", idem)
				}
			}
		}
	}
	is.NoErr(rows.Err())
	is.Equal(n, len(calls))
	// No secret is anywhere in the files: API keys are kept as hashes,
	// webhook secrets sealed in their endpoints' rows.
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		is.NoErr(err)
		for _, s := range secrets {
			is.True(!bytes.Contains(raw, []byte(s))) // no secret in the database files
		}
	}

	// Idempotency is scoped to the key: another key of the same account
	// sending the same request with the same Idempotency-Key runs it anew.
	second := e.keyWith(admin, "keys:write")
	r := e.do("POST", "/v1/api_keys", second, calls[0].body, "Idempotency-Key", "secret-call-a")
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.header.Get("Idempotent-Replayed"), "")
	is.True(r.data()["key"] != secrets[0]) // a new key, not the first one's secret
}

// cancelAfterCommit cancels a request's context once the first write
// transaction after arm commits: a client that goes away right after its
// work is done.
type cancelAfterCommit struct {
	fleet.Store
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (s *cancelAfterCommit) arm(cancel context.CancelFunc) {
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
}

func (s *cancelAfterCommit) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	err := s.Store.Update(ctx, fn)
	s.mu.Lock()
	cancel := s.cancel
	s.cancel = nil
	s.mu.Unlock()
	if err == nil && cancel != nil {
		cancel()
	}
	return err
}

// A client that disconnects after its request committed does not leave its
// Idempotency-Key in progress: the retry replays the first response, and
// the request ran once.
func TestIdempotentOutcomeIsRecordedWhenTheClientGoes(t *testing.T) {
	is := is.New(t)
	inner, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	is.NoErr(err) // open store
	defer inner.Close()
	store := &cancelAfterCommit{Store: inner}
	clock := testclock.New(T0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	h := fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler)))
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err) // create account

	send := func(ctx context.Context) *httptest.ResponseRecorder {
		req := httptest.NewRequestWithContext(ctx, "POST", "/v1/vehicles", strings.NewReader(`{"name":"Truck 7"}`))
		req.Header.Set("Authorization", "Bearer "+nk.Secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "create-truck-7")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	store.arm(cancel)
	first := send(gone)
	is.True(gone.Err() != nil) // the client went away after the commit
	is.Equal(first.Code, http.StatusCreated)

	retry := send(ctx)
	is.Equal(retry.Code, http.StatusCreated)                    // not 409 in progress
	is.Equal(retry.Header().Get("Idempotent-Replayed"), "true") // a replay
	is.Equal(retry.Body.String(), first.Body.String())          // of the first response
	p, err := svc.Authenticate(ctx, nk.Secret)
	is.NoErr(err)
	l, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1) // the request ran once
}
