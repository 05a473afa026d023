package fleetdevice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A login is answered once Ingest knows the device; positions are
// acknowledged only after Report has returned: while it is blocked the
// device has nothing to read, and the acknowledgement comes once it is
// released. The report carries the login's identifier, the protocol, the
// device's address and the positions in the frame's order, and only the
// last position its attributes.
func TestPositionsAreAcknowledgedOnlyOnceStored(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.login("", "dev1")
	release := make(chan struct{})
	ing.setBlock(release)
	send(t, c, sentence("", [3]float64{48.1, 11.5, 1777636800}, [3]float64{48.2, 11.6, 1777636810}))
	r.waitReport("dev1")
	is.Equal(unread(t, c), 0) // nothing is acknowledged while the report is being stored
	close(release)
	is.Equal(readLine(t, c), "ACK,2\n")

	asked, reports := ing.recorded()
	is.Equal(asked, []string{"dev1"})
	is.Equal(len(reports), 1)
	rep := reports[0]
	is.Equal(rep.Identifier, "dev1") // from the login
	is.Equal(rep.Protocol, "line")
	is.Equal(rep.RemoteAddr, c.LocalAddr().String())
	is.Equal(len(rep.Positions), 2)
	is.Equal(rep.Positions[0].Latitude, 48.1) // in the frame's order
	is.Equal(rep.Positions[1].Longitude, 11.6)
	is.True(rep.Positions[1].Timestamp.Equal(time.Unix(1777636810, 0)))
	is.Equal(rep.Positions[1].Timestamp.Location(), time.UTC)
	is.Equal(*rep.Positions[0].Speed, 36.0)
	is.Equal(*rep.Positions[0].Satellites, 7)
	is.True(rep.Positions[0].Heading == nil)                                       // not sent, not set
	is.Equal(rep.Positions[0].Attrs, fleet.Attributes{fleet.NumberAttr("seq", 0)}) // each position its own
	is.Equal(rep.Positions[1].Attrs, fleet.Attributes{fleet.NumberAttr("seq", 1)})
	expectOpen(t, c) // the connection handles its frames in order: the count is up to date
	is.Equal(r.s.Stats().Acked, int64(1))
}

// A report the store or the points allowance refused is not
// acknowledged, and the connection is closed.
func TestRefusedReportsAreNotAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		limited bool
	}{
		{"unavailable", fleet.Errorf(fleet.CodeUnavailable, "The store is busy."), false},
		{"internal", errors.New("disk on fire"), false},
		{"allowance", fleet.Errorf(fleet.CodeRateLimitExceeded, "Points allowance spent."), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ing := newFakeIngest("dev1")
			r := newRig(t, ing, Options{}, lineProto{})
			c := r.login("", "dev1")
			ing.setErr(tc.err)
			send(t, c, sentence("", [3]float64{48.1, 11.5, 1777636800}))
			expectClosed(t, c)
			st := r.s.Stats()
			is.Equal(st.Acked, int64(0))
			if tc.limited {
				is.Equal(st.Limited, int64(1))
			} else {
				is.Equal(st.Failed, int64(1))
			}
		})
	}
}

// A login Ingest cannot check is not answered, and the connection is
// closed: the device logs in again later.
func TestLoginNotCheckedIsNotAnswered(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	ing.knownErr = fleet.Errorf(fleet.CodeUnavailable, "The store is busy.")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.dial("")
	send(t, c, "LOGIN,dev1\n")
	expectClosed(t, c)
	is.Equal(r.s.Stats().Failed, int64(1))
	is.Equal(r.s.Stats().Unknown, int64(0)) // not counted against the address
}

// A report that outlives ReportTimeout is abandoned, not acknowledged.
func TestReportInFlightIsBounded(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{ReportTimeout: 50 * time.Millisecond}, lineProto{})
	c := r.login("", "dev1")
	ing.setBlock(make(chan struct{})) // never released
	send(t, c, sentence("", [3]float64{48.1, 11.5, 1777636800}))
	expectClosed(t, c)
	is.Equal(r.s.Stats().Failed, int64(1))
}

// An unknown login gets the protocol's rejection and the connection is
// closed; so does a report naming an unknown device.
func TestUnknownIdentifierIsRejected(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})

	c := r.dial("")
	send(t, c, "LOGIN,ghost\n")
	is.Equal(readLine(t, c), "NO\n")
	expectClosed(t, c)

	c = r.dial("")
	send(t, c, sentence("ghost2", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "NO\n")
	expectClosed(t, c)

	asked, reports := ing.recorded()
	is.Equal(asked, []string{"ghost"})
	is.Equal(len(reports), 0)
	is.Equal(r.s.Stats().Unknown, int64(2))
}

