package fleethttp_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// ended waits for the server to end the stream (10 s at most).
func (c *sseClient) ended() {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.lines:
			if !ok {
				return
			}
		case <-timeout:
			c.t.Fatal("the stream is still open")
		}
	}
}

// waitUntil waits for cond to hold, checking it every few milliseconds,
// for 10 s at most: for effects the server makes on its own time, such as
// noticing that a client went away.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// refusedStream asks for one stream more than the key may open: an answer
// that is an open stream fails the test instead of waiting on it.
func (e *env) refusedStream(key string) *response {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1/vehicles/locations/stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		e.t.Fatal("one stream more than the plan allows was opened")
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := &response{t: e.t, status: res.StatusCode, header: res.Header, body: b}
	e.validate(req, nil, r)
	return r
}

// A key has its plan's number of live streams at once (free: 2) on a
// server; one more is 429 naming the stream limit; closing one frees its
// slot; another key counts its own.
func TestStreamsPerKeyAreCapped(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanFree)
	p, err := e.svc.Authenticate(ctx, key)
	is.NoErr(err)
	first := e.openStream(key, "", "")
	e.openStream(key, "", "")

	r := e.refusedStream(key)
	is.Equal(r.status, http.StatusTooManyRequests)
	is.Equal(r.errCode(), "rate_limit_exceeded")
	is.Equal(r.errMessage(), "This API key has 2 live streams open, the most the free plan allows; close one first.")
	is.Equal(r.header.Get("Retry-After"), "5")
	is.Equal(r.header.Get("X-RateLimit-Used"), "3") // counted as one request, no more

	other := e.keyWith(key, "locations:read")
	e.openStream(other, "", "") // another key of the account has its own

	first.cancel()
	waitUntil(t, "the server to close the stream", func() bool { return e.svc.OpenStreams(p) == 1 })
	e.openStream(key, "", "") // the freed slot
	r = e.refusedStream(key)
	is.Equal(r.status, http.StatusTooManyRequests) // and only it
}

// A stream ends within 5 s of its key being revoked through another server
// sharing the store; the other key's stream goes on.
func TestStreamEndsWhenItsKeyIsRevokedElsewhere(t *testing.T) {
	store := memstore.New()
	clock := testclock.New(T0)
	checkStreamEndsAcrossServers(t, newEnvOn(t, store, clock), newEnvOn(t, store, clock), clock)
}

// checkStreamEndsAcrossServers opens streams on server two and revokes,
// rotates and lets expire their keys through server one: each stream ends
// once server two's key cache (2 s) has passed and it checks its streams.
func checkStreamEndsAcrossServers(t *testing.T, one, two *env, clock *testclock.Clock) {
	t.Helper()
	is := is.New(t)
	_, owner := one.account(fleet.PlanPro)
	revoked := one.do("POST", "/v1/api_keys", owner, map[string]any{"name": "revoked", "permissions": []string{"locations:read"}}).data()
	rotated := one.do("POST", "/v1/api_keys", owner, map[string]any{"name": "rotated", "permissions": []string{"locations:read"}}).data()
	expiring := one.do("POST", "/v1/api_keys", owner, map[string]any{"name": "expiring", "permissions": []string{"locations:read"},
		"expires_at": clock.Now().Add(time.Minute).Format(time.RFC3339)}).data()
	streams := map[string]*sseClient{}
	for _, k := range []map[string]any{revoked, rotated, expiring} {
		streams[k["name"].(string)] = two.openStream(k["key"].(string), "", "")
	}
	lasting := two.openStream(owner, "", "")
	check := func() int {
		n, err := two.svc.Jobs().CheckStreams(ctx)
		is.NoErr(err) // check streams
		return n
	}
	is.Equal(check(), 0) // valid keys keep their streams

	r := one.do("DELETE", "/v1/api_keys/"+revoked["key_id"].(string), owner, nil)
	is.Equal(r.status, http.StatusOK)
	r = one.do("POST", "/v1/api_keys/"+rotated["key_id"].(string)+"/rotate", owner, map[string]any{"grace_period_seconds": 20})
	is.Equal(r.status, http.StatusCreated)
	clock.Advance(3 * time.Second)
	is.Equal(check(), 1)
	streams["revoked"].ended()

	clock.Advance(20 * time.Second) // the rotation's grace is over
	is.Equal(check(), 1)
	streams["rotated"].ended()

	clock.Advance(40 * time.Second) // the key's expiry
	is.Equal(check(), 1)
	streams["expiring"].ended()

	// The owner's stream lasts and still carries reports.
	v := one.vehicle(owner, "Truck")
	two.do("POST", "/v1/vehicles/"+v+"/locations", owner, batch(pt(clock.Now(), 1, 1, 10)))
	is.Equal(lasting.next().data["vehicle_id"], v)
	r = two.do("GET", "/v1/vehicles/locations/stream", revoked["key"].(string), nil)
	is.Equal(r.status, http.StatusUnauthorized) // a reconnect is refused
}
