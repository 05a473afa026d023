package fleethttp_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// hit is one request a receiver got.
type hit struct {
	header http.Header
	body   []byte
}

// receiver is a real HTTP endpoint that records what it gets and answers
// with answer(n), n counting its requests from 1.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	hits   []hit
	answer func(n int, w http.ResponseWriter)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	r := &receiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hits = append(r.hits, hit{req.Header.Clone(), b})
		n := len(r.hits)
		r.mu.Unlock()
		if r.answer != nil {
			r.answer(n, w)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func eventOf(t *testing.T, h hit) fleet.Event {
	t.Helper()
	var e fleet.Event
	if err := json.Unmarshal(h.body, &e); err != nil {
		t.Fatalf("event body %s: %v", h.body, err)
	}
	return e
}

// register creates an endpoint for url and returns its id and secret.
func (e *env) register(key, url string, events ...string) (string, string) {
	e.t.Helper()
	body := map[string]any{"url": url}
	if len(events) > 0 {
		body["events"] = events
	}
	r := e.do("POST", "/v1/webhooks", key, body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("register webhook: %d %s", r.status, r.body)
	}
	return r.data()["webhook_id"].(string), r.data()["secret"].(string)
}

func (e *env) sender() *fleethttp.Sender {
	return fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Jitter: func() float64 { return 0 }})
}

func drain(t *testing.T, s *fleethttp.Sender) int {
	t.Helper()
	n, err := s.Drain(context.Background())
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	return n
}

// recompute is an independent Standard Webhooks signature of a request.
func recompute(secret string, h hit) string {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h.header.Get("webhook-id") + "." + h.header.Get("webhook-timestamp") + "." + string(h.body)))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestWebhookAsANewUser: register a local receiver, change a vehicle, and
// the receiver gets the event, signed so that a Standard Webhooks verifier
// accepts it.
func TestWebhookAsANewUser(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	rcv := newReceiver(t, nil)
	whID, secret := e.register(key, rcv.srv.URL+"/hooks")
	is.True(strings.HasPrefix(secret, "whsec_"))
	vid := e.vehicle(key, "Van 1")
	e.do("PATCH", "/v1/vehicles/"+vid, key, map[string]any{"name": "Van 7"})

	is.Equal(drain(t, e.sender()), 2)
	hits := rcv.got()
	is.Equal(len(hits), 2)
	types := map[string]bool{}
	for _, h := range hits {
		ev := eventOf(t, h)
		types[ev.Type] = true
		is.Equal(h.header.Get("webhook-id"), ev.ID)
		is.Equal(h.header.Get("webhook-timestamp"), strconv.FormatInt(e.clock.Now().Unix(), 10))
		is.Equal(h.header.Get("Content-Type"), "application/json")
		is.NoErr(fleet.VerifyWebhook(secret, h.header.Get("webhook-id"), h.header.Get("webhook-timestamp"),
			h.header.Get("webhook-signature"), h.body, e.clock.Now()))
		is.Equal(h.header.Get("webhook-signature"), recompute(secret, h)) // independently recomputed
		// The body is the event as GET /v1/events/{id} shows it.
		got := e.do("GET", "/v1/events/"+ev.ID, key, nil).json()["data"]
		var sent map[string]any
		is.NoErr(json.Unmarshal(h.body, &sent))
		is.Equal(sent, got)
	}
	is.True(types["vehicle.created"] && types["vehicle.updated"])
	for _, h := range hits {
		checkWebhookBody(t, h)
	}
	ds := e.do("GET", "/v1/webhooks/"+whID+"/deliveries", key, nil).list()
	is.Equal(len(ds), 2)
	for _, d := range ds {
		dm := d.(map[string]any)
		is.Equal(dm["status"], "succeeded")
		is.Equal(dm["response_status"], 200.0)
		is.Equal(dm["attempt"], 1.0)
	}
	is.Equal(drain(t, e.sender()), 0) // nothing sent twice
}