// Frames that name their device need no login; positions that neither
// name one nor follow a login close the connection.
func TestPositionsNeedADevice(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.dial("")
	send(t, c, sentence("dev1", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "ACK,1\n")

	c = r.dial("")
	send(t, c, sentence("", [3]float64{1, 2, 1777636800}))
	expectClosed(t, c)
	_, reports := ing.recorded()
	is.Equal(len(reports), 1)
}

// Garbage closes the connection: a control byte, a sentence the
// decoder does not know, a frame longer than MaxFrame.
func TestGarbageClosesTheConnection(t *testing.T) {
	for _, tc := range []struct{ name, bytes string }{
		{"control byte", "LOG\x01IN,dev1\n"},
		{"undecodable", "HELLO,dev1\n"},
		{"after a good frame", "LOGIN,dev1\n\x00"},
		{"too long", strings.Repeat("A", 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ing := newFakeIngest("dev1")
			r := newRig(t, ing, Options{}, lineProto{max: 256})
			c := r.dial("")
			send(t, c, tc.bytes)
			if strings.HasPrefix(tc.bytes, "LOGIN") {
				is.Equal(readLine(t, c), "OK\n")
			}
			expectClosed(t, c)
			is.Equal(r.s.Stats().Garbage, int64(1))
		})
	}
}

// A frame longer than the connection's small buffer is read across
// several reads into a larger one, which goes back once it is handled.
func TestLongFramesAreRead(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{max: 64 << 10})
	c := r.login("", "dev1")
	var pts [][3]float64
	for i := range 1000 {
		pts = append(pts, [3]float64{48 + float64(i)/1000, 11.5, float64(1777636800 + i)})
	}
	frame := sentence("", pts...)
	is.True(len(frame) > 16<<10) // beyond two of the pooled sizes
	// In pieces, with the next frame begun in the last one.
	for i := 0; i < len(frame); i += 1000 {
		send(t, c, frame[i:min(i+1000, len(frame))])
	}
	is.Equal(readLine(t, c), "ACK,1000\n")
	send(t, c, frame+"PI")
	is.Equal(readLine(t, c), "ACK,1000\n")
	send(t, c, "NG\n")
	is.Equal(readLine(t, c), "PONG\n")
	_, reports := ing.recorded()
	is.Equal(len(reports), 2)
	is.Equal(len(reports[1].Positions), 1000)
	is.Equal(reports[1].Positions[999].Latitude, 48.999)
}

// Several frames in one read are each handled, in order.
func TestPipelinedFrames(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.dial("")
	send(t, c, "LOGIN,dev1\nPING\n"+sentence("", [3]float64{1, 2, 1777636800})+"BYE\n")
	b, err := io.ReadAll(c)
	is.NoErr(err)
	is.Equal(string(b), "OK\nPONG\nACK,1\nBYE\n") // BYE closes after its reply
}

// A frame whose checksum fails is neither reported nor acknowledged, and
// the connection stays open.
func TestChecksumFailureKeepsTheConnection(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.login("", "dev1")
	bad := strings.Replace(sentence("", [3]float64{48.1, 11.5, 1777636800}), "48.1", "48.2", 1)
	send(t, c, bad)
	expectOpen(t, c) // the first thing read is the heartbeat's answer
	_, reports := ing.recorded()
	is.Equal(len(reports), 0)
	is.Equal(r.s.Stats().Checksum, int64(1))
}

// A connection that sends nothing for IdleTimeout is closed.
func TestIdleConnectionIsClosed(t *testing.T) {
	is := is.New(t)
	r := newRig(t, newFakeIngest("dev1"), Options{IdleTimeout: 100 * time.Millisecond}, lineProto{})
	c := r.login("", "dev1")
	expectClosed(t, c)
	is.Equal(r.s.Stats().Timeouts, int64(1))
	is.True(strings.Contains(r.log.String(), "idle device connection closed"))
}

// A frame begun must be complete within FrameTimeout, however long the
// idle timeout.
func TestSlowFrameIsCut(t *testing.T) {
	is := is.New(t)
	r := newRig(t, newFakeIngest("dev1"), Options{IdleTimeout: time.Hour, FrameTimeout: 100 * time.Millisecond}, lineProto{})
	c := r.login("", "dev1")
	send(t, c, "POS,48.1,11")
	expectClosed(t, c)
	is.Equal(r.s.Stats().Timeouts, int64(1))
	is.True(strings.Contains(r.log.String(), "device frame not completed in time"))
}

// Connections are bounded per remote address and in total: one beyond
// is closed at once, and a place freed is taken again.
func TestConnectionCaps(t *testing.T) {
	is := is.New(t)
	r := newRig(t, newFakeIngest("a", "b", "c", "d"), Options{MaxConnsPerAddr: 2, MaxConns: 3}, lineProto{})
	a := r.login("127.0.0.1", "a")
	r.login("127.0.0.1", "b")
	expectClosed(t, r.dial("127.0.0.1")) // a third from the address
	r.login("127.0.0.2", "c")            // another address has room
	expectClosed(t, r.dial("127.0.0.3")) // beyond the total
	is.Equal(r.s.Stats().Refused, int64(2))
	is.Equal(r.s.Stats().Open, 3)

	a.Close()
	// Once the server has seen the close, the place is free again.
	for attempt := 0; ; attempt++ {
		c := r.dial("127.0.0.1")
		send(t, c, "LOGIN,d\n")
		var one [3]byte
		if n, _ := io.ReadFull(c, one[:]); n == 3 && string(one[:]) == "OK\n" {
			break
		}
		if attempt > 1000 {
			t.Fatal("the closed connection's place was not given back")
		}
	}
}

