package fleethttp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// eventSource opens url as a browser's EventSource does: a GET with
// Accept: text/event-stream, the page's Origin, and no Authorization
// header (EventSource cannot send one). On a 200 event stream it returns
// the stream; otherwise the answer, validated against the OpenAPI document.
func (e *env) eventSource(url string) (*sseClient, *response) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Origin", appOrigin)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		defer cancel()
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		r := &response{t: e.t, status: res.StatusCode, header: res.Header, body: b}
		e.validate(req, nil, r)
		return nil, r
	}
	c := &sseClient{t: e.t, lines: make(chan string, 1000), cancel: func() { cancel(); res.Body.Close() }}
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	e.t.Cleanup(c.cancel)
	return c, &response{t: e.t, status: res.StatusCode, header: res.Header}
}

func (e *env) streamToken(key string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/stream_tokens", key, nil)
	if r.status != http.StatusCreated {
		e.t.Fatalf("stream token: %d %s", r.status, r.body)
	}
	return r.data()["token"].(string)
}

func (e *env) streamURL(token string) string {
	return e.srv.URL + "/v1/vehicles/locations/stream?token=" + token
}

// A browser's EventSource opens the live stream with a stream token in the
// query and no Authorization header: the stream is the key's that made the
// token (its allowance, its stream count), carries reports, and the token
// cannot open a second one.
func TestStreamTokenOpensTheStreamLikeEventSource(t *testing.T) {
	is := is.New(t)
	e := newCORSEnv(t)
	_, owner := e.account(fleet.PlanPro)
	reader := e.keyWith(owner, "locations:read")
	p, err := e.svc.Authenticate(ctx, reader)
	is.NoErr(err)

	r := e.do("POST", "/v1/stream_tokens", reader, nil, "Origin", appOrigin)
	is.Equal(r.status, http.StatusCreated)
	is.Equal(r.header.Get("Access-Control-Allow-Origin"), appOrigin) // a page may read it
	token := r.data()["token"].(string)
	is.True(strings.HasPrefix(token, fleet.StreamTokenPrefix))
	is.Equal(r.data()["expires_at"], T0.Add(fleet.StreamTokenTTL).Format(time.RFC3339)) // valid 60 s
	used, _ := strconv.Atoi(r.header.Get("X-RateLimit-Used"))

	sse, res := e.eventSource(e.streamURL(token))
	is.True(sse != nil) // the stream opened without Authorization
	is.Equal(res.header.Get("Access-Control-Allow-Origin"), appOrigin)
	is.Equal(res.header.Get("X-RateLimit-Limit"), "10000")             // the key's window (pro), not the address's
	is.Equal(res.header.Get("X-RateLimit-Used"), strconv.Itoa(used+1)) // counted against the key
	is.Equal(e.svc.OpenStreams(p), 1)                                  // and among its streams
	v := e.vehicle(owner, "Truck")
	e.do("POST", "/v1/vehicles/"+v+"/locations", owner, batch(pt(e.clock.Now(), 1, 1, 10)))
	ev := sse.next()
	is.Equal(ev.event, "location")
	is.Equal(ev.data["vehicle_id"], v) // reports arrive

	again, r := e.eventSource(e.streamURL(token))
	is.True(again == nil)
	is.Equal(r.status, http.StatusUnauthorized) // single use
	is.Equal(r.errCode(), fleet.CodeUnauthorized)
	is.True(strings.Contains(r.errMessage(), "stream token"))
	is.True(r.json()["error"].(map[string]any)["request_id"] != "") // the contract's error shape
	is.Equal(e.svc.OpenStreams(p), 1)

	sse.cancel()
	waitUntil(t, "the stream's slot to be freed", func() bool { return e.svc.OpenStreams(p) == 0 })
}

// Unknown, expired, malformed and repeated tokens are 401 and count against
// the address's allowance, as requests without a valid key do.
func TestStreamTokenRefused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	expired := e.streamToken(key)
	e.clock.Advance(fleet.StreamTokenTTL)
	fresh := e.streamToken(key)
	unknown := fleet.StreamTokenPrefix + strings.Repeat("A", fleet.StreamTokenLen-len(fleet.StreamTokenPrefix))
	lastUsed := -1
	for _, tok := range []string{expired, unknown, "fst_short", key, ""} {
		_, r := e.eventSource(e.streamURL(tok))
		is.Equal(r.status, http.StatusUnauthorized)
		is.Equal(r.errCode(), fleet.CodeUnauthorized)
		n, _ := strconv.Atoi(r.header.Get("X-RateLimit-Used"))
		is.True(n > lastUsed) // the address's allowance, one more each time
		is.Equal(r.header.Get("X-RateLimit-Limit"), strconv.Itoa(fleet.DefaultAddressLimit))
		lastUsed = n
	}
	// Twice in one query is no token either.
	_, r := e.eventSource(e.streamURL(fresh) + "&token=" + fresh)
	is.Equal(r.status, http.StatusUnauthorized)
	// Nor was the fresh token spent by that request.
	sse, _ := e.eventSource(e.streamURL(fresh))
	is.True(sse != nil)
}

// A token stands in for a key on the live stream only: elsewhere it is no
// key (and is not spent); with an Authorization header as well it is 400.
func TestStreamTokenOnlyOnTheStream(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	token := e.streamToken(key)
	r := e.do("GET", "/v1/vehicles?token="+token, "", nil)
	is.Equal(r.status, http.StatusUnauthorized)
	r = e.do("GET", "/v1/vehicles/locations?token="+token, key, nil)
	is.Equal(r.status, http.StatusBadRequest) // not a parameter of other routes
	r = e.do("GET", "/v1/vehicles/locations/stream?token="+token, key, nil)
	is.Equal(r.status, http.StatusBadRequest) // both: which one is meant?
	is.True(strings.Contains(r.errMessage(), "not both"))
	sse, _ := e.eventSource(e.streamURL(token))
	is.True(sse != nil) // none of those spent it
}

