package fleethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// countingReceiver counts requests per webhook-id (the event id) and fails
// the first failFirst of each event's.
type countingReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newCountingReceiver(t *testing.T, failFirst int) *countingReceiver {
	t.Helper()
	r := &countingReceiver{hits: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.hits[req.Header.Get("webhook-id")]++
		n := r.hits[req.Header.Get("webhook-id")]
		r.mu.Unlock()
		if n <= failFirst {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *countingReceiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.hits {
		out[k] = v
	}
	return out
}

// TestWebhookDeliveryOutlivesRestarts: a receiver fails each event's first
// three attempts while the server is stopped and started again between
// attempts, once right after claiming deliveries it never sent: every
// event is delivered, none lost, and each attempt is in the log.
func TestWebhookDeliveryOutlivesRestarts(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	clock := testclock.New(T0)
	rcv := newCountingReceiver(t, 3)
	start := func() (*env, func()) {
		s, err := sqlstore.Open(context.Background(), dsn)
		is.NoErr(err)
		e := newEnvOn(t, s, clock)
		return e, func() { e.srv.Close(); is.NoErr(s.Close()) }
	}

	e, stop := start()
	_, key := e.account(fleet.PlanPro)
	id, _ := e.register(key, rcv.srv.URL, "vehicle.created")
	for i := range 5 {
		e.vehicle(key, fmt.Sprintf("Van %d", i))
	}
	// A server claims the deliveries and dies before sending them.
	jobs, _, err := e.svc.Jobs().ClaimDeliveries(context.Background(), 2*time.Minute, fleet.DeliveryClaim{Limit: 100})
	is.NoErr(err)
	is.Equal(len(jobs), 5)
	stop()

	for round := 0; round < 8; round++ {
		e, stop = start()
		drain(t, e.sender())
		stop()
		clock.Advance(31 * time.Minute) // past the lease, and past each retry of the first four
	}

	counts := rcv.counts()
	is.Equal(len(counts), 5)
	for evt, n := range counts {
		is.Equal(n, 4) // three failures, then success; nothing sent twice
		_ = evt
	}
	e, stop = start()
	defer stop()
	log := e.deliveries(key, id)
	is.Equal(len(log), 20) // every attempt is kept
	perEvent := map[string][]map[string]any{}
	for _, d := range log {
		perEvent[d["event_id"].(string)] = append(perEvent[d["event_id"].(string)], d)
	}
	for evt, ds := range perEvent {
		is.Equal(counts[evt], 4)
		for i, d := range ds {
			is.Equal(d["attempt"], float64(i+1))
			if i < 3 {
				is.Equal(d["status"], "failed")
				is.Equal(d["response_status"], 500.0)
			} else {
				is.Equal(d["status"], "succeeded")
			}
		}
	}
}

// TestPostgresTwoSendersNeverSendAnAttemptTwice: two senders, each with its
// own store, drain the same due deliveries of one database at once; each is
// sent exactly once.
func TestPostgresTwoSendersNeverSendAnAttemptTwice(t *testing.T) {
	is := is.New(t)
	one, two, _ := postgresServers(t)
	rcv := newCountingReceiver(t, 0)
	acc, key := one.account(fleet.PlanEnterprise)
	one.register(key, rcv.srv.URL)
	const n = 300
	for i := range n {
		_, err := one.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(acc), fleet.Vehicle{Name: fmt.Sprintf("Van %d", i)})
		is.NoErr(err)
	}
	senders := []*fleethttp.Sender{
		fleethttp.NewSender(one.svc, fleethttp.SenderOptions{Insecure: true, Batch: 7, Workers: 4, EndpointRate: 1e6, EndpointBurst: 1e6}),
		fleethttp.NewSender(two.svc, fleethttp.SenderOptions{Insecure: true, Batch: 7, Workers: 4, EndpointRate: 1e6, EndpointBurst: 1e6}),
	}
	var wg sync.WaitGroup
	sent := make([]int, 2)
	for i, s := range senders {
		wg.Go(func() { sent[i] = drain(t, s) })
	}
	wg.Wait()
	sent[0] += drain(t, senders[0]) // whatever a sender left as it stopped
	is.Equal(sent[0]+sent[1], n)
	is.True(sent[0] > 0 && sent[1] > 0) // both took part
	counts := rcv.counts()
	is.Equal(len(counts), n)
	for evt, c := range counts {
		if c != 1 {
			t.Errorf("event %s sent %d times", evt, c)
		}
	}
}