func TestWebhookEndpoints(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, free := e.account(fleet.PlanFree)
	r := e.do("POST", "/v1/webhooks", free, map[string]any{"url": "https://hooks.example.com/"})
	is.Equal(r.status, http.StatusForbidden)
	is.True(strings.Contains(r.errMessage(), "free"))
	is.Equal(e.do("GET", "/v1/webhooks", free, nil).status, http.StatusForbidden)

	_, key := e.account(fleet.PlanPro)
	for name, body := range map[string]map[string]any{
		"no url":        {"events": []string{"*"}},
		"ftp":           {"url": "ftp://example.com/"},
		"unknown event": {"url": "http://127.0.0.1/x", "events": []string{"vehicle.exploded"}},
		"star and more": {"url": "http://127.0.0.1/x", "events": []string{"*", "vehicle.created"}},
		"no events":     {"url": "http://127.0.0.1/x", "events": []string{}},
		"long text":     {"url": "http://127.0.0.1/x", "description": strings.Repeat("x", 501)},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do("POST", "/v1/webhooks", key, body)
			is.New(t).Equal(r.status, http.StatusUnprocessableEntity)
		})
	}
	is.Equal(e.do("POST", "/v1/webhooks", key, map[string]any{"url": "http://127.0.0.1/x", "secret": "mine"}).status, http.StatusBadRequest)
	is.Equal(len(e.do("GET", "/v1/webhooks", key, nil).list()), 0) // nothing was made

	id, secret := e.register(key, "http://127.0.0.1:9/a", "vehicle.created", "vehicle.created")
	got := e.do("GET", "/v1/webhooks/"+id, key, nil)
	is.Equal(got.status, http.StatusOK)
	_, shown := got.data()["secret"]
	is.True(!shown) // the secret is shown only by create and rotate
	is.True(!strings.Contains(string(got.body), secret))
	is.Equal(got.data()["events"], []any{"vehicle.created"})
	is.Equal(got.data()["enabled"], true)

	p := e.do("PATCH", "/v1/webhooks/"+id, key, map[string]any{"description": "Ops", "enabled": false, "events": []string{"*"}})
	is.Equal(p.status, http.StatusOK)
	is.Equal(p.data()["description"], "Ops")
	is.Equal(p.data()["enabled"], false)
	is.Equal(e.do("PATCH", "/v1/webhooks/"+id, key, map[string]any{"url": "gopher://x"}).status, http.StatusUnprocessableEntity)
	is.Equal(e.do("POST", "/v1/webhooks/"+id+"/test", key, nil).status, http.StatusConflict) // disabled

	// The pro plan's cap is 10 endpoints: the eleventh is 409.
	for range 9 {
		e.register(key, "http://127.0.0.1:9/more")
	}
	r = e.do("POST", "/v1/webhooks", key, map[string]any{"url": "http://127.0.0.1:9/one-too-many"})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(r.errMessage(), "10"))
	is.Equal(e.do("DELETE", "/v1/webhooks/"+id, key, nil).status, http.StatusOK)
	is.Equal(e.do("GET", "/v1/webhooks/"+id, key, nil).status, http.StatusNotFound)
	e.register(key, "http://127.0.0.1:9/room-again")

	// Pages walk every endpoint once.
	seen := map[string]bool{}
	cursor := ""
	for {
		r := e.do("GET", "/v1/webhooks?limit=3&cursor="+cursor, key, nil)
		for _, w := range r.list() {
			seen[w.(map[string]any)["webhook_id"].(string)] = true
		}
		pg := r.json()["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	is.Equal(len(seen), 10)
	is.Equal(e.do("GET", "/v1/webhooks/wh_nope", key, nil).status, http.StatusNotFound)
	for w := range seen {
		is.Equal(e.do("GET", "/v1/webhooks/"+w+"/deliveries?status=lost", key, nil).status, http.StatusBadRequest)
		break
	}
}

// TestWebhookPatchNulls: url, events and enabled cannot be null; a null
// one is 422 naming every such field, and the endpoint stays as it was. A
// null description clears it.
func TestWebhookPatchNulls(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	id, _ := e.register(key, "http://127.0.0.1:9/a", "vehicle.created")
	is.Equal(e.do("PATCH", "/v1/webhooks/"+id, key, map[string]any{"description": "Ops"}).status, http.StatusOK)
	before := e.do("GET", "/v1/webhooks/"+id, key, nil).data()
	is.Equal(before["enabled"], true)

	for body, fields := range map[string][]string{
		`{"enabled":null}`:                              {"enabled"},
		`{"url":null}`:                                  {"url"},
		`{"events":null}`:                               {"events"},
		`{"enabled":null,"description":"x"}`:            {"enabled"},
		`{"url":null,"events":null,"enabled":null}`:     {"enabled", "events", "url"},
		`{"enabled":null,"url":"http://127.0.0.1:9/b"}`: {"enabled"},
	} {
		t.Run(body, func(t *testing.T) {
			is := is.New(t)
			r := e.do("PATCH", "/v1/webhooks/"+id, key, body)
			is.Equal(r.status, http.StatusUnprocessableEntity)
			is.Equal(r.errCode(), "validation_error")
			is.Equal(errorFields(r), fields)
			is.Equal(e.do("GET", "/v1/webhooks/"+id, key, nil).data(), before) // nothing changed
		})
	}
	r := e.do("PATCH", "/v1/webhooks/"+id, key, `{"enabled":"no"}`)
	is.Equal(r.status, http.StatusBadRequest) // a wrong type
	is.Equal(errorFields(r), []string{"enabled"})
	is.Equal(e.do("GET", "/v1/webhooks/"+id, key, nil).data(), before)

	r = e.do("PATCH", "/v1/webhooks/"+id, key, `{"enabled":false,"description":null}`)
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["enabled"], false)
	is.Equal(r.data()["description"], "") // cleared
}

