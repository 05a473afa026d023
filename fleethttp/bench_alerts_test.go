package fleethttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// BenchmarkBulkIngestWithAlerts posts batches of 10,000 points (100
// vehicles x 100) over loopback HTTP into memstore for two accounts of the
// same store, batch by batch in turn: one with 10 speeding rules and 100
// geofences of 50 vertices, each with an enter and an exit rule; one with
// no rules. The vehicles drive across the geofences, so crossings and
// speeding open alerts as they go. ratio = points/s with rules over points/s
// without (target >= 0.8).
func BenchmarkBulkIngestWithAlerts(b *testing.B) {
	e := newBenchEnv(b)
	idsRules := e.vehicles(b, 100)
	plain, plainKey, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Plain", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	idsPlain := make([]string, 100)
	for i := range idsPlain {
		v, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(plain), fleet.Vehicle{Name: "P"})
		if err != nil {
			b.Fatal(err)
		}
		idsPlain[i] = v.ID
	}
	for i := range 10 {
		th := 60 + 10*float64(i)
		if _, err := e.svc.CreateAlertRule(ctx, e.p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &th}, nil); err != nil {
			b.Fatal(err)
		}
	}
	for gy := range 10 {
		for gx := range 10 {
			clon, clat := 13.3+0.02*float64(gx)+0.01, 52.45+0.01*float64(gy)+0.005
			ring := make([][]float64, 50)
			for k := range 49 {
				a := 2 * math.Pi * float64(k) / 49
				ring[k] = []float64{clon + 0.006*math.Cos(a), clat + 0.004*math.Sin(a)}
			}
			ring[49] = ring[0]
			g, err := e.svc.CreateGeofence(ctx, e.p, fleet.Geofence{Name: "Zone", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: [][][]float64{ring}}})
			if err != nil {
				b.Fatal(err)
			}
			for _, typ := range []fleet.AlertType{fleet.AlertGeofenceEnter, fleet.AlertGeofenceExit} {
				if _, err := e.svc.CreateAlertRule(ctx, e.p, fleet.AlertRule{Type: typ, GeofenceID: g.ID}, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	srv := httptest.NewServer(e.h)
	defer srv.Close()
	client := srv.Client()
	round := 0
	makeBatch := func(ids []string) []byte {
		ws := make([]wirePoint, 0, 10_000)
		for j := range 100 {
			step := round*100 + j
			ts := T0.Add(time.Duration(step) * time.Second)
			for i, id := range ids {
				lat := 52.45 + float64(step%1000)*1e-4 // 0.1 degrees north, then back
				lon := 13.3 + 0.002*float64(i)
				s := 45 + 30*math.Sin(float64(step+i)/7) // now and then above the lower limits
				ws = append(ws, wirePoint{id, lat, lon, ts.Format(time.RFC3339Nano), s, 0})
			}
		}
		body, _ := json.Marshal(map[string]any{"locations": ws})
		return body
	}
	post := func(secret string, body []byte) time.Duration {
		t0 := time.Now()
		postBatch(b, client, srv.URL, secret, body)
		return time.Since(t0)
	}
	var tRules, tPlain time.Duration
	for b.Loop() {
		b.StopTimer()
		withRules, without := makeBatch(idsRules), makeBatch(idsPlain)
		round++
		e.clock.Set(T0.Add(time.Duration(round*100) * time.Second))
		b.StartTimer()
		if round%2 == 0 { // alternate which goes first
			tRules += post(e.secret, withRules)
			tPlain += post(plainKey.Secret, without)
		} else {
			tPlain += post(plainKey.Secret, without)
			tRules += post(e.secret, withRules)
		}
	}
	n := float64(b.N) * 10_000
	b.ReportMetric(n/tRules.Seconds(), "rules-points/s")
	b.ReportMetric(n/tPlain.Seconds(), "plain-points/s")
	b.ReportMetric(float64(tPlain)/float64(tRules), "ratio")
	l, err := e.svc.ListAlerts(ctx, e.p, fleet.AlertFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil || len(l.Items) == 0 {
		b.Fatalf("no alerts opened: %v", err)
	}
}

// postBatch posts a bulk location batch and fails the benchmark unless it
// is taken whole.
func postBatch(b *testing.B, client *http.Client, base, secret string, body []byte) {
	req, _ := http.NewRequest("POST", base+"/v1/vehicles/locations", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("status %d", res.StatusCode)
	}
}
