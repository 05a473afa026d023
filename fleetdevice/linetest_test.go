package fleetdevice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/internal/testlog"
)

// lineProto is a protocol of the listeners' tests, one sentence a line:
//
//	LOGIN,<id>                      login: OK, or NO and close
//	POS,<lat>,<lon>,<unix>...*<xx>   positions of the login's device: ACK,<n>
//	IDPOS,<id>,<lat>,<lon>,<unix>...*<xx>  positions naming their device
//	PING                            heartbeat: PONG
//	PING,<id>                       heartbeat naming its device: PONG
//	BYE                             other: BYE, then close
//	PANIC                           makes Decode panic
//
// <xx> is the hex XOR of the bytes before '*' (a wrong one is
// ErrChecksum). A control byte other than CR, LF, TAB is garbage; so is a
// sentence of none of these forms. Every position carries the attribute
// seq, its index in the sentence.
type lineProto struct{ max int }

func (lineProto) Name() string { return "line" }
func (p lineProto) MaxFrame() int {
	if p.max == 0 {
		return 256
	}
	return p.max
}

func (lineProto) Split(buf []byte) (int, error) {
	for i, c := range buf {
		if c == '\n' {
			return i + 1, nil
		}
		if c < 0x20 && c != '\r' && c != '\t' {
			return 0, ErrGarbage
		}
	}
	return 0, nil
}

func (lineProto) Decode(frame []byte, s *Session, m *Message) error {
	line := strings.TrimRight(string(frame), "\r\n")
	verb, rest, _ := strings.Cut(line, ",")
	switch verb {
	case "LOGIN":
		if rest == "" {
			return ErrGarbage
		}
		m.Kind, m.Identifier = KindLogin, rest
		s.Identifier = rest
		m.Reply = append(m.Reply, "OK\n"...)
		m.Reject = []byte("NO\n")
		return nil
	case "PING":
		m.Kind, m.Identifier = KindHeartbeat, rest
		m.Reply = append(m.Reply, "PONG\n"...)
		return nil
	case "BYE":
		m.Kind, m.Close = KindOther, true
		m.Reply = append(m.Reply, "BYE\n"...)
		return nil
	case "PANIC":
		panic("a sentence no decoder expected")
	case "POS", "IDPOS":
	default:
		return ErrGarbage
	}
	body, sum, ok := strings.Cut(line, "*")
	if !ok {
		return ErrGarbage
	}
	want, err := strconv.ParseUint(sum, 16, 8)
	if err != nil {
		return ErrGarbage
	}
	if xor(body) != byte(want) {
		return ErrChecksum
	}
	fields := strings.Split(body, ",")[1:]
	if verb == "IDPOS" {
		if len(fields) == 0 {
			return ErrGarbage
		}
		m.Identifier, fields = fields[0], fields[1:]
	}
	if len(fields)%3 != 0 {
		return ErrGarbage
	}
	m.Kind = KindPositions
	for i := 0; i < len(fields); i += 3 {
		lat, err1 := strconv.ParseFloat(fields[i], 64)
		lon, err2 := strconv.ParseFloat(fields[i+1], 64)
		sec, err3 := strconv.ParseInt(fields[i+2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return ErrGarbage
		}
		m.Positions = append(m.Positions, Position{
			Time: time.Unix(sec, 0), Latitude: lat, Longitude: lon,
			Speed: 36, HasSpeed: true, Satellites: 7, HasSatellites: true, Valid: true,
			Attrs: []Attribute{{Key: "seq", Num: float64(i / 3)}},
		})
	}
	m.Reply = fmt.Appendf(m.Reply, "ACK,%d\n", len(m.Positions))
	m.Reject = []byte("NO\n")
	return nil
}

func xor(s string) byte {
	var x byte
	for i := 0; i < len(s); i++ {
		x ^= s[i]
	}
	return x
}

// sentence builds a POS (id "") or IDPOS sentence of positions given as
// lat, lon, unix triples.
func sentence(id string, pts ...[3]float64) string {
	var b strings.Builder
	if id == "" {
		b.WriteString("POS")
	} else {
		b.WriteString("IDPOS," + id)
	}
	for _, p := range pts {
		fmt.Fprintf(&b, ",%g,%g,%d", p[0], p[1], int64(p[2]))
	}
	body := b.String()
	return fmt.Sprintf("%s*%02X\n", body, xor(body))
}

// fakeIngest records what the listeners ask and can be told to fail or to
// block.
type fakeIngest struct {
	mu       sync.Mutex
	known    map[string]bool
	asked    []string // identifiers Known was asked
	checked  []string // identifiers Registered was asked
	reports  []fleet.DeviceReport
	err      error         // what Report returns
	knownErr error         // what Known returns
	block    chan struct{} // Report waits for it to be closed
	entered  chan string   // Report sends the identifier on it when it starts
	discard  bool          // keep no record of reports (memory measures)
}

func newFakeIngest(known ...string) *fakeIngest {
	f := &fakeIngest{known: map[string]bool{}, entered: make(chan string, 64)}
	for _, k := range known {
		f.known[k] = true
	}
	return f
}

func (f *fakeIngest) Known(ctx context.Context, identifier, protocol, remoteAddr string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, identifier)
	if f.knownErr != nil {
		return false, f.knownErr
	}
	return f.known[identifier], nil
}

