package fleethttp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// wirePoints is a location batch's body: n points from second start after
// t0, one a second.
func wirePoints(t0 time.Time, start, n int) map[string]any {
	pts := make([]map[string]any, n)
	for i := range pts {
		pts[i] = map[string]any{"latitude": 52.5, "longitude": 13.4,
			"timestamp": t0.Add(time.Duration(start+i) * time.Second).Format(time.RFC3339)}
	}
	return map[string]any{"locations": pts}
}

// TestIngestOverPointsAllowance: a location batch that would pass the
// account's points allowance is answered 429 with Retry-After (the seconds
// to the window's end), the rate-limit headers of the key, and the message
// of the contract; the Go client reads it as rate_limit_exceeded with
// RetryAfter; and the same request, with the same Idempotency-Key, is
// stored once the window has turned, not replayed as the 429.
func TestIngestOverPointsAllowance(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, secret := e.account(fleet.PlanFree)
	c := fleethttp.NewClient(e.srv.URL, secret, fleethttp.WithHTTPClient(e.srv.Client()), fleethttp.WithoutRateLimitWait())
	t0 := T0.Add(-24 * time.Hour)
	var vehicles []string
	for i := range 10 {
		v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck " + strconv.Itoa(i)})
		is.NoErr(err)
		vehicles = append(vehicles, v.ID)
	}
	bulk := func(start, perVehicle int) []fleet.Point {
		var pts []fleet.Point
		for _, id := range vehicles {
			for j := range perVehicle {
				pts = append(pts, fleet.Point{VehicleID: id, Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(time.Duration(start+j) * time.Second)})
			}
		}
		return pts
	}
	for i := range 9 {
		res, err := c.IngestBulk(ctx, bulk(i*1_000, 1_000))
		is.NoErr(err)
		is.Equal(res.Accepted, 10_000)
	}
	res, err := c.IngestBulk(ctx, bulk(9_000, 950))
	is.NoErr(err)
	is.Equal(res.Accepted, 9_500) // 99,500 of 100,000

	e.clock.Advance(10 * time.Minute)
	path := "/v1/vehicles/" + vehicles[0] + "/locations"
	body := wirePoints(t0, 20_000, 1_000)
	r := e.do("POST", path, secret, body, "Idempotency-Key", "buffer-1")
	is.Equal(r.status, http.StatusTooManyRequests)
	is.Equal(r.errCode(), "rate_limit_exceeded")
	is.Equal(r.header.Get("Retry-After"), "3000")
	is.Equal(r.errMessage(), "This account has stored 99,500 of the 100,000 location points the free plan allows this hour, "+
		"and this batch's 1,000 would pass that: send at most 500 now, or retry after 3000 seconds.")
	used, err := strconv.Atoi(r.header.Get("X-RateLimit-Used"))
	is.NoErr(err)
	is.Equal(used, 21) // the key's requests, this one counted
	is.Equal(r.header.Get("X-RateLimit-Limit"), "1000")

	_, err = c.IngestLocations(ctx, vehicles[0], bulk(20_000, 1_000)[:1_000])
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	var fe *fleet.Error
	is.True(errors.As(err, &fe))
	is.Equal(fe.RetryAfter, 3000*time.Second) // from Retry-After

	r = e.do("POST", path, secret, wirePoints(t0, 30_000, 500))
	is.Equal(r.status, http.StatusOK) // what is left fits
	is.Equal(r.data()["accepted"], float64(500))
	r = e.do("POST", "/v1/vehicles/locations", secret, map[string]any{"locations": []map[string]any{
		{"vehicle_id": vehicles[1], "latitude": 52.5, "longitude": 13.4, "timestamp": t0.Add(40_000 * time.Second).Format(time.RFC3339)}}})
	is.Equal(r.status, http.StatusTooManyRequests)
	is.Equal(r.header.Get("Retry-After"), "3000")
	is.Equal(r.errMessage(), "This account has stored 100,000 location points this hour, the most the free plan allows; retry after 3000 seconds.")

	e.clock.Advance(50 * time.Minute) // the window ends
	r = e.do("POST", path, secret, body, "Idempotency-Key", "buffer-1")
	is.Equal(r.status, http.StatusOK) // run again, not the 429 replayed
	is.Equal(r.header.Get("Idempotent-Replayed"), "")
	is.Equal(r.header.Get("Retry-After"), "")
	is.Equal(r.data()["accepted"], float64(1_000))
}

