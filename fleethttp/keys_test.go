package fleethttp_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/matryer/is"
)

func TestCreateKeyShowsSecretOnce(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/api_keys", admin, map[string]any{
		"name": "Gateway", "permissions": []string{"locations:write", "vehicles:read"}, "environment": "development",
	})
	is.Equal(r.status, http.StatusCreated)
	d := r.data()
	secret := d["key"].(string)
	is.True(fleet.CheckSecret(secret))
	is.Equal(d["prefix"], secret[:12])
	is.Equal(d["environment"], "development")
	is.Equal(d["status"], "active")
	is.Equal(d["permissions"], []any{"locations:write", "vehicles:read"})

	got := e.do("GET", "/v1/api_keys/"+d["key_id"].(string), admin, nil)
	is.Equal(got.status, http.StatusOK)
	_, hasSecret := got.data()["key"]
	is.True(!hasSecret) // never shown again
	is.True(!strings.Contains(string(got.body), secret[12:]))
	is.True(!strings.Contains(string(e.do("GET", "/v1/api_keys", admin, nil).body), secret[12:]))

	is.Equal(e.do("GET", "/v1/account", secret, nil).status, http.StatusOK) // the new key works
}

func TestCreateKeyCannotEscalate(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	limited := e.keyWith(admin, "keys:write", "vehicles:read")

	r := e.do("POST", "/v1/api_keys", limited, map[string]any{"name": "x", "permissions": []string{"vehicles:write"}})
	is.Equal(r.status, http.StatusForbidden)
	r = e.do("POST", "/v1/api_keys", limited, map[string]any{"name": "x", "permissions": []string{"*"}})
	is.Equal(r.status, http.StatusForbidden)
	r = e.do("POST", "/v1/api_keys", limited, map[string]any{"name": "x", "permissions": []string{"keys:read"}})
	is.Equal(r.status, http.StatusCreated) // implied by keys:write
	r = e.do("POST", "/v1/api_keys", limited, map[string]any{"name": "x"})
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["permissions"], []any{"keys:write", "vehicles:read"}) // defaults to the creator's
}

func TestCreateKeyValidation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/api_keys", admin, map[string]any{
		"name": "", "permissions": []string{"vehicles:fly"}, "expires_at": "2020-01-01T00:00:00Z",
	})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(r.errCode(), "validation_error")
	fields := map[string]bool{}
	for _, d := range r.json()["error"].(map[string]any)["details"].([]any) {
		fields[d.(map[string]any)["field"].(string)] = true
	}
	is.True(fields["name"])
	is.True(fields["permissions[0]"])
	is.True(fields["expires_at"])
	is.Equal(len(e.do("GET", "/v1/api_keys", admin, nil).list()), 1) // nothing created
}

func TestKeyExpires(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	r := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "temp", "expires_at": T0.Add(time.Hour).Format(time.RFC3339)})
	is.Equal(r.status, http.StatusCreated)
	temp := r.data()["key"].(string)
	is.Equal(e.do("GET", "/v1/account", temp, nil).status, http.StatusOK)
	e.clock.Advance(time.Hour)
	r = e.do("GET", "/v1/account", temp, nil)
	is.Equal(r.status, http.StatusUnauthorized)
	is.True(strings.Contains(r.errMessage(), "expired"))
}

