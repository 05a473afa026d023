package fleetweb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// BenchmarkReplayData answers a replay's data for a day of one report a
// second (86,400), in memstore and in SQLite, gzipped as a browser asks
// for it. The baseline, measured in the same run, is what the answer
// cannot do without: reading the day's reports through ListHistory. Each
// reports ms/day and, for the answer, its gzipped KB.
//
//	go test ./fleetweb -run '^$' -bench ReplayData -benchtime 5x
func BenchmarkReplayData(b *testing.B) {
	for _, kind := range []string{"memstore", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			var store fleet.Store = memstore.New()
			if kind == "sqlite" {
				s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				store = s
			}
			day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			now := day.Add(30 * time.Hour)
			svc := fleet.NewService(store, fleet.Options{Now: func() time.Time { return now }})
			acc, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Big Fleet", Plan: fleet.PlanPro})
			if err != nil {
				b.Fatal(err)
			}
			p := fleet.SystemPrincipal(acc)
			v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
			if err != nil {
				b.Fatal(err)
			}
			pts := make([]fleet.Point, 0, 86_400)
			lat, lon := 52.5, 13.4
			for s := range 86_400 {
				spd := 0.0
				if h := s / 3600; h >= 7 && h < 17 && h != 12 {
					spd = 40 + 30*math.Sin(float64(s)/300)
					lat += spd / 3600 / 111.32 * math.Cos(float64(s)/900)
					lon += spd / 3600 / 68 * math.Sin(float64(s)/900)
				}
				hdg := float64(s % 360)
				pts = append(pts, fleet.Point{VehicleID: v.ID, Latitude: lat, Longitude: lon, Timestamp: day.Add(time.Duration(s) * time.Second), Speed: &spd, Heading: &hdg})
			}
			for i := 0; i < len(pts); i += fleet.MaxPointsPerBulkBatch {
				if _, err := svc.IngestBulk(ctx, p, pts[i:min(i+fleet.MaxPointsPerBulkBatch, len(pts))]); err != nil {
					b.Fatal(err)
				}
			}
			if _, _, err := svc.Operator().CreateUser(ctx, acc.ID, fleet.UserParams{Email: "ops@big.test", Role: fleet.RoleViewer}, "a-long-viewer-password"); err != nil {
				b.Fatal(err)
			}
			_, secret, err := svc.SignIn(ctx, "ops@big.test", "a-long-viewer-password", "192.0.2.1")
			if err != nil {
				b.Fatal(err)
			}
			web := fleetweb.New(svc, fleetweb.Options{InsecureCookies: true})
			end := day.Add(24*time.Hour - time.Microsecond)
			b.Run("baseline-history", func(b *testing.B) {
				for b.Loop() {
					n := 0
					q := fleet.HistoryQuery{From: &day, To: &end, Limit: fleet.MaxHistoryLimit}
					for {
						l, err := svc.ListHistory(ctx, p, v.ID, q)
						if err != nil {
							b.Fatal(err)
						}
						n += len(l.Items)
						if !l.HasMore {
							break
						}
						q.Cursor = l.NextCursor
					}
					if n != len(pts) {
						b.Fatal(n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/day")
			})
			b.Run("replay-data", func(b *testing.B) {
				var size int
				for b.Loop() {
					req := httptest.NewRequest("GET", "/vehicles/"+v.ID+"/replay/data?day=2026-11-23&tz=UTC", nil)
					req.Header.Set("Accept-Encoding", "gzip")
					req.AddCookie(&http.Cookie{Name: "fleet_session", Value: secret})
					w := httptest.NewRecorder()
					web.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
					size = w.Body.Len()
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/day")
				b.ReportMetric(float64(size)/1024, "KB")
			})
			// The page, which holds the day's first report for the first
			// frame: what the first frame waits for.
			b.Run("replay-page", func(b *testing.B) {
				for b.Loop() {
					req := httptest.NewRequest("GET", "/vehicles/"+v.ID+"/replay?day=2026-11-23&tz=UTC", nil)
					req.AddCookie(&http.Cookie{Name: "fleet_session", Value: secret})
					w := httptest.NewRecorder()
					web.ServeHTTP(w, req)
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "data-first=") {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/day")
			})
		})
	}
}

// BenchmarkRulesPages renders the alert rules' and geofences' pages for an
// account of 10,000 vehicles in memstore, as an admin sees them (the rule
// form lists the vehicles, the first 5,000 by name), with 20 rules and 20
// geofences. The baseline, measured in the same run, is BenchmarkVehiclesPage's:
// reading the account's 10,000 vehicles through ListVehicles and writing
// them as plain JSON. Each reports ms/render.
//
//	go test ./fleetweb -run '^$' -bench RulesPages -benchtime 20x
func BenchmarkRulesPages(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	acc, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Big Fleet", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(acc)
	var ids []string
	for i := range n {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", n-i), LicensePlate: fmt.Sprintf("B-FL %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	for i := range 20 {
		r := 100 + float64(i)
		g, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: fmt.Sprintf("Depot %d", i), Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13 + float64(i)/10, 52}}, RadiusM: &r})
		if err != nil {
			b.Fatal(err)
		}
		limit := 50 + float64(i)
		rules := []fleet.AlertRule{{Type: fleet.AlertGeofenceExit, GeofenceID: g.ID, VehicleIDs: ids[i*10 : i*10+10]}, {Type: fleet.AlertSpeeding, ThresholdKmh: &limit}}
		if _, err := svc.CreateAlertRule(ctx, p, rules[i%2], nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, _, err := svc.Operator().CreateUser(ctx, acc.ID, fleet.UserParams{Email: "ops@big.test", Role: fleet.RoleAdmin}, "a-long-admin-password"); err != nil {
		b.Fatal(err)
	}
	_, secret, err := svc.SignIn(ctx, "ops@big.test", "a-long-admin-password", "192.0.2.1")
	if err != nil {
		b.Fatal(err)
	}
	web := fleetweb.New(svc, fleetweb.Options{InsecureCookies: true})
	render := func(b *testing.B, path, want string) {
		for b.Loop() {
			req := httptest.NewRequest("GET", path, nil)
			req.AddCookie(&http.Cookie{Name: "fleet_session", Value: secret})
			w := httptest.NewRecorder()
			web.ServeHTTP(w, req)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
				b.Fatalf("%s: %d", path, w.Code)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/render")
	}
	b.Run("baseline-list-as-json", func(b *testing.B) {
		for b.Loop() {
			all, err := walkVehicles(ctx, svc, p)
			if err != nil || len(all) != n {
				b.Fatal(err, len(all))
			}
			if err := json.NewEncoder(io.Discard).Encode(all); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/render")
	})
	b.Run("rules", func(b *testing.B) { render(b, "/rules", "20 alert rules") })
	b.Run("geofences", func(b *testing.B) { render(b, "/geofences", "20 geofences") })
}

func walkVehicles(ctx context.Context, svc *fleet.Service, p fleet.Principal) ([]fleet.Vehicle, error) {
	var all []fleet.Vehicle
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, q)
		if err != nil {
			return nil, err
		}
		all = append(all, l.Items...)
		if !l.HasMore {
			return all, nil
		}
		q.Cursor = l.NextCursor
	}
}
