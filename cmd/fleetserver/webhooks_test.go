package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestServeDeliversWebhooks: the server started with --insecure-webhooks
// warns, and its sender delivers a test event to a local receiver, signed.
func TestServeDeliversWebhooks(t *testing.T) {
	is := is.New(t)
	got := make(chan *http.Request, 1)
	bodies := make(chan []byte, 1)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case got <- r:
			bodies <- b
		default:
		}
	}))
	defer rcv.Close()
	env := map[string]string{"FLEET_DB": "memory:"}
	ctx, cancel := context.WithCancel(context.Background())
	out, stderr := newLineWriter(), newLineWriter()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--demo", "--insecure-webhooks"}, func(k string) string { return env[k] }, out, stderr)
	}()
	key := out.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	base := out.waitFor(t, regexp.MustCompile(`listening on (http://\S+)`))
	stderr.waitFor(t, regexp.MustCompile(`(insecure-webhooks is on)`))

	post := func(path string, body any) map[string]any {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		is.NoErr(err)
		defer res.Body.Close()
		var m map[string]any
		is.NoErr(json.NewDecoder(res.Body).Decode(&m))
		return m["data"].(map[string]any)
	}
	wh := post("/v1/webhooks", map[string]any{"url": rcv.URL + "/hook", "events": []string{"webhook.test"}})
	secret := wh["secret"].(string)
	post("/v1/webhooks/"+wh["webhook_id"].(string)+"/test", map[string]any{})
	select {
	case r := <-got:
		b := <-bodies
		is.True(strings.Contains(string(b), `"type":"webhook.test"`))
		is.NoErr(fleet.VerifyWebhook(secret, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), b, time.Now()))
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery")
	}
	cancel()
	is.NoErr(<-done)
}
