package fleetmail_test

import (
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetmail"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

func openSQL(t *testing.T, dsn string) fleet.Store {
	t.Helper()
	s, err := sqlstore.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Two servers share a SQL store: events of both go into the outbox in
// their transactions, a storm stays one row, and their senders, draining
// at once, send each e-mail once.
func TestTwoServersOneOutbox(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "fleet.db") },
		"postgres": func(t *testing.T) string { return pgtest.NewDSN(t) },
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			d := dsn(t)
			e := newEnvOn(t, openSQL(t, d))
			other := fleet.NewService(openSQL(t, d), fleet.Options{Now: e.clock.Now}) // a second server
			srv := newSMTPServer(t, serverOpts{})
			s1 := e.sender(srv.Addr, nil)
			s2, err := fleetmail.NewSender(other, fleetmail.Options{Server: s1Server(srv.Addr), From: "fleet@example.com",
				PublicURL: "https://fleet.example.com", Timeout: 5 * time.Second})
			is.NoErr(err)
			r := e.rule(fleet.NotificationRuleInput{})
			for i := range 40 {
				svc := e.svc
				if i%2 == 1 {
					svc = other
				}
				if _, err := svc.CreateAlert(ctx, e.p, fleet.Alert{VehicleID: e.vehicle.ID, Message: "Alarm " + strconv.Itoa(i)}); err != nil {
					t.Fatal(err)
				}
			}
			ms := e.mails(r.ID)
			is.Equal(len(ms), 1) // one row for the window, whichever server wrote
			is.Equal(ms[0].Count, 40)
			var wg sync.WaitGroup
			for _, s := range []*fleetmail.Sender{s1, s2} {
				wg.Go(func() {
					if _, err := s.Drain(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			is.Equal(len(srv.messages()), 1) // the notice, once
			e.clock.Advance(5 * time.Minute)
			for _, s := range []*fleetmail.Sender{s1, s2} {
				wg.Go(func() {
					if _, err := s.Drain(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			is.Equal(len(srv.messages()), 2) // then the digest, once
			is.Equal(e.mails(r.ID)[0].Status, fleet.MailSent)
		})
	}
}