func TestWebhookRotateTestAndRetry(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanEnterprise)
	rcv := newReceiver(t, nil)
	other := newReceiver(t, nil)
	id, oldSecret := e.register(key, rcv.srv.URL)
	e.register(key, other.srv.URL)
	s := e.sender()

	rot := e.do("POST", "/v1/webhooks/"+id+"/rotate_secret", key, nil)
	is.Equal(rot.status, http.StatusOK)
	newSecret := rot.data()["secret"].(string)
	is.True(newSecret != oldSecret)

	test := e.do("POST", "/v1/webhooks/"+id+"/test", key, nil)
	is.Equal(test.status, http.StatusAccepted)
	evID := test.data()["event"].(map[string]any)["event_id"].(string)
	delID := test.data()["delivery"].(map[string]any)["delivery_id"].(string)
	is.Equal(drain(t, s), 1)
	hits := rcv.got()
	is.Equal(len(hits), 1)
	is.Equal(len(other.got()), 0) // webhook.test goes to the endpoint tested only
	h := hits[0]
	is.Equal(eventOf(t, h).Type, "webhook.test")
	sig := h.header.Get("webhook-signature")
	is.Equal(len(strings.Fields(sig)), 2) // both secrets sign during the overlap
	for _, sec := range []string{oldSecret, newSecret} {
		is.NoErr(fleet.VerifyWebhook(sec, evID, h.header.Get("webhook-timestamp"), sig, h.body, e.clock.Now()))
	}

	// A day later only the new secret signs.
	e.clock.Advance(24*time.Hour + time.Second)
	r := e.do("POST", "/v1/webhooks/"+id+"/deliveries/"+delID+"/retry", key, nil)
	is.Equal(r.status, http.StatusAccepted)
	is.Equal(r.data()["status"], "pending")
	is.Equal(r.data()["event_id"], evID)
	is.Equal(drain(t, s), 1)
	hits = rcv.got()
	is.Equal(len(hits), 2)
	h = hits[1]
	is.Equal(h.header.Get("webhook-id"), evID) // the same event again
	is.Equal(len(strings.Fields(h.header.Get("webhook-signature"))), 1)
	is.NoErr(fleet.VerifyWebhook(newSecret, evID, h.header.Get("webhook-timestamp"), h.header.Get("webhook-signature"), h.body, e.clock.Now()))
	is.True(fleet.VerifyWebhook(oldSecret, evID, h.header.Get("webhook-timestamp"), h.header.Get("webhook-signature"), h.body, e.clock.Now()) != nil)

	byEvent := e.do("GET", "/v1/webhooks/"+id+"/deliveries?event_id="+evID+"&status=succeeded", key, nil).list()
	is.Equal(len(byEvent), 2)
	is.Equal(e.do("POST", "/v1/webhooks/"+id+"/deliveries/del_00000000000000000000000000/retry", key, nil).status, http.StatusNotFound)
}

