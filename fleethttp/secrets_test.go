package fleethttp_test

import (
	"bytes"
	"database/sql"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// A copy of the database alone reveals no webhook signing secret: after a
// webhook is created (with an Idempotency-Key, so its response is stored
// too) and its secret rotated, neither secret — nor the first 12
// characters of its random part — is in the SQLite files' bytes or in the
// PostgreSQL rows read directly; what the endpoint's row holds is sealed.
// Deliveries are still signed so that the secrets the API returned verify:
// both during the overlap.
func TestWebhookSecretsAreSealedAtRest(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		e, path := sqliteEnv(t)
		checkSealedAtRest(t, e, func(t *testing.T) []byte {
			var all []byte
			for _, f := range []string{path, path + "-wal"} {
				raw, err := os.ReadFile(f)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				all = append(all, raw...)
			}
			return all
		}, func(t *testing.T, id string) string {
			return storedSecrets(t, "sqlite", path, id)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDSN(t)
		store, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { store.Close() })
		e := newEnvOn(t, store, testclock.New(T0))
		checkSealedAtRest(t, e, func(t *testing.T) []byte {
			db, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var all []byte
			for _, q := range []string{
				`SELECT id || url || secret || previous_secret FROM webhooks`,
				`SELECT encode(body, 'escape') FROM idempotency`,
			} {
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var v string
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					all = append(all, v...)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				rows.Close()
			}
			return all
		}, func(t *testing.T, id string) string {
			return storedSecrets(t, "pgx", dsn, id)
		})
	})
}

// storedSecrets reads an endpoint's stored secrets straight from the
// database.
func storedSecrets(t *testing.T, driver, dsn, id string) string {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `SELECT secret, previous_secret FROM webhooks WHERE id = ?`
	if driver == "pgx" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	var cur, prev string
	if err := db.QueryRow(q, id).Scan(&cur, &prev); err != nil {
		t.Fatal(err)
	}
	return cur + " " + prev
}

func checkSealedAtRest(t *testing.T, e *env, raw func(t *testing.T) []byte, row func(t *testing.T, id string) string) {
	is := is.New(t)
	_, key := e.account(fleet.PlanPro)
	rcv := newReceiver(t, nil)
	r := e.do("POST", "/v1/webhooks", key, map[string]any{"url": rcv.srv.URL}, "Idempotency-Key", "sealed-create")
	is.Equal(r.status, http.StatusCreated)
	id, first := r.data()["webhook_id"].(string), r.data()["secret"].(string)
	r = e.do("POST", "/v1/webhooks/"+id+"/rotate_secret", key, nil, "Idempotency-Key", "sealed-rotate")
	is.Equal(r.status, http.StatusOK)
	second := r.data()["secret"].(string)

	bytesAtRest := raw(t)
	is.True(len(bytesAtRest) > 0)
	for _, s := range []string{first, second} {
		part := strings.TrimPrefix(s, fleet.WebhookSecretPrefix)[:12]
		if bytes.Contains(bytesAtRest, []byte(s)) || bytes.Contains(bytesAtRest, []byte(part)) {
			t.Fatalf("the database holds the secret %s... in plain text", s[:10])
		}
	}
	cur, prev, _ := strings.Cut(row(t, id), " ")
	is.True(strings.HasPrefix(cur, "sealed:v1:"))  // the current secret, sealed
	is.True(strings.HasPrefix(prev, "sealed:v1:")) // and the one before it

	test := e.do("POST", "/v1/webhooks/"+id+"/test", key, nil)
	is.Equal(test.status, http.StatusAccepted)
	is.Equal(drain(t, e.sender()), 1)
	hits := rcv.got()
	is.Equal(len(hits), 1)
	h := hits[0]
	for _, s := range []string{first, second} { // both sign during the overlap
		is.NoErr(fleet.VerifyWebhook(s, h.header.Get("webhook-id"), h.header.Get("webhook-timestamp"), h.header.Get("webhook-signature"), h.body, e.clock.Now()))
	}
}
