package fleethttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
)

// BenchmarkIdleStreamMemory measures what an idle live stream costs the
// process over loopback TCP — heap and goroutine stacks, the connection
// included — against an idle keep-alive connection that has made one
// request, measured in the same run. Each iteration opens 100 of each
// with raw TCP clients (which hold no buffers of their own), measures after
// a full collection, and closes them all.
func BenchmarkIdleStreamMemory(b *testing.B) {
	const n = 100
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	h := fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler)))
	srv := httptest.NewUnstartedServer(h)
	var open atomic.Int64
	closed := make(chan struct{}, 1)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	a, nk, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	keys := []string{nk.Secret}
	for len(keys)*fleet.PlanEnterprise.Limits().StreamsPerKey < n {
		k, err := svc.Operator().CreateKey(context.Background(), a.ID, fleet.KeyParams{Name: "viewer"})
		if err != nil {
			b.Fatal(err)
		}
		keys = append(keys, k.Secret)
	}
	// dial sends a request and reads until the end of the answer's
	// headers and first line of body, keeping the connection open.
	dial := func(req string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(c, req); err != nil {
			b.Fatal(err)
		}
		rd := bufio.NewReaderSize(c, 16)
		res, err := http.ReadResponse(rd, nil)
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("%v %v", res, err)
		}
		if _, err := rd.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		c.SetDeadline(time.Time{})
		return c
	}
	inUse := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}
	var idleSum, streamSum float64
	for b.Loop() {
		var conns []net.Conn
		before := inUse()
		for range n {
			conns = append(conns, dial("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
		}
		idle := inUse()
		for i := range n {
			key := keys[i/fleet.PlanEnterprise.Limits().StreamsPerKey]
			conns = append(conns, dial(fmt.Sprintf("GET /v1/vehicles/locations/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", key)))
		}
		streams := inUse()
		idleSum += float64(idle-min(idle, before)) / n
		streamSum += float64(streams-min(streams, idle)) / n
		for _, c := range conns {
			c.Close()
		}
		for open.Load() > 0 { // the server closes its side
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				b.Fatal("the server kept connections open")
			}
		}
	}
	iters := float64(b.N)
	b.ReportMetric(streamSum/iters, "B/stream")
	b.ReportMetric(idleSum/iters, "B/idle-conn")
	b.ReportMetric(streamSum/idleSum, "stream/idle-conn")
}
