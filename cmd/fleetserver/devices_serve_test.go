package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
	"github.com/matryer/is"
)

// The device edge of the real binary: `serve --devices` on SQLite, with
// trackers and a phone app as real network peers on loopback.

// devChild is a fleetserver process whose stdout is kept line by line.
type devChild struct {
	cmd    *exec.Cmd
	base   string
	out    *lineWriter
	stderr *syncBuf
	done   chan struct{}
	err    error
}

// startDevChild runs `fleetserver serve` on dsn and a free loopback port
// with args, and returns once it says where its API listens (the device
// listeners' lines come before that one).
func startDevChild(t *testing.T, bin, dsn string, args ...string) *devChild {
	t.Helper()
	c := &devChild{out: newLineWriter(), stderr: &syncBuf{}, done: make(chan struct{})}
	c.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, args...)...)
	c.cmd.Stdout = c.out
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		c.out.Write([]byte("\n(exited)\n")) // wakes waitFor
		close(c.done)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	c.base = c.line(t, listeningLine)
	return c
}

// line waits for a line of stdout matching re and returns its first
// submatch; it fails the test if the process exits first.
func (c *devChild) line(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	either := regexp.MustCompile(re.String() + `|^\(exited\)$`)
	m := c.out.waitFor(t, either)
	if m == "" {
		t.Fatalf("fleetserver exited (%v) before printing a line matching %s:\n%s\n%s", c.err, re, c.out.String(), c.stderr.String())
	}
	return m
}

// deviceAddr is the address a device listener printed it listens on.
func (c *devChild) deviceAddr(t *testing.T, protocol, transport string) string {
	t.Helper()
	if transport == "http" {
		return c.line(t, regexp.MustCompile(`^devices: `+protocol+` on (http://\S+)$`))
	}
	return c.line(t, regexp.MustCompile(`^devices: `+protocol+` on `+transport+` (\S+)$`))
}

func (c *devChild) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(30 * time.Second):
		t.Fatalf("fleetserver did not exit:\n%s", c.stderr.String())
		return nil
	}
}

// newAccount makes an account from the shell, as an operator does, and
// returns its API key.
func newAccount(t *testing.T, bin, dsn string) string {
	t.Helper()
	out, err := exec.Command(bin, "accounts", "create", "--company", "Tracker Haulage", "--plan", "enterprise", "--db", dsn, "--json").Output()
	if err != nil {
		t.Fatalf("accounts create: %v (%s)", err, out)
	}
	var acc map[string]string
	if err := json.Unmarshal(out, &acc); err != nil {
		t.Fatal(err)
	}
	return acc["api_key"]
}

// vehicleWithDevice creates a vehicle and registers identifier against it
// through the API; it returns the vehicle's and the device's ids.
func vehicleWithDevice(t *testing.T, client *http.Client, base, key, name, identifier string) (string, string) {
	t.Helper()
	status, body, err := call(client, "POST", base+"/v1/vehicles", key, map[string]any{"name": name})
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create vehicle: %d %v %v", status, body, err)
	}
	veh := body["data"].(map[string]any)["vehicle_id"].(string)
	status, body, err = call(client, "POST", base+"/v1/devices", key, map[string]any{"identifier": identifier, "vehicle_id": veh})
	if err != nil || status != http.StatusCreated {
		t.Fatalf("register device: %d %v %v", status, body, err)
	}
	return veh, body["data"].(map[string]any)["device_id"].(string)
}

// teltonikaConn is a Teltonika tracker connected over TCP.
type teltonikaConn struct {
	d  devicetest.Teltonika
	c  net.Conn
	rd *bufio.Reader
}

// dialTeltonika connects and sends the IMEI handshake; it returns the
// server's answer to it.
func dialTeltonika(addr, imei string) (*teltonikaConn, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a guard against a hang only
	tc := &teltonikaConn{d: devicetest.Teltonika{IMEI: imei}, c: c, rd: bufio.NewReader(c)}
	hello, _ := tc.d.Hello()
	if _, err := c.Write(hello); err != nil {
		c.Close()
		return nil, nil, err
	}
	b, err := tc.rd.ReadByte()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return tc, []byte{b}, nil
}

// report sends one frame of pts and returns the answer's bytes once the
// acknowledgement of len(pts) records is whole.
func (tc *teltonikaConn) report(pts ...devicetest.Point) ([]byte, error) {
	frame, want := tc.d.Report(pts)
	if _, err := tc.c.Write(frame); err != nil {
		return nil, err
	}
	return devicetest.Read(tc.rd, want)
}

