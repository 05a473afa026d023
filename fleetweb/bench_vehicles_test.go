package fleetweb_test

import (
	"context"
	"fmt"
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

// BenchmarkVehiclesPage renders /vehicles for an account of 10,000
// vehicles, in memstore and in SQLite: the default page (sorted by name,
// 50 rows), a search, and every vehicle on one page (per=all, which a
// person must ask for). The baseline, measured in the same run, is what
// the page cannot do without: reading the same 10,000 vehicles through
// ListVehicles, and writing them as plain JSON. Each reports ms/render.
//
//	go test ./fleetweb -run '^$' -bench VehiclesPage -benchtime 20x
func BenchmarkVehiclesPage(b *testing.B) {
	const n = 10_000
	for _, kind := range []string{"memstore", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			svc, p, secret := bigFleet(b, kind, n, fleet.RoleViewer)
			web := fleetweb.New(svc, fleetweb.Options{InsecureCookies: true})
			render := func(b *testing.B, path string, rows int) {
				for b.Loop() {
					req := httptest.NewRequest("GET", path, nil)
					req.AddCookie(&http.Cookie{Name: "fleet_session", Value: secret})
					w := httptest.NewRecorder()
					web.ServeHTTP(w, req)
					if w.Code != http.StatusOK || strings.Count(w.Body.String(), `<td data-label="Name" class="title">`) != rows {
						b.Fatalf("%s: %d, %d rows", path, w.Code, strings.Count(w.Body.String(), `<td data-label="Name" class="title">`))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/render")
			}
			b.Run("baseline-list-as-json", func(b *testing.B) { baselineListAsJSON(b, svc, p, n) })
			b.Run("page-of-50", func(b *testing.B) { render(b, "/vehicles", 50) })
			b.Run("search-by-last-report", func(b *testing.B) { render(b, "/vehicles?q=truck+1&tag=north&sort=-last_report&page=2", 50) })
			b.Run("all-10000", func(b *testing.B) { render(b, "/vehicles?per=all", n) })
		})
	}
}

// bigFleet makes an account of n vehicles, two in three of which have
// reported, in memstore or SQLite, with a person of the role signed in:
// the service, the account's principal and the session's secret.
func bigFleet(b *testing.B, kind string, n int, role fleet.Role) (*fleet.Service, fleet.Principal, string) {
	b.Helper()
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
	svc := fleet.NewService(store, fleet.Options{})
	acc, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Big Fleet", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(acc)
	now := time.Now().UTC()
	var pts []fleet.Point
	for i := range n {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", n-i), LicensePlate: fmt.Sprintf("B-FL %d", i),
			Tags: []string{[]string{"north", "south", "east", "west"}[i%4]}})
		if err != nil {
			b.Fatal(err)
		}
		if i%3 > 0 { // two in three have reported, at 0 to 60 km/h, up to an hour ago
			sp := float64(i % 61)
			pts = append(pts, fleet.Point{VehicleID: v.ID, Latitude: 52 + float64(i%1000)/1000, Longitude: 13,
				Timestamp: now.Add(-time.Duration(i%3600) * time.Second), Speed: &sp})
		}
	}
	if _, err := svc.IngestBulk(ctx, p, pts); err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.Operator().CreateUser(ctx, acc.ID, fleet.UserParams{Email: "ops@big.test", Role: role}, "a-long-viewer-password"); err != nil {
		b.Fatal(err)
	}
	_, secret, err := svc.SignIn(ctx, "ops@big.test", "a-long-viewer-password", "192.0.2.1")
	if err != nil {
		b.Fatal(err)
	}
	return svc, p, secret
}
