package fleetdevice

import (
	"context"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/matryer/is"
)

// inUse is the live heap and the goroutine stacks after a full
// collection.
func inUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// floorServer is the least a server with a goroutine per connection
// holds: the connection and a goroutine blocked reading one byte. It
// echoes each byte, so that a client knows its connection is served.
func floorServer(tb testing.TB) (addr string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	conns := make(chan net.Conn, 1<<14)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			go func() {
				var b [1]byte
				for {
					if _, err := c.Read(b[:]); err != nil {
						return
					}
					if _, err := c.Write(b[:]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), func() {
		ln.Close()
		<-done
		close(conns)
		for c := range conns {
			c.Close()
		}
	}
}

// idleMemory opens n connections to a floor server, then n device
// connections to a Server that each logged in and reported once, then
// went quiet, and returns what each costs the process (heap and stacks,
// both ends of the loopback connection included: the clients are raw TCP
// connections that hold no buffer). The Server's connections are closed
// and the Server shut down before it returns.
func idleMemory(tb testing.TB, n int) (device, floor float64) {
	ing := newFakeIngest("dev1")
	ing.discard = true
	r := newRig(tb, ing, Options{MaxConnsPerAddr: n}, lineProto{})
	faddr, stop := floorServer(tb)
	defer stop()
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	pos := sentence("", [3]float64{48.1, 11.5, 1777636800})

	before := inUse()
	for range n {
		c, err := net.Dial("tcp", faddr)
		if err != nil {
			tb.Fatal(err)
		}
		clients = append(clients, c)
		var b [1]byte
		if _, err := c.Write([]byte{'x'}); err != nil {
			tb.Fatal(err)
		}
		if _, err := io.ReadFull(c, b[:]); err != nil {
			tb.Fatal(err)
		}
	}
	floored := inUse()
	for range n {
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			tb.Fatal(err)
		}
		clients = append(clients, c)
		send(tb, c, "LOGIN,dev1\n")
		if got := readLine(tb, c); got != "OK\n" {
			tb.Fatalf("login: %q", got)
		}
		send(tb, c, pos)
		if got := readLine(tb, c); got != "ACK,1\n" {
			tb.Fatalf("report: %q", got)
		}
	}
	devices := inUse()
	if open := r.s.Stats().Open; open != n {
		tb.Fatalf("%d connections open, want %d", open, n)
	}
	for _, c := range clients {
		c.Close()
	}
	clients = nil
	if err := r.s.Shutdown(context.Background()); err != nil {
		tb.Fatal(err)
	}
	device = float64(devices-min(devices, floored)) / float64(n)
	floor = float64(floored-min(floored, before)) / float64(n)
	return device, floor
}

// An idle device connection that logged in and reported costs the server
// at most 16 KiB: it holds no read buffer beyond its small one, and no
// message, while idle.
func TestIdleDeviceConnectionsAreSmall(t *testing.T) {
	is := is.New(t)
	device, floor := idleMemory(t, 300)
	t.Logf("%.0f bytes per idle device connection, %.0f per idle connection of the floor server (%.2f×)", device, floor, device/floor)
	is.True(device <= 16<<10) // an idle device connection costs at most 16 KiB
}

// BenchmarkIdleDeviceConnMemory measures what an idle device connection
// (logged in, one report stored and acknowledged, then quiet) costs the
// process over loopback TCP — heap and goroutine stacks, both ends of the
// connection included — against the floor of a goroutine-per-connection
// server (a goroutine blocked reading one byte), measured in the same
// run. Each iteration opens 1,000 of each.
func BenchmarkIdleDeviceConnMemory(b *testing.B) {
	const n = 1000
	var devSum, floorSum float64
	for b.Loop() {
		d, f := idleMemory(b, n)
		devSum += d
		floorSum += f
	}
	iters := float64(b.N)
	b.ReportMetric(devSum/iters, "B/device-conn")
	b.ReportMetric(floorSum/iters, "B/floor-conn")
	b.ReportMetric(devSum/floorSum, "device/floor")
}
