package fleethttp_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/logbuf"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// benchClients is how many clients send at once in the saturation
// benchmarks, as `wrk -c32` would.
const benchClients = 32

// BenchmarkReportsVsAccountSQLite measures single-point reports (POST
// /v1/vehicles/{id}/locations, one point each, 50 vehicles) from 32
// concurrent clients over loopback HTTP into the SQLite store on a file,
// against GET /v1/account from 32 concurrent clients on the same server,
// in alternating rounds of the same run. ratio = reports/s over account
// reads/s (target >= 0.4): each report is a synced write transaction, and
// concurrent ones share their sync through group commit.
func BenchmarkReportsVsAccountSQLite(b *testing.B) {
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	quiet := slog.New(slog.DiscardHandler)
	svc := fleet.NewService(store, fleet.Options{Logger: quiet})
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	ids := make([]string, 50)
	for i := range ids {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("V%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = v.ID
	}
	api := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(quiet)))
	defer api.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients}}
	defer client.CloseIdleConnections()
	auth := "Bearer " + nk.Secret
	var seq atomic.Int64
	do := func(report bool) time.Duration {
		var req *http.Request
		if report {
			n := seq.Add(1)
			body := fmt.Sprintf(`{"locations":[{"latitude":%.5f,"longitude":%.5f,"timestamp":%q,"speed":12.5}]}`,
				48+float64(n%1000)/1e4, 2+float64(n%997)/1e4, time.Now().UTC().Add(time.Duration(n)*time.Microsecond).Format(time.RFC3339Nano))
			req, _ = http.NewRequest("POST", api.URL+"/v1/vehicles/"+ids[n%int64(len(ids))]+"/locations", bytes.NewBufferString(body))
			req.Header.Set("Content-Type", "application/json")
		} else {
			req, _ = http.NewRequest("GET", api.URL+"/v1/account", nil)
		}
		req.Header.Set("Authorization", auth)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Errorf("status %d", res.StatusCode)
		}
		return time.Since(t0)
	}
	// round runs perClient requests from each of benchClients clients and
	// returns its length and the requests' latencies.
	const perClient = 40
	round := func(report bool) (time.Duration, []time.Duration) {
		lat := make([]time.Duration, benchClients*perClient)
		var wg sync.WaitGroup
		t0 := time.Now()
		for c := range benchClients {
			wg.Go(func() {
				for i := range perClient {
					lat[c*perClient+i] = do(report)
				}
			})
		}
		wg.Wait()
		return time.Since(t0), lat
	}
	round(false)
	round(true)
	var tAccount, tReports time.Duration
	var reportLat []time.Duration
	c0, m0 := store.WriteGroups()
	b.ResetTimer()
	for b.Loop() {
		d, _ := round(false)
		tAccount += d
		d, lat := round(true)
		tReports += d
		reportLat = append(reportLat, lat...)
	}
	n := float64(b.N * benchClients * perClient)
	c1, m1 := store.WriteGroups()
	b.ReportMetric(float64(m1-m0)/float64(max(1, c1-c0)), "tx/commit")
	slices.Sort(reportLat)
	b.ReportMetric(n/tAccount.Seconds(), "account/s")
	b.ReportMetric(n/tReports.Seconds(), "reports/s")
	b.ReportMetric(float64(tAccount)/float64(tReports), "ratio")
	b.ReportMetric(float64(reportLat[len(reportLat)*99/100])/1e6, "report-p99-ms")
}

// BenchmarkGetAccountSaturated measures authenticated GET /v1/account under
// saturation: 32 clients at once over loopback TCP, as `wrk -c32` loads a
// server, against a bare net/http handler writing the same bytes under the
// same load, in alternating rounds of the same run (target ratio >= 0.8).
// The API logs as fleetserver does: every request's access line, in text,
// through the buffered log writer, to a file. ratio = bare time / API time.
func BenchmarkGetAccountSaturated(b *testing.B) {
	dir := b.TempDir()
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	log := fileLogger(b, dir)
	svc := fleet.NewService(store, fleet.Options{Logger: log})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	api := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(log)))
	defer api.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * benchClients}}
	defer client.CloseIdleConnections()
	auth := "Bearer " + nk.Secret
	get := func(url string) []byte {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", auth)
		res, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return nil
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Errorf("status %d", res.StatusCode)
		}
		return body
	}
	same := get(api.URL + "/v1/account")
	bare := bareServer(same)
	defer bare.Close()
	const perClient = 100
	round := func(url string) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range benchClients {
			wg.Go(func() {
				for range perClient {
					get(url)
				}
			})
		}
		wg.Wait()
		return time.Since(t0)
	}
	round(bare.URL + "/v1/account")
	round(api.URL + "/v1/account")
	var tBare, tAPI time.Duration
	b.ResetTimer()
	for b.Loop() {
		tBare += round(bare.URL + "/v1/account")
		tAPI += round(api.URL + "/v1/account")
	}
	n := float64(b.N * benchClients * perClient)
	b.ReportMetric(n/tBare.Seconds(), "bare/s")
	b.ReportMetric(n/tAPI.Seconds(), "fleet/s")
	b.ReportMetric(float64(tBare)/float64(tAPI), "ratio")
}

// discardWriter is a ResponseWriter that keeps nothing but a fresh header.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkGetAccountHandler is the handler's own work for an authenticated
// GET /v1/account, without the network: its time and allocations per
// request, access log (text, buffered, to a file) and metrics included.
func BenchmarkGetAccountHandler(b *testing.B) {
	store := memstore.New()
	log := fileLogger(b, b.TempDir())
	svc := fleet.NewService(store, fleet.Options{Logger: log})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	h := fleethttp.NewHandler(svc, fleethttp.WithLogger(log))
	req := httptest.NewRequest("GET", "/v1/account", nil)
	req.Header.Set("Authorization", "Bearer "+nk.Secret)
	req.RemoteAddr = "127.0.0.1:40000"
	w := &discardWriter{}
	b.ReportAllocs()
	for b.Loop() {
		w.h = make(http.Header, 16)
		h.ServeHTTP(w, req)
	}
}

// fileLogger logs as fleetserver does: text lines, buffered (flushed every
// 100 ms), to access.log in dir; closed when the benchmark ends.
func fileLogger(b *testing.B, dir string) *slog.Logger {
	logFile, err := os.Create(filepath.Join(dir, "access.log"))
	if err != nil {
		b.Fatal(err)
	}
	logOut := logbuf.New(logFile, 100*time.Millisecond)
	b.Cleanup(func() {
		logOut.Close()
		logFile.Close()
	})
	return slog.New(slog.NewTextHandler(logOut, nil))
}
