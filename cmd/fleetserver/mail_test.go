package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/matryer/is"
)

// inbox is a real SMTP server on loopback (github.com/emersion/go-smtp),
// as a local Mailpit would be: it takes every message into got.
type inbox struct {
	addr string
	got  chan []byte
}

type inboxSession struct{ in *inbox }

func (s inboxSession) Reset()                               {}
func (s inboxSession) Logout() error                        { return nil }
func (s inboxSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s inboxSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s inboxSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err == nil {
		s.in.got <- b
	}
	return err
}

func newInbox(t *testing.T) *inbox {
	t.Helper()
	in := &inbox{got: make(chan []byte, 100)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return inboxSession{in}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in.addr = l.Addr().String()
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(l) })
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return in
}

func postJSON(t *testing.T, url, key, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// The demo with --smtp-url on loopback sends its notifications there, and
// says so: an alert reaches the inbox as an e-mail to the demo admin, woken
// by the commit rather than a slow poll.
func TestDemoSendsMailToALocalServer(t *testing.T) {
	is := is.New(t)
	in := newInbox(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_SMTP_URL": "smtp://" + in.addr, "FLEET_MAIL_FROM": "Fleet demo <fleet@localhost>"}, "--demo")
	s.stdout.waitFor(t, regexp.MustCompile(`(E-mail: notifications are sent to the local SMTP server at smtp://127\.0\.0\.1:\d+)`))
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	// A rule of its own, whose first event is e-mailed at once whatever the
	// simulated fleet did meanwhile.
	is.Equal(postJSON(t, s.base+"/v1/notification_rules", key, `{"email":"demo@example.com","events":["alert.created"],"alert_types":["custom"]}`), http.StatusCreated)
	is.Equal(postJSON(t, s.base+"/v1/alerts", key, `{"message":"Driver reports a flat tyre"}`), http.StatusCreated)
	for {
		msg := <-in.got // the test's deadline bounds the wait
		if bytes.Contains(msg, []byte("Driver reports a flat tyre")) {
			is.True(bytes.Contains(msg, []byte("To: <demo@example.com>")))
			is.True(bytes.Contains(msg, []byte("List-Unsubscribe-Post: List-Unsubscribe=One-Click")))
			break
		}
	}
	is.NoErr(s.stop())
}

// The demo without --smtp-url prints the e-mails it would send, and says
// so in its banner.
func TestDemoPrintsMailWithoutSMTP(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo")
	s.stdout.waitFor(t, regexp.MustCompile(`(E-mail: no --smtp-url, so the notification e-mails are printed here instead of sent)`))
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	is.Equal(postJSON(t, s.base+"/v1/notification_rules", key, `{"email":"demo@example.com","events":["alert.created"],"alert_types":["custom"]}`), http.StatusCreated)
	is.Equal(postJSON(t, s.base+"/v1/alerts", key, `{"message":"Printed, not sent"}`), http.StatusCreated)
	s.stdout.waitFor(t, regexp.MustCompile(`(---- e-mail to demo@example.com \(printed, not sent: no --smtp-url\) ----)`))
	is.NoErr(s.stop())
}

// An SMTP URL that does not parse, from the flag's variable too, stops the
// server before it starts: exit 2, naming the flag.
func TestBadSMTPURLExitsTwo(t *testing.T) {
	is := is.New(t)
	_, err := cmdRun(map[string]string{"FLEET_DB": "memory:", "FLEET_SMTP_URL": "smtps://"}, "serve", "--addr", "127.0.0.1:0")
	var ue *usageError
	is.True(errors.As(err, &ue)) // exit 2, before the server starts
	is.True(strings.Contains(err.Error(), "--smtp-url"))
}