// The stream a token opens is its key's: it counts against the key's
// stream limit, and ends when the key is revoked.
func TestStreamTokenStreamIsTheKeys(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, owner := e.account(fleet.PlanFree) // 2 streams per key
	reader := e.keyWith(owner, "locations:read")
	first := e.openStream(reader, "", "") // with the header
	second, _ := e.eventSource(e.streamURL(e.streamToken(reader)))
	is.True(second != nil)
	_, r := e.eventSource(e.streamURL(e.streamToken(reader)))
	is.Equal(r.status, http.StatusTooManyRequests) // the key's third stream
	is.True(strings.Contains(r.errMessage(), "live streams"))
	is.Equal(r.header.Get("Retry-After"), "5")
	ownStream, _ := e.eventSource(e.streamURL(e.streamToken(owner)))
	is.True(ownStream != nil) // another key counts its own

	var readerID string
	for _, k := range e.do("GET", "/v1/api_keys", owner, nil).list() {
		if k.(map[string]any)["name"] == "limited" {
			readerID = k.(map[string]any)["key_id"].(string)
		}
	}
	r = e.do("DELETE", "/v1/api_keys/"+readerID, owner, nil)
	is.Equal(r.status, http.StatusOK)
	e.clock.Advance(3 * time.Second) // past the key cache
	n, err := e.svc.Jobs().CheckStreams(ctx)
	is.NoErr(err)
	is.Equal(n, 2) // both of the key's streams, the token's included
	first.ended()
	second.ended()
}

// Two servers sharing a store: a token made on one opens a stream on the
// other, and of simultaneous uses on both exactly one opens a stream.
func TestStreamTokenSingleUseAcrossServers(t *testing.T) {
	store := memstore.New()
	clock := testclock.New(T0)
	checkStreamTokenSingleUse(t, newEnvOn(t, store, clock), newEnvOn(t, store, clock))
}

// The same with each server on its own store over one PostgreSQL database,
// as separate processes are.
func TestPostgresTwoServersStreamTokenSingleUse(t *testing.T) {
	one, two, _ := postgresServers(t)
	checkStreamTokenSingleUse(t, one, two)
}

func checkStreamTokenSingleUse(t *testing.T, one, two *env) {
	t.Helper()
	is := is.New(t)
	_, key := one.account(fleet.PlanEnterprise)
	sse, _ := two.eventSource(two.streamURL(one.streamToken(key)))
	is.True(sse != nil) // made on one, used on two
	sse.cancel()

	for range 3 {
		token := one.streamToken(key)
		statuses := simultaneously(t, 10, func(i int) (*env, *http.Request) {
			srv := []*env{one, two}[i%2]
			req, _ := http.NewRequest("GET", srv.streamURL(token), nil)
			return srv, req
		})
		is.Equal(statuses[http.StatusOK], 1) // exactly one stream
		is.Equal(statuses[http.StatusUnauthorized], 9)
	}
}

// The access log shows the query of a stream request with the token
// redacted; the token itself is never written.
func TestStreamTokenIsNeverLogged(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	token := e.streamToken(key)
	v := e.vehicle(key, "Truck")
	sse, _ := e.eventSource(e.streamURL(token) + "&vehicle_id=" + v)
	is.True(sse != nil)
	e.eventSource(e.streamURL(token)) // refused: spent
	e.eventSource(e.srv.URL + "/v1/vehicles/locations/stream?%74oken=" + token)
	sse.cancel()
	// The stream's line is written when the server notices the client went.
	waitUntil(t, "the stream's access log line", func() bool {
		return strings.Contains(e.logs.String(), `"query":"token=REDACTED&vehicle_id=`+v) // the rest of the query is there
	})
	logs := e.logs.String()
	is.True(!strings.Contains(logs, token))                                // never the token
	is.True(!strings.Contains(logs, token[len(fleet.StreamTokenPrefix):])) // nor its random part
	is.True(strings.Contains(logs, `"query":"token=REDACTED"`))
}

// A HEAD on the live stream spends no stream token (a link checker or a
// prefetch must not use up the token a page is about to open the stream
// with): the token stays good for the GET that follows. With a key, a HEAD
// answers the stream's headers without opening a stream.
func TestHeadDoesNotSpendAStreamToken(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	p, err := e.svc.Authenticate(ctx, key)
	is.NoErr(err)
	token := e.streamToken(key)

	head := func(secret string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("HEAD", e.streamURL(token), nil)
		if secret != "" {
			req.URL.RawQuery = ""
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		res, err := e.srv.Client().Do(req)
		is.NoErr(err)
		res.Body.Close()
		return res
	}
	res := head("")
	is.Equal(res.StatusCode, http.StatusUnauthorized) // a token is for the GET that opens the stream
	is.Equal(e.svc.OpenStreams(p), 0)

	sse, r := e.eventSource(e.streamURL(token))
	is.True(sse != nil) // the token still opens the stream
	is.Equal(r.status, http.StatusOK)
	is.Equal(e.svc.OpenStreams(p), 1)
	sse.cancel()
	waitUntil(t, "the stream's slot to be freed", func() bool { return e.svc.OpenStreams(p) == 0 })

	res = head(key)
	is.Equal(res.StatusCode, http.StatusOK)
	is.Equal(res.Header.Get("Content-Type"), "text/event-stream")
	is.Equal(e.svc.OpenStreams(p), 0) // no stream was opened
	is.Equal(e.do("GET", "/v1/account", key, nil).status, http.StatusOK)
}