// deliveries returns an endpoint's whole delivery log.
func (e *env) deliveries(key, id string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for _, d := range e.do("GET", "/v1/webhooks/"+id+"/deliveries?limit=500", key, nil).list() {
		out = append(out, d.(map[string]any))
	}
	return out
}

// TestWebhookRetries: failures are retried on the schedule, with each
// attempt logged; a redirect is a failure; Retry-After is honoured; 410
// disables the endpoint at once.
func TestWebhookRetries(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	redirect := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.Header().Set("Location", "http://127.0.0.1:9/elsewhere")
			w.WriteHeader(http.StatusFound)
		}
	})
	id, _ := e.register(key, redirect.srv.URL, "vehicle.created")
	e.vehicle(key, "Truck")
	s := e.sender()
	is.Equal(drain(t, s), 1)
	is.Equal(drain(t, s), 0) // the retry is not due yet
	e.clock.Advance(5 * time.Second)
	is.Equal(drain(t, s), 1)
	e.clock.Advance(4 * time.Minute)
	is.Equal(drain(t, s), 0)
	e.clock.Advance(time.Minute)
	is.Equal(drain(t, s), 1)
	log := e.deliveries(key, id)
	is.Equal(len(log), 3)
	for i, d := range log {
		is.Equal(d["attempt"], float64(i+1))
	}
	is.Equal(log[0]["status"], "failed")
	is.Equal(log[0]["response_status"], 302.0)
	is.True(strings.Contains(log[0]["error"].(string), "redirect"))
	is.True(log[0]["next_attempt_at"] != nil)
	is.Equal(log[2]["status"], "succeeded")
	is.Equal(len(redirect.got()), 3) // the redirect was never followed

	// Retry-After is honoured on the statuses RFC 9110 pairs it with.
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		busy := newReceiver(t, func(n int, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(status)
			}
		})
		e := newEnv(t)
		_, k := e.account(fleet.PlanPro)
		id, _ := e.register(k, busy.srv.URL, "vehicle.created")
		e.vehicle(k, "Truck")
		s := e.sender()
		is.Equal(drain(t, s), 1)
		e.clock.Advance(59 * time.Minute)
		is.Equal(drain(t, s), 0) // not before Retry-After, though the schedule says 5 s
		e.clock.Advance(time.Minute)
		is.Equal(drain(t, s), 1)
		is.Equal(e.deliveries(k, id)[1]["status"], "succeeded")
	}
	e2 := newEnv(t)
	_, key2 := e2.account(fleet.PlanPro)
	s2 := e2.sender()

	gone := newReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	id3, _ := e2.register(key2, gone.srv.URL, "vehicle.created")
	e2.vehicle(key2, "Truck 2")
	drain(t, s2)
	is.Equal(e2.do("GET", "/v1/webhooks/"+id3, key2, nil).data()["enabled"], false) // disabled at once
	log3 := e2.deliveries(key2, id3)
	is.Equal(len(log3), 1)
	is.Equal(log3[0]["status"], "failed")
	is.Equal(log3[0]["response_status"], 410.0)
	is.Equal(log3[0]["next_attempt_at"], nil) // and not retried
	e2.vehicle(key2, "Truck 3")
	e2.clock.Advance(time.Hour)
	drain(t, s2)
	is.Equal(len(gone.got()), 1) // a disabled endpoint gets nothing new
	is.Equal(len(e2.deliveries(key2, id3)), 1)
}

