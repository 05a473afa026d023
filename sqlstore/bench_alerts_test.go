package sqlstore_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
)

// BenchmarkSmallIngestWithAlerts ingests batches of 10 points of one
// vehicle, as a vehicle's own device sends them, through the service on
// SQLite (and PostgreSQL when FLEET_TEST_POSTGRES is set), alternating an
// account with 10 speeding rules and 100 geofences of 50 vertices (each
// with enter and exit rules) and an account with none. Small batches are
// where reading and compiling the rules on every ingest would show; the
// compiled rules are reused while the account's version is unchanged.
// ratio = time without rules over time with them.
func BenchmarkSmallIngestWithAlerts(b *testing.B) {
	dsns := map[string]func(b *testing.B) string{"sqlite": func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "fleet.db") }}
	if dsn := os.Getenv(pgtest.EnvVar); dsn != "" {
		dsns["postgres"] = func(b *testing.B) string { return pgtest.NewSchema(b, dsn) }
	}
	for name, newDSN := range dsns {
		b.Run(name, func(b *testing.B) {
			clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
			svc := fleet.NewService(MustOpen(b, newDSN(b)), fleet.Options{Now: clock.Now})
			var ps [2]fleet.Principal
			var vs [2]fleet.Vehicle
			for i := range ps {
				a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise})
				if err != nil {
					b.Fatal(err)
				}
				ps[i] = fleet.SystemPrincipal(a)
				if vs[i], err = svc.CreateVehicle(ctx, ps[i], fleet.Vehicle{Name: "Truck"}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 10 {
				th := 100 + 10*float64(i)
				if _, err := svc.CreateAlertRule(ctx, ps[0], fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &th}, nil); err != nil {
					b.Fatal(err)
				}
			}
			for k := range 100 {
				clon, clat := 13.0+0.02*float64(k%10), 52.0+0.02*float64(k/10)
				ring := make([][]float64, 50)
				for j := range 49 {
					a := 2 * math.Pi * float64(j) / 49
					ring[j] = []float64{clon + 0.006*math.Cos(a), clat + 0.004*math.Sin(a)}
				}
				ring[49] = ring[0]
				g, err := svc.CreateGeofence(ctx, ps[0], fleet.Geofence{Name: "Zone", Geometry: fleet.Geometry{Type: fleet.GeometryPolygon, Rings: [][][]float64{ring}}})
				if err != nil {
					b.Fatal(err)
				}
				for _, typ := range []fleet.AlertType{fleet.AlertGeofenceEnter, fleet.AlertGeofenceExit} {
					if _, err := svc.CreateAlertRule(ctx, ps[0], fleet.AlertRule{Type: typ, GeofenceID: g.ID}, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			step := 0
			batch := func(vehicleID string) []fleet.Point {
				pts := make([]fleet.Point, 10)
				for j := range pts {
					s := 60.0
					pts[j] = fleet.Point{Latitude: 52.0 + float64(step%2000)*1e-4, Longitude: 13.0, Speed: &s,
						Timestamp: clock.Now().Add(time.Duration(step*10+j-1_000_000) * time.Millisecond)}
				}
				return pts
			}
			alternateIngest(b, svc, ps, vs, func() []fleet.Point { step++; return batch(vs[0].ID) })
		})
	}
}

// alternateIngest posts a batch to each of two accounts' vehicles on
// every iteration, the account with rules (0) and the one without (1),
// alternating which goes first, and reports each one's time a batch and
// the ratio of the time without rules over the time with them.
func alternateIngest(b *testing.B, svc *fleet.Service, ps [2]fleet.Principal, vs [2]fleet.Vehicle, batch func() []fleet.Point) {
	var tRules, tPlain time.Duration
	n := 0
	for b.Loop() {
		n++
		for i := range 2 {
			k := (i + n) % 2 // alternate which goes first
			pts := batch()
			t0 := time.Now()
			if _, err := svc.IngestLocations(ctx, ps[k], vs[k].ID, pts); err != nil {
				b.Fatal(err)
			}
			if k == 0 {
				tRules += time.Since(t0)
			} else {
				tPlain += time.Since(t0)
			}
		}
	}
	b.ReportMetric(float64(tRules.Microseconds())/float64(b.N), "rules-µs/batch")
	b.ReportMetric(float64(tPlain.Microseconds())/float64(b.N), "plain-µs/batch")
	b.ReportMetric(float64(tPlain)/float64(tRules), "ratio")
}
