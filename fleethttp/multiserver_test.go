package fleethttp_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// Several servers sharing one PostgreSQL database behave as one service.
// Each server here has a store of its own (its own connection pool, its own
// key cache), as separate processes would; only the database is shared.

// postgresServers starts two servers, each on its own sqlstore.Store, on one
// new PostgreSQL schema, with one clock. It skips the test when
// FLEET_TEST_POSTGRES is unset.
func postgresServers(t *testing.T) (one, two *env, clock *testclock.Clock) {
	t.Helper()
	dsn := pgtest.NewDSN(t)
	clock = testclock.New(T0)
	open := func() *sqlstore.Store {
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return newEnvOn(t, open(), clock), newEnvOn(t, open(), clock), clock
}

func TestPostgresTwoServersRateLimitExact(t *testing.T) {
	one, two, _ := postgresServers(t)
	_, secret := one.account(fleet.PlanFree)
	checkRateLimitExact(t, []*env{one, two}, secret)
}

func TestPostgresTwoServersRevokedKey(t *testing.T) {
	one, two, clock := postgresServers(t)
	checkRevokedAcrossServers(t, one, two, clock)
}

func TestPostgresTwoServersStreamEndsWithItsKey(t *testing.T) {
	one, two, clock := postgresServers(t)
	checkStreamEndsAcrossServers(t, one, two, clock)
}

// checkRateLimitExact spends a free key's allowance over the servers, in turn,
// down to Remaining = 20, then sends 50 simultaneous requests spread over
// them: exactly 20 succeed, and the window is then spent on every server.
func checkRateLimitExact(t *testing.T, servers []*env, secret string) {
	t.Helper()
	is := is.New(t)
	var r *response
	for i := range 980 {
		r = servers[i%len(servers)].do("GET", "/v1/account", secret, nil)
		if r.status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	remaining, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
	is.NoErr(err)
	is.Equal(remaining, 20)
	is.Equal(concurrentOK(t, servers, secret, 50), remaining) // exactly R succeed
	for _, e := range servers {
		r := e.do("GET", "/v1/account", secret, nil)
		is.Equal(r.status, http.StatusTooManyRequests) // none left anywhere
		is.Equal(r.header.Get("X-RateLimit-Used"), "1000")
	}
}

// checkRevokedAcrossServers revokes a key through one server after the other has
// cached it: the first refuses it at once, the second within 5 seconds.
func checkRevokedAcrossServers(t *testing.T, one, two *env, clock *testclock.Clock) {
	t.Helper()
	is := is.New(t)
	_, admin := one.account(fleet.PlanPro)
	victim := one.keyWith(admin, "vehicles:read")
	is.Equal(two.do("GET", "/v1/account", victim, nil).status, http.StatusOK) // server two caches the key

	var keyID string
	for _, k := range one.do("GET", "/v1/api_keys", admin, nil).list() {
		if k.(map[string]any)["name"] == "limited" {
			keyID = k.(map[string]any)["key_id"].(string)
		}
	}
	r := one.do("DELETE", "/v1/api_keys/"+keyID, admin, nil)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["status"], "revoked")

	r = one.do("GET", "/v1/account", victim, nil)
	is.Equal(r.status, http.StatusUnauthorized) // refused at once by the server that revoked it

	clock.Advance(5 * time.Second)
	r = two.do("GET", "/v1/account", victim, nil)
	is.Equal(r.status, http.StatusUnauthorized) // and by the other within 5 s
	is.Equal(r.errMessage(), "The API key is invalid: it has been revoked.")
}

// TestPostgresTwoServersSweepOnce runs the status sweep of both servers at
// the same time (two sweeps each): every vehicle's status changes once, with
// one vehicle.status_changed event, however the sweeps interleave.
func TestPostgresTwoServersSweepOnce(t *testing.T) {
	is := is.New(t)
	one, two, clock := postgresServers(t)
	_, secret := one.account(fleet.PlanEnterprise)

	const n = 200 // half stationary, half moving
	ids := make([]string, n)
	points := make([]map[string]any, n)
	for i := range ids {
		e := []*env{one, two}[i%2]
		r := e.do("POST", "/v1/vehicles", secret, map[string]any{"name": fmt.Sprintf("Truck %d", i)})
		is.Equal(r.status, http.StatusCreated)
		ids[i] = r.data()["vehicle_id"].(string)
		points[i] = map[string]any{"vehicle_id": ids[i], "latitude": 52.5, "longitude": 13.4,
			"timestamp": T0.Format(time.RFC3339), "speed": float64(40 * (i % 2))}
	}
	r := one.do("POST", "/v1/vehicles/locations", secret, map[string]any{"locations": points})
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["accepted"], float64(n))

	sweep := func() int {
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		start := make(chan struct{})
		for _, e := range []*env{one, two, one, two} {
			wg.Go(func() {
				<-start
				changed, err := e.svc.Jobs().Sweep(ctx)
				if err != nil {
					t.Errorf("sweep: %v", err)
				}
				mu.Lock()
				total += changed
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		return total
	}
	clock.Advance(6 * time.Minute)
	is.Equal(sweep(), n/2) // the stationary ones stop, once
	clock.Advance(25 * time.Minute)
	is.Equal(sweep(), n) // every vehicle goes offline, once
	is.Equal(sweep(), 0) // and nothing is left to change

	// The event log agrees, read through the other server.
	changes := map[string][]string{}
	cursor := ""
	for {
		q := url.Values{"type": {"vehicle.status_changed"}, "limit": {"500"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		r := two.do("GET", "/v1/events?"+q.Encode(), secret, nil)
		is.Equal(r.status, http.StatusOK)
		for _, ev := range r.list() {
			d := ev.(map[string]any)["data"].(map[string]any)
			id := d["vehicle_id"].(string)
			changes[id] = append(changes[id], d["from"].(string)+">"+d["to"].(string))
		}
		next, _ := r.json()["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	is.Equal(len(changes), n)
	for i, id := range ids {
		want := []string{"offline>idle", "idle>stopped", "stopped>offline"}
		if i%2 == 1 {
			want = []string{"offline>moving", "moving>offline"}
		}
		if fmt.Sprint(changes[id]) != fmt.Sprint(want) {
			t.Fatalf("vehicle %d: status changes %v, want %v", i, changes[id], want)
		}
	}
}