// TestWebhookGivesUp: ten attempts over about three days, then failed; an
// endpoint whose deliveries all fail for 5 days is disabled.
func TestWebhookGivesUp(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	down := newReceiver(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	id, _ := e.register(key, down.srv.URL, "vehicle.created")
	e.vehicle(key, "Truck")
	s := e.sender()
	for range 12 {
		drain(t, s)
		log := e.deliveries(key, id)
		next := log[len(log)-1]["next_attempt_at"]
		if next == nil {
			break
		}
		at, err := time.Parse(time.RFC3339Nano, next.(string))
		is.NoErr(err)
		e.clock.Set(at)
	}
	is.True(e.clock.Now().Sub(T0) > 75*time.Hour && e.clock.Now().Sub(T0) < 84*time.Hour) // the schedule's span, jitter included
	e.clock.Advance(3 * 24 * time.Hour)
	log := e.deliveries(key, id)
	is.Equal(len(log), 10)
	is.Equal(log[9]["attempt"], 10.0)
	is.Equal(log[9]["status"], "failed")
	is.Equal(log[9]["next_attempt_at"], nil)
	is.Equal(e.do("GET", "/v1/webhooks/"+id, key, nil).data()["enabled"], true) // failing over 5 days now; the next failure disables it
	e.vehicle(key, "Truck 2")
	drain(t, s)
	is.Equal(e.do("GET", "/v1/webhooks/"+id, key, nil).data()["enabled"], false)
	// Enabling it again forgets the failures.
	is.Equal(e.do("PATCH", "/v1/webhooks/"+id, key, map[string]any{"enabled": true}).data()["enabled"], true)
}

// TestWebhookAddressForms: with webhooks secure, every way of writing a
// refused address is refused at registration, and a name that resolved
// to a public address at registration but connects to loopback is refused
// when connecting.
func TestWebhookAddressForms(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(T0)
	lookups := map[string][]netip.Addr{
		"rebind.example.com":   {netip.MustParseAddr("93.184.216.34")},
		"internal.example.com": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")},
		"meta.example.com":     {netip.MustParseAddr("::ffff:169.254.169.254")},
		"teredo.example.com":   {netip.MustParseAddr("2001:0:4136:e378:8000:63bf:3fff:fdd2")},
		"siit.example.com":     {netip.MustParseAddr("::ffff:0:a00:7")},
		"localhost":            {netip.MustParseAddr("93.184.216.34")}, // as a rebinding resolver might answer
	}
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now, Webhooks: fleet.WebhookOptions{
		LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := lookups[host]; ok {
				return a, nil
			}
			return nil, &netErr{}
		},
	}})
	srv := httptest.NewServer(fleethttp.NewHandler(svc))
	t.Cleanup(srv.Close)
	e := &env{t: t, clock: clock, svc: svc, srv: srv, router: openAPIRouter(t, srv.URL)}
	_, key := e.account(fleet.PlanEnterprise)
	forms := []string{
		"http://93.184.216.34/", "https://127.0.0.1/", "https://[::1]/", "https://0.0.0.0/", "https://[::]/",
		"https://10.0.0.1/", "https://172.16.0.1/", "https://192.168.0.1/", "https://169.254.169.254/latest/meta-data/",
		"https://[fe80::1]/", "https://[fc00::1]/", "https://[fd00::1]/", "https://224.0.0.1/", "https://[ff02::1]/",
		"https://100.64.0.1/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/", "https://2130706433/",
		"https://0x7f.1/", "https://0x7f000001/", "https://0177.0.0.1/", "https://127.1/", "https://017700000001/",
		"https://internal.example.com/", "https://meta.example.com/", "https://nowhere.example.com/",
		"https://[::ffff:0:a00:1]/", "https://[2001::1]/", "https://teredo.example.com/", "https://siit.example.com/",
	}
	for _, u := range forms {
		r := e.do("POST", "/v1/webhooks", key, map[string]any{"url": u})
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d, want 422", u, r.status)
		}
	}
	is.Equal(len(e.do("GET", "/v1/webhooks", key, nil).list()), 0)

	// Whatever makes a host unusable (an address literal, a name that
	// resolves to a forbidden address, a name that does not resolve), the
	// answer is the same, so it tells nothing about the network.
	unusable := `{"code":"validation_error","details":[{"field":"url",` +
		`"message":"cannot be used as a webhook endpoint: it must be an https URL on a public host"}],"message":"The request has an invalid field."}`
	unusableURLs := []string{"https://127.0.0.1/", "https://[::ffff:10.0.0.1]/", "https://[2001::1]/", "https://internal.example.com/",
		"https://meta.example.com/", "https://teredo.example.com/", "https://nowhere.example.com/"}
	answer := func(r *response) string {
		errBody := r.json()["error"].(map[string]any)
		delete(errBody, "request_id")
		return string(mustJSON(t, errBody))
	}
	for _, u := range unusableURLs {
		is.Equal(answer(e.do("POST", "/v1/webhooks", key, map[string]any{"url": u})), unusable) // one answer whatever the reason
	}

	// Dial time: the receiver is on loopback; its name passed registration.
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("a forbidden address was reached") }))
	t.Cleanup(tls.Close)
	port := tls.URL[strings.LastIndex(tls.URL, ":")+1:]
	id, _ := e.register(key, "https://localhost:"+port+"/hook", "vehicle.created")
	for _, u := range unusableURLs {
		r := e.do("PATCH", "/v1/webhooks/"+id, key, map[string]any{"url": u})
		is.Equal(r.status, http.StatusUnprocessableEntity)
		is.Equal(answer(r), unusable) // the same when changing a URL
	}
	e.vehicle(key, "Truck")
	s := fleethttp.NewSender(svc, fleethttp.SenderOptions{})
	is.Equal(drain(t, s), 1)
	d := e.deliveries(key, id)[0]
	is.Equal(d["status"], "failed")
	is.Equal(d["response_status"], nil)
	is.Equal(d["error"], "The endpoint's host does not resolve to a public address.")
}

