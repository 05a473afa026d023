package fleethttp_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// scrape reads the handler's metrics as name{labels} -> value.
func (e *env) scrape() map[string]float64 {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.h.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		e.t.Fatalf("metrics content type %q", ct)
	}
	out := map[string]float64{}
	line := regexp.MustCompile(`^([a-z_]+(?:\{.*\})?) (\S+)$`)
	for _, l := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			e.t.Fatalf("not a sample line: %q", l)
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			e.t.Fatalf("bad value in %q", l)
		}
		out[m[1]] = v
	}
	return out
}

func TestMetricsCountRequestsByRouteAndStatus(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	e.do("GET", "/v1/account", key, nil)
	e.do("GET", "/v1/account", key, nil)
	veh := e.vehicle(key, "Counted")
	e.do("GET", "/v1/vehicles/"+veh, key, nil)
	e.do("GET", "/v1/vehicles/veh_nope", key, nil)
	e.do("GET", "/v1/account", "", nil) // refused before routing
	e.do("GET", "/v1/no/such/route", key, nil)

	m := e.scrape()
	is.Equal(m[`fleet_http_requests_total{code="2xx",route="GET /v1/account"}`], 2.0)
	is.Equal(m[`fleet_http_requests_total{code="2xx",route="POST /v1/vehicles"}`], 1.0)
	is.Equal(m[`fleet_http_requests_total{code="2xx",route="GET /v1/vehicles/{vehicle_id}"}`], 1.0)
	is.Equal(m[`fleet_http_requests_total{code="4xx",route="GET /v1/vehicles/{vehicle_id}"}`], 1.0)
	is.Equal(m[`fleet_http_requests_total{code="4xx",route="none"}`], 2.0) // the 401 and the 404
	is.Equal(m[`fleet_http_request_duration_seconds_count{route="GET /v1/account"}`], 2.0)
	is.Equal(m[`fleet_http_request_duration_seconds_bucket{route="GET /v1/account",le="+Inf"}`], 2.0)
	is.True(m[`fleet_http_request_duration_seconds_sum{route="GET /v1/account"}`] > 0)
	// Buckets are cumulative.
	prev := 0.0
	for _, le := range []string{"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"} {
		v, ok := m[`fleet_http_request_duration_seconds_bucket{route="GET /v1/vehicles/{vehicle_id}",le="`+le+`"}`]
		is.True(ok)
		is.True(v >= prev)
		prev = v
	}
	is.Equal(prev, 2.0)
	is.Equal(m["fleet_http_requests_in_flight"], 0.0)
	_, listed := m[`fleet_http_requests_total{code="2xx",route="DELETE /v1/vehicles/{vehicle_id}"}`]
	is.True(!listed) // routes not called are left out
}

// TestMetricsCountStoreRoundTrips: over a SQL store, the metrics say what
// a location report costs the database: its round trips by operation, and
// the group commit it joined. On SQLite, and on PostgreSQL when
// FLEET_TEST_POSTGRES is set.
func TestMetricsCountStoreRoundTrips(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			is := is.New(t)
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
			if db == "postgres" {
				dsn = pgtest.NewDSN(t)
			}
			store, err := sqlstore.Open(ctx, dsn)
			is.NoErr(err)
			t.Cleanup(func() { store.Close() })
			e := newEnvOn(t, store, testclock.New(T0))
			_, key := e.account(fleet.PlanPro)
			veh := e.vehicle(key, "Counted")
			before := e.scrape()
			is.Equal(e.do("POST", "/v1/vehicles/"+veh+"/locations", key, batch(pt(T0, 52.5, 13.4, 40))).status, http.StatusOK)
			after := e.scrape()
			grew := func(name string) float64 { return after[name] - before[name] }
			is.True(grew(`fleet_store_round_trips_total{operation="statement"}`) >= 3) // the vehicle, the point, the vehicle again at least
			is.Equal(grew(`fleet_store_group_members_total`), 1.0)                     // the report's write, in a group
			is.Equal(grew(`fleet_store_group_commits_total`), 1.0)                     // committed alone: nothing else was writing
			is.True(grew(`fleet_store_round_trips_total{operation="commit"}`) >= 1)
			for _, op := range []string{"begin", "commit", "rollback", "savepoint", "statement"} {
				_, ok := after[`fleet_store_round_trips_total{operation="`+op+`"}`]
				is.True(ok) // every operation is reported, from 0
			}
		})
	}
}
