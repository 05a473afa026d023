package fleethttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// BenchmarkGetAccount measures authenticated GET /v1/account over loopback
// TCP on memstore against a bare net/http handler that writes the same
// bytes (see benchGetAccount; target ratio >= 0.8).
func BenchmarkGetAccount(b *testing.B) {
	benchGetAccount(b, memstore.New())
}

// BenchmarkGetAccountSQLite is BenchmarkGetAccount on the SQLite store, on a
// file: a request must not wait on a disk write (target ratio >= 0.6).
func BenchmarkGetAccountSQLite(b *testing.B) {
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	benchGetAccount(b, store)
}

// benchGetAccount measures authenticated GET /v1/account over loopback TCP
// on store against two bare net/http handlers, all three in the same run
// and interleaved request by request, so machine noise hits each alike:
//
//   - the same bytes: a handler writing the answer Fleet wrote, its header
//     fields (rate limit, request id, version, caching and security fields
//     the contract requires) and body, so that what is left is Fleet's own
//     work: authentication, the allowance, the store, the encoding;
//   - the body alone: a handler writing the body with no field but its
//     type, which shows in addition what the contract's fields cost the
//     client and the server to write and read (about a microsecond each).
//
// It reports each one's ns per request, ratio = same-bytes time / Fleet
// time and ratio-body = body-alone time / Fleet time (1.0 means the API
// costs nothing over the bare handler).
func benchGetAccount(b *testing.B, store fleet.Store) {
	svc := fleet.NewService(store, fleet.Options{Logger: slog.New(slog.DiscardHandler)})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	api := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler))))
	defer api.Close()
	client := api.Client()
	get := func(url string) (http.Header, []byte) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+nk.Secret)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		return res.Header, body
	}
	header, same := get(api.URL + "/v1/account")
	bare := bareServer(same)
	defer bare.Close()
	sameBytes := sameBytesServer(header, same)
	defer sameBytes.Close()
	get(bare.URL)
	get(sameBytes.URL)

	var tBare, tSame, tAPI time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		get(bare.URL + "/v1/account")
		t1 := time.Now()
		get(sameBytes.URL + "/v1/account")
		t2 := time.Now()
		get(api.URL + "/v1/account")
		tAPI += time.Since(t2)
		tSame += t2.Sub(t1)
		tBare += t1.Sub(t0)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tBare.Nanoseconds())/n, "bare-ns/req")
	b.ReportMetric(float64(tSame.Nanoseconds())/n, "same-ns/req")
	b.ReportMetric(float64(tAPI.Nanoseconds())/n, "fleet-ns/req")
	b.ReportMetric(float64(tSame)/float64(tAPI), "ratio")
	b.ReportMetric(float64(tBare)/float64(tAPI), "ratio-body")
}

// sameBytesServer is a bare net/http handler writing the answer Fleet
// wrote: header (its fields as they came, spelled as sent; Date and
// Content-Length are net/http's own) and body.
func sameBytesServer(header http.Header, body []byte) *httptest.Server {
	fields := make(http.Header, len(header))
	for k, v := range header {
		if k != "Date" && k != "Content-Length" {
			fields[k] = v
		}
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range fields {
			h[k] = v
		}
		w.Write(body)
	}))
}

// bareServer is the baseline of the request-path benchmarks: a bare
// net/http handler writing body, the answer of the route it stands for.
func bareServer(body []byte) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}