func TestServeDevicesTeltonikaAndOsmAnd(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	key := newAccount(t, bin, dsn)
	srv := startDevChild(t, bin, dsn, "--devices", "teltonika=127.0.0.1:0,osmand=127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	teltonikaAddr := srv.deviceAddr(t, "teltonika", "tcp")
	is.Equal(srv.deviceAddr(t, "teltonika", "udp"), teltonikaAddr) // the datagram form on the same port
	osmandBase := srv.deviceAddr(t, "osmand", "http")
	metrics := srv.line(t, regexp.MustCompile(`^metrics on (http://\S+)`))
	client := &http.Client{Timeout: 30 * time.Second}

	truck, tracker := vehicleWithDevice(t, client, srv.base, key, "Truck 7", "356307042441013")
	van, phone := vehicleWithDevice(t, client, srv.base, key, "Van 2", "phone-7")

	// A Teltonika tracker: its handshake is answered 01, its frame of one
	// record 00000001, both byte for byte.
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	tc, ans, err := dialTeltonika(teltonikaAddr, "356307042441013")
	is.NoErr(err)
	defer tc.c.Close()
	is.Equal(ans, []byte{0x01})
	ack, err := tc.report(devicetest.Point{Time: at, Latitude: 54.6872, Longitude: 25.2797, Speed: 42, Heading: 271, Altitude: 112, Satellites: 11, Valid: true})
	is.NoErr(err)
	is.Equal(ack, []byte{0x00, 0x00, 0x00, 0x01})

	// The phone app: a GET answered 200 with an empty body.
	res, err := client.Get(devicetest.OsmAndURL(osmandBase, "phone-7", devicetest.Point{Time: at, Latitude: 52.521, Longitude: 13.41, Speed: 20 * 1.852, Valid: true}))
	is.NoErr(err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	is.Equal(len(b), 0)

	// Both are the vehicles' locations, and the devices' last reports
	// say so.
	for _, c := range []struct {
		veh, dev, protocol string
		lat, lon, speed    float64
	}{{truck, tracker, "teltonika", 54.6872, 25.2797, 42}, {van, phone, "osmand", 52.521, 13.41, 20 * 1.852}} {
		status, body, err := call(client, "GET", srv.base+"/v1/vehicles/"+c.veh+"/locations", key, nil)
		is.NoErr(err)
		is.Equal(status, 200)
		locs := body["data"].([]any)
		is.Equal(len(locs), 1)
		loc := locs[0].(map[string]any)
		is.Equal(loc["latitude"], c.lat)
		is.Equal(loc["longitude"], c.lon)
		is.Equal(loc["timestamp"], at.Format(time.RFC3339))
		is.True(loc["speed"].(float64)-c.speed < 0.01 && c.speed-loc["speed"].(float64) < 0.01)

		status, body, err = call(client, "GET", srv.base+"/v1/devices/"+c.dev, key, nil)
		is.NoErr(err)
		is.Equal(status, 200)
		d := body["data"].(map[string]any)
		is.Equal(d["protocol"], c.protocol)
		lr := d["last_report"].(map[string]any)
		is.Equal(lr["stored"], true)
		is.Equal(lr["reason"], nil)
		is.Equal(lr["position"].(map[string]any)["latitude"], c.lat)
	}

	// Unknown identifiers are refused the protocols' way: Teltonika 00
	// and the connection closed, OsmAnd 400.
	unk, ans, err := dialTeltonika(teltonikaAddr, "356307042441099")
	is.NoErr(err)
	defer unk.c.Close()
	is.Equal(ans, []byte{0x00})
	_, err = unk.rd.ReadByte()
	is.Equal(err, io.EOF) // closed by the server
	res, err = client.Get(devicetest.OsmAndURL(osmandBase, "stranger-1", devicetest.Point{Time: at, Latitude: 1, Longitude: 1, Valid: true}))
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 400)

	// ...and the operator sees them (the record is written beside the
	// refusal: wait for it).
	deadline := time.Now().Add(10 * time.Second)
	var unknown []map[string]any
	for {
		out, err := exec.Command(bin, "devices", "unknown", "--db", dsn, "--json").Output()
		is.NoErr(err)
		is.NoErr(json.Unmarshal(out, &unknown))
		if len(unknown) == 2 || time.Now().After(deadline) {
			break
		}
	}
	is.Equal(len(unknown), 2)
	byIdent := map[string]string{}
	for _, u := range unknown {
		byIdent[u["identifier"].(string)] = u["protocol"].(string)
		is.Equal(u["address"], "127.0.0.1")
	}
	is.Equal(byIdent, map[string]string{"356307042441099": "teltonika", "stranger-1": "osmand"})

	// The device edge's figures are in /metrics.
	res, err = client.Get(metrics)
	is.NoErr(err)
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	m := string(b)
	for _, want := range []string{
		"fleet_device_acks_total 2",
		`fleet_device_connections_accepted_total{protocol="teltonika"} 2`,
		`fleet_device_connections_accepted_total{protocol="osmand"} `,
		`fleet_device_refusals_total{reason="unknown"} 2`,
		`fleet_device_refusals_total{reason="garbage"} 0`,
		"fleet_device_frames_total ",
		"fleet_device_connections ",
		"fleet_device_reports_total 2",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(m, "fleet_device"))
		}
	}

	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A --devices list the server cannot read is a usage error (exit 2) that