func TestRotateKeyWithGracePeriod(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	old := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "svc", "permissions": []string{"vehicles:read"}})
	oldID, oldSecret := old.data()["key_id"].(string), old.data()["key"].(string)

	r := e.do("POST", "/v1/api_keys/"+oldID+"/rotate", admin, map[string]any{"grace_period_seconds": 600})
	is.Equal(r.status, http.StatusCreated)
	d := r.data()
	newSecret := d["key"].(string)
	is.True(d["key_id"] != oldID)
	is.Equal(d["name"], "svc")
	is.Equal(d["permissions"], []any{"vehicles:read"})
	is.Equal(d["previous_key"].(map[string]any)["expires_at"], "2026-11-22T10:10:00Z")

	is.Equal(e.do("GET", "/v1/account", oldSecret, nil).status, http.StatusOK) // still works in the grace period
	is.Equal(e.do("GET", "/v1/account", newSecret, nil).status, http.StatusOK)
	e.clock.Advance(10 * time.Minute)
	is.Equal(e.do("GET", "/v1/account", oldSecret, nil).status, http.StatusUnauthorized) // expired
	is.Equal(e.do("GET", "/v1/account", newSecret, nil).status, http.StatusOK)

	r = e.do("POST", "/v1/api_keys/"+oldID+"/rotate", admin, nil)
	is.Equal(r.status, http.StatusConflict) // an expired key cannot be rotated

	r = e.do("POST", "/v1/api_keys/"+d["key_id"].(string)+"/rotate", admin, nil) // no body: default grace
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["previous_key"].(map[string]any)["expires_at"], "2026-11-22T11:10:00Z")
}

func TestKeysOfAnotherAccountAreNotFound(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, alice := e.account(fleet.PlanPro)
	_, bob := e.account(fleet.PlanPro)
	bobKey := e.do("GET", "/v1/api_keys", bob, nil).list()[0].(map[string]any)["key_id"].(string)
	for _, req := range []struct{ method, path string }{
		{"GET", "/v1/api_keys/" + bobKey},
		{"DELETE", "/v1/api_keys/" + bobKey},
		{"POST", "/v1/api_keys/" + bobKey + "/rotate"},
		{"GET", "/v1/api_keys/" + bobKey + "/usage"},
		{"GET", "/v1/api_keys/key_nonsense"},
	} {
		r := e.do(req.method, req.path, alice, nil)
		is.Equal(r.status, http.StatusNotFound)
	}
	is.Equal(len(e.do("GET", "/v1/api_keys", alice, nil).list()), 1) // alice sees only her key
	is.Equal(e.do("GET", "/v1/account", bob, nil).status, http.StatusOK)
}

