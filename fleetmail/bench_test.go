package fleetmail_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetmail"
	"github.com/fleetkit/fleetapi/sqlstore"
	gomail "github.com/wneessen/go-mail"
)

// benchStore is a SQLite store in a file of the benchmark's own.
func benchStore(b *testing.B) fleet.Store {
	b.Helper()
	s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkAlertToInbox measures how long an alert takes from its
// transaction's commit to the e-mail's arrival at an SMTP server on
// loopback, through a running sender (SQLite store): each alert is the
// first event of a rule of its own, so it is e-mailed at once. The
// sender wakes when its server queues mail; it polls every second for
// other servers'. Reported: p50 and p99 in ms, and, measured in the same
// run, p99 of sending the same e-mail straight to the server (the floor);
// ratio = p99 / that floor. Target: p99 < 2 s. Run with -benchtime=200x
// (a rule and a vehicle each; at most 500 rules an account).
func BenchmarkAlertToInbox(b *testing.B) {
	store := benchStore(b)
	svc := fleet.NewService(store, fleet.Options{})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	u, _, err := svc.Operator().CreateUser(ctx, a.ID, fleet.UserParams{Email: "ops@example.com", Role: fleet.RoleAdmin}, "")
	if err != nil {
		b.Fatal(err)
	}
	n := min(b.N, fleet.MaxNotificationRules)
	vehicles := make([]string, n)
	for i := range vehicles {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Truck %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		vehicles[i] = v.ID
		if _, err := svc.CreateNotificationRule(ctx, p, fleet.NotificationRuleInput{UserID: u.ID, Events: []string{fleet.EventAlertCreated}, VehicleIDs: []string{v.ID}}); err != nil {
			b.Fatal(err)
		}
	}
	srv := newSMTPServer(b, serverOpts{})
	arrived := make(chan time.Time, n+10)
	srv.onData = func() { arrived <- time.Now() }
	sender, err := fleetmail.NewSender(svc, fleetmail.Options{Server: s1Server(srv.Addr), From: "fleet@example.com", PublicURL: "https://fleet.example.com"})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { sender.Run(runCtx) })
	defer func() { stop(); wg.Wait() }()

	// The floor: the same kind of e-mail, sent straight to the server.
	var direct []time.Duration
	for range 50 {
		c, err := gomail.NewClient("127.0.0.1", gomail.WithPort(s1Server(srv.Addr).Port), gomail.WithTLSPolicy(gomail.NoTLS))
		if err != nil {
			b.Fatal(err)
		}
		m := gomail.NewMsg()
		m.From("fleet@example.com")
		m.To("ops@example.com")
		m.Subject("Alert: custom: Truck 1")
		m.SetBodyString(gomail.TypeTextPlain, "This just happened.")
		m.AddAlternativeString(gomail.TypeTextHTML, "<p>This just happened.</p>")
		t0 := time.Now()
		if err := c.DialAndSendWithContext(ctx, m); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, (<-arrived).Sub(t0))
	}

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if _, err := svc.CreateAlert(ctx, p, fleet.Alert{VehicleID: vehicles[i%n], Message: "Storm"}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		if i >= n {
			continue // a rule's second alert waits for its digest
		}
		select {
		case at := <-arrived:
			lat = append(lat, at.Sub(committed))
		case <-time.After(30 * time.Second):
			b.Fatalf("alert %d: no e-mail within 30 s", i)
		}
	}
	b.StopTimer()
	p99, floor := percentile(lat, 0.99), percentile(direct, 0.99)
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(floor.Microseconds())/1000, "direct_p99_ms")
	b.ReportMetric(float64(p99)/float64(floor), "ratio")
	if p99 >= 2*time.Second {
		b.Errorf("p99 %s from commit to inbox; the target is under 2 s", p99)
	}
}

