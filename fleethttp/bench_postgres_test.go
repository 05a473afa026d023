package fleethttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// The PostgreSQL scale-out benchmarks compare, in the same run and round by
// round, a server on the SQLite store with servers on the PostgreSQL store
// under the same closed-loop load over loopback HTTP (benchClients clients
// each sending its next request when the last one is answered). They need
// FLEET_TEST_POSTGRES and report requests per second of each and their
// ratio. Run them with
//
//	FLEET_TEST_POSTGRES=postgres://... go test ./fleethttp -run '^$' -bench Postgres -benchtime 3x

// benchServer is one server (a store, a service and its handler) under load.
type benchServer struct {
	store *sqlstore.Store
	svc   *fleet.Service
	url   string
}

func newBenchServer(b *testing.B, dsn string) *benchServer {
	return newBenchServerFollowing(b, dsn, true)
}

// newBenchServerFollowing is newBenchServer whose streams follow the shared
// live feed on PostgreSQL only when follow is set.
func newBenchServerFollowing(b *testing.B, dsn string, follow bool) *benchServer {
	b.Helper()
	store, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	// Errors only, so that a failed request says why.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	svc := fleet.NewService(store, fleet.Options{Logger: quiet})
	srv := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(quiet)))
	// On PostgreSQL the streams follow the shared live feed, as Run makes
	// them: each ingest appends its reports to it.
	fctx, cancel := context.WithCancel(context.Background())
	following := make(chan struct{})
	go func() {
		defer close(following)
		if follow {
			svc.Jobs().FollowLive(fctx)
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-following
		srv.Close()
		store.Close()
	})
	if follow && store.Dialect() == sqlstore.Postgres {
		deadline := time.Now().Add(10 * time.Second)
		for !svc.Jobs().FollowingLive() {
			if time.Now().After(deadline) {
				b.Fatal("the live feed is not followed")
			}
			runtime.Gosched()
		}
	}
	return &benchServer{store: store, svc: svc, url: srv.URL}
}

// noFollowing makes newBenchDeployment's servers publish to their own
// streams only, to measure what the shared live feed costs.
var noFollowing bool

// benchDeployment is one or more servers sharing a store, with accounts of
// one key each.
type benchDeployment struct {
	name     string
	servers  []*benchServer
	secrets  []string
	vehicles [][]string // by account
}

func newBenchDeployment(b *testing.B, name, dsn string, servers, accounts, vehicles int) *benchDeployment {
	b.Helper()
	d := &benchDeployment{name: name}
	for range servers {
		d.servers = append(d.servers, newBenchServerFollowing(b, dsn, !noFollowing))
	}
	svc := d.servers[0].svc
	for i := range accounts {
		a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: fmt.Sprintf("Bench %d", i),
			Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
		if err != nil {
			b.Fatal(err)
		}
		d.secrets = append(d.secrets, nk.Secret)
		var ids []string
		for j := range vehicles {
			v, err := svc.CreateVehicle(ctx, fleet.SystemPrincipal(a), fleet.Vehicle{Name: fmt.Sprintf("V%d", j)})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, v.ID)
		}
		d.vehicles = append(d.vehicles, ids)
	}
	return d
}

func benchPostgresDSN(b *testing.B) string {
	b.Helper()
	if os.Getenv(pgtest.EnvVar) == "" {
		b.Skip(pgtest.EnvVar + " is not set: skipping PostgreSQL benchmarks")
	}
	return pgtest.NewDSN(b)
}

func benchSQLiteDSN(b *testing.B) string {
	return "sqlite:" + filepath.Join(b.TempDir(), "fleet.db")
}

// loadResult is what one round of load measured.
type loadResult struct {
	rate float64 // requests per second
	p99  time.Duration
}

// benchClient is shared by the rounds: enough idle connections for every
// client, so that no request pays a new connection.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 512}}

// runLoad sends total requests from clients concurrent clients; client i
// sends its k-th request with req(i, k). With every > 0 it is an open loop
// instead: the requests start every `every` (spread over the clients)
// whether or not earlier ones were answered.
func runLoad(b *testing.B, clients, total int, every time.Duration, req func(i, k int) *http.Request) loadResult {
	b.Helper()
	var next atomic.Int64
	lat := make([]time.Duration, total)
	var failed atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for k := 0; ; k++ {
				n := int(next.Add(1)) - 1
				if n >= total {
					return
				}
				if every > 0 {
					if d := time.Until(start.Add(time.Duration(n) * every)); d > 0 {
						time.Sleep(d) // pacing the open loop, not waiting for a result
					}
				}
				t0 := time.Now()
				res, err := benchClient.Do(req(i, k))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failed.Store(fmt.Sprintf("status %d", res.StatusCode))
					return
				}
				lat[n] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if f := failed.Load(); f != nil {
		b.Fatalf("load: %v", f)
	}
	slices.Sort(lat)
	return loadResult{rate: float64(total) / elapsed.Seconds(), p99: lat[total*99/100]}
}