func TestListKeysPagination(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	for range 4 {
		e.keyWith(admin, "vehicles:read")
	}
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		is.True(pages < 5)
		path := "/v1/api_keys?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := e.do("GET", path, admin, nil)
		is.Equal(r.status, http.StatusOK)
		for _, k := range r.list() {
			ids = append(ids, k.(map[string]any)["key_id"].(string))
		}
		pg := r.json()["pagination"].(map[string]any)
		if !pg["has_more"].(bool) {
			is.Equal(pg["next_cursor"], nil)
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	is.Equal(len(ids), 5)
	for i := 1; i < len(ids); i++ {
		is.True(ids[i-1] < ids[i]) // ascending id order, no repeats
	}
	for _, bad := range []string{"?cursor=%%%", "?cursor=bm9wZQ", "?limit=0", "?limit=501", "?limit=x"} {
		r := e.do("GET", "/v1/api_keys"+bad, admin, nil)
		is.Equal(r.status, http.StatusBadRequest)
		is.Equal(r.errCode(), "invalid_request")
	}
}

func TestKeyUsage(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	keyID := e.do("GET", "/v1/api_keys", admin, nil).list()[0].(map[string]any)["key_id"].(string)
	for range 3 {
		e.do("GET", "/v1/account", admin, nil)
	}
	is.NoErr(e.svc.Jobs().Flush(ctx)) // part of the counts is flushed, part still pending
	e.clock.Advance(time.Hour)
	e.do("GET", "/v1/account", admin, nil)

	r := e.do("GET", "/v1/api_keys/"+keyID+"/usage?hours=3", admin, nil)
	is.Equal(r.status, http.StatusOK)
	d := r.data()
	hours := d["hours"].([]any)
	is.Equal(len(hours), 3)
	is.Equal(hours[0].(map[string]any)["hour"], "2026-11-22T11:00:00Z") // newest first
	is.Equal(hours[0].(map[string]any)["requests"], float64(2))         // this request and the one before
	is.Equal(hours[1].(map[string]any)["requests"], float64(4))         // list + 3 account reads
	is.Equal(d["totals"].(map[string]any)["requests"], float64(6))

	is.NoErr(e.svc.Jobs().Flush(ctx))
	k := e.do("GET", "/v1/api_keys/"+keyID, admin, nil).data()
	is.Equal(k["last_used_at"], "2026-11-22T11:00:00Z")

	is.Equal(e.do("GET", "/v1/api_keys/"+keyID+"/usage?hours=169", admin, nil).status, http.StatusBadRequest)
	is.Equal(e.do("GET", "/v1/api_keys/"+keyID+"/usage?hours=0", admin, nil).status, http.StatusBadRequest)
}

func TestUsageCountsRejected(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, nk, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Tiny", Plan: fleet.PlanFree})
	is.NoErr(err)
	for range 1002 {
		e.do("GET", "/v1/account", nk.Secret, nil)
	}
	u, err := e.svc.KeyUsage(ctx, fleet.SystemPrincipal(fleet.Account{ID: nk.Key.AccountID}), nk.Key.ID, 1)
	is.NoErr(err)
	is.Equal(u.Requests, 1002)
	is.Equal(u.Rejected, 2)
}

// keyID returns the id of the account's key whose secret is secret.
func (e *env) keyID(admin, secret string) string {
	e.t.Helper()
	for _, k := range e.do("GET", "/v1/api_keys?limit=500", admin, nil).list() {
		if km := k.(map[string]any); km["prefix"] == secret[:12] {
			return km["key_id"].(string)
		}
	}
	e.t.Fatalf("no key with prefix %s", secret[:12])
	return ""
}

// TestActingOnAnotherKeyNeedsItsPermissions: a key that holds keys:write
// but not every permission of another key can neither rotate nor revoke it
// (403 naming what it lacks) and changes nothing; it may act on keys it
// covers and on itself; the operator may act on any key.
func TestActingOnAnotherKeyNeedsItsPermissions(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	acc, admin := e.account(fleet.PlanPro)
	adminID := e.keyID(admin, admin)
	limited := e.keyWith(admin, "keys:write", "vehicles:read")
	limitedID := e.keyID(admin, limited)
	reader := e.keyID(admin, e.keyWith(admin, "vehicles:write"))
	keysBefore := e.do("GET", "/v1/api_keys?limit=500", admin, nil).body

	for _, c := range []struct{ method, path, lacks string }{
		{"POST", "/v1/api_keys/" + adminID + "/rotate", "*"},
		{"DELETE", "/v1/api_keys/" + adminID, "*"},
		{"POST", "/v1/api_keys/" + reader + "/rotate", "vehicles:write"},
		{"DELETE", "/v1/api_keys/" + reader, "vehicles:write"},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"grace_period_seconds": 0}
		}
		r := e.do(c.method, c.path, limited, body)
		is.Equal(r.status, http.StatusForbidden)
		is.Equal(r.errCode(), "insufficient_permissions")
		id := strings.Split(strings.TrimPrefix(c.path, "/v1/api_keys/"), "/")[0]
		is.Equal(r.errMessage(), "This API key cannot act on key "+id+": it lacks "+c.lacks+".")
	}
	is.Equal(string(e.do("GET", "/v1/api_keys?limit=500", admin, nil).body), string(keysBefore)) // nothing changed
	is.Equal(e.do("GET", "/v1/account", admin, nil).status, http.StatusOK)

	// Keys it covers, write implying read.
	covered := e.keyID(admin, e.keyWith(admin, "keys:read", "vehicles:read"))
	is.Equal(e.do("POST", "/v1/api_keys/"+covered+"/rotate", limited, map[string]any{"grace_period_seconds": 0}).status, http.StatusCreated)
	covered = e.keyID(admin, e.keyWith(admin, "vehicles:read"))
	is.Equal(e.do("DELETE", "/v1/api_keys/"+covered, limited, nil).status, http.StatusOK)

	// Itself.
	r := e.do("POST", "/v1/api_keys/"+limitedID+"/rotate", limited, map[string]any{"grace_period_seconds": 60})
	is.Equal(r.status, http.StatusCreated)
	rotated := r.data()["key"].(string)
	is.Equal(e.do("DELETE", "/v1/api_keys/"+e.keyID(admin, rotated), rotated, nil).status, http.StatusOK)

	// The operator holds every permission.
	_, err := e.svc.RevokeKey(ctx, fleet.SystemPrincipal(acc), adminID)
	is.NoErr(err)
	is.Equal(e.do("GET", "/v1/account", admin, nil).status, http.StatusUnauthorized)
}

