package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
)

// `fleetserver load --protocol NAME`: the simulated devices speak a
// device protocol to the server's device listeners instead of the JSON
// API, one connection each, and the latency measured is the
// acknowledgement's.

// loadProtocols are the values of --protocol: api (the JSON API), then the
// device protocols.
func loadProtocols() []string {
	return append([]string{"api"}, fleetdevice.ProtocolNames()...)
}

// devicePort is a protocol's conventional port.
func devicePort(protocol string) int {
	p, _ := fleetdevice.ProtocolNamed(protocol)
	return p.Port
}

// loadIdentifier is the identifier of simulated device i of protocol: 15
// digits (an IMEI's length; H02's terminal id, 10) starting with 9 and the
// protocol's place, so that the devices of two protocols never share one;
// OsmAnd's is a name.
func loadIdentifier(protocol string, i int) string {
	switch protocol {
	case fleetdevice.OsmAndName:
		return "load-osmand-" + strconv.Itoa(i)
	case "h02":
		return fmt.Sprintf("98%08d", i)
	}
	digit := 0
	for k, name := range fleetdevice.ProtocolNames() {
		if name == protocol {
			digit = k
		}
	}
	return fmt.Sprintf("9%d%013d", digit, i)
}

// loadDevices registers a device of o.protocol for each vehicle of ids
// (identifiers by loadIdentifier), reusing those the account has and
// moving them to their vehicle when they ride in another.
func loadDevices(ctx context.Context, o loadOptions, hc *http.Client, ids []string, progress io.Writer) ([]string, error) {
	client := fleetclient.NewClient(o.url, o.key, fleetclient.WithHTTPClient(hc))
	have := map[string]fleet.Device{}
	for d, err := range client.Devices(ctx, fleet.DeviceFilter{}) {
		if err != nil {
			return nil, fmt.Errorf("list devices: %w", err)
		}
		have[d.Identifier] = d
	}
	idents := make([]string, len(ids))
	var todo []int
	for i := range ids {
		idents[i] = loadIdentifier(o.protocol, i)
		if d, ok := have[idents[i]]; !ok || d.VehicleID != ids[i] {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		fmt.Fprintf(progress, "registering %d %s devices\n", len(todo), o.protocol)
	}
	err := inParallel(todo, func(i int) error {
		var err error
		if d, ok := have[idents[i]]; ok {
			_, err = client.UpdateDevice(ctx, d.ID, fleet.DevicePatch{VehicleID: fleet.Some(ids[i])})
		} else {
			_, err = client.CreateDevice(ctx, fleet.Device{Identifier: idents[i], VehicleID: ids[i], Name: "load-" + strconv.Itoa(i)})
		}
		if err != nil {
			return fmt.Errorf("register device %s: %w", idents[i], err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idents, nil
}

// simDevice is the simulated device of protocol named ident.
func simDevice(protocol, ident string) devicetest.Device {
	switch protocol {
	case "teltonika":
		return &devicetest.Teltonika{IMEI: ident}
	case "gt06":
		return &devicetest.GT06{IMEI: ident}
	case "h02":
		return &devicetest.H02{ID: ident}
	case "queclink":
		return &devicetest.Queclink{IMEI: ident}
	case "gps103":
		return &devicetest.GPS103{IMEI: ident}
	}
	return nil
}

// loadPoints are the o.batch points of a report due now.
func loadPoints(o loadOptions, now time.Time, lat *float64, lon float64) []devicetest.Point {
	pts := make([]devicetest.Point, o.batch)
	for k := range pts {
		*lat += 0.0001
		pts[k] = devicetest.Point{Time: now.Add(-o.interval * time.Duration(o.batch-1-k) / time.Duration(o.batch)),
			Latitude: *lat, Longitude: lon, Speed: float64(30 + k%20), Heading: 90, Satellites: 9, Valid: true}
	}
	return pts
}

// streamDevice plays one tracker of o.protocol named ident: it connects to
// o.deviceAddr (and logs in where the protocol has a login), then sends a
// report every o.interval from first on, each waiting for its
// acknowledgement — or, for a protocol whose simulated device expects no
// acknowledgement (H02, Queclink, GPS103), for the answer to a heartbeat
// sent right after it,
// which the server writes only once it has stored the report (it handles
// a connection's frames one after the other). A connection that fails is
// made again at the next report. It returns the points acknowledged.
func streamDevice(ctx context.Context, o loadOptions, ident string, first time.Time, s *series) int {
	dev := simDevice(o.protocol, ident)
	var (
		conn   net.Conn
		rd     *bufio.Reader
		stopAF func() bool
	)
	hangUp := func() {
		if conn != nil {
			stopAF()
			conn.Close()
			conn = nil
		}
	}
	defer hangUp()
	points := 0
	lat, lon := 48.85+float64(len(ident)%7)/100, 2.35
	for due := first; ; due = due.Add(o.interval) {
		if !sleepUntil(ctx, due) {
			return points
		}
		if time.Since(due) > o.interval {
			s.add("missed", 0, false)
			continue
		}
		if conn == nil {
			c, err := (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "tcp", o.deviceAddr)
			if err != nil {
				if ctx.Err() != nil {
					return points
				}
				s.add("dial_error", 0, false)
				continue
			}
			conn, rd = c, bufio.NewReaderSize(c, 512)
			stopAF = context.AfterFunc(ctx, func() { c.Close() }) // ends a wait at the run's end
			if hello, want := dev.Hello(); hello != nil {
				conn.SetDeadline(time.Now().Add(30 * time.Second))
				_, err := conn.Write(hello)
				if err == nil {
					_, err = devicetest.Read(rd, want)
				}
				if err != nil {
					hangUp()
					if ctx.Err() != nil {
						return points
					}
					s.add("refused", 0, false) // the login was not answered as a known device's
					continue
				}
			}
		}
		frame, want := dev.Report(loadPoints(o, time.Now().UTC(), &lat, lon))
		if want == nil {
			hb, hbWant := dev.Heartbeat()
			frame, want = append(frame, hb...), after(hbWant)
		}
		conn.SetDeadline(time.Now().Add(max(30*time.Second, o.interval)))
		_, err := conn.Write(frame)
		if err == nil {
			_, err = devicetest.Read(rd, want)
		}
		if err != nil {
			hangUp()
			if ctx.Err() != nil {
				return points // cut by the end of the run: not counted
			}
			status := "error"
			if errors.Is(err, io.EOF) {
				status = "closed" // by the server: an unknown device, or a report it could not store
			}
			s.add(status, 0, false)
			continue
		}
		s.add("acked", time.Since(due), true)
		points += o.batch
	}
}

// after expects whatever comes (H02's answer to a V1 report, with the
// server's time) up to an answer that want recognises, within 4 KiB.
func after(want devicetest.Expect) devicetest.Expect {
	return func(b []byte) (int, error) {
		for i := range b {
			if n, err := want(b[i:]); err == nil && n == len(b)-i {
				return len(b), nil
			}
		}
		if len(b) > 4<<10 {
			return 0, devicetest.ErrUnexpected
		}
		return 0, nil
	}
}

// osmandDevice plays one phone app named ident: a GET of one position
// every o.interval from first on to http://o.deviceAddr/, answered 200
// once stored.
func osmandDevice(ctx context.Context, o loadOptions, hc *http.Client, ident string, first time.Time, s *series) int {
	points := 0
	base := "http://" + o.deviceAddr
	lat, lon := 48.85+float64(len(ident)%7)/100, 2.35
	for due := first; ; due = due.Add(o.interval) {
		if !sleepUntil(ctx, due) {
			return points
		}
		if time.Since(due) > o.interval {
			s.add("missed", 0, false)
			continue
		}
		p := loadPoints(o, time.Now().UTC(), &lat, lon)[0]
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, devicetest.OsmAndURL(base, ident, p), nil)
		if err != nil {
			s.add("error", 0, false)
			return points
		}
		status, ok := send(hc, req)
		if ctx.Err() != nil && !ok {
			return points
		}
		s.add(status, time.Since(due), ok)
		if ok {
			points++
		}
	}
}

// deviceAddrFor is --device-addr, or the host of --url with protocol's
// conventional port.
func deviceAddrFor(o loadOptions) (string, error) {
	if o.deviceAddr != "" {
		if _, _, err := net.SplitHostPort(o.deviceAddr); err != nil {
			return "", fmt.Errorf("--device-addr must be host:port, not %q", o.deviceAddr)
		}
		return o.deviceAddr, nil
	}
	u, err := url.Parse(o.url)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("--url %q names no host to derive --device-addr from", o.url)
	}
	return net.JoinHostPort(u.Hostname(), strconv.Itoa(devicePort(o.protocol))), nil
}
