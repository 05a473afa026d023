package fleethttp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// A request body must arrive within its deadline: a client that sends half
// of it and stalls is answered 400 naming the limit, and its connection is
// closed, while other requests are served. Location batches have a
// deadline of their own.
func TestSlowBodiesAreCut(t *testing.T) {
	const tiny, long = 200 * time.Millisecond, time.Minute
	for _, tc := range []struct {
		name        string
		body, batch time.Duration
		path        func(veh string) string
	}{
		{"ordinary body", tiny, long, func(string) string { return "/v1/vehicles" }},
		{"location batch", long, tiny, func(veh string) string { return "/v1/vehicles/" + veh + "/locations" }},
		{"bulk location batch", long, tiny, func(string) string { return "/v1/vehicles/locations" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithBodyTimeouts(tc.body, tc.batch))
			_, key := e.account(fleet.PlanPro)
			veh := e.vehicle(key, "Truck")
			path := tc.path(veh)

			conn, err := dialRaw(e.srv.URL)
			is.NoErr(err) // dial
			defer conn.Close()
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":", path, key)
			is.NoErr(err) // half a body, then nothing

			is.Equal(e.do("GET", "/v1/vehicles/"+veh, key, nil).status, http.StatusOK) // others are served meanwhile

			// The answer comes once the deadline passes, long before this
			// guard against a hang.
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			rd := bufio.NewReader(conn)
			req, _ := http.NewRequest("POST", e.srv.URL+path, nil)
			res, err := http.ReadResponse(rd, req)
			is.NoErr(err) // an answer, not a hang
			b, err := io.ReadAll(res.Body)
			is.NoErr(err)
			r := &response{t: t, status: res.StatusCode, header: res.Header, body: b}
			e.validate(req, nil, r)
			is.Equal(r.status, http.StatusBadRequest)
			is.Equal(r.errCode(), "invalid_request")
			is.Equal(r.errMessage(), "The request body did not arrive within 200ms.")
			_, err = rd.ReadByte()
			is.Equal(err, io.EOF) // and the connection is closed

			is.Equal(len(e.do("GET", "/v1/vehicles", key, nil).list()), 1) // nothing was created
		})
	}
}

// A body that arrives in time, however slowly within it, is served; the
// connection stays usable for the next request.
func TestBodyWithinItsDeadlineIsServed(t *testing.T) {
	is := is.New(t)
	e := newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithBodyTimeouts(5*time.Second, 5*time.Second))
	_, key := e.account(fleet.PlanPro)
	conn, err := dialRaw(e.srv.URL)
	is.NoErr(err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(conn)
	body := `{"name":"Truck"}`
	for range 2 {
		_, err = fmt.Fprintf(conn, "POST /v1/vehicles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, len(body), body[:5])
		is.NoErr(err)
		_, err = io.WriteString(conn, body[5:])
		is.NoErr(err)
		res, err := http.ReadResponse(rd, nil)
		is.NoErr(err)
		io.Copy(io.Discard, res.Body)
		is.Equal(res.StatusCode, http.StatusCreated) // each request on the same connection
	}
}

// With a cap of N open connections, the N+1th is answered 503 unavailable
// (the error envelope, Retry-After) and closed; once one closes, a new one
// is served.
func TestConnectionsOverTheCapAreRefused(t *testing.T) {
	is := is.New(t)
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	h := fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler)), fleethttp.WithVersion("v9.9.9-capped"))
	srv := &http.Server{Handler: h}
	go srv.Serve(h.LimitConnections(ln, 2))
	defer srv.Close()
	addr := ln.Addr().String()

	// healthz sends a request on conn and returns the answer.
	healthz := func(conn net.Conn, rd *bufio.Reader) (*http.Response, []byte) {
		t.Helper()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		_, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		is.NoErr(err) // send
		res, err := http.ReadResponse(rd, nil)
		is.NoErr(err) // an answer
		b, err := io.ReadAll(res.Body)
		is.NoErr(err)
		return res, b
	}
	var open []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		is.NoErr(err)
		defer c.Close()
		res, _ := healthz(c, bufio.NewReader(c))
		is.Equal(res.StatusCode, http.StatusOK) // within the cap; kept open
		open = append(open, c)
	}

	over, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer over.Close()
	rd := bufio.NewReader(over)
	res, b := healthz(over, rd)
	is.Equal(res.StatusCode, http.StatusServiceUnavailable)
	is.Equal(res.Header.Get("Retry-After"), "1")
	is.Equal(res.Header.Get("Content-Type"), "application/json")
	is.True(res.Close) // Connection: close
	var env struct {
		Success bool `json:"success"`
		Error   struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	is.NoErr(json.NewDecoder(bytes.NewReader(b)).Decode(&env))
	is.Equal(env.Success, false)
	is.Equal(env.Error.Code, "unavailable")
	is.True(strings.Contains(env.Error.Message, "too many open connections"))
	is.Equal(res.Header.Get("X-Request-Id"), env.Error.RequestID)
	is.Equal(res.Header.Get(fleethttp.VersionHeader), "v9.9.9-capped") // the handler's version, as its answers
	_, err = rd.ReadByte()
	is.Equal(err, io.EOF) // and closed

	open[0].Close()
	served := false
	waitUntil(t, "a connection to be served after one closed", func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		res, _ := healthz(c, bufio.NewReader(c))
		served = res.StatusCode == http.StatusOK
		return served
	})
	is.True(served)
}

