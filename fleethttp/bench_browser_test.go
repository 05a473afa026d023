package fleethttp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// BenchmarkCORS measures authenticated GET /v1/account from a listed origin
// on a handler with CORS on, against the same request without Origin on a
// handler without CORS, over loopback TCP, interleaved request by request.
// ratio = time without CORS / time with it (1.0: CORS costs nothing).
func BenchmarkCORS(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	svc := fleet.NewService(memstore.New(), fleet.Options{Logger: log})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	plain := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(log)))
	defer plain.Close()
	cors := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(log), fleethttp.WithCORSOrigins([]string{appOrigin})))
	defer cors.Close()
	get := func(srv *httptest.Server, origin string) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/account", nil)
		req.Header.Set("Authorization", "Bearer "+nk.Secret)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || (origin != "" && res.Header.Get("Access-Control-Allow-Origin") != origin) {
			b.Fatalf("status %d, allowed origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	get(plain, "")
	get(cors, appOrigin)
	var tPlain, tCORS time.Duration
	for b.Loop() {
		t0 := time.Now()
		get(plain, "")
		t1 := time.Now()
		get(cors, appOrigin)
		tCORS += time.Since(t1)
		tPlain += t1.Sub(t0)
	}
	b.ReportMetric(float64(tPlain.Nanoseconds())/float64(b.N), "plain-ns/req")
	b.ReportMetric(float64(tCORS.Nanoseconds())/float64(b.N), "cors-ns/req")
	b.ReportMetric(float64(tPlain)/float64(tCORS), "ratio")
}

// BenchmarkStreamOpenWithToken measures opening the live stream with a
// stream token (spent in the store) until its headers arrive, against
// opening it with the Authorization header, on a SQLite file and on
// memstore, interleaved. Making the token is not timed. ratio = time with
// the header / time with the token.
func BenchmarkStreamOpenWithToken(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		benchStreamOpen(b, store)
	})
	b.Run("memstore", func(b *testing.B) { benchStreamOpen(b, memstore.New()) })
}

func benchStreamOpen(b *testing.B, store fleet.Store) {
	log := slog.New(slog.DiscardHandler)
	svc := fleet.NewService(store, fleet.Options{Logger: log})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, nk.Secret)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(log)))
	defer srv.Close()
	client := srv.Client()
	// open opens a stream, returns how long its headers took, and closes
	// it, waiting (untimed) until the server has freed its slot.
	open := func(token string) time.Duration {
		c, cancel := context.WithCancel(context.Background())
		url := srv.URL + "/v1/vehicles/locations/stream"
		if token != "" {
			url += "?token=" + token
		}
		req, _ := http.NewRequestWithContext(c, "GET", url, nil)
		if token == "" {
			req.Header.Set("Authorization", "Bearer "+nk.Secret)
		}
		t0 := time.Now()
		res, err := client.Do(req)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
		cancel()
		res.Body.Close()
		for svc.OpenStreams(p) > 0 {
			runtime.Gosched()
		}
		return d
	}
	newToken := func() string {
		t, err := svc.CreateStreamToken(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		return t.Token
	}
	open("")
	open(newToken())
	var tHeader, tToken time.Duration
	for b.Loop() {
		tHeader += open("")
		tToken += open(newToken())
	}
	b.ReportMetric(float64(tHeader.Nanoseconds())/float64(b.N), "header-ns/open")
	b.ReportMetric(float64(tToken.Nanoseconds())/float64(b.N), "token-ns/open")
	b.ReportMetric(float64(tHeader)/float64(tToken), "ratio")
}
