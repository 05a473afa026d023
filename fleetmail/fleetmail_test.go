package fleetmail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetmail"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

var ctx = context.Background()

var encodedWord = regexp.MustCompile(`^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$`)

// T0 is a Monday morning.
var T0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

type env struct {
	t       *testing.T
	clock   *testclock.Clock
	store   fleet.Store
	svc     *fleet.Service
	acc     fleet.Account
	p       fleet.Principal
	user    fleet.User
	vehicle fleet.Vehicle
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, memstore.New())
}

func newEnvOn(t *testing.T, store fleet.Store) *env {
	t.Helper()
	e := &env{t: t, clock: testclock.New(T0), store: store}
	e.svc = fleet.NewService(store, fleet.Options{Now: e.clock.Now})
	a, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	e.acc, e.p = a, fleet.SystemPrincipal(a)
	e.user, _, err = e.svc.Operator().CreateUser(ctx, a.ID, fleet.UserParams{Email: "ana@example.com", Name: "Ana Lima", Role: fleet.RoleViewer}, "")
	if err != nil {
		t.Fatal(err)
	}
	e.vehicle = e.newVehicle("Truck 7")
	return e
}

func (e *env) newVehicle(name string) fleet.Vehicle {
	e.t.Helper()
	v, err := e.svc.CreateVehicle(ctx, e.p, fleet.Vehicle{Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) rule(in fleet.NotificationRuleInput) fleet.NotificationRule {
	e.t.Helper()
	if in.UserID == "" && in.Email == "" {
		in.UserID = e.user.ID
	}
	if in.Events == nil {
		in.Events = []string{fleet.EventAlertCreated}
	}
	r, err := e.svc.CreateNotificationRule(ctx, e.p, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) alert(vehicleID, msg string) fleet.Alert {
	e.t.Helper()
	a, err := e.svc.CreateAlert(ctx, e.p, fleet.Alert{VehicleID: vehicleID, Message: msg})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// s1Server is the test server at addr.
func s1Server(addr string) *fleetmail.Server {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return &fleetmail.Server{Host: host, Port: n}
}

// sender sends to srv (at addr), with the sender's defaults changed by
// mod.
func (e *env) sender(addr string, mod func(*fleetmail.Options)) *fleetmail.Sender {
	e.t.Helper()
	o := fleetmail.Options{Server: s1Server(addr), From: "Fleet <fleet@example.com>",
		PublicURL: "https://fleet.example.com", Timeout: 5 * time.Second}
	if mod != nil {
		mod(&o)
	}
	s, err := fleetmail.NewSender(e.svc, o)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func drain(t *testing.T, s *fleetmail.Sender) int {
	t.Helper()
	n, err := s.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) mails(ruleID string) []fleet.Mail {
	e.t.Helper()
	var ms []fleet.Mail
	if err := e.store.View(ctx, func(tx fleet.Tx) (err error) {
		ms, err = tx.Mails(e.acc.ID, ruleID, fleet.Page{Limit: 1000})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	return ms
}

// parsed is a received message taken apart.
type parsed struct {
	Header      mail.Header
	Subject     string // decoded
	Text, HTML  string
	Attachments map[string][]byte
}

func parse(t *testing.T, raw []byte) parsed {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, raw)
	}
	p := parsed{Header: m.Header, Attachments: map[string][]byte{}}
	dec := new(mime.WordDecoder)
	if p.Subject, err = dec.DecodeHeader(m.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	var walk func(h map[string][]string, body io.Reader)
	walk = func(h map[string][]string, body io.Reader) {
		get := func(k string) string {
			if v := h[k]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		ct, params, err := mime.ParseMediaType(get("Content-Type"))
		if err != nil {
			t.Fatalf("content type %q: %v", get("Content-Type"), err)
		}
		if strings.HasPrefix(ct, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				part, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				walk(part.Header, part)
			}
		}
		var r io.Reader = body
		switch strings.ToLower(get("Content-Transfer-Encoding")) {
		case "quoted-printable":
			r = quotedprintable.NewReader(body)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, body)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		_, dp, _ := mime.ParseMediaType(get("Content-Disposition"))
		switch {
		case dp["filename"] != "":
			p.Attachments[dp["filename"]] = b
		case ct == "text/plain":
			p.Text = string(b)
		case ct == "text/html":
			p.HTML = string(b)
		}
	}
	walk(m.Header, m.Body)
	return p
}

// An alert is e-mailed at once, in text and HTML, with a link to its
// vehicle's page and the one-click unsubscribe headers; what follows in
// the window waits for the window's end and goes out as one digest.
func TestNoticeThenDigest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	r := e.rule(fleet.NotificationRuleInput{})
	e.alert(e.vehicle.ID, "Flat tyre reported")
	is.Equal(drain(t, s), 1)
	msgs := srv.messages()
	is.Equal(len(msgs), 1)
	is.Equal(msgs[0].To, []string{"ana@example.com"})
	is.Equal(msgs[0].From, "fleet@example.com")
	m := parse(t, msgs[0].Raw)
	is.Equal(m.Subject, "[Acme Haulage] Alert: custom: Truck 7 — Flat tyre reported")
	is.True(strings.Contains(m.Text, "Flat tyre reported"))
	is.True(strings.Contains(m.Text, "https://fleet.example.com/vehicles/"+e.vehicle.ID)) // the page of what it is about
	is.True(strings.Contains(m.HTML, `href="https://fleet.example.com/vehicles/`+e.vehicle.ID+`"`))
	unsub := m.Header.Get("List-Unsubscribe")
	is.True(strings.HasPrefix(unsub, "<https://fleet.example.com/unsubscribe/"))
	is.Equal(m.Header.Get("List-Unsubscribe-Post"), "List-Unsubscribe=One-Click") // RFC 8058
	is.True(strings.Contains(m.Text, strings.Trim(unsub, "<>")))

	for i := range 3 {
		e.alert(e.vehicle.ID, "Door opened "+strconv.Itoa(i))
	}
	is.Equal(drain(t, s), 0) // gathered until the window's end
	is.Equal(len(e.mails(r.ID)), 1)
	e.clock.Advance(5 * time.Minute)
	is.Equal(drain(t, s), 1)
	msgs = srv.messages()
	is.Equal(len(msgs), 2)
	d := parse(t, msgs[1].Raw)
	is.True(strings.HasPrefix(d.Subject, "[Acme Haulage] 3 events: alert.created"))
	for i := range 3 {
		is.True(strings.Contains(d.Text, "Door opened "+strconv.Itoa(i))) // the digest lists them
	}
	is.True(!strings.Contains(d.Text, "Flat tyre")) // not the one e-mailed already
	ms := e.mails(r.ID)
	is.Equal(ms[0].Status, fleet.MailSent)

	// The one-click link turns the rule off, without a session.
	tok := strings.TrimPrefix(strings.Trim(unsub, "<>"), "https://fleet.example.com/unsubscribe/")
	u, err := e.svc.Unsubscribe(ctx, tok)
	is.NoErr(err)
	is.Equal(u.ID, r.ID)
	got, err := e.svc.NotificationRule(ctx, e.p, r.ID)
	is.NoErr(err)
	is.Equal(got.Enabled, false)
	e.alert(e.vehicle.ID, "After unsubscribing")
	e.clock.Advance(time.Hour)
	is.Equal(drain(t, s), 0) // nothing more
	_, err = e.svc.Unsubscribe(ctx, "x"+tok[1:])
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // a token that was never sent
}

// A storm of 10,000 alerts in a minute to one rule is one e-mail, then
// one digest that lists the first 50 and counts the rest; the outbox
// holds one row.
func TestStormIsOneDigest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	r := e.rule(fleet.NotificationRuleInput{})
	for i := range 10_000 {
		e.alert(e.vehicle.ID, "Alarm "+strconv.Itoa(i))
		e.clock.Advance(6 * time.Millisecond) // a minute in all
		if i == 0 {
			is.Equal(drain(t, s), 1) // the first at once
		}
	}
	is.Equal(len(e.mails(r.ID)), 1) // one row for the window
	is.Equal(e.mails(r.ID)[0].Count, 10_000)
	is.Equal(len(e.mails(r.ID)[0].Items), fleet.MailItemsKept)
	is.Equal(drain(t, s), 0)
	e.clock.Advance(4 * time.Minute)
	is.Equal(drain(t, s), 1)
	msgs := srv.messages()
	is.Equal(len(msgs), 2) // one e-mail, then one digest
	d := parse(t, msgs[1].Raw)
	is.True(strings.Contains(d.Subject, "9999 events"))
	is.True(strings.Contains(d.Text, "Alarm 1\r\n") || strings.Contains(d.Text, "Alarm 1\n"))
	is.True(strings.Contains(d.Text, "... and 9950 more.")) // 49 listed after the first, the rest counted
	is.True(!strings.Contains(d.Text, "Alarm 60"))
	e.clock.Advance(time.Hour)
	is.Equal(drain(t, s), 0) // nothing more
}

// Quiet hours hold everything into one digest sent when they end.
func TestQuietHoursHoldIntoOneDigest(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	e.clock.Set(time.Date(2026, 11, 23, 22, 30, 0, 0, time.UTC)) // 23:30 in Berlin
	e.rule(fleet.NotificationRuleInput{QuietHours: &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}})
	e.alert(e.vehicle.ID, "At night")
	e.clock.Advance(2 * time.Hour)
	e.alert(e.vehicle.ID, "Later at night")
	is.Equal(drain(t, s), 0) // held
	e.clock.Set(time.Date(2026, 11, 24, 5, 59, 0, 0, time.UTC))
	is.Equal(drain(t, s), 0) // 06:59 in Berlin: still quiet
	e.clock.Set(time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC))
	is.Equal(drain(t, s), 1)
	m := parse(t, srv.messages()[0].Raw)
	is.True(strings.Contains(m.Text, "2 events while your notifications were held."))
	is.True(strings.Contains(m.Text, "At night") && strings.Contains(m.Text, "Later at night"))
}

// Rules filter by alert type, vehicle and tag.
func TestRulesFilter(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	other := e.newVehicle("Van 2")
	tagged, err := e.svc.CreateVehicle(ctx, e.p, fleet.Vehicle{Name: "Van 3", Tags: []string{"north"}})
	is.NoErr(err)
	byVehicle := e.rule(fleet.NotificationRuleInput{VehicleIDs: []string{other.ID}})
	byTag := e.rule(fleet.NotificationRuleInput{Tags: []string{"north"}})
	speeding := e.rule(fleet.NotificationRuleInput{AlertTypes: []fleet.AlertType{fleet.AlertSpeeding}})
	e.alert(e.vehicle.ID, "Neither")
	e.alert(tagged.ID, "Tagged")
	is.Equal(len(e.mails(byVehicle.ID)), 0)
	is.Equal(len(e.mails(byTag.ID)), 1)
	is.Equal(len(e.mails(speeding.ID)), 0) // custom alerts are not speeding
	is.Equal(drain(t, s), 1)
	is.True(strings.Contains(parse(t, srv.messages()[0].Raw).Subject, "Van 3"))
}

// STARTTLS is used when the server offers it, and the sender
// authenticates.
func TestSTARTTLSAndAuth(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cert, pool := testCert(t)
	srv := newSMTPServer(t, serverOpts{cert: &cert, user: "fleet", pass: "s3cret"})
	s := e.sender(srv.Addr, func(o *fleetmail.Options) {
		o.Server.Username, o.Server.Password = "fleet", "s3cret"
		o.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	})
	e.rule(fleet.NotificationRuleInput{})
	e.alert(e.vehicle.ID, "Over TLS")
	is.Equal(drain(t, s), 1)
	msgs := srv.messages()
	is.Equal(len(msgs), 1)
	is.True(msgs[0].TLS)            // upgraded with STARTTLS
	is.Equal(msgs[0].User, "fleet") // authenticated

	// A wrong password is no delivery, and the mail waits to be retried.
	bad := e.sender(srv.Addr, func(o *fleetmail.Options) {
		o.Server.Username, o.Server.Password = "fleet", "wrong"
		o.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	})
	e.clock.Advance(time.Hour)
	e.alert(e.vehicle.ID, "Refused")
	is.Equal(drain(t, bad), 1)
	is.Equal(len(srv.messages()), 1)
}

// smtps:// speaks TLS from the first byte.
func TestImplicitTLS(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	cert, pool := testCert(t)
	srv := newSMTPServer(t, serverOpts{cert: &cert, implicitTLS: true})
	s := e.sender(srv.Addr, func(o *fleetmail.Options) {
		o.Server.ImplicitTLS = true
		o.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	})
	e.rule(fleet.NotificationRuleInput{})
	e.alert(e.vehicle.ID, "Implicit")
	is.Equal(drain(t, s), 1)
	is.Equal(len(srv.messages()), 1)
	is.True(srv.messages()[0].TLS)
}

// A 4xx is retried: first within a minute, then doubling to at most an
// hour, for 24 hours; then the mail fails.
func TestTemporaryFailureIsRetried(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	r := e.rule(fleet.NotificationRuleInput{})
	srv.setReply(func(n int) error {
		if n <= 3 {
			return tempFail()
		}
		return nil
	})
	e.alert(e.vehicle.ID, "Retry me")
	is.Equal(drain(t, s), 1)
	m := e.mails(r.ID)[0]
	is.Equal(m.Status, fleet.MailPending)
	is.Equal(m.Attempts, 1)
	is.True(m.NextAttemptAt.Equal(T0.Add(time.Minute))) // within a minute
	is.True(strings.Contains(m.Error, "451"))
	is.Equal(drain(t, s), 0) // not due yet
	e.clock.Advance(time.Minute)
	is.Equal(drain(t, s), 1)
	is.True(e.mails(r.ID)[0].NextAttemptAt.Equal(T0.Add(3 * time.Minute))) // then 2 minutes
	e.clock.Advance(2 * time.Minute)
	is.Equal(drain(t, s), 1)
	is.True(e.mails(r.ID)[0].NextAttemptAt.Equal(T0.Add(7 * time.Minute))) // then 4
	e.clock.Advance(4 * time.Minute)
	is.Equal(drain(t, s), 1)
	is.Equal(len(srv.messages()), 1) // the fourth attempt got through
	is.Equal(e.mails(r.ID)[0].Phase, fleet.PhaseDigest)

	// A server that refuses for 24 hours: the mail fails then.
	srv.setReply(func(int) error { return tempFail() })
	e.clock.Advance(time.Hour)
	e.alert(e.vehicle.ID, "Never")
	var waits []time.Duration
	for range 100 {
		drain(t, s)
		ms := e.mails(r.ID)
		last := ms[len(ms)-1]
		if last.Status != fleet.MailPending {
			is.Equal(last.Status, fleet.MailFailed)
			break
		}
		d := last.NextAttemptAt.Sub(e.clock.Now())
		waits = append(waits, d)
		e.clock.Advance(d)
	}
	is.True(len(waits) > 5)
	is.Equal(waits[0], time.Minute)
	for _, w := range waits {
		is.True(w <= time.Hour) // at most an hour between attempts
	}
	is.Equal(waits[len(waits)-1], time.Hour)
	ms := e.mails(r.ID)
	last := ms[len(ms)-1]
	is.True(e.clock.Now().Sub(*last.FirstAttemptAt) >= fleet.MailRetryFor) // given up after 24 hours
	is.True(e.clock.Now().Sub(*last.FirstAttemptAt) < fleet.MailRetryFor+time.Hour)
}

// A 5xx fails the mail at once.
func TestPermanentFailure(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	r := e.rule(fleet.NotificationRuleInput{})
	srv.setReply(func(int) error { return permFail() })
	e.alert(e.vehicle.ID, "Bounce")
	is.Equal(drain(t, s), 1)
	m := e.mails(r.ID)[0]
	is.Equal(m.Status, fleet.MailFailed)
	is.True(strings.Contains(m.Error, "550"))
	e.clock.Advance(time.Hour)
	is.Equal(drain(t, s), 0) // never retried
	srv.setReply(nil)
	e.alert(e.vehicle.ID, "Next")
	is.Equal(drain(t, s), 1) // the rule's next event starts a new window
	is.Equal(len(srv.messages()), 1)
}

// A server that never answers holds its sender for the timeout only; the
// mail is retried later.
func TestHangingServerTimesOut(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	addr := hangingServer(t)
	s := e.sender(addr, func(o *fleetmail.Options) { o.Timeout = 300 * time.Millisecond })
	r := e.rule(fleet.NotificationRuleInput{})
	e.alert(e.vehicle.ID, "Into the void")
	done := make(chan int, 1)
	go func() { n, _ := s.Drain(ctx); done <- n }()
	select {
	case n := <-done:
		is.Equal(n, 1)
	case <-time.After(20 * time.Second): // a bound on a hang, not a timing
		t.Fatal("the sender hangs with the server")
	}
	m := e.mails(r.ID)[0]
	is.Equal(m.Status, fleet.MailPending) // to be retried
	is.Equal(m.Attempts, 1)
	// The service goes on meanwhile: events are queued as before.
	e.alert(e.vehicle.ID, "Meanwhile")
	is.Equal(e.mails(r.ID)[0].Count, 2)
}

// Names a user controls are encoded in headers (RFC 2047) and escaped in
// HTML: never raw.
func TestHostileNamesAreEncoded(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s := e.sender(srv.Addr, nil)
	name := `Lkw "Süd" <script>alert(1)</script> =?utf-8?q?Bcc=3A_x@evil.example?=`
	v := e.newVehicle(name)
	e.rule(fleet.NotificationRuleInput{})
	e.alert(v.ID, "Bcc: x@evil.example")
	is.Equal(drain(t, s), 1)
	msgs := srv.messages()
	is.Equal(msgs[0].To, []string{"ana@example.com"}) // no other recipient
	raw := string(msgs[0].Raw)
	head, _, _ := strings.Cut(raw, "\r\n\r\n")
	is.True(!strings.Contains(head, "<script>"))                  // not raw in the header
	is.True(!strings.Contains(strings.ToLower(head), "\r\nbcc:")) // no header of its own
	_, subj, _ := strings.Cut(head, "\r\nSubject:")
	lines := strings.Split(subj, "\r\n")
	for i, l := range lines {
		if i > 0 && !strings.HasPrefix(l, " ") {
			break // the next header
		}
		is.True(encodedWord.MatchString(strings.TrimSpace(l))) // only encoded words (RFC 2047)
	}
	m := parse(t, msgs[0].Raw)
	is.Equal(m.Subject, "[Acme Haulage] Alert: custom: "+name+" — Bcc: x@evil.example") // decodes to the name
	is.True(!strings.Contains(m.HTML, "<script>"))                                      // escaped in HTML
	is.True(strings.Contains(m.HTML, "&lt;script&gt;"))

	_, err := e.svc.CreateNotificationRule(ctx, e.p, fleet.NotificationRuleInput{Email: "ana@example.com\r\nBcc: x@evil.example", Events: []string{fleet.EventAlertCreated}})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // refused at the rule's creation
}

// A daily report runs once per period, whatever the number of senders,
// with the API's CSV attached; a run missed while no server ran goes out
// at the next start.
func TestScheduledReport(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	srv := newSMTPServer(t, serverOpts{})
	s1, s2 := e.sender(srv.Addr, nil), e.sender(srv.Addr, nil)
	e.clock.Set(time.Date(2026, 11, 23, 5, 30, 0, 0, time.UTC)) // 06:30 in Berlin
	sch, err := e.svc.CreateReportSchedule(ctx, e.p, fleet.ReportScheduleInput{UserID: e.user.ID, Frequency: fleet.FrequencyDaily,
		Hour: 7, TZ: "Europe/Berlin", Report: fleet.ReportAlerts})
	is.NoErr(err)
	is.True(sch.NextRunAt.Equal(time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)))
	e.clock.Set(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // Sunday: an alert of the day before the run
	a := e.alert(e.vehicle.ID, "Yesterday's")
	e.clock.Set(time.Date(2026, 11, 23, 5, 59, 0, 0, time.UTC))
	is.Equal(drain(t, s1), 0) // not yet
	e.clock.Set(time.Date(2026, 11, 23, 6, 1, 0, 0, time.UTC))
	is.Equal(drain(t, s1)+drain(t, s2), 1) // once, whatever the number of senders
	msgs := srv.messages()
	is.Equal(len(msgs), 1)
	m := parse(t, msgs[0].Raw)
	is.True(strings.HasPrefix(m.Subject, "[Acme Haulage] Alerts report, Sun 22 Nov 2026"))
	csv, ok := m.Attachments["alerts-2026-11-22.csv"]
	is.True(ok)
	want, err := fleet.WriteCSV(fleet.AlertCSVHeader, [][]string{fleet.AlertCSVRow(a)})
	is.NoErr(err)
	is.Equal(string(csv), string(want)) // the API's CSV
	is.True(m.Header.Get("List-Unsubscribe") != "")

	// The server is down for three days: the latest missed run goes out
	// at the next start, once.
	e.clock.Set(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	is.Equal(drain(t, s1), 1)
	is.Equal(drain(t, s2), 0)
	msgs = srv.messages()
	is.Equal(len(msgs), 2)
	is.True(strings.Contains(parse(t, msgs[1].Raw).Subject, "Wed 25 Nov 2026"))
	got, err := e.svc.ReportSchedule(ctx, e.p, sch.ID)
	is.NoErr(err)
	is.True(got.NextRunAt.Equal(time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)))
}

// Without a server, --demo prints the e-mails it would send.
func TestPrintInsteadOfSending(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	var out bytes.Buffer
	s, err := fleetmail.NewSender(e.svc, fleetmail.Options{Print: &out, From: "fleet@example.com", PublicURL: "http://127.0.0.1:8080"})
	is.NoErr(err)
	r := e.rule(fleet.NotificationRuleInput{})
	e.alert(e.vehicle.ID, "Printed")
	is.Equal(drain(t, s), 1)
	is.True(strings.Contains(out.String(), "printed, not sent"))
	is.True(strings.Contains(out.String(), "Printed"))
	is.Equal(e.mails(r.ID)[0].Phase, fleet.PhaseDigest) // recorded as sent
}

func TestParseServerURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want fleetmail.Server
		bad  bool
	}{
		{in: "smtp://user:p%40ss@mail.example.com:2525", want: fleetmail.Server{Host: "mail.example.com", Port: 2525, Username: "user", Password: "p@ss"}},
		{in: "smtp://mail.example.com", want: fleetmail.Server{Host: "mail.example.com", Port: 587}},
		{in: "smtps://u:p@smtp.example.com", want: fleetmail.Server{Host: "smtp.example.com", Port: 465, ImplicitTLS: true, Username: "u", Password: "p"}},
		{in: "http://mail.example.com", bad: true},
		{in: "smtp://", bad: true},
		{in: "smtp://mail.example.com:99999", bad: true},
		{in: "smtp://mail.example.com/path", bad: true},
		{in: "mail.example.com:25", bad: true},
		{in: "smtp://mail.example.com:25\r\nX: y", bad: true},
	} {
		t.Run(c.in, func(t *testing.T) {
			is := is.New(t)
			got, err := fleetmail.ParseServerURL(c.in)
			if c.bad {
				is.True(err != nil)
				return
			}
			is.NoErr(err)
			is.Equal(got, c.want)
		})
	}
	is.New(t).Equal(fleetmail.Server{Host: "h", Port: 25, Username: "u", Password: "secret"}.Redacted(), "smtp://u:***@h:25")
}
