package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/prometheus/client_golang/prometheus"
)

// deviceListeners is the device edge of `serve --devices`: one
// fleetdevice.Server over the service's device edge, on the listeners of
// the endpoints --devices names.
type deviceListeners struct {
	srv *fleetdevice.Server
	// accepted counts the connections each stream (and OsmAnd) listener
	// accepted, by protocol, in the order of the endpoints.
	protocols []string
	accepted  []*atomic.Int64
	// errc receives the error of a listener that stopped for another
	// reason than the server's shutdown.
	errc chan error
	// web is what the dashboard's device pages show: each protocol with
	// the port it is bound to.
	web []fleetweb.DeviceListener
}

// listenDevices binds every endpoint's listeners (TCP or OsmAnd's HTTP,
// and UDP on the same port where the protocol has it), prints each one's
// address on out, and serves them with srv. When a bind fails, the ones
// bound before are closed and nothing is served.
func listenDevices(srv *fleetdevice.Server, eps []fleetdevice.Endpoint, out io.Writer, log *slog.Logger) (*deviceListeners, error) {
	d := &deviceListeners{srv: srv, errc: make(chan error, 2*len(eps))}
	type bound struct {
		ep fleetdevice.Endpoint
		ln net.Listener
		pc net.PacketConn
	}
	var all []bound
	fail := func(err error) (*deviceListeners, error) {
		for _, b := range all {
			b.ln.Close()
			if b.pc != nil {
				b.pc.Close()
			}
		}
		return nil, err
	}
	for _, ep := range eps {
		ln, pc, err := bindEndpoint(ep)
		if err != nil {
			return fail(fmt.Errorf("--devices: %s on %s: %w", ep.Protocol, ep.Addr, err))
		}
		all = append(all, bound{ep, ln, pc})
	}
	for _, b := range all {
		n := new(atomic.Int64)
		d.protocols = append(d.protocols, b.ep.Protocol)
		d.accepted = append(d.accepted, n)
		ln := &countingListener{Listener: b.ln, n: n}
		serve := func(name string, f func() error) {
			go func() {
				if err := f(); err != nil && !errors.Is(err, fleetdevice.ErrServerClosed) {
					log.Error("device listener stopped", "protocol", b.ep.Protocol, "listener", name, "err", err)
					d.errc <- fmt.Errorf("device listener %s (%s) stopped: %w", b.ep.Protocol, name, err)
				}
			}()
		}
		wl := fleetweb.DeviceListener{Protocol: b.ep.Protocol, Port: b.ln.Addr().(*net.TCPAddr).Port}
		if b.ep.Decoder() != nil {
			wl.Transports = []string{"tcp"}
			if b.pc != nil {
				wl.Transports = append(wl.Transports, "udp")
			}
		} else {
			wl.Transports = []string{"http"}
		}
		d.web = append(d.web, wl)
		if p := b.ep.Decoder(); p != nil {
			fmt.Fprintf(out, "devices: %s on tcp %s\n", p.Name(), b.ln.Addr())
			serve("tcp", func() error { return srv.ServeTCP(ln, p) })
			if b.pc != nil {
				fmt.Fprintf(out, "devices: %s on udp %s\n", p.Name(), b.pc.LocalAddr())
				serve("udp", func() error { return srv.ServeUDP(b.pc, p) })
			}
		} else {
			fmt.Fprintf(out, "devices: %s on http://%s\n", b.ep.Protocol, b.ln.Addr())
			serve("http", func() error { return srv.ServeOsmAnd(ln) })
		}
	}
	return d, nil
}

// bindEndpoint listens on ep's TCP address, and on UDP on the same port
// when ep.UDP. With port 0 the UDP socket takes the port the system gave
// the TCP one; should that port be taken on UDP, another pair is tried.
func bindEndpoint(ep fleetdevice.Endpoint) (net.Listener, net.PacketConn, error) {
	_, port, _ := net.SplitHostPort(ep.Addr)
	tries := 1
	if port == "0" && ep.UDP {
		tries = 10
	}
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", ep.Addr)
		if err != nil || !ep.UDP {
			return ln, nil, err
		}
		host, _, _ := net.SplitHostPort(ep.Addr)
		got := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(got)))
		if err == nil {
			return ln, pc, nil
		}
		ln.Close()
		if i+1 >= tries {
			return nil, nil, err
		}
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

var (
	descDevConns    = desc("fleet_device_connections", "Device connections open now (TCP and OsmAnd's HTTP).")
	descDevAccepted = desc("fleet_device_connections_accepted_total", "Device connections accepted, by protocol (those then refused over a cap included).", "protocol")
	descDevRefused  = desc("fleet_device_connections_refused_total", "Device connections closed at once: over the cap of open connections, in all or from one address, every one within it logged in.")
	descDevEvicted  = desc("fleet_device_connections_evicted_total", "Device connections not yet logged in closed to make room for a new one (the cap, or its share for connections not logged in, was full).")
	descDevFrames   = desc("fleet_device_frames_total", "Device frames and datagrams decoded.")
	descDevAcked    = desc("fleet_device_acks_total", "Device reports acknowledged, after what they carried was stored.")
	descDevRefusals = desc("fleet_device_refusals_total", "Device logins, reports, frames and datagrams refused, by reason: unknown (identifier not registered), braked (an unknown identifier from an address with too many of them, refused without being recorded), garbage (bytes no frame of the protocol: connection closed), checksum (frame ignored), allowance (the account's points allowance), store (the store could not take the report in time), udp_busy (datagram dropped, too many in flight).", "reason")
	descDevTimeouts = desc("fleet_device_timeouts_total", "Device connections closed for their idle, frame or login deadline.")
	descDevPanics   = desc("fleet_device_panics_total", "Device frames whose handling panicked (the connection was closed; the log says where).")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// deviceCollector reads the device server's Stats for /metrics.
type deviceCollector struct{ d *deviceListeners }

func (c deviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDevConns, descDevAccepted, descDevRefused, descDevEvicted, descDevFrames, descDevAcked,
		descDevRefusals, descDevTimeouts, descDevPanics} {
		ch <- d
	}
}

func (c deviceCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.d.srv.Stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	ch <- prometheus.MustNewConstMetric(descDevConns, prometheus.GaugeValue, float64(st.Open))
	byProtocol := map[string]int64{}
	for i, p := range c.d.protocols {
		byProtocol[p] += c.d.accepted[i].Load()
	}
	for p, n := range byProtocol {
		counter(descDevAccepted, n, p)
	}
	counter(descDevRefused, st.Refused)
	counter(descDevEvicted, st.Evicted)
	counter(descDevFrames, st.Frames)
	counter(descDevAcked, st.Acked)
	for _, r := range []struct {
		reason string
		n      int64
	}{{"unknown", st.Unknown}, {"braked", st.Braked}, {"garbage", st.Garbage}, {"checksum", st.Checksum},
		{"allowance", st.Limited}, {"store", st.Failed}, {"udp_busy", st.Dropped}} {
		counter(descDevRefusals, r.n, r.reason)
	}
	counter(descDevTimeouts, st.Timeouts)
	counter(descDevPanics, st.Panics)
}