func (f *fakeIngest) Registered(ctx context.Context, identifier string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked = append(f.checked, identifier)
	if f.knownErr != nil {
		return false, f.knownErr
	}
	return f.known[identifier], nil
}

func (f *fakeIngest) Report(ctx context.Context, rep fleet.DeviceReport) (fleet.DeviceResult, error) {
	f.mu.Lock()
	block, err, known := f.block, f.err, f.known[rep.Identifier]
	f.mu.Unlock()
	select {
	case f.entered <- rep.Identifier:
	default:
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return fleet.DeviceResult{}, ctx.Err()
		}
	}
	if err != nil {
		return fleet.DeviceResult{}, err
	}
	if !known {
		return fleet.DeviceResult{}, fleet.NotFound("device", rep.Identifier)
	}
	f.mu.Lock()
	if !f.discard {
		f.reports = append(f.reports, rep)
	}
	f.mu.Unlock()
	return fleet.DeviceResult{Accepted: len(rep.Positions), Stored: true}, nil
}

func (f *fakeIngest) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeIngest) setBlock(c chan struct{}) {
	f.mu.Lock()
	f.block = c
	f.mu.Unlock()
}

// checks is what Registered was asked.
func (f *fakeIngest) checks() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.checked...)
}

func (f *fakeIngest) recorded() (asked []string, reports []fleet.DeviceReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...), append([]fleet.DeviceReport(nil), f.reports...)
}

// rig is a Server with a TCP (and, where asked, UDP) listener of
// lineProto on loopback.
type rig struct {
	t     testing.TB
	s     *Server
	ing   *fakeIngest
	clock *testclock.Clock
	log   *testlog.Buffer
	addr  string     // TCP
	done  chan error // ServeTCP's result
}

func newRig(t testing.TB, ing *fakeIngest, opts Options, p Decoder) *rig {
	t.Helper()
	r := &rig{t: t, ing: ing, clock: testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)), log: &testlog.Buffer{}, done: make(chan error, 1)}
	opts.Now = r.clock.Now
	opts.Logger = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.s = NewServer(ing, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	go func() { r.done <- r.s.ServeTCP(ln, p) }()
	t.Cleanup(func() {
		r.s.Close()
		<-r.done
		if t.Failed() {
			t.Logf("server log:\n%s", r.log.String())
		}
	})
	return r
}

// serveUDP serves p on a UDP socket of loopback too.
func (r *rig) serveUDP(p Decoder) net.Addr {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.s.ServeUDP(pc, p) }()
	r.t.Cleanup(func() {
		r.s.Close()
		<-done
	})
	return pc.LocalAddr()
}

// testDeadline bounds every wait of a test on the network, so that a
// failure is a failed test rather than a hung one.
const testDeadline = 10 * time.Second

// dial opens a connection to the rig from the loopback address from
// ("" for 127.0.0.1).
func (r *rig) dial(from string) net.Conn {
	r.t.Helper()
	if from == "" {
		from = "127.0.0.1"
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: testDeadline}
	c, err := d.Dial("tcp", r.addr)
	if err != nil {
		r.t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testDeadline))
	r.t.Cleanup(func() { c.Close() })
	return c
}

// login dials and logs id in, expecting OK.
func (r *rig) login(from, id string) net.Conn {
	r.t.Helper()
	c := r.dial(from)
	send(r.t, c, "LOGIN,"+id+"\n")
	if got := readLine(r.t, c); got != "OK\n" {
		r.t.Fatalf("login %s: %q, want OK", id, got)
	}
	return c
}

func send(t testing.TB, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}

// readLine reads up to and including '\n'.
func readLine(t testing.TB, c net.Conn) string {
	t.Helper()
	var b []byte
	var one [1]byte
	for {
		_, err := c.Read(one[:])
		if err != nil {
			t.Fatalf("read after %q: %v", b, err)
		}
		b = append(b, one[0])
		if one[0] == '\n' {
			return string(b)
		}
	}
}

// expectClosed reads until the server closes c, and fails if it sent
// anything first.
func expectClosed(t testing.TB, c net.Conn) {
	t.Helper()
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %q, then %v; want the server to close the connection", b, err)
	}
	if len(b) > 0 {
		t.Fatalf("the server sent %q before closing; want nothing", b)
	}
}

// expectOpen proves c is still served: a heartbeat is answered.
func expectOpen(t testing.TB, c net.Conn) {
	t.Helper()
	send(t, c, "PING\n")
	if got := readLine(t, c); got != "PONG\n" {
		t.Fatalf("heartbeat answered %q", got)
	}
}

// waitReport waits until Report was entered for id.
func (r *rig) waitReport(id string) {
	r.t.Helper()
	select {
	case got := <-r.ing.entered:
		if got != id {
			r.t.Fatalf("report of %q, want %q", got, id)
		}
	case <-time.After(testDeadline):
		r.t.Fatal("Report was not called")
	}
}