// names the entry, and nothing starts.
func TestServeDevicesRefusesABadList(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	for _, c := range []struct{ list, want string }{
		{"traccar=127.0.0.1:5027", `unknown protocol "traccar"`},
		{"teltonika=127.0.0.1:70000", `the port "70000" is not a number from 0 to 65535`},
		{"teltonika=127.0.0.1:5027,gt06=127.0.0.1:5027", "port 5027 is already taken"},
		{"teltonika", "want protocol=host:port, or all"},
		{"osmand=0.0.0.0:1,osmand=0.0.0.0:2", "osmand is already served"},
	} {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", "memory:", "--devices", c.list)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		is.True(errors.As(err, &ee))
		is.Equal(ee.ExitCode(), 2)
		if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "--devices") {
			t.Errorf("--devices %s: want %q in:\n%s", c.list, c.want, out)
		}
		is.True(!strings.Contains(string(out), "listening")) // nothing started
	}
}

// Shape of the device crash tests: devices Teltonika trackers, each on
// its own connection, sending one-record frames, the server signalled
// once signalAfter of them are acknowledged.
const (
	crashDevices = 100
	signalAfter  = 500
	maxRecords   = 1000 // a device's records in one run
)

// TestSIGKILLKeepsAcknowledgedDeviceReports: kill -9 while 100 Teltonika
// devices send over real TCP; started again on the same file, the server
// has every record a device saw acknowledged.
func TestSIGKILLKeepsAcknowledgedDeviceReports(t *testing.T) {
	checkDevicesThroughSignal(t, syscall.SIGKILL)
}

// TestSIGTERMWithDevicesLosesNothing: SIGTERM while 100 devices send —
// the reports being stored are acknowledged, the process exits 0, and
// every acknowledged record is stored.
func TestSIGTERMWithDevicesLosesNothing(t *testing.T) {
	checkDevicesThroughSignal(t, syscall.SIGTERM)
}

