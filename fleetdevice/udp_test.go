package fleetdevice

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// udpPeer is a device's UDP socket on loopback.
func udpPeer(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc.SetDeadline(time.Now().Add(testDeadline))
	t.Cleanup(func() { pc.Close() })
	return pc
}

func sendTo(t *testing.T, pc net.PacketConn, to net.Addr, s string) {
	t.Helper()
	if _, err := pc.WriteTo([]byte(s), to); err != nil {
		t.Fatal(err)
	}
}

// recvFrom reads one datagram, which must come from the server.
func recvFrom(t *testing.T, pc net.PacketConn, server net.Addr) string {
	t.Helper()
	b := make([]byte, 2048)
	n, from, err := pc.ReadFrom(b)
	if err != nil {
		t.Fatal(err)
	}
	if from.String() != server.String() {
		t.Fatalf("datagram from %s, want %s", from, server)
	}
	return string(b[:n])
}

// Each datagram is handled on its own and its reply goes to its sender;
// the report names the sender's address.
func TestUDPRepliesToTheSender(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1", "dev2")
	r := newRig(t, ing, Options{}, lineProto{})
	srv := r.serveUDP(lineProto{})
	a, b := udpPeer(t), udpPeer(t)
	sendTo(t, a, srv, sentence("dev1", [3]float64{1, 2, 1777636800}))
	sendTo(t, b, srv, sentence("dev2", [3]float64{3, 4, 1777636800}, [3]float64{3, 4, 1777636801}))
	is.Equal(recvFrom(t, b, srv), "ACK,2\n")
	is.Equal(recvFrom(t, a, srv), "ACK,1\n")
	_, reports := ing.recorded()
	is.Equal(len(reports), 2)
	for _, rep := range reports {
		switch rep.Identifier {
		case "dev1":
			is.Equal(rep.RemoteAddr, a.LocalAddr().String())
		case "dev2":
			is.Equal(rep.RemoteAddr, b.LocalAddr().String())
		default:
			t.Fatalf("report of %q", rep.Identifier)
		}
	}
	sendTo(t, a, srv, "LOGIN,dev1\n")
	is.Equal(recvFrom(t, a, srv), "OK\n")
}

// Over UDP an unknown identifier gets the protocol's rejection; garbage,
// a failed checksum and a panic get nothing, and the next datagram of
// the same sender is answered.
func TestUDPRefusals(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})
	srv := r.serveUDP(lineProto{})
	a := udpPeer(t)
	sendTo(t, a, srv, sentence("ghost", [3]float64{1, 2, 1777636800}))
	is.Equal(recvFrom(t, a, srv), "NO\n")
	for _, d := range []string{
		"\x16\x03\x01 not a sentence",
		strings.Replace(sentence("dev1", [3]float64{1, 2, 1777636800}), ",1,", ",9,", 1),
		"PANIC\n",
		sentence("", [3]float64{1, 2, 1777636800}), // no device named, no login
	} {
		sendTo(t, a, srv, d)
	}
	sendTo(t, a, srv, sentence("dev1", [3]float64{1, 2, 1777636800}))
	// Datagrams are handled concurrently: the acknowledgement is the only
	// answer, whatever the order.
	is.Equal(recvFrom(t, a, srv), "ACK,1\n")
	// The datagrams before it were read before it; Shutdown waits for
	// their handling.
	is.NoErr(r.s.Shutdown(context.Background()))
	st := r.s.Stats()
	is.Equal(st.Unknown, int64(1))
	is.Equal(st.Checksum, int64(1))
	is.Equal(st.Garbage, int64(1))
	is.Equal(st.Panics, int64(1))
	_, reports := ing.recorded()
	is.Equal(len(reports), 1)
}

// Beyond MaxUDPInFlight datagrams being handled, one is dropped.
func TestUDPInFlightIsBounded(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1", "dev2")
	r := newRig(t, ing, Options{MaxUDPInFlight: 1}, lineProto{})
	srv := r.serveUDP(lineProto{})
	a := udpPeer(t)
	release := make(chan struct{})
	ing.setBlock(release)
	sendTo(t, a, srv, sentence("dev1", [3]float64{1, 2, 1777636800}))
	r.waitReport("dev1")
	sendTo(t, a, srv, sentence("dev2", [3]float64{1, 2, 1777636800}))
	deadline := time.Now().Add(testDeadline)
	for r.s.Stats().Dropped == 0 { // the reader drops it without waiting
		if time.Now().After(deadline) {
			t.Fatal("the datagram beyond the bound was not dropped")
		}
		runtime.Gosched()
	}
	close(release)
	is.Equal(recvFrom(t, a, srv), "ACK,1\n")
	is.NoErr(r.s.Shutdown(context.Background()))
	_, reports := ing.recorded()
	is.Equal(len(reports), 1)
	is.Equal(reports[0].Identifier, "dev1")
}
