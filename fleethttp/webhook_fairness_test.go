package fleethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// gate is a receiver that holds every request until it is opened (or the
// client gives up): a tarpit while it stays shut. It counts the requests
// it holds per endpoint (the path) and per account (the path's first
// segment), and the most it ever held at once. A request leaves the count
// before its answer is written, so a client never sees an answer before
// the count went down.
type gate struct {
	srv  *httptest.Server
	open chan struct{}

	mu                  sync.Mutex
	changed             chan struct{} // closed and replaced on every change
	byEndpoint, byAcc   map[string]int
	maxEndpoint, maxAcc int
	arrived, answered   int
}

func newGate(t *testing.T) *gate {
	t.Helper()
	g := &gate{open: make(chan struct{}), changed: make(chan struct{}), byEndpoint: map[string]int{}, byAcc: map[string]int{}}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		ep := r.URL.Path
		acc, _, _ := strings.Cut(strings.TrimPrefix(ep, "/"), "/")
		g.change(func() {
			g.byEndpoint[ep]++
			g.byAcc[acc]++
			g.maxEndpoint = max(g.maxEndpoint, g.byEndpoint[ep])
			g.maxAcc = max(g.maxAcc, g.byAcc[acc])
			g.arrived++
		})
		select {
		case <-g.open:
		case <-r.Context().Done():
		}
		g.change(func() {
			g.byEndpoint[ep]--
			g.byAcc[acc]--
			g.answered++
		})
	}))
	t.Cleanup(g.srv.Close)
	t.Cleanup(g.release) // before Close, which waits for the handlers
	return g
}

func (g *gate) change(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
	close(g.changed)
	g.changed = make(chan struct{})
}

// release opens the gate: held requests are answered 200, and so is every
// later one at once.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// wait waits until cond holds, at most within.
func (g *gate) wait(t *testing.T, within time.Duration, what string, cond func(g *gate) bool) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		g.mu.Lock()
		ok, ch := cond(g), g.changed
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			g.mu.Lock()
			defer g.mu.Unlock()
			t.Fatalf("%s: not within %s (held %v, %d arrived, %d answered)", what, within, g.byAcc, g.arrived, g.answered)
		}
	}
}

// run runs s until the test ends.
func run(t *testing.T, s *fleethttp.Sender) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-stopped })
}

// arrivals is a receiver that reports each request's webhook-id.
func arrivals(t *testing.T) (*httptest.Server, <-chan string) {
	t.Helper()
	ch := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case ch <- r.Header.Get("webhook-id"):
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

// testWithin sends a webhook.test to endpoint id and waits, at most within,
// for it to arrive on got.
func (e *env) testWithin(key, id string, got <-chan string, within time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	r := e.do("POST", "/v1/webhooks/"+id+"/test", key, nil)
	if r.status != http.StatusAccepted {
		e.t.Fatalf("test webhook: %d %s", r.status, r.body)
	}
	evt := r.data()["event"].(map[string]any)["event_id"].(string)
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		select {
		case id := <-got:
			if id == evt {
				return time.Since(start)
			}
		case <-deadline.C:
			e.t.Fatalf("the test delivery did not arrive within %s", within)
		}
	}
}

// TestWebhookTarpitDoesNotDelayOtherAccounts: one account's 100 endpoints
// on a receiver that never answers, their deliveries pending; another
// account's test delivery arrives within 5 seconds all the same.
func TestWebhookTarpitDoesNotDelayOtherAccounts(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, heavy := e.account(fleet.PlanEnterprise)
	_, light := e.account(fleet.PlanPro)
	tarpit := newGate(t)
	for i := range 100 {
		e.register(heavy, fmt.Sprintf("%s/heavy/%d", tarpit.srv.URL, i), "vehicle.created")
	}
	e.vehicle(heavy, "Van") // 100 deliveries
	rcv, got := arrivals(t)
	id, _ := e.register(light, rcv.URL+"/light", "webhook.test")

	run(t, fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true}))
	tarpit.wait(t, 10*time.Second, "the tarpit holds the heavy account's deliveries", func(g *gate) bool { return g.byAcc["heavy"] >= 16 })
	took := e.testWithin(light, id, got, 5*time.Second)
	t.Logf("the other account's test delivery arrived after %s", took)
	tarpit.mu.Lock()
	defer tarpit.mu.Unlock()
	is.Equal(tarpit.answered, 0) // the tarpit still holds everything it got
}

// TestWebhookInFlightCaps: a sender with 64 workers holds at most 16
// deliveries of one account (20 endpoints, 100 deliveries) and 2 of one
// endpoint (another account's 3 endpoints, 30 deliveries), as a receiver
// that holds requests counts them; a third account's delivery passes
// meanwhile, and the claim that took it took no more of the others'.
func TestWebhookInFlightCaps(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, wide := e.account(fleet.PlanEnterprise)
	_, narrow := e.account(fleet.PlanPro)
	_, light := e.account(fleet.PlanPro)
	g := newGate(t)
	for i := range 20 {
		e.register(wide, fmt.Sprintf("%s/wide/%d", g.srv.URL, i), "vehicle.created")
	}
	for i := range 3 {
		e.register(narrow, fmt.Sprintf("%s/narrow/%d", g.srv.URL, i), "vehicle.created")
	}
	for i := range 10 {
		if i < 5 {
			e.vehicle(wide, fmt.Sprintf("Van %d", i)) // 5 deliveries to each of 20 endpoints
		}
		e.vehicle(narrow, fmt.Sprintf("Van %d", i)) // 10 to each of 3
	}
	rcv, got := arrivals(t)
	id, _ := e.register(light, rcv.URL+"/light", "webhook.test")

	run(t, fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Workers: 64, PollEvery: 20 * time.Millisecond}))
	g.wait(t, 10*time.Second, "the caps reached", func(g *gate) bool { return g.byAcc["wide"] >= 16 && g.byAcc["narrow"] >= 6 })
	e.testWithin(light, id, got, 5*time.Second)
	g.mu.Lock()
	is.Equal(g.byAcc["wide"], 16)  // an account's cap, though 42 workers are free
	is.Equal(g.byAcc["narrow"], 6) // 2 on each of its 3 endpoints
	is.Equal(g.maxEndpoint, 2)     // never more on one endpoint
	is.Equal(g.maxAcc, 16)         // nor on one account
	is.Equal(g.answered, 0)        // nothing was answered yet
	g.mu.Unlock()

	g.release()
	g.wait(t, 10*time.Second, "every delivery answered", func(g *gate) bool { return g.answered == 130 })
	g.mu.Lock()
	defer g.mu.Unlock()
	is.Equal(g.maxEndpoint, 2)
	is.Equal(g.maxAcc, 16)
}

// TestWebhookHangingReceiverCostsItsTimeout: a receiver that never
// answers holds its delivery for the sender's timeout, then the attempt
// fails and is scheduled again.
func TestWebhookHangingReceiverCostsItsTimeout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	tarpit := newGate(t)
	id, _ := e.register(key, tarpit.srv.URL+"/acc/1", "vehicle.created")
	e.vehicle(key, "Van")
	s := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Timeout: 200 * time.Millisecond, Jitter: func() float64 { return 0 }})
	is.Equal(drain(t, s), 1)
	log := e.deliveries(key, id)
	is.Equal(len(log), 2)
	is.Equal(log[0]["status"], "failed")
	is.Equal(log[0]["response_status"], nil)
	is.Equal(log[0]["error"], "The endpoint did not answer within 200ms.")
	is.True(log[0]["duration_ms"].(float64) >= 200)
	is.Equal(log[1]["status"], "pending") // the next attempt
}