// getAccount is the request of client i's k-th GET /v1/account on d: the
// clients' keys and servers in turn.
func (d *benchDeployment) getAccount(i, k int) *http.Request {
	s := d.servers[(i+k)%len(d.servers)]
	r, _ := http.NewRequest("GET", s.url+"/v1/account", nil)
	r.Header.Set("Authorization", "Bearer "+d.secrets[(i+k*benchClients)%len(d.secrets)])
	return r
}

// postPoint is client i's k-th single-point report on d.
func (d *benchDeployment) postPoint(i, k int) *http.Request {
	s := d.servers[(i+k)%len(d.servers)]
	a := (i + k*benchClients) % len(d.secrets)
	ids := d.vehicles[a]
	id := ids[(i+k*benchClients)%len(ids)]
	body := fmt.Sprintf(`{"locations":[{"latitude":52.5,"longitude":13.4,"speed":30,"timestamp":%q}]}`,
		time.Now().UTC().Format(time.RFC3339Nano))
	r, _ := http.NewRequest("POST", s.url+"/v1/vehicles/"+id+"/locations", bytes.NewReader([]byte(body)))
	r.Header.Set("Authorization", "Bearer "+d.secrets[a])
	r.Header.Set("Content-Type", "application/json")
	return r
}

// compareLoad runs the same load on the deployments, alternating them
// round by round (b.N rounds of perRound requests each), and reports each
// one's requests per second and the ratio of every later one to the first.
func compareLoad(b *testing.B, perRound int, ds []*benchDeployment, req func(d *benchDeployment) func(i, k int) *http.Request) []float64 {
	b.Helper()
	for _, d := range ds { // warm the caches and connections
		runLoad(b, benchClients, benchClients*4, 0, req(d))
	}
	secs := make([]float64, len(ds))
	b.ResetTimer()
	for b.Loop() {
		for j, d := range ds {
			r := runLoad(b, benchClients, perRound, 0, req(d))
			secs[j] += float64(perRound) / r.rate
		}
	}
	b.StopTimer()
	rates := make([]float64, len(ds))
	for j, d := range ds {
		rates[j] = float64(perRound*b.N) / secs[j]
		b.ReportMetric(rates[j], d.name+"-req/s")
		if j > 0 {
			b.ReportMetric(rates[j]/rates[0], "ratio-"+d.name)
		}
	}
	return rates
}

// BenchmarkPostgresGetAccount: authenticated GET /v1/account, the requests
// of 32 clients spread over 64 keys or all on one key, on PostgreSQL
// against SQLite (targets: ratio >= 0.5 with 64 keys, >= 0.3 with one).
func BenchmarkPostgresGetAccount(b *testing.B) {
	for _, keys := range []int{64, 1} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			pg := benchPostgresDSN(b)
			compareLoad(b, 4000, []*benchDeployment{
				newBenchDeployment(b, "sqlite", benchSQLiteDSN(b), 1, keys, 0),
				newBenchDeployment(b, "postgres", pg, 1, keys, 0),
			}, func(d *benchDeployment) func(i, k int) *http.Request { return d.getAccount })
		})
	}
}

// BenchmarkPostgresTwoServers: GET /v1/account over 64 keys, on one
// PostgreSQL server against two sharing the database (their combined
// rate), each load from the same 32 clients.
func BenchmarkPostgresTwoServers(b *testing.B) {
	pg := benchPostgresDSN(b)
	one := newBenchDeployment(b, "one", pg, 1, 64, 0)
	two := &benchDeployment{name: "two", servers: []*benchServer{one.servers[0], newBenchServer(b, pg)}, secrets: one.secrets}
	compareLoad(b, 4000, []*benchDeployment{one, two},
		func(d *benchDeployment) func(i, k int) *http.Request { return d.getAccount })
}

