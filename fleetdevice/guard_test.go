package fleetdevice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The listeners against a hostile outsider (API.md §13): an unknown
// identifier gets no answer to anything; a registered identifier is never
// refused because of what others sent from its address, and datagrams
// never brake logins; connections that do not log in make way for devices
// that do, and live LoginTimeout at most.

// expectNoDatagram fails if a datagram comes to pc within a moment (the
// server has handled everything it was sent: Shutdown returned).
func expectNoDatagram(t *testing.T, pc net.PacketConn) {
	t.Helper()
	pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	b := make([]byte, 512)
	n, _, err := pc.ReadFrom(b)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("datagram %q (%v); want none", b[:n], err)
	}
}

// A heartbeat naming an unknown identifier is not answered (its
// connection is closed), nor is one before any login; over UDP neither
// gets a reply. A registered device's heartbeats are answered.
func TestUnknownHeartbeatsAreNotAnswered(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{}, lineProto{})

	c := r.dial("")
	send(t, c, "PING,ghost\n")
	expectClosed(t, c)

	c = r.dial("")
	send(t, c, "PING\nBYE\nLOGIN,dev1\n")
	is.Equal(readLine(t, c), "OK\n") // the first answer is the login's
	expectOpen(t, c)                 // then heartbeats are answered

	c = r.dial("")
	send(t, c, "PING,dev1\n")
	is.Equal(readLine(t, c), "PONG\n")
	expectOpen(t, c) // the connection is the device's now

	srv := r.serveUDP(lineProto{})
	a := udpPeer(t)
	sendTo(t, a, srv, "PING,ghost\n")
	sendTo(t, a, srv, "PING\n")
	sendTo(t, a, srv, "BYE\n")
	sendTo(t, a, srv, "PING,dev1\n")
	is.Equal(recvFrom(t, a, srv), "PONG\n")
	is.NoErr(r.s.Shutdown(context.Background()))
	expectNoDatagram(t, a) // the registered device's was the only answer
	asked, _ := ing.recorded()
	count := map[string]int{}
	for _, id := range asked {
		count[id]++
	}
	is.Equal(count, map[string]int{"ghost": 2, "dev1": 3}) // each device named was checked
}

// The real protocols' heartbeats, as the issue found them answered for
// unknown identifiers: H02's HTBT, GPS103's bare IMEI, Queclink's GTHBD.
func TestProtocolHeartbeatsOfUnknownDevicesAreNotAnswered(t *testing.T) {
	for _, c := range []struct {
		proto     Decoder
		of        func(id string) string
		wantReply func(id string) string
	}{
		{H02(), func(id string) string { return "*HQ," + id + ",HTBT#" }, func(id string) string { return "*HQ," + id + ",HTBT#" }},
		{GPS103(), func(id string) string { return id + ";" }, func(string) string { return "ON" }},
		{Queclink(), func(id string) string { return "+ACK:GTHBD,1A0401," + id + ",,20100214093254,11F0$" },
			func(string) string { return "+SACK:GTHBD,1A0401,11F0$" }},
	} {
		t.Run(c.proto.Name(), func(t *testing.T) {
			is := is.New(t)
			r := newRig(t, newFakeIngest("135790246811220"), Options{}, c.proto)
			conn := r.dial("")
			send(t, conn, c.of("359586015829802"))
			expectClosed(t, conn)

			conn = r.dial("")
			send(t, conn, c.of("135790246811220"))
			want := c.wantReply("135790246811220")
			got := make([]byte, len(want))
			_, err := conn.Read(got)
			is.NoErr(err)
			is.Equal(string(got), want)
		})
	}
}