type netErr struct{}

func (*netErr) Error() string { return "no such host" }

// TestWebhookPacing: a busy endpoint is paced, and another account's
// delivery due at the same time is not held up behind it.
func TestWebhookPacing(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	busyAcc, busyKey := e.account(fleet.PlanPro)
	_, quietKey := e.account(fleet.PlanPro)
	busy, quiet := newReceiver(t, nil), newReceiver(t, nil)
	e.register(busyKey, busy.srv.URL, "vehicle.created")
	e.register(quietKey, quiet.srv.URL, "vehicle.created")
	for i := range 100 {
		_, err := e.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(busyAcc), fleet.Vehicle{Name: "Van " + strconv.Itoa(i)})
		is.NoErr(err)
	}
	e.vehicle(quietKey, "The quiet one")
	s := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, EndpointRate: 10, EndpointBurst: 10, Batch: 50})
	drain(t, s)
	is.Equal(len(busy.got()), 10) // the burst, then 10 a second
	is.Equal(len(quiet.got()), 1) // not held up
	e.clock.Advance(time.Second)
	drain(t, s)
	is.Equal(len(busy.got()), 20)
	e.clock.Advance(8 * time.Second)
	drain(t, s)
	is.Equal(len(busy.got()), 100)
	seen := map[string]bool{}
	for _, h := range busy.got() {
		is.True(!seen[h.header.Get("webhook-id")]) // each once
		seen[h.header.Get("webhook-id")] = true
	}
}

// TestSenderRunOnceTakesOneBatch: RunOnce makes the attempts of one claim
// (Batch of them) and leaves the rest due; Drain takes what is left.
func TestSenderRunOnceTakesOneBatch(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	rcv := newReceiver(t, nil)
	e.register(key, rcv.srv.URL+"/hooks")
	for i := range 5 {
		e.vehicle(key, fmt.Sprintf("Van %d", i))
	}
	s := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Batch: 2, Jitter: func() float64 { return 0 }})
	n, err := s.RunOnce(context.Background())
	is.NoErr(err)
	is.Equal(n, 2)              // one batch
	is.Equal(len(rcv.got()), 2) // sent
	is.Equal(drain(t, s), 3)    // the rest
	is.Equal(len(rcv.got()), 5)
	n, err = s.RunOnce(context.Background())
	is.NoErr(err)
	is.Equal(n, 0) // nothing is due
}

