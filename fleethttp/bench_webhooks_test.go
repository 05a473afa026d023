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
// as many goroutines, interleaved batch by batch (target ratio >= 0.5).
func BenchmarkWebhookDelivery(b *testing.B) { benchWebhookDelivery(b, memstore.New()) }

// BenchmarkWebhookDeliverySQLite is the same on the SQLite store, a file.
func BenchmarkWebhookDeliverySQLite(b *testing.B) {
	store, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(b.TempDir(), "fleet.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	benchWebhookDelivery(b, store)
}

func benchWebhookDelivery(b *testing.B, store fleet.Store) {
	const batch, workers = 200, 16
	ctx := context.Background()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer rcv.Close()
	svc := fleet.NewService(store, fleet.Options{Logger: slog.New(slog.DiscardHandler), Webhooks: fleet.WebhookOptions{Insecure: true}})
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise})
	if err != nil {
		b.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, nk.Secret)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateWebhook(ctx, p, fleet.Webhook{URL: rcv.URL + "/hook", Events: []string{"*"}, Enabled: true}); err != nil {
		b.Fatal(err)
	}
	// One endpoint takes every delivery here, so its pace is lifted.
	sender := fleethttp.NewSender(svc, fleethttp.SenderOptions{Insecure: true, Workers: workers, Batch: batch,
		EndpointRate: rate.Inf, Logger: slog.New(slog.DiscardHandler)})
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}

	var tPlain, tSend time.Duration
	sent := 0
	for i := 0; b.Loop(); i++ {
		// The events and their pending deliveries (not timed: the change's cost).
		bodies := make([][]byte, 0, batch)
		for j := range batch {
			v, err := svc.CreateVehicle(ctx, fleet.SystemPrincipal(a), fleet.Vehicle{Name: fmt.Sprintf("Van %d-%d", i, j)})
			if err != nil {
				b.Fatal(err)
			}
			body, _ := json.Marshal(fleet.Event{ID: fleet.NewID(fleet.PrefixEvent), Type: fleet.EventVehicleCreated, CreatedAt: v.CreatedAt, Data: mustJSON(b, v)})
			bodies = append(bodies, body)
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
