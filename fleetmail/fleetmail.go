// Package fleetmail is Fleet's e-mail edge: it renders notifications,
// digests and scheduled reports (plain text and HTML, the report's CSV
// attached) and sends them over SMTP from the domain's outbox. Like the
// webhook sender it claims work through fleet.Service, with a lease, and
// records what the SMTP server answered; it knows nothing of stores.
//
// Any number of senders may run on one store (several servers): a claim is
// a lease that no other sender takes while it holds. A sender wakes when a
// transaction of its own server queues mail (fleet.Jobs.MailQueued), and
// polls for what other servers queued.
//
// SMTP is spoken by github.com/wneessen/go-mail: STARTTLS whenever the
// server offers it (smtp://), implicit TLS (smtps://), authentication by the
// best mechanism the server offers, MIME multipart with attachments, and
// header encoding (RFC 2047).
package fleetmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	gomail "github.com/wneessen/go-mail"
)

// Server is where mail goes: an SMTP server, as --smtp-url names it.
type Server struct {
	Host string
	Port int
	// ImplicitTLS is smtps:// (TLS from the first byte, port 465 by
	// default); otherwise smtp:// upgrades with STARTTLS whenever the
	// server offers it (port 587 by default).
	ImplicitTLS bool
	Username    string
	Password    string
}

// ParseServerURL reads an SMTP URL: smtp://[user[:password]@]host[:port]
// or smtps://... . The user and password are percent-decoded (an @ in a
// user name is %40).
func ParseServerURL(raw string) (Server, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Server{}, errors.New("not a URL: write it as smtp://user:password@host:port, or smtps:// for TLS from the first byte")
	}
	var s Server
	switch u.Scheme {
	case "smtp":
		s.Port = 587
	case "smtps":
		s.Port, s.ImplicitTLS = 465, true
	default:
		return Server{}, fmt.Errorf("the scheme must be smtp or smtps, not %q", u.Scheme)
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Server{}, fmt.Errorf("give only smtp://user:password@host:port, with no path or query")
	}
	s.Host = u.Hostname()
	if s.Host == "" {
		return Server{}, fmt.Errorf("no host: write it as smtp://user:password@host:port")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Server{}, fmt.Errorf("the port must be a number from 1 to 65535")
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	return s, nil
}

