package fleetclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// receiver is a webhook endpoint on loopback that answers 200 and counts
// what it receives.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	n   int
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.n++
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// drain sends every delivery due now, as the sender does in the
// background.
func drain(t *testing.T, e *env) {
	t.Helper()
	s := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Jitter: func() float64 { return 0 }})
	if _, err := s.Drain(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
}

// The client's webhook methods against the real handler and sender.
func TestClientWebhooks(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	rcv := newReceiver(t)

	w, err := c.CreateWebhook(ctx, fleetclient.WebhookParams{URL: rcv.srv.URL, Events: []string{fleet.EventVehicleCreated}, Description: "ci"})
	is.NoErr(err)
	is.True(strings.HasPrefix(w.Secret, "whsec_"))
	is.True(w.Enabled)
	is.Equal(w.Description, "ci")
	for range 2 {
		_, err := c.CreateWebhook(ctx, fleetclient.WebhookParams{URL: "http://127.0.0.1:9/x", Disabled: true})
		is.NoErr(err)
	}
	all := collect(t, c.Webhooks(ctx))
	is.Equal(len(all), 3) // two pages
	is.Equal(all[1].Enabled, false)
	is.Equal(all[1].Events, []string{"*"})
	got, err := c.Webhook(ctx, w.ID)
	is.NoErr(err)
	is.Equal(got.URL, rcv.srv.URL)
	up, err := c.UpdateWebhook(ctx, w.ID, fleet.WebhookPatch{Description: fleet.Optional[string]{Set: true, Value: "ops"}})
	is.NoErr(err)
	is.Equal(up.Description, "ops")
	_, err = c.UpdateWebhook(ctx, w.ID, fleet.WebhookPatch{URL: fleet.Optional[string]{Set: true, Value: "ftp://x"}})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	rot, err := c.RotateWebhookSecret(ctx, w.ID)
	is.NoErr(err)
	is.True(rot.Secret != w.Secret)
	sent, err := c.TestWebhook(ctx, w.ID)
	is.NoErr(err)
	is.Equal(sent.Event.Type, fleet.EventWebhookTest)
	drain(t, e)
	ds := collect(t, c.Deliveries(ctx, w.ID, fleet.DeliveryFilter{EventID: sent.Event.ID}))
	is.Equal(len(ds), 1)
	is.Equal(ds[0].Status, fleet.DeliverySucceeded)
	again, err := c.RetryDelivery(ctx, w.ID, ds[0].ID)
	is.NoErr(err)
	is.Equal(again.Status, fleet.DeliveryPending)
	drain(t, e)
	is.Equal(len(collect(t, c.Deliveries(ctx, w.ID, fleet.DeliveryFilter{Status: fleet.DeliverySucceeded}))), 2)
	is.Equal(rcv.got(), 2)
	is.NoErr(c.DeleteWebhook(ctx, w.ID))
	_, err = c.Webhook(ctx, w.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}
