package fleetdevice_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

var ctx = context.Background()

// deliveryT0 is the clock of the delivery tests.
var deliveryT0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// commandRig is a service with a device registered and attached to a
// vehicle, and device listeners over its device edge.
type commandRig struct {
	t     testing.TB
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	d     fleet.Device
	srv   *fleetdevice.Server
}

func newCommandRig(t testing.TB, store fleet.Store, identifier string) *commandRig {
	t.Helper()
	clock := testclock.New(deliveryT0)
	protocols := map[string]fleet.ProtocolCommands{}
	for name, cs := range fleetdevice.CommandSupports() {
		protocols[name] = fleet.ProtocolCommands{Types: cs.Types, MaxText: cs.MaxText}
	}
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now, Protocols: protocols, CheckCommand: fleetdevice.CommandCheck})
	// Enterprise: room for the benchmarks' 10,000 devices.
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise})
	if err != nil {
		t.Fatal(err)
	}
	r := &commandRig{t: t, svc: svc, clock: clock, p: fleet.SystemPrincipal(a)}
	v, err := svc.CreateVehicle(ctx, r.p, fleet.Vehicle{Name: "Truck 7"})
	if err != nil {
		t.Fatal(err)
	}
	r.d, err = svc.CreateDevice(ctx, r.p, fleet.Device{Identifier: identifier, VehicleID: v.ID})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = fleetdevice.NewServer(svc.DeviceEdge(), fleetdevice.Options{Now: clock.Now})
	t.Cleanup(func() { r.srv.Close() })
	return r
}

// listen serves the protocol of dec on a loopback port and returns its
// address.
func (r *commandRig) listen(dec fleetdevice.Decoder) string {
	r.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	go r.srv.ServeTCP(ln, dec)
	return ln.Addr().String()
}

func (r *commandRig) send(in fleet.CommandInput) fleet.Command {
	r.t.Helper()
	c, err := r.svc.CreateCommand(ctx, r.p, r.d.ID, in)
	if err != nil {
		r.t.Fatalf("create command: %v", err)
	}
	return c
}

func (r *commandRig) command(id string) fleet.Command {
	r.t.Helper()
	c, err := r.svc.Command(ctx, r.p, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// teltonikaConn is a simulated Teltonika device connected to a listener.
type teltonikaConn struct {
	t   *testing.T
	dev *devicetest.Teltonika
	c   net.Conn
	rd  *bufio.Reader
}

func dialTeltonika(t *testing.T, addr, imei string) *teltonikaConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A bound on every read: a test that waits for a command that never
	// comes fails rather than hangs.
	c.SetDeadline(time.Now().Add(20 * time.Second))
	tc := &teltonikaConn{t: t, dev: &devicetest.Teltonika{IMEI: imei}, c: c, rd: bufio.NewReader(c)}
	hello, want := tc.dev.Hello()
	tc.write(hello)
	tc.read(want)
	return tc
}

func (tc *teltonikaConn) write(b []byte) {
	tc.t.Helper()
	if _, err := tc.c.Write(b); err != nil {
		tc.t.Fatal(err)
	}
}

func (tc *teltonikaConn) read(e devicetest.Expect) []byte {
	tc.t.Helper()
	b, err := devicetest.Read(tc.rd, e)
	if err != nil {
		tc.t.Fatalf("read: %v (% x)", err, b)
	}
	return b
}

// report sends one position at speed km/h and waits for its
// acknowledgement: every frame the device sent before it is handled then.
func (tc *teltonikaConn) report(at time.Time, speed float64) {
	tc.t.Helper()
	frame, want := tc.dev.Report([]devicetest.Point{{Time: at, Latitude: 52.52, Longitude: 13.40, Speed: speed, Satellites: 9, Valid: true}})
	tc.write(frame)
	tc.read(want)
}

// command reads the next command the server writes, and the text it
// carries.
func (tc *teltonikaConn) command() ([]byte, string) {
	tc.t.Helper()
	b := tc.read(tc.dev.Command)
	return b, string(b[15 : len(b)-5]) // the codec 12 command's text
}

// A command reaches a connected Teltonika as codec 12 at once, in queue
// order after those queued while it was offline; its answer is the
// command's result; an engine_stop waits until a report shows the vehicle
// slower than 10 km/h.
func TestCommandsReachATeltonika(t *testing.T) {
	is := is.New(t)
	r := newCommandRig(t, memstore.New(), "356307042441013")
	addr := r.listen(fleetdevice.Teltonika())

	// Queued while the device is away: written after its login.
	offline := r.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getver")})
	dev := dialTeltonika(t, addr, r.d.Identifier)
	cmd, text := dev.command()
	is.Equal(text, "getver")
	is.Equal(r.command(offline.ID).Status, fleet.CommandSent)
	answer, err := dev.dev.Answer(cmd)
	is.NoErr(err)
	dev.write(answer) // answers come in the order of the commands

	// The device reports at speed; a stop waits, a position request goes.
	dev.report(r.clock.Now(), 54)
	// What teltonika cannot carry is refused when it is posted.
	_, err = r.svc.CreateCommand(ctx, r.p, r.d.ID, fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("caf\u00e9")})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	_, err = r.svc.CreateCommand(ctx, r.p, r.d.ID, fleet.CommandInput{Type: fleet.CommandSetInterval, Seconds: ptr(30)})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict)
	is.True(strings.Contains(fleet.ErrorMessage(err), "engine_stop"))
	stop := r.send(fleet.CommandInput{Type: fleet.CommandEngineStop})
	ping := r.send(fleet.CommandInput{Type: fleet.CommandPositionRequest})
	cmd, text = dev.command()
	is.Equal(text, "getgps")
	answer, err = dev.dev.Answer(cmd)
	is.NoErr(err)
	dev.write(answer)
	r.clock.Advance(time.Second)
	dev.report(r.clock.Now(), 12) // still too fast
	got := r.command(ping.ID)
	is.Equal(got.Status, fleet.CommandDelivered)
	is.True(strings.HasPrefix(got.Result, "GPS:"))            // the device's answer
	is.Equal(r.command(offline.ID).Result, "Unknown command") // each answer settles its own command
	held := r.command(stop.ID)
	is.Equal(held.Status, fleet.CommandQueued)
	is.True(strings.Contains(held.Error, "km/h")) // why it waits

	r.clock.Advance(time.Second)
	dev.report(r.clock.Now(), 3)
	cmd, text = dev.command()
	is.Equal(text, "setdigout 1")
	answer, err = dev.dev.Answer(cmd)
	is.NoErr(err)
	dev.write(answer)
	r.clock.Advance(time.Second)
	dev.report(r.clock.Now(), 0)
	got = r.command(stop.ID)
	is.Equal(got.Status, fleet.CommandDelivered)
	is.True(strings.HasPrefix(got.Result, "DOUT1:1"))
	st := r.srv.Stats()
	is.Equal(st.CommandsSent, int64(3))
	is.Equal(st.CommandsAnswered, int64(3))
}