// TestKeyExpiryCannotOutliveItsCreator: a key made by a key that expires
// inherits that expiry, may not be given a later one (422 naming
// expires_at), and such a key cannot rotate a key that would outlive it;
// rotation keeps the old key's expiry.
func TestKeyExpiryCannotOutliveItsCreator(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, admin := e.account(fleet.PlanPro)
	end := T0.Add(time.Hour).Format(time.RFC3339)
	r := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "temp", "permissions": []string{"keys:write", "vehicles:read"}, "expires_at": end})
	is.Equal(r.status, http.StatusCreated)
	temp := r.data()["key"].(string)
	count := len(e.do("GET", "/v1/api_keys?limit=500", admin, nil).list())

	r = e.do("POST", "/v1/api_keys", temp, map[string]any{"name": "later", "expires_at": T0.Add(2 * time.Hour).Format(time.RFC3339)})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.Equal(r.json()["error"].(map[string]any)["details"].([]any)[0].(map[string]any)["field"], "expires_at")
	is.Equal(len(e.do("GET", "/v1/api_keys?limit=500", admin, nil).list()), count) // nothing created

	r = e.do("POST", "/v1/api_keys", temp, map[string]any{"name": "inherits"})
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["expires_at"], end) // the creator's expiry
	child := r.data()["key_id"].(string)
	r = e.do("POST", "/v1/api_keys", temp, map[string]any{"name": "sooner", "expires_at": T0.Add(30 * time.Minute).Format(time.RFC3339)})
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["expires_at"], "2026-11-22T10:30:00Z")

	// A key without expiry that temp covers: rotating it would hand temp a
	// secret that outlives it.
	forever := e.keyID(admin, e.keyWith(admin, "vehicles:read"))
	r = e.do("POST", "/v1/api_keys/"+forever+"/rotate", temp, map[string]any{"grace_period_seconds": 0})
	is.Equal(r.status, http.StatusForbidden)
	is.True(strings.Contains(r.errMessage(), "outlive"))
	is.Equal(e.do("GET", "/v1/api_keys/"+forever, admin, nil).data()["expires_at"], nil) // unchanged

	// Rotation keeps the old key's expiry, by whoever rotates it.
	r = e.do("POST", "/v1/api_keys/"+child+"/rotate", temp, map[string]any{"grace_period_seconds": 0})
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["expires_at"], end)
	r = e.do("POST", "/v1/api_keys/"+r.data()["key_id"].(string)+"/rotate", admin, nil)
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["expires_at"], end)

	// A new key inherits the expiry the rotation's grace gives its creator.
	r = e.do("POST", "/v1/api_keys/"+e.keyID(admin, temp)+"/rotate", temp, map[string]any{"grace_period_seconds": 600})
	is.Equal(r.status, http.StatusCreated)
	e.clock.Advance(3 * time.Second) // past the cache of temp's key
	r = e.do("POST", "/v1/api_keys", temp, map[string]any{"name": "in grace"})
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.data()["expires_at"], "2026-11-22T10:10:00Z")
}