func checkDevicesThroughSignal(t *testing.T, sig syscall.Signal) {
	is := is.New(t)
	bin := serverBinary(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	key := newAccount(t, bin, dsn)
	srv := startDevChild(t, bin, dsn, "--devices", "teltonika=127.0.0.1:0")
	addr := srv.deviceAddr(t, "teltonika", "tcp")
	client := &http.Client{Timeout: 30 * time.Second}

	// Record k of device d is at base + k seconds: a stored point names
	// its record.
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	vehicles := make([]string, crashDevices)
	imeis := make([]string, crashDevices)
	for d := range crashDevices {
		imeis[d] = fmt.Sprintf("35630704%07d", d)
		vehicles[d], _ = vehicleWithDevice(t, client, srv.base, key, fmt.Sprintf("Truck %d", d), imeis[d])
	}

	var (
		acked    [crashDevices][]int
		total    atomic.Int64
		inFlight atomic.Int64
		atSignal atomic.Int64
		signaled atomic.Bool
		once     sync.Once
		wg       sync.WaitGroup
	)
	signal := func() {
		once.Do(func() {
			atSignal.Store(inFlight.Load())
			signaled.Store(true)
			srv.cmd.Process.Signal(sig)
		})
	}
	for d := range crashDevices {
		wg.Go(func() {
			tc, ans, err := dialTeltonika(addr, imeis[d])
			if err != nil || ans[0] != 0x01 {
				if !signaled.Load() {
					t.Errorf("device %d: handshake %v %v", d, ans, err)
				}
				return
			}
			defer tc.c.Close()
			for k := range maxRecords {
				inFlight.Add(1)
				ack, err := tc.report(devicetest.Point{Time: base.Add(time.Duration(k) * time.Second),
					Latitude: 52 + float64(d)/1000, Longitude: 13 + float64(k)/10000, Speed: 30, Satellites: 9, Valid: true})
				inFlight.Add(-1)
				if err != nil {
					if !signaled.Load() {
						t.Errorf("device %d record %d: %v (% x)", d, k, err, ack)
					}
					return // the server is gone, or going
				}
				acked[d] = append(acked[d], k)
				if total.Add(1) == signalAfter {
					signal()
				}
			}
		})
	}
	wg.Wait()
	signal()
	stoppedBy(t, sig, srv.wait(t), srv.stderr)
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%v after %d acknowledged reports, with %d in flight", sig, total.Load(), atSignal.Load())
	is.True(total.Load() >= signalAfter)
	is.True(atSignal.Load() > 0) // reports were in flight

	// Started again on the same file, every acknowledged record is stored.
	srv = startDevChild(t, bin, dsn)
	stored := 0
	for d, veh := range vehicles {
		have := history(t, client, srv.base, key, veh, base, base.Add(maxRecords*time.Second))
		stored += len(have)
		for _, k := range acked[d] {
			if !have[int64(k)*1000] {
				t.Errorf("device %d record %d was acknowledged, but is not stored", d, k)
			}
		}
	}
	t.Logf("%d records stored, %d acknowledged", stored, total.Load())
	is.True(stored >= int(total.Load()))
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
}

// --demo and --devices together: the demo account, and an OsmAnd
// listener that its devices reach; FLEET_DEVICES stands in for the flag.
func TestServeDemoWithDevices(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_DEVICES": "osmand=127.0.0.1:0"}, "--demo")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	osmandBase := s.stdout.waitFor(t, regexp.MustCompile(`^devices: osmand on (http://\S+)$`))
	client := &http.Client{Timeout: 30 * time.Second}
	status, body, err := call(client, "GET", s.base+"/v1/vehicles?limit=1", key, nil)
	is.NoErr(err)
	is.Equal(status, 200)
	veh := body["data"].([]any)[0].(map[string]any)["vehicle_id"].(string)
	status, _, err = call(client, "POST", s.base+"/v1/devices", key, map[string]any{"identifier": "my-phone", "vehicle_id": veh})
	is.NoErr(err)
	is.Equal(status, 201)
	res, err := client.Get(osmandBase + "/?id=my-phone&lat=52.521&lon=13.41&speed=20")
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 200)
	status, body, err = call(client, "GET", s.base+"/v1/devices?identifier=my-phone", key, nil)
	is.NoErr(err)
	is.Equal(status, 200)
	lr := body["data"].([]any)[0].(map[string]any)["last_report"].(map[string]any)
	is.Equal(lr["stored"], true)
	is.NoErr(s.stop())
}

// The protocol table of docs/devices.md names each protocol's port and
// transports as fleetdevice's table of protocols (what --devices all
// serves) has them.
func TestConventionalPortsAreDocumented(t *testing.T) {
	is := is.New(t)
	doc, err := os.ReadFile("../../docs/devices.md")
	is.NoErr(err)
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9]+)` \\| (\\d+) \\| ([^|]+) \\|")
	rows := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if rows[m[1]] == nil { // the first table is the one of ports
			rows[m[1]] = m[2:]
		}
	}
	ps := fleetdevice.Protocols()
	is.Equal(len(rows), len(ps)) // a row a protocol
	for _, p := range ps {
		r := rows[p.Name]
		if r == nil {
			t.Errorf("docs/devices.md has no row for %s", p.Name)
			continue
		}
		is.Equal(r[0], strconv.Itoa(p.Port)) // the documented port
		for _, tr := range []fleetdevice.Transport{fleetdevice.TCP, fleetdevice.UDP, fleetdevice.HTTP} {
			word := strings.ToUpper(tr.String())
			if strings.Contains(r[1], word) != p.Serves(tr) {
				t.Errorf("docs/devices.md: %s's transports %q, served over %s: %v", p.Name, r[1], word, p.Serves(tr))
			}
		}
	}
}