// BenchmarkPostgresIngest: single-point POST /v1/vehicles/{id}/locations
// (one point per request, 56 vehicles of 8 accounts) on PostgreSQL against
// SQLite (target ratio >= 0.5); then PostgreSQL at half its measured rate
// (an open loop), whose p99 it reports (target < 50 ms), and SQLite at the
// same rate.
func BenchmarkPostgresIngest(b *testing.B) {
	pg := benchPostgresDSN(b)
	lite := newBenchDeployment(b, "sqlite", benchSQLiteDSN(b), 1, 8, 7)
	post := newBenchDeployment(b, "postgres", pg, 1, 8, 7)
	rates := compareLoad(b, 2000, []*benchDeployment{lite, post},
		func(d *benchDeployment) func(i, k int) *http.Request { return d.postPoint })
	half := time.Duration(float64(time.Second) / (rates[1] / 2))
	r := runLoad(b, benchClients, 2000, half, post.postPoint)
	b.ReportMetric(float64(r.p99.Microseconds())/1000, "postgres-half-p99-ms")
	r = runLoad(b, benchClients, 2000, half, lite.postPoint)
	b.ReportMetric(float64(r.p99.Microseconds())/1000, "sqlite-same-rate-p99-ms")
}

// BenchmarkPostgresIngestChoices: the same single-point reports on
// PostgreSQL as it runs (the shared live feed followed), against the same
// without the shared feed (each server's streams its own), and with its
// sessions asking commits to wait for companions (commit_delay 100 µs when 2
// others are active; a superuser's setting), each pair in a run of its own.
func BenchmarkPostgresIngestChoices(b *testing.B) {
	for _, alt := range []string{"no-feed", "commit-delay"} {
		b.Run(alt, func(b *testing.B) {
			post := newBenchDeployment(b, "postgres", benchPostgresDSN(b), 1, 8, 7)
			dsn := pgtest.NewDSN(b)
			if alt == "commit-delay" {
				dsn += "&commit_delay=100&commit_siblings=2"
			}
			noFollowing = alt == "no-feed"
			other := newBenchDeployment(b, alt, dsn, 1, 8, 7)
			noFollowing = false
			compareLoad(b, 2000, []*benchDeployment{post, other},
				func(d *benchDeployment) func(i, k int) *http.Request { return d.postPoint })
		})
	}
}

// batchClock hands out the timestamps of postBatch's points: one
// millisecond apart, from an hour ago, each once.
var batchClock struct {
	once  sync.Once
	start time.Time
	next  atomic.Int64
}

// postBatch is client i's k-th batch of 1,000 points of one vehicle on d,
// each point newer than the vehicle's last.
func (d *benchDeployment) postBatch(i, k int) *http.Request {
	batchClock.once.Do(func() { batchClock.start = time.Now().UTC().Add(-time.Hour) })
	s := d.servers[(i+k)%len(d.servers)]
	a := (i + k*benchClients) % len(d.secrets)
	ids := d.vehicles[a]
	id := ids[(i+k*benchClients)%len(ids)]
	first := batchClock.next.Add(1000) - 1000
	var body bytes.Buffer
	body.WriteString(`{"locations":[`)
	for j := range int64(1000) {
		if j > 0 {
			body.WriteByte(',')
		}
		at := batchClock.start.Add(time.Duration(first+j) * time.Millisecond)
		fmt.Fprintf(&body, `{"latitude":52.5,"longitude":13.4,"speed":30,"timestamp":%q}`, at.Format(time.RFC3339Nano))
	}
	body.WriteString(`]}`)
	r, _ := http.NewRequest("POST", s.url+"/v1/vehicles/"+id+"/locations", &body)
	r.Header.Set("Authorization", "Bearer "+d.secrets[a])
	r.Header.Set("Content-Type", "application/json")
	return r
}

// BenchmarkPostgresIngestBatch: POST /v1/vehicles/{id}/locations of 1,000
// points a request (56 vehicles of 8 accounts) on PostgreSQL against
// SQLite (target ratio >= 0.8): a batch's points go in one set-based
// statement of its group's write-sets.
func BenchmarkPostgresIngestBatch(b *testing.B) {
	pg := benchPostgresDSN(b)
	lite := newBenchDeployment(b, "sqlite", benchSQLiteDSN(b), 1, 8, 7)
	post := newBenchDeployment(b, "postgres", pg, 1, 8, 7)
	compareLoad(b, 64, []*benchDeployment{lite, post},
		func(d *benchDeployment) func(i, k int) *http.Request { return d.postBatch })
}