// TestPointsAllowanceExactUnderConcurrency: with 5,000 points left, of 40
// simultaneous batches of 250 exactly 20 are stored, whole.
func TestPointsAllowanceExactUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	checkPointsExact(t, []*env{e})
}

// TestPostgresTwoServersPointsAllowanceExact: the same across two servers
// sharing one PostgreSQL database.
func TestPostgresTwoServersPointsAllowanceExact(t *testing.T) {
	one, two, _ := postgresServers(t)
	checkPointsExact(t, []*env{one, two})
}

// checkPointsExact fills a free account's points allowance through the
// first server's service down to 5,000 points, then posts 40 batches of 250
// points of fresh vehicles at once, spread over the servers: exactly 20 are
// accepted, their points are all stored and the others' none, and no
// server takes another point.
func checkPointsExact(t *testing.T, servers []*env) {
	t.Helper()
	is := is.New(t)
	e := servers[0]
	a, secret := e.account(fleet.PlanFree)
	p := fleet.SystemPrincipal(a)
	t0 := T0.Add(-24 * time.Hour)
	newVehicles := func(n int) []string {
		var ids []string
		for i := range n {
			v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck " + strconv.Itoa(i)})
			is.NoErr(err)
			ids = append(ids, v.ID)
		}
		return ids
	}
	full := newVehicles(10)
	for i := range 19 { // 95,000 points
		pts := make([]fleet.Point, 0, 5_000)
		for _, id := range full {
			for j := range 500 {
				pts = append(pts, fleet.Point{VehicleID: id, Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(time.Duration(i*500+j) * time.Second)})
			}
		}
		res, err := e.svc.IngestBulk(ctx, p, pts)
		is.NoErr(err)
		is.Equal(res.Accepted, 5_000)
	}
	fresh := newVehicles(10)
	bodies := make([][]byte, 40)
	for i := range bodies {
		pts := make([]map[string]any, 250)
		for j := range pts {
			pts[j] = map[string]any{"vehicle_id": fresh[i%10], "latitude": 52.5, "longitude": 13.4,
				"timestamp": t0.Add(time.Duration(i/10*250+j) * time.Second).Format(time.RFC3339)}
		}
		b, err := json.Marshal(map[string]any{"locations": pts})
		is.NoErr(err)
		bodies[i] = b
	}
	statuses := simultaneously(t, len(bodies), func(i int) (*env, *http.Request) {
		srv := servers[i%len(servers)]
		req, _ := http.NewRequest("POST", srv.srv.URL+"/v1/vehicles/locations", bytes.NewReader(bodies[i]))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		return srv, req
	})
	is.Equal(statuses[http.StatusOK], 20)
	is.Equal(statuses[http.StatusTooManyRequests], 20)
	stored := 0
	for _, id := range fresh {
		h, err := e.svc.ListHistory(ctx, p, id, fleet.HistoryQuery{From: &t0, Limit: fleet.MaxHistoryLimit})
		is.NoErr(err)
		is.True(len(h.Items)%250 == 0) // whole batches only
		stored += len(h.Items)
	}
	is.Equal(stored, 5_000) // exactly the allowance
	for _, srv := range servers {
		r := srv.do("POST", "/v1/vehicles/"+fresh[0]+"/locations", secret, wirePoints(t0, 50_000, 1))
		is.Equal(r.status, http.StatusTooManyRequests) // none left anywhere
	}
}