// The brake remembers at most MaxBrakedAddrs addresses: when full, those
// whose attempts have all come back are forgotten first, else one at
// random.
func TestBrakeIsBounded(t *testing.T) {
	is := is.New(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	b := newBrake(2, time.Minute, 3)
	for _, ip := range []string{"10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2", "10.0.0.3"} {
		b.unknown(ip, t0)
	}
	is.True(b.braked("10.0.0.1", t0))
	is.True(!b.braked("10.0.0.3", t0))
	is.True(!b.braked("10.0.0.1", t1)) // an attempt came back
	// At t1, 10.0.0.3 has all its attempts back: it is the one forgotten.
	b.unknown("10.0.0.4", t1)
	is.Equal(b.size(), 3)
	b.unknown("10.0.0.1", t1)
	is.True(b.braked("10.0.0.1", t1)) // still remembered: its attempt was spent
	for i := range 100 {
		b.unknown(fmt.Sprintf("10.1.0.%d", i), t1)
	}
	is.Equal(b.size(), 3) // however many addresses come
}

// A heartbeat of a connection that logged in is answered at once, without
// asking Ingest again; a message that asks for it closes the connection
// after its reply.
func TestHeartbeatsAreAnsweredAtOnce(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.login("", "dev1")
	expectOpen(t, c)
	send(t, c, "BYE\n")
	is.Equal(readLine(t, c), "BYE\n")
	expectClosed(t, c)
	asked, _ := ing.recorded()
	is.Equal(len(asked), 1) // the login's
}

// A panic while handling a frame closes that connection only; the
// server goes on serving, and logs it.
func TestPanicDoesNotStopTheServer(t *testing.T) {
	is := is.New(t)
	r := newRig(t, newFakeIngest("dev1"), Options{}, lineProto{})
	c := r.login("", "dev1")
	send(t, c, "PANIC\n")
	expectClosed(t, c)
	r.login("", "dev1")
	is.Equal(r.s.Stats().Panics, int64(1))
	is.True(strings.Contains(r.log.String(), "device frame handling panicked"))
	is.Equal(r.s.Stats().Open, 1) // the panicked connection gave its place back
}

// Shutdown closes idle connections at once, lets a report being stored
// finish and be acknowledged, then returns; the listener is closed.
func TestShutdownAcknowledgesReportsInFlight(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1", "dev2")
	r := newRig(t, ing, Options{}, lineProto{})
	idle := r.login("", "dev1")
	busy := r.login("", "dev2")
	release := make(chan struct{})
	ing.setBlock(release)
	send(t, busy, sentence("", [3]float64{1, 2, 1777636800}))
	r.waitReport("dev2")

	shut := make(chan error, 1)
	go func() { shut <- r.s.Shutdown(context.Background()) }()
	expectClosed(t, idle)
	select {
	case err := <-r.done:
		is.True(errors.Is(err, ErrServerClosed))
	case <-time.After(testDeadline):
		t.Fatal("ServeTCP did not return")
	}
	r.done <- ErrServerClosed // for the cleanup
	select {
	case <-shut:
		t.Fatal("Shutdown returned while a report was in flight")
	default:
	}
	close(release)
	is.Equal(readLine(t, busy), "ACK,1\n")
	expectClosed(t, busy)
	is.NoErr(<-shut)
	_, err := net.Dial("tcp", r.addr)
	is.True(err != nil) // nothing listens any more
}

// A Shutdown that runs out of its context returns the context's error;
// Close then cancels the report in flight, which is not acknowledged.
func TestShutdownGivesUpWithItsContext(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	c := r.login("", "dev1")
	ing.setBlock(make(chan struct{}))
	send(t, c, sentence("", [3]float64{1, 2, 1777636800}))
	r.waitReport("dev1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	is.Equal(r.s.Shutdown(ctx), context.Canceled)
	is.NoErr(r.s.Close())
	expectClosed(t, c)
}

// Serving after Shutdown is refused.
func TestServeAfterShutdown(t *testing.T) {
	is := is.New(t)
	s := NewServer(newFakeIngest(), Options{})
	is.NoErr(s.Shutdown(context.Background()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	is.Equal(s.ServeTCP(ln, lineProto{}), ErrServerClosed)
	_, err = net.Dial("tcp", ln.Addr().String())
	is.True(err != nil) // ServeTCP closed the listener
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	is.NoErr(err)
	is.Equal(s.ServeUDP(pc, lineProto{}), ErrServerClosed)
}