// A retry's next_attempt_at, jitter and all, has the precision of every
// other timestamp (at most microseconds).
func TestRetryTimesHaveOnePrecision(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	rcv := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	whID, _ := e.register(key, rcv.srv.URL+"/hooks")
	e.do("POST", "/v1/webhooks/"+whID+"/test", key, nil)
	s := fleethttp.NewSender(e.svc, fleethttp.SenderOptions{Insecure: true, Jitter: func() float64 { return 0.0123456789 }})
	is.Equal(drain(t, s), 1)
	ds := e.do("GET", "/v1/webhooks/"+whID+"/deliveries", key, nil).list()
	is.Equal(len(ds), 2) // the failed attempt and the pending retry
	for _, d := range ds {
		next, _ := d.(map[string]any)["next_attempt_at"].(string)
		is.True(next != "")
		is.True(regexp.MustCompile(`:\d\d(\.\d{1,6})?Z$`).MatchString(next)) // no nanoseconds
	}
}

// checkWebhookBody checks a delivered event against the document's
// webhook of its type: the body matches the schema, and the Standard
// Webhooks headers the document requires are there.
func checkWebhookBody(t *testing.T, h hit) {
	t.Helper()
	openAPIRouter(t, "http://x") // loads docData
	ev := eventOf(t, h)
	item := docData.Webhooks[ev.Type]
	if item == nil || item.Post == nil {
		t.Fatalf("the document has no webhook %s", ev.Type)
	}
	for _, p := range item.Post.Parameters {
		if p.Value.In == "header" && p.Value.Required && h.header.Get(p.Value.Name) == "" {
			t.Errorf("%s: no %s header", ev.Type, p.Value.Name)
		}
	}
	schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	var body any
	if err := json.Unmarshal(h.body, &body); err != nil {
		t.Fatal(err)
	}
	if err := schema.VisitJSON(body); err != nil {
		t.Errorf("%s: the body does not match the document's webhook: %v\n%s", ev.Type, err, h.body)
	}
}

// Every event type is a webhook of the document, and what the sender
// delivers matches it: here the vehicle, work order, alert and test
// events, each checked against its own type's schema.
func TestWebhookBodiesMatchTheDocument(t *testing.T) {
	is := is.New(t)
	openAPIRouter(t, "http://x")
	for _, typ := range fleet.EventTypes() {
		is.True(docData.Webhooks[typ] != nil) // every event type is described
	}
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	rcv := newReceiver(t, nil)
	whID, _ := e.register(key, rcv.srv.URL)
	vid := e.vehicle(key, "Van 1")
	e.do("PATCH", "/v1/vehicles/"+vid, key, map[string]any{"name": "Van 7"})
	wo := e.do("POST", "/v1/maintenance/work_orders", key, map[string]any{"vehicle_id": vid, "title": "Brakes"}).data()
	e.do("PATCH", "/v1/maintenance/work_orders/"+wo["work_order_id"].(string), key, map[string]any{"status": "in_progress"})
	alert := e.do("POST", "/v1/alerts", key, map[string]any{"vehicle_id": vid, "severity": "info", "message": "Check tyres"}).data()
	e.do("POST", "/v1/alerts/"+alert["alert_id"].(string)+"/acknowledge", key, nil)
	e.do("POST", "/v1/webhooks/"+whID+"/test", key, nil)
	e.do("DELETE", "/v1/vehicles/"+vid, key, nil)
	drain(t, e.sender())
	seen := map[string]bool{}
	for _, h := range rcv.got() {
		checkWebhookBody(t, h)
		seen[eventOf(t, h).Type] = true
	}
	for _, typ := range []string{"vehicle.created", "vehicle.updated", "vehicle.deleted", "work_order.created",
		"work_order.status_changed", "alert.created", "alert.acknowledged", "webhook.test"} {
		is.True(seen[typ]) // delivered and checked
	}
}