// unreadBodyAnswer sends a request that announces a body of 200,000 bytes
// and sends none of it, and returns the answer; it fails the test unless
// the server then closes the connection. The read deadline is only a guard
// against a hang.
func unreadBodyAnswer(t *testing.T, addr, method, path string, hdr ...string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var extra strings.Builder
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&extra, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	if _, err := fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: 200000\r\n\r\n", method, path, extra.String()); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(conn)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	if _, err := io.ReadAll(res.Body); err != nil {
		t.Fatalf("%s %s: the answer's body: %v", method, path, err)
	}
	if !res.Close {
		t.Errorf("%s %s: answered %d without Connection: close", method, path, res.StatusCode)
	}
	if _, err := rd.ReadByte(); err != io.EOF {
		t.Fatalf("%s %s: answered %d, then the connection stayed open (%v)", method, path, res.StatusCode, err)
	}
	return res
}

// A request answered without its body being read (401, 429, 404, 405,
// 415) does not hold its connection: the answer says Connection: close and
// the connection is closed at once, long before the body deadline (a
// minute here), whatever the client sends or does not send.
func TestUnreadBodiesDoNotHoldTheConnection(t *testing.T) {
	is := is.New(t)
	e := newEnvOn(t, memstore.New(), testclock.New(T0), fleethttp.WithBodyTimeouts(time.Minute, time.Minute),
		func(o *fleet.Options) { o.AddressLimit = 1 })
	_, key := e.account(fleet.PlanPro)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	auth := []string{"Authorization", "Bearer " + key, "Content-Type", "application/json"}
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"no key", "POST", "/v1/vehicles", []string{"Content-Type", "application/json"}, http.StatusUnauthorized},
		{"no key, over the address's allowance", "POST", "/v1/vehicles", []string{"Content-Type", "application/json"}, http.StatusTooManyRequests},
		{"unknown route", "POST", "/v1/nowhere", auth, http.StatusNotFound},
		{"wrong method", "PUT", "/v1/vehicles", auth, http.StatusMethodNotAllowed},
		{"wrong media type", "POST", "/v1/vehicles", []string{"Authorization", "Bearer " + key, "Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"location batch, wrong media type", "POST", "/v1/vehicles/locations", []string{"Authorization", "Bearer " + key, "Content-Type", "text/csv"}, http.StatusUnsupportedMediaType},
	} {
		res := unreadBodyAnswer(t, addr, tc.method, tc.path, tc.hdr...)
		is.Equal(res.StatusCode, tc.status) // tc.name
	}
	is.Equal(e.do("GET", "/v1/account", key, nil).status, http.StatusOK) // and the server serves on
}

// LimitBodyTime gives any handler the same guarantee: an answer given
// without reading the body closes the connection at once, and a handler
// that waits for a body that does not come is cut off at the deadline.
func TestLimitBodyTime(t *testing.T) {
	is := is.New(t)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /ignore", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mux.HandleFunc("POST /form", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form did not arrive", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	})
	srv := httptest.NewServer(fleethttp.LimitBodyTime(mux, 200*time.Millisecond))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	is.Equal(unreadBodyAnswer(t, addr, "POST", "/ignore").StatusCode, http.StatusAccepted)
	is.Equal(unreadBodyAnswer(t, addr, "POST", "/form", "Content-Type", "application/x-www-form-urlencoded").StatusCode, http.StatusBadRequest)
	is.Equal(unreadBodyAnswer(t, addr, "GET", "/nowhere").StatusCode, http.StatusNotFound)

	// A body that arrives is read as ever, and the connection is kept.
	conn, err := net.Dial("tcp", addr)
	is.NoErr(err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(conn)
	for range 2 {
		_, err = io.WriteString(conn, "POST /form HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b")
		is.NoErr(err)
		res, err := http.ReadResponse(rd, nil)
		is.NoErr(err)
		b, _ := io.ReadAll(res.Body)
		is.Equal(string(b), "ok")
		is.True(!res.Close) // kept alive
	}
}