// A device that answers a command with garbage is closed, as for a
// garbage report, and the command fails with the reason.
func TestGarbageAnswerFailsTheCommand(t *testing.T) {
	is := is.New(t)
	r := newCommandRig(t, memstore.New(), "356307042441013")
	dev := dialTeltonika(t, r.listen(fleetdevice.Teltonika()), r.d.Identifier)
	c := r.send(fleet.CommandInput{Type: fleet.CommandOutput, Index: ptr(2), On: ptr(true)})
	_, text := dev.command()
	is.Equal(text, "setdigout ?1")
	dev.write([]byte("\xff\xfenot a teltonika frame"))
	_, err := io.ReadAll(dev.rd) // the server closes the connection
	is.NoErr(err)
	got := r.command(c.ID)
	is.Equal(got.Status, fleet.CommandFailed)
	is.True(strings.Contains(got.Error, "cannot carry"))
	is.Equal(r.srv.Stats().CommandsFailed, int64(1))
}

// An OsmAnd device gets a custom command as the body of the answer to its
// next report; it cannot acknowledge, so the command stays sent.
func TestOsmAndGetsItsCommandInTheAnswer(t *testing.T) {
	is := is.New(t)
	r := newCommandRig(t, memstore.New(), "phone-17")
	hs := httptest.NewServer(r.srv.OsmAnd())
	defer hs.Close()
	get := func() string {
		t.Helper()
		res, err := http.Get(devicetest.OsmAndURL(hs.URL, "phone-17", devicetest.Point{Time: r.clock.Now(), Latitude: 52.5, Longitude: 13.4, Valid: true}))
		is.NoErr(err)
		defer res.Body.Close()
		is.Equal(res.StatusCode, http.StatusOK)
		b, err := io.ReadAll(res.Body)
		is.NoErr(err)
		return string(b)
	}
	is.Equal(get(), "") // nothing queued
	first := r.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("interval=10")})
	second := r.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("interval=300")})
	_, err := r.svc.CreateCommand(ctx, r.p, r.d.ID, fleet.CommandInput{Type: fleet.CommandEngineStop})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // osmand carries custom only
	r.clock.Advance(time.Second)
	is.Equal(get(), "interval=10")
	is.Equal(r.command(first.ID).Status, fleet.CommandSent)
	is.Equal(r.command(second.ID).Status, fleet.CommandQueued) // one an answer
	r.clock.Advance(time.Second)
	is.Equal(get(), "interval=300")
	r.clock.Advance(time.Second)
	is.Equal(get(), "")
}

// Two servers on one PostgreSQL database: a command posted to one reaches
// the device connected to the other at once, through the store's command
// feed.
func TestCommandCrossesServers(t *testing.T) {
	dsn := pgtest.NewSchema(t, pgtest.DSN(t))
	open := func() *sqlstore.Store {
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	is := is.New(t)
	r := newCommandRig(t, open(), "356307042441013")
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.svc.Jobs().FollowCommands(fctx) // the server holding the connection follows the feed
	select {
	case <-r.svc.Jobs().FollowingCommands():
	case <-time.After(20 * time.Second):
		t.Fatal("the command feed is not followed")
	}
	other := fleet.NewService(open(), fleet.Options{Now: r.clock.Now})
	dev := dialTeltonika(t, r.listen(fleetdevice.Teltonika()), r.d.Identifier)
	dev.report(r.clock.Now(), 0) // logged in and serving
	c, err := other.CreateCommand(ctx, r.p, r.d.ID, fleet.CommandInput{Type: fleet.CommandEngineResume})
	is.NoErr(err)
	_, text := dev.command()
	is.Equal(text, "setdigout 0")
	is.Equal(r.command(c.ID).Status, fleet.CommandSent)
}

func ptr[T any](v T) *T { return &v }