// Redacted is the server's URL without its password, for logs and
// banners.
func (s Server) Redacted() string {
	scheme := "smtp"
	if s.ImplicitTLS {
		scheme = "smtps"
	}
	user := ""
	if s.Username != "" {
		user = url.User(s.Username).String() + ":***@"
	}
	return scheme + "://" + user + net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// Options configure a Sender.
type Options struct {
	// Server is the SMTP server; nil with Print set prints the e-mails
	// instead of sending them.
	Server *Server
	// Print, when set and Server is nil, receives each e-mail as it
	// would be sent (RFC 5322, the --demo without --smtp-url).
	Print io.Writer
	// From is the sender's address, optionally with a name
	// ("Fleet <fleet@example.com>").
	From string
	// PublicURL is the dashboard's address as people reach it: the
	// e-mails' links and their one-click unsubscribe link are made from
	// it.
	PublicURL string
	// TLSConfig is the TLS configuration of STARTTLS and smtps (a test's
	// own root certificate); the system's roots and the server's host name
	// when nil.
	TLSConfig *tls.Config
	// Timeout bounds each e-mail's conversation with the server: a server
	// that hangs holds only its sender, this long. Default 30 seconds.
	Timeout time.Duration
	// Lease is how long a claimed e-mail is this sender's; another sender
	// may take it after that. Default 5 minutes, well over Timeout.
	Lease time.Duration
	// PollEvery is how often Run looks for mail other servers queued.
	// Default 1 second.
	PollEvery time.Duration
	// Workers is how many e-mails are sent at once. Default 4.
	Workers int
	// Logger receives the sender's log lines; slog.Default when nil.
	Logger *slog.Logger
}

// CheckFrom checks a sender address: one address, optionally with a
// name, no control characters.
func CheckFrom(from string) error {
	if strings.ContainsAny(from, "\r\n") {
		return errors.New("must be one address, e.g. Fleet <fleet@example.com>")
	}
	a, err := mail.ParseAddress(from)
	if err != nil || a.Address == "" {
		return errors.New("must be one address, e.g. Fleet <fleet@example.com>")
	}
	return nil
}

// Sender sends the outbox's due mail.
type Sender struct {
	svc  *fleet.Service
	opts Options
	log  *slog.Logger
	sem  chan struct{}
	// printMu keeps printed e-mails whole when workers print at once.
	printMu sync.Mutex
}

// NewSender returns a sender of the service's outbox.
func NewSender(svc *fleet.Service, opts Options) (*Sender, error) {
	if opts.Server == nil && opts.Print == nil {
		return nil, errors.New("fleetmail: no SMTP server and nowhere to print")
	}
	if err := CheckFrom(opts.From); err != nil {
		return nil, fmt.Errorf("fleetmail: the sender address %v", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Lease <= 0 {
		opts.Lease = 5 * time.Minute
	}
	if opts.Lease < 2*opts.Timeout {
		opts.Lease = 2 * opts.Timeout
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	return &Sender{svc: svc, opts: opts, log: opts.Logger, sem: make(chan struct{}, opts.Workers)}, nil
}

// Run sends until ctx ends: at once when a transaction of this server
// queues mail, every PollEvery for mail other servers queued, and it
// stores scheduled reports' runs as they fall due (at start too: a run
// missed while no server ran goes out now). Errors are logged.
func (s *Sender) Run(ctx context.Context) {
	poll := time.NewTicker(s.opts.PollEvery)
	defer poll.Stop()
	reports := time.NewTicker(time.Minute)
	defer reports.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	s.queueReports(ctx)
	freed := make(chan struct{}, 1)
	for {
		s.claim(ctx, &wg, freed)
		select {
		case <-ctx.Done():
			return
		case <-s.svc.Jobs().MailQueued():
		case <-poll.C:
		case <-freed:
		case <-reports.C:
			s.queueReports(ctx)
		}
	}
}

func (s *Sender) queueReports(ctx context.Context) {
	if n, err := s.svc.Jobs().QueueReports(ctx); err != nil {
		s.log.Error("queue scheduled reports", "err", err)
	} else if n > 0 {
		s.log.Info("scheduled reports due", "runs", n)
	}
}

// claim takes as much due mail as free workers allow and sends each in a
// goroutine of its own, until nothing more is due or no worker is free.
func (s *Sender) claim(ctx context.Context, wg *sync.WaitGroup, freed chan struct{}) {
	for ctx.Err() == nil {
		free := cap(s.sem) - len(s.sem)
		if free == 0 {
			return
		}
		jobs, err := s.svc.Jobs().ClaimMail(ctx, s.opts.Lease, free)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("claim mail", "err", err)
			}
			return
		}
		for _, job := range jobs {
			s.sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.sendAndRecord(context.WithoutCancel(ctx), job)
				<-s.sem
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		if len(jobs) < free {
			return
		}
	}
}

// Drain sends everything due at the service clock's time, scheduled
// reports included, and returns how many e-mails it sent or gave up on.
// Tests and tools that drive time themselves call it.
func (s *Sender) Drain(ctx context.Context) (int, error) {
	if _, err := s.svc.Jobs().QueueReports(ctx); err != nil {
		return 0, err
	}
	total := 0
	for {
		jobs, err := s.svc.Jobs().ClaimMail(ctx, s.opts.Lease, s.opts.Workers)
		if err != nil || len(jobs) == 0 {
			return total, err
		}
		var wg sync.WaitGroup
		for _, job := range jobs {
			wg.Go(func() { s.sendAndRecord(ctx, job) })
		}
		wg.Wait()
		total += len(jobs)
	}
}

// sendAndRecord sends one e-mail and records the outcome.
func (s *Sender) sendAndRecord(ctx context.Context, job fleet.MailJob) {
	out := s.send(ctx, job)
	if out.Err != nil {
		s.log.Warn("e-mail not sent", "mail_id", job.Mail.ID, "to", job.To, "temporary", out.Temporary, "err", out.Err)
	}
	if _, err := s.svc.Jobs().FinishMail(ctx, job, out); err != nil {
		s.log.Error("record e-mail", "mail_id", job.Mail.ID, "err", err)
	}
}

// send renders and sends one e-mail (or prints it).
func (s *Sender) send(ctx context.Context, job fleet.MailJob) fleet.MailOutcome {
	msg, err := s.Message(job)
	if err != nil {
		return fleet.MailOutcome{Err: err}
	}
	if s.opts.Server == nil {
		s.printMu.Lock()
		defer s.printMu.Unlock()
		fmt.Fprintf(s.opts.Print, "---- e-mail to %s (printed, not sent: no --smtp-url) ----\n", job.To)
		if _, err := msg.WriteTo(s.opts.Print); err != nil {
			return fleet.MailOutcome{Err: err, Temporary: true}
		}
		fmt.Fprintf(s.opts.Print, "\n---- end of e-mail ----\n")
		return fleet.MailOutcome{}
	}
	c, err := s.client()
	if err != nil {
		return fleet.MailOutcome{Err: err}
	}
	sctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	err = c.DialAndSendWithContext(sctx, msg)
	return outcome(err)
}

// client is a client of the server with the sender's settings.
func (s *Sender) client() (*gomail.Client, error) {
	srv := s.opts.Server
	opts := []gomail.Option{gomail.WithPort(srv.Port), gomail.WithTimeout(s.opts.Timeout), gomail.WithoutSMTPUTF8()}
	if srv.ImplicitTLS {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.opts.TLSConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(s.opts.TLSConfig))
	} else {
		opts = append(opts, gomail.WithTLSConfig(&tls.Config{ServerName: srv.Host, MinVersion: tls.VersionTLS12}))
	}
	if srv.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(srv.Username), gomail.WithPassword(srv.Password))
	}
	return gomail.NewClient(srv.Host, opts...)
}

// outcome reads what sending came to: an SMTP 4xx, a connection that
// failed or timed out, is worth retrying; a 5xx answer to the message is
// not.
func outcome(err error) fleet.MailOutcome {
	if err == nil {
		return fleet.MailOutcome{}
	}
	var se *gomail.SendError
	if errors.As(err, &se) {
		return fleet.MailOutcome{Err: err, Temporary: se.IsTemp() || se.ErrorCode() == 0}
	}
	if code := smtpCode(err); code >= 500 && code < 600 {
		return fleet.MailOutcome{Err: err}
	}
	return fleet.MailOutcome{Err: err, Temporary: true}
}

// smtpCode finds an SMTP reply code at the start of an error's text
// ("535 5.7.8 Authentication failed"), or 0.
func smtpCode(err error) int {
	msg := err.Error()
	for i := 0; i+3 <= len(msg); i++ {
		if i > 0 && msg[i-1] != ' ' && msg[i-1] != ':' {
			continue
		}
		if n, e := strconv.Atoi(msg[i : i+3]); e == nil && n >= 400 && n < 600 && (i+3 == len(msg) || msg[i+3] == ' ') {
			return n
		}
	}
	return 0
}
