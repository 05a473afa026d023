package sqlstore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
)

// BenchmarkTelematicsRulesIngest: batches of 10 points a second apart, each
// with 8 attributes (ignition, power, fuel, engine hours, driver key,
// temperatures, an alarm in some), through Service.IngestLocations for an
// account with one rule of each telematics type (alarm, ignition_on with
// working hours, idling, fuel_drop, harsh_driving, power_cut) vs an
// account without rules, the two alternating batch by batch in one run.
// The points' speeds change fast enough for the harsh driving rule to
// fire in every batch, so each batch reads its latest alert.
func BenchmarkTelematicsRulesIngest(b *testing.B) {
	stores := map[string]func(b *testing.B) fleet.Store{
		"memstore": func(b *testing.B) fleet.Store { return memstore.New() },
		"sqlite":   func(b *testing.B) fleet.Store { return MustOpen(b, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db")) },
	}
	if dsn := os.Getenv(pgtest.EnvVar); dsn != "" {
		stores["postgres"] = func(b *testing.B) fleet.Store { return MustOpen(b, pgtest.NewSchema(b, dsn)) }
	}
	for name, open := range stores {
		b.Run(name, func(b *testing.B) {
			clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
			svc := fleet.NewService(open(b), fleet.Options{Now: clock.Now})
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
			after, pct := 10, 8.0
			for _, r := range []fleet.AlertRule{
				{Type: fleet.AlertAlarm},
				{Type: fleet.AlertIgnitionOn, RuleParams: fleet.RuleParams{OutsideHours: &fleet.WorkingHours{TZ: "Europe/Berlin", From: "06:00", To: "20:00"}}},
				{Type: fleet.AlertIdling, AfterMinutes: &after},
				{Type: fleet.AlertFuelDrop, RuleParams: fleet.RuleParams{ThresholdPercent: &pct}},
				{Type: fleet.AlertHarshDriving},
				{Type: fleet.AlertPowerCut},
			} {
				if _, err := svc.CreateAlertRule(ctx, ps[0], r, nil); err != nil {
					b.Fatal(err)
				}
			}
			step := 0
			batch := func() []fleet.Point {
				pts := make([]fleet.Point, 10)
				for j := range pts {
					n := step*10 + j
					s := 40.0 + 15*float64(n%2) // 15 km/h in a second: 0.42 g
					attrs := fleet.Attributes{
						fleet.BoolAttr(fleet.AttrIgnition, n%600 < 590),
						fleet.NumberAttr(fleet.AttrPowerV, 13.9),
						fleet.NumberAttr(fleet.AttrFuelLevel, 90-float64(n%6000)/100),
						fleet.NumberAttr(fleet.AttrEngineHours, 1000+float64(n)/3600),
						fleet.TextAttr(fleet.AttrDriverIdentifier, "01C0FFEE00000001"),
						fleet.NumberAttr("temp1_c", 4.5),
						fleet.NumberAttr("rssi", 4),
					}
					if n%50 == 0 {
						attrs = append(attrs, fleet.TextAttr(fleet.AttrAlarm, "overspeed"))
					}
					pts[j] = fleet.Point{Latitude: 52.0 + float64(n%20000)*1e-5, Longitude: 13.0, Speed: &s,
						Timestamp: clock.Now().Add(time.Duration(n-1_000_000) * time.Second), Attributes: attrs.Sort()}
				}
				return pts
			}
			var tRules, tPlain time.Duration
			for b.Loop() {
				step++
				for i := range 2 {
					k := (i + step) % 2 // alternate which goes first
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
		})
	}
}
