// Command webhook-receiver receives Fleet webhooks: it verifies each
// delivery's signature with the endpoint's secret, refuses timestamps more
// than 5 minutes from its own clock, and handles each event once however
// often it is delivered (deliveries are at least once; webhook-id is the
// event id).
//
//	FLEET_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:9000
//
// Register it with a server started with --insecure-webhooks (it listens on
// plain http on loopback):
//
//	curl -s -H "Authorization: Bearer $FLEET_KEY" -H 'Content-Type: application/json' \
//	  -d '{"url":"http://127.0.0.1:9000/webhooks","events":["*"]}' http://127.0.0.1:8080/v1/webhooks
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// Event is what a delivery carries.
type Event struct {
	ID        string          `json:"event_id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// Receiver is an http.Handler for webhook deliveries. Handle is called once
// per event.
type Receiver struct {
	Secret string
	Now    func() time.Time
	Handle func(Event)

	mu   sync.Mutex
	seen map[string]time.Time // event id -> when first handled
}

// ServeHTTP verifies a delivery and handles its event unless handled
// already. A bad signature or stale timestamp is 401 (the sender retries,
// then gives up); a repeat is 200, so the sender stops.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	id := r.Header.Get("webhook-id")
	now := rc.Now()
	if err := fleet.VerifyWebhook(rc.Secret, id, r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, now); err != nil {
		http.Error(w, "invalid signature or timestamp", http.StatusUnauthorized)
		return
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil || e.ID != id {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	if rc.seen == nil {
		rc.seen = map[string]time.Time{}
	}
	for k, at := range rc.seen { // remember ids as long as a retry can come
		if now.Sub(at) > 4*24*time.Hour {
			delete(rc.seen, k)
		}
	}
	_, dup := rc.seen[id]
	if !dup {
		rc.seen[id] = now
	}
	rc.mu.Unlock()
	if !dup {
		rc.Handle(e)
	}
	w.WriteHeader(http.StatusNoContent)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "address to listen on")
	flag.Parse()
	secret := os.Getenv("FLEET_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set FLEET_WEBHOOK_SECRET to the endpoint's secret (whsec_...), shown when it was created")
	}
	rc := &Receiver{Secret: secret, Now: time.Now, Handle: func(e Event) {
		log.Printf("%s %s %s", e.CreatedAt.Format(time.RFC3339), e.Type, e.Data)
	}}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks", rc)
	log.Printf("receiving webhooks on http://%s/webhooks", *addr)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