// TestActiveKeyCap: an account holds at most its plan's ActiveKeys active
// keys; one more is 409 conflict naming the cap and creates nothing.
// Revoked and expired keys do not count; a rotation with a grace period
// counts (two keys are active), one with grace 0 replaces the key and is
// allowed at the cap.
func TestActiveKeyCap(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		acc, admin := e.account(fleet.PlanFree)
		_, other := e.account(fleet.PlanFree)
		limit := fleet.PlanFree.Limits().ActiveKeys
		is.NoErr(e.store.Update(ctx, func(tx fleet.Tx) error {
			for range limit - 3 { // the first key, these, and two below
				if err := tx.CreateKey(storetest.NewKey(acc.ID)); err != nil {
					return err
				}
			}
			return nil
		}))
		short := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "short", "expires_at": T0.Add(time.Minute).Format(time.RFC3339)})
		is.Equal(short.status, http.StatusCreated)
		last := e.created("/v1/api_keys", admin, map[string]any{"name": "last", "permissions": []string{"vehicles:read"}})
		active := func() int {
			var n int
			is.NoErr(e.store.View(ctx, func(tx fleet.Tx) (err error) { n, err = tx.CountActiveKeys(acc.ID, e.svc.Now()); return err }))
			return n
		}
		is.Equal(active(), limit)

		want := fmt.Sprintf("An account may have at most %d active API keys and this account has %d; revoke one first.", limit, limit)
		r := e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "one more"})
		is.Equal(r.status, http.StatusConflict)
		is.Equal(r.errCode(), "conflict")
		is.Equal(r.errMessage(), want)
		r = e.do("POST", "/v1/api_keys", admin, map[string]any{"name": ""})
		is.Equal(r.status, http.StatusUnprocessableEntity) // bad input at the cap is still 422
		r = e.do("POST", "/v1/api_keys/"+last["key_id"].(string)+"/rotate", admin, map[string]any{"grace_period_seconds": 60})
		is.Equal(r.status, http.StatusConflict) // old and new would both be active
		is.True(strings.Contains(r.errMessage(), "grace_period_seconds 0"))
		is.Equal(active(), limit)
		_, err := e.svc.Operator().CreateKey(ctx, acc.ID, fleet.KeyParams{Name: "operator"})
		is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // keys create counts too

		r = e.do("POST", "/v1/api_keys/"+last["key_id"].(string)+"/rotate", admin, map[string]any{"grace_period_seconds": 0})
		is.Equal(r.status, http.StatusCreated) // replaces the key
		is.Equal(active(), limit)
		e.created("/v1/api_keys", other, map[string]any{"name": "per account"})

		is.Equal(e.do("DELETE", "/v1/api_keys/"+r.data()["key_id"].(string), admin, nil).status, http.StatusOK)
		e.created("/v1/api_keys", admin, map[string]any{"name": "room after a revocation"})
		is.Equal(e.do("POST", "/v1/api_keys", admin, map[string]any{"name": "x"}).status, http.StatusConflict)
		e.clock.Advance(time.Minute) // short expires
		e.created("/v1/api_keys", admin, map[string]any{"name": "room after an expiry"})
		is.Equal(active(), limit)
	})
}

// TestActiveKeyCapUnderConcurrency: simultaneous creates at the edge of the
// cap pass it by none; the rest are 409 conflict.
func TestActiveKeyCapUnderConcurrency(t *testing.T) {
	onEachStore(t, func(t *testing.T, e *env) {
		is := is.New(t)
		acc, key := e.account(fleet.PlanFree)
		limit := fleet.PlanFree.Limits().ActiveKeys
		const room, n = 3, 8
		is.NoErr(e.store.Update(ctx, func(tx fleet.Tx) error {
			for range limit - 1 - room {
				if err := tx.CreateKey(storetest.NewKey(acc.ID)); err != nil {
					return err
				}
			}
			return nil
		}))
		statuses := simultaneously(t, n, func(int) (*env, *http.Request) {
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1/api_keys", strings.NewReader(`{"name":"gateway"}`))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			return e, req
		})
		is.Equal(statuses, map[int]int{http.StatusCreated: room, http.StatusConflict: n - room})
		is.NoErr(e.store.View(ctx, func(tx fleet.Tx) error {
			got, err := tx.CountActiveKeys(acc.ID, e.svc.Now())
			is.Equal(got, limit)
			return err
		}))
	})
}
