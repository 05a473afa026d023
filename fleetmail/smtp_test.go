package fleetmail_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// testCert is a certificate for 127.0.0.1 and localhost, made for the
// test, and a pool that trusts it.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fleet test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// received is one message the test server accepted.
type received struct {
	From string
	To   []string
	Raw  []byte
	TLS  bool   // the session was encrypted (STARTTLS or implicit)
	User string // who authenticated, if anyone
}

// smtpServer is a real SMTP server on loopback (github.com/emersion/go-smtp,
// in process): it offers STARTTLS when given a certificate, asks for
// authentication when given a password, and answers RCPT TO with reply
// (nil: accept) so that a test can make it refuse for now (4xx) or for
// good (5xx).
type smtpServer struct {
	Addr     string
	srv      *smtp.Server
	user     string
	password string

	mu    sync.Mutex
	msgs  []received
	reply func(n int) error // the reply to the n-th RCPT TO (from 1)
	rcpts int
	// onData, if set, is called as each message is taken (set before
	// the first).
	onData func()
}

type serverOpts struct {
	cert        *tls.Certificate
	implicitTLS bool
	user, pass  string
}

func newSMTPServer(t testing.TB, o serverOpts) *smtpServer {
	t.Helper()
	s := &smtpServer{user: o.user, password: o.pass}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, c: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.MaxMessageBytes = 10 << 20
	s.srv.AllowInsecureAuth = o.cert == nil
	var l net.Listener
	var err error
	if o.cert != nil {
		cfg := &tls.Config{Certificates: []tls.Certificate{*o.cert}}
		if o.implicitTLS {
			l, err = tls.Listen("tcp", "127.0.0.1:0", cfg)
		} else {
			s.srv.TLSConfig = cfg
			l, err = net.Listen("tcp", "127.0.0.1:0")
		}
	} else {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	go s.srv.Serve(l)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

func (s *smtpServer) setReply(f func(n int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply, s.rcpts = f, 0
}

type session struct {
	s    *smtpServer
	c    *smtp.Conn
	from string
	to   []string
	user string
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.password == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.user || password != ss.s.password {
			return errors.New("invalid credentials")
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.password != "" && ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	ss.s.rcpts++
	n, reply := ss.s.rcpts, ss.s.reply
	ss.s.mu.Unlock()
	if reply != nil {
		if err := reply(n); err != nil {
			return err
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := ss.c.TLSConnectionState()
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, received{From: ss.from, To: ss.to, Raw: b, TLS: isTLS, User: ss.user})
	ss.s.mu.Unlock()
	if ss.s.onData != nil {
		ss.s.onData()
	}
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

// tempFail and permFail are a server's refusals for now and for good.
func tempFail() error {
	return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
}

func permFail() error {
	return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such mailbox"}
}

// hangingServer accepts connections and never says a word: an SMTP server
// that hangs.
func hangingServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}
