package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestReceiver(t *testing.T) {
	is := is.New(t)
	secret := fleet.NewWebhookSecret()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var handled []Event
	rc := &Receiver{Secret: secret, Now: func() time.Time { return now }, Handle: func(e Event) { handled = append(handled, e) }}
	body := []byte(`{"event_id":"evt_1","type":"vehicle.created","created_at":"2026-11-22T10:00:00Z","data":{"vehicle_id":"veh_1"}}`)
	sendAs := func(id string, ts time.Time, secrets []string, signed, b []byte) int {
		sig, err := fleet.SignWebhook(secrets, id, ts.Unix(), signed)
		is.NoErr(err)
		req := httptest.NewRequest("POST", "/webhooks", bytes.NewReader(b))
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		w := httptest.NewRecorder()
		rc.ServeHTTP(w, req)
		return w.Code
	}
	send := func(id string, ts time.Time, secrets []string, b []byte) int { return sendAs(id, ts, secrets, b, b) }
	is.Equal(send("evt_1", now, []string{secret}, body), http.StatusNoContent)
	is.Equal(len(handled), 1)
	is.Equal(handled[0].Type, "vehicle.created")
	is.Equal(send("evt_1", now, []string{secret}, body), http.StatusNoContent) // a repeat is acknowledged...
	is.Equal(len(handled), 1)                                                  // ...and not handled twice
	old := fleet.NewWebhookSecret()
	is.Equal(send("evt_1", now, []string{old}, body), http.StatusUnauthorized)                                    // wrong secret
	is.Equal(send("evt_1", now.Add(-5*time.Minute-time.Second), []string{secret}, body), http.StatusUnauthorized) // stale
	is.Equal(send("evt_1", now.Add(5*time.Minute+time.Second), []string{secret}, body), http.StatusUnauthorized)  // from the future
	tampered := bytes.Replace(body, []byte("veh_1"), []byte("veh_2"), 1)
	is.Equal(sendAs("evt_1", now, []string{secret}, body, tampered), http.StatusUnauthorized)
	// During a secret rotation both signatures come; either secret verifies.
	body2 := bytes.Replace(body, []byte("evt_1"), []byte("evt_2"), 1)
	is.Equal(send("evt_2", now, []string{fleet.NewWebhookSecret(), secret}, body2), http.StatusNoContent)
	is.Equal(len(handled), 2)
}
