package fleethttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"golang.org/x/time/rate"
)

// BenchmarkWebhookDelivery measures deliveries per second from the sender
// (claim, sign, POST, record) on memstore to a local receiver that answers
// 200 at once, against plain net/http client posts of the same bodies with
// as many goroutines (16), interleaved batch by batch (target ratio >=
// 0.5). The account has 8 endpoints, so that 16 deliveries may be in
// flight within the caps (2 per endpoint).
func BenchmarkWebhookDelivery(b *testing.B) { benchWebhookDelivery(b, memstore.New(), 1, 8, 16) }

// BenchmarkWebhookDeliveryOneEndpoint is the same with every delivery to
// one endpoint, which has at most 2 in flight.
func BenchmarkWebhookDeliveryOneEndpoint(b *testing.B) {
	benchWebhookDelivery(b, memstore.New(), 1, 1, 16)
}

// BenchmarkWebhookDeliveryManyAccounts is the same for 4 accounts of 8
// endpoints each, with the sender's default 64 workers against 64
// goroutines of plain posts.
func BenchmarkWebhookDeliveryManyAccounts(b *testing.B) {
	benchWebhookDelivery(b, memstore.New(), 4, 8, 64)
}

// BenchmarkWebhookDeliveryManyAccountsSQLite is that on the SQLite store.
func BenchmarkWebhookDeliveryManyAccountsSQLite(b *testing.B) {
	benchWebhookDelivery(b, openSQLiteBench(b), 4, 8, 64)
}

// BenchmarkWebhookDeliverySQLite is BenchmarkWebhookDelivery on the SQLite
// store, a file.
func BenchmarkWebhookDeliverySQLite(b *testing.B) {
	benchWebhookDelivery(b, openSQLiteBench(b), 1, 8, 16)
}

func openSQLiteBench(b *testing.B) fleet.Store {
	store, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return store
}

// benchWebhookDelivery sends batches of about 200 deliveries: in each of
// accounts accounts, 200/(accounts*endpoints) events, each to every one of
// the account's endpoints; the sender has workers workers, the plain posts
// as many goroutines.
func benchWebhookDelivery(b *testing.B, store fleet.Store, accounts, endpoints, workers int) {
	events := max(1, 200/(accounts*endpoints))
	batch := events * accounts * endpoints
	ctx := context.Background()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer rcv.Close()
	svc := fleet.NewService(store, fleet.Options{Logger: slog.New(slog.DiscardHandler), Webhooks: fleet.WebhookOptions{Insecure: true}})
	var accs []fleet.Account
	for i := range accounts {
		a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise})
		if err != nil {
			b.Fatal(err)
		}
		p, err := svc.Authenticate(ctx, nk.Secret)
		if err != nil {
			b.Fatal(err)
		}
		for k := range endpoints {
			if _, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: fmt.Sprintf("%s/hook/%d/%d", rcv.URL, i, k), Events: []string{"*"}, Enabled: true}); err != nil {
				b.Fatal(err)
			}
		}
		accs = append(accs, a)
	}
	// Every endpoint takes many deliveries a second here, so the pace is
	// lifted.
	sender := fleethttp.NewSender(svc, fleethttp.SenderOptions{Insecure: true, Workers: workers, Batch: batch,
		EndpointRate: rate.Inf, Logger: slog.New(slog.DiscardHandler)})
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}

	var tPlain, tSend time.Duration
	sent := 0
	for i := 0; b.Loop(); i++ {
		// The events and their pending deliveries (not timed: the change's cost).
		bodies := make([][]byte, 0, batch)
		for _, a := range accs {
			for j := range events {
				v, err := svc.CreateVehicle(ctx, fleet.SystemPrincipal(a), fleet.Vehicle{Name: fmt.Sprintf("Van %d-%d", i, j)})
				if err != nil {
					b.Fatal(err)
				}
				body, _ := json.Marshal(fleet.Event{ID: fleet.NewID(fleet.PrefixEvent), Type: fleet.EventVehicleCreated, CreatedAt: v.CreatedAt, Data: mustJSON(b, v)})
				for range endpoints {
					bodies = append(bodies, body)
				}
			}
		}
		t0 := time.Now()
		postAll(b, plain, rcv.URL+"/hook", bodies, workers)
		t1 := time.Now()
		n, err := sender.Drain(ctx)
		tSend += time.Since(t1)
		tPlain += t1.Sub(t0)
		if err != nil || n != batch {
			b.Fatalf("sent %d of %d: %v", n, batch, err)
		}
		sent += n
	}
	b.ReportMetric(float64(sent)/tPlain.Seconds(), "plain-posts/s")
	b.ReportMetric(float64(sent)/tSend.Seconds(), "deliveries/s")
	b.ReportMetric(float64(tPlain)/float64(tSend), "ratio")
}

// postAll posts each body once with workers goroutines.
func postAll(b *testing.B, c *http.Client, url string, bodies [][]byte, workers int) {
	ch := make(chan []byte)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for body := range ch {
				res, err := c.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
	for _, body := range bodies {
		ch <- body
	}
	close(ch)
	wg.Wait()
}