// BenchmarkStormIngest ingests a storm of 10,000 speeding alerts (bulk
// batches of 1,000 points, one a vehicle, each opening an alert) into two
// accounts of one SQLite store, batch by batch in turn (each first every
// other round): one whose admin
// has a notification rule of every alert, one with none. Reported: alerts
// per second of each and ratio = with the rule over without (target: 1
// within noise); the outbox of the rule's account holds one row after the
// storm (the benchmark fails otherwise), whose one digest lists 50 and
// counts the rest. Run with -benchtime=1x (each run needs vehicles of its
// own: an open alert opens no second one) and -count.
func BenchmarkStormIngest(b *testing.B) {
	const storm, batch = 10_000, 1_000
	store := benchStore(b)
	svc := fleet.NewService(store, fleet.Options{})
	type acct struct {
		p        fleet.Principal
		vehicles []string
		took     time.Duration
		ruleID   string
	}
	mk := func(name string, withRule bool) *acct {
		a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: name, Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
		if err != nil {
			b.Fatal(err)
		}
		ac := &acct{p: fleet.SystemPrincipal(a)}
		th := 50.0
		if _, err := svc.CreateAlertRule(ctx, ac.p, fleet.AlertRule{Type: fleet.AlertSpeeding, ThresholdKmh: &th}, nil); err != nil {
			b.Fatal(err)
		}
		if withRule {
			u, _, err := svc.Operator().CreateUser(ctx, a.ID, fleet.UserParams{Email: name + "@example.com", Role: fleet.RoleAdmin}, "")
			if err != nil {
				b.Fatal(err)
			}
			r, err := svc.CreateNotificationRule(ctx, ac.p, fleet.NotificationRuleInput{UserID: u.ID, Events: []string{fleet.EventAlertCreated}})
			if err != nil {
				b.Fatal(err)
			}
			ac.ruleID = r.ID
		}
		for i := 0; i < storm*b.N; i++ {
			v, err := svc.CreateVehicle(ctx, ac.p, fleet.Vehicle{Name: fmt.Sprintf("V%d", i)})
			if err != nil {
				b.Fatal(err)
			}
			ac.vehicles = append(ac.vehicles, v.ID)
		}
		return ac
	}
	with, without := mk("with", true), mk("without", false)
	speed := 90.0
	b.ResetTimer()
	for it := range b.N {
		t := time.Now().UTC()
		for k := 0; k < storm; k += batch {
			order := []*acct{with, without}
			if k/batch%2 == 1 {
				order = []*acct{without, with} // each goes first in turn
			}
			for _, ac := range order {
				pts := make([]fleet.Point, batch)
				for j := range pts {
					pts[j] = fleet.Point{VehicleID: ac.vehicles[it*storm+k+j], Latitude: 52.52, Longitude: 13.40, Timestamp: t, Speed: &speed}
				}
				t0 := time.Now()
				res, err := svc.IngestBulk(ctx, ac.p, pts)
				if err != nil {
					b.Fatal(err)
				}
				ac.took += time.Since(t0)
				if res.Accepted != batch {
					b.Fatalf("accepted %d of %d", res.Accepted, batch)
				}
			}
		}
	}
	b.StopTimer()
	var rows []fleet.Mail
	if err := store.View(ctx, func(tx fleet.Tx) (err error) {
		rows, err = tx.Mails(with.p.Account.ID, with.ruleID, fleet.Page{Limit: 100})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Count != storm*b.N || len(rows[0].Items) != fleet.MailItemsKept {
		b.Fatalf("the outbox holds %d rows (want 1) after %d alerts", len(rows), storm*b.N)
	}
	rateWith := float64(storm*b.N) / with.took.Seconds()
	rateWithout := float64(storm*b.N) / without.took.Seconds()
	b.ReportMetric(rateWith, "alerts/s_with_rule")
	b.ReportMetric(rateWithout, "alerts/s_without")
	b.ReportMetric(rateWith/rateWithout, "ratio")
	b.ReportMetric(float64(len(rows)), "outbox_rows")
}