// OsmAnd answers an unknown identifier 400 (JSON form: 404) whether or
// not the request has a position.
func TestOsmAndUnknownDeviceWithoutPosition(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r, base := osmandRig(t, ing, Options{})
	r.s.decodeOsmAnd = DecodeOsmAnd
	get := func(q string) int {
		res, err := http.Get(base + "/?" + q)
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	post := func(body string) int {
		res, err := http.Post(base+"/", "application/json", strings.NewReader(body))
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	is.Equal(get("id=ghost"), http.StatusBadRequest)
	is.Equal(get("id=ghost&batt=80"), http.StatusBadRequest)
	is.Equal(post(`{"device_id":"ghost","location":{"is_moving":false}}`), http.StatusNotFound)
	is.Equal(get("id=dev1&batt=80"), http.StatusOK)
	is.Equal(post(`{"device_id":"dev1","location":{"is_moving":false}}`), http.StatusOK)
	_, reports := ing.recorded()
	is.Equal(len(reports), 0) // no position: nothing to report
}

// Datagrams naming unknown identifiers, whose source address anyone can
// forge, never brake the address's TCP logins; and past the datagram
// brake, a registered device's datagrams are still acknowledged.
func TestDatagramsNeverBrakeLogins(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{UnknownBurst: 2, UnknownEvery: time.Minute}, lineProto{})
	srv := r.serveUDP(lineProto{})
	forged := udpPeer(t) // from 127.0.0.1, as the tracker below
	for i := range 8 {
		sendTo(t, forged, srv, sentence(fmt.Sprint("35630704244100", i), [3]float64{1, 2, 1777636800}))
		is.Equal(recvFrom(t, forged, srv), "NO\n")
	}
	c := r.login("127.0.0.1", "dev1") // the address's TCP login is answered
	send(t, c, sentence("", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "ACK,1\n")

	tracker := udpPeer(t)
	sendTo(t, tracker, srv, sentence("dev1", [3]float64{1, 2, 1777636801}))
	is.Equal(recvFrom(t, tracker, srv), "ACK,1\n") // braked address, registered device
	sendTo(t, tracker, srv, "LOGIN,dev1\n")
	is.Equal(recvFrom(t, tracker, srv), "OK\n")

	asked, _ := ing.recorded()
	is.Equal(asked, []string{"dev1"}) // the TCP login's (the datagrams went to Report)
	is.Equal(ing.checks(), []string{"356307042441002", "356307042441003", "356307042441004", "356307042441005",
		"356307042441006", "356307042441007", "dev1", "dev1"}) // past the datagram brake: only checked
	is.Equal(r.s.Stats().Braked, int64(6))
}

// After UnknownBurst unknown identifiers an address's identifiers are only
// checked (Registered), until it earns an attempt back: an unknown one is
// refused, neither recorded (Known) nor logged, and a registered one is
// served, login and report alike. Other addresses are not concerned.
func TestUnknownIdentifiersAreBrakedPerAddress(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1", "dev2")
	r := newRig(t, ing, Options{UnknownBurst: 2, UnknownEvery: time.Minute}, lineProto{})
	refused := func(from, id string) {
		t.Helper()
		c := r.dial(from)
		send(t, c, "LOGIN,"+id+"\n")
		is.Equal(readLine(t, c), "NO\n")
		expectClosed(t, c)
	}
	refused("127.0.0.1", "ghost1")
	refused("127.0.0.1", "ghost2")
	asked, _ := ing.recorded()
	is.Equal(len(asked), 2)
	refused("127.0.0.1", "ghost3")
	c := r.login("127.0.0.1", "dev1") // braked, and served: it is registered
	send(t, c, sentence("", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "ACK,1\n")
	c = r.dial("127.0.0.1") // a report naming its device too
	send(t, c, sentence("dev2", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "ACK,1\n")
	c = r.dial("127.0.0.1")
	send(t, c, sentence("ghost4", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, c), "NO\n")
	asked, reports := ing.recorded()
	is.Equal(len(asked), 2) // the unknown ones past the brake were not recorded
	is.Equal(ing.checks(), []string{"ghost3", "dev1", "dev2", "ghost4"})
	is.Equal(len(reports), 2)
	is.Equal(r.s.Stats().Braked, int64(2))
	is.True(!strings.Contains(r.log.String(), "ghost3")) // nor logged

	r.login("127.0.0.2", "dev2") // another address is not braked
	refused("127.0.0.2", "ghost5")
	asked, _ = ing.recorded()
	is.Equal(asked[len(asked)-1], "ghost5") // recorded

	r.clock.Advance(time.Minute) // one attempt earned back
	refused("127.0.0.1", "ghost6")
	asked, _ = ing.recorded()
	is.Equal(asked[len(asked)-1], "ghost6")
	refused("127.0.0.1", "ghost7")
	is.Equal(ing.checks()[len(ing.checks())-1], "ghost7")
}

// Connections that never send a byte, from several addresses (each under
// its cap), fill the cap: a registered tracker from another address still
// logs in and is acknowledged, the oldest silent connections making way
// for it, and a device that has logged in is never closed to make room.
func TestSilentConnectionsMakeRoomForDevices(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r := newRig(t, ing, Options{MaxConns: 8, MaxConnsPerAddr: 2}, lineProto{})
	var silent []net.Conn
	for i := range 8 {
		silent = append(silent, r.dial(fmt.Sprintf("127.0.0.%d", 1+i/2)))
	}
	tracker := r.login("127.0.0.9", "dev1")
	send(t, tracker, sentence("", [3]float64{1, 2, 1777636800}))
	is.Equal(readLine(t, tracker), "ACK,1\n")
	// Those not logged in hold three quarters of the cap at most: the
	// 7th and 8th took the places of the 1st and 2nd, the tracker the
	// 3rd's.
	for _, c := range silent[:3] {
		expectClosed(t, c)
	}
	st := r.s.Stats()
	is.Equal(st.Evicted, int64(3))
	is.Equal(st.Open, 6)
	is.Equal(st.Refused, int64(0))

	// More silent connections close silent ones, never the tracker; and
	// another tracker gets in all the same.
	for i := range 6 {
		silent = append(silent, r.dial(fmt.Sprintf("127.0.1.%d", 1+i)))
	}
	r.login("127.0.1.9", "dev1") // accepted after them
	expectOpen(t, tracker)
	is.Equal(r.s.Stats().Evicted, int64(3+5+1))

	// An address's cap full of silent connections makes way for its
	// device too.
	a := r.dial("127.0.2.1")
	r.dial("127.0.2.1")
	r.login("127.0.2.1", "dev1")
	expectClosed(t, a)
}

// A connection that has not named a registered identifier within
// LoginTimeout of its opening is closed: silent, only heartbeats, or an
// OsmAnd connection kept alive after an unknown identifier. One that
// logged in stays.
func TestConnectionsMustLogInInTime(t *testing.T) {
	is := is.New(t)
	ing := newFakeIngest("dev1")
	r, base := osmandRig(t, ing, Options{LoginTimeout: 200 * time.Millisecond})
	tracker := r.login("127.0.0.1", "dev1")
	silent := r.dial("127.0.0.2")
	pinger := r.dial("127.0.0.3")
	send(t, pinger, "PING\n") // not answered: no device named

	addr := strings.TrimPrefix(base, "http://")
	dialHTTP := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		is.NoErr(err)
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(testDeadline))
		return c, bufio.NewReader(c)
	}
	request := func(c net.Conn, br *bufio.Reader, id string) int {
		send(t, c, "GET /?id="+id+"&lat=1&lon=2 HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		is.NoErr(err)
		res.Body.Close()
		return res.StatusCode
	}
	app, appR := dialHTTP()
	is.Equal(request(app, appR, "dev1"), http.StatusOK)
	stranger, strangerR := dialHTTP()
	is.Equal(request(stranger, strangerR, "ghost"), http.StatusBadRequest)
	quiet, _ := dialHTTP()

	for _, c := range []net.Conn{silent, pinger, stranger, quiet} {
		expectClosed(t, c)
	}
	expectOpen(t, tracker) // opened first, and logged in
	is.Equal(request(app, appR, "dev1"), http.StatusOK)
	is.Equal(r.s.Stats().Timeouts, int64(4))
}

// fleet's device edge checks identifiers without recording them.
var _ Registry = fleet.DeviceEdge{}
