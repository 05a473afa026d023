package fleethttp_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
)

type benchEnv struct {
	svc    *fleet.Service
	store  *memstore.Store
	clock  *testclock.Clock
	p      fleet.Principal
	secret string
	h      http.Handler
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	store := memstore.New()
	clock := testclock.New(T0)
	quiet := slog.New(slog.DiscardHandler)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now, Logger: quiet})
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	return &benchEnv{svc: svc, store: store, clock: clock, p: fleet.SystemPrincipal(a), secret: nk.Secret,
		h: fleethttp.NewHandler(svc, fleethttp.WithLogger(quiet))}
}

func (e *benchEnv) vehicles(b *testing.B, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		v, err := e.svc.CreateVehicle(ctx, e.p, fleet.Vehicle{Name: fmt.Sprintf("V%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = v.ID
	}
	return ids
}

type wirePoint struct {
	VehicleID string  `json:"vehicle_id"`
	Lat       float64 `json:"latitude"`
	Lon       float64 `json:"longitude"`
	TS        string  `json:"timestamp"`
	Speed     float64 `json:"speed"`
	Heading   float64 `json:"heading"`
}

// BenchmarkBulkIngest posts batches of 10,000 points (100 vehicles x 100)
// over loopback HTTP into memstore; in the same run, batch by batch, it
// inserts the same points straight into the store, and ingests them through
// the service without HTTP. ratio = HTTP points/s over store points/s
// (target >= 0.5); ratio-service = HTTP over the service (what HTTP and
// JSON cost on top of the domain's own work).
func BenchmarkBulkIngest(b *testing.B) {
	e := newBenchEnv(b)
	ids := e.vehicles(b, 100)
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	client := srv.Client()
	base := T0
	round := 0
	makeBatch := func() (map[string][]fleet.Point, []byte) {
		byVehicle := map[string][]fleet.Point{}
		ws := make([]wirePoint, 0, 10_000)
		for j := range 100 {
			ts := base.Add(time.Duration(round*100+j) * time.Second)
			for _, id := range ids {
				s, h := 42.5, 180.0
				byVehicle[id] = append(byVehicle[id], fleet.Point{VehicleID: id, Latitude: 52.5 + float64(j)/1e4, Longitude: 13.4, Timestamp: ts, Speed: &s, Heading: &h})
				ws = append(ws, wirePoint{id, 52.5 + float64(j)/1e4, 13.4, ts.Format(time.RFC3339Nano), s, h})
			}
		}
		round++
		e.clock.Set(base.Add(time.Duration(round*100) * time.Second)) // live data, as gateways send it
		body, _ := json.Marshal(map[string]any{"locations": ws})
		return byVehicle, body
	}
	var tHTTP, tStore, tSvc time.Duration
	for b.Loop() {
		b.StopTimer()
		_, body := makeBatch()
		direct, _ := makeBatch()
		viaSvc, _ := makeBatch()
		var svcPts []fleet.Point
		for _, pts := range viaSvc {
			svcPts = append(svcPts, pts...)
		}
		b.StartTimer()

		t0 := time.Now()
		postBatch(b, client, srv.URL, e.secret, body)
		t1 := time.Now()
		err := e.store.Update(ctx, func(tx fleet.Tx) error {
			for id, pts := range direct {
				if _, err := tx.InsertPoints(id, pts); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := e.svc.IngestBulk(ctx, e.p, svcPts); err != nil {
			b.Fatal(err)
		}
		tSvc += time.Since(t2)
		tStore += t2.Sub(t1)
		tHTTP += t1.Sub(t0)
	}
	n := float64(b.N) * 10_000
	b.ReportMetric(n/tHTTP.Seconds(), "http-points/s")
	b.ReportMetric(n/tStore.Seconds(), "store-points/s")
	b.ReportMetric(n/tSvc.Seconds(), "service-points/s")
	b.ReportMetric(float64(tStore)/float64(tHTTP), "ratio")
	b.ReportMetric(float64(tSvc)/float64(tHTTP), "ratio-service")
}

// BenchmarkSnapshot10k reads a 500-record page of the latest locations of a
// 10,000-vehicle fleet through the handler.
func BenchmarkSnapshot10k(b *testing.B) {
	e := newBenchEnv(b)
	ids := e.vehicles(b, 10_000)
	pts := make([]fleet.Point, len(ids))
	for i, id := range ids {
		s := 30.0
		pts[i] = fleet.Point{VehicleID: id, Latitude: 52, Longitude: 13, Timestamp: T0.Add(-time.Minute), Speed: &s}
	}
	if _, err := e.svc.IngestBulk(ctx, e.p, pts); err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/v1/vehicles/locations?limit=500&cursor="+fleet.EncodeCursor(ids[5000]), nil)
	req.Header.Set("Authorization", "Bearer "+e.secret)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkHistoryPage reads a 1,000-point page from the middle of the
// history of 100 vehicles holding 1,000,000 points in all.
func BenchmarkHistoryPage(b *testing.B) {
	e := newBenchEnv(b)
	ids := e.vehicles(b, 100)
	start := T0.Add(-10_000 * time.Second)
	for _, id := range ids {
		pts := make([]fleet.Point, 10_000)
		for j := range pts {
			pts[j] = fleet.Point{Latitude: 52, Longitude: 13, Timestamp: start.Add(time.Duration(j) * time.Second)}
		}
		if err := e.store.Update(ctx, func(tx fleet.Tx) error { _, err := tx.InsertPoints(id, pts); return err }); err != nil {
			b.Fatal(err)
		}
	}
	from := start.Add(5_000 * time.Second).Format(time.RFC3339)
	req := httptest.NewRequest("GET", "/v1/vehicles/"+ids[50]+"/locations?limit=1000&from="+from, nil)
	req.Header.Set("Authorization", "Bearer "+e.secret)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
