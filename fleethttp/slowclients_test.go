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
	srv := &http.Server{Handler: fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler)))}
	go srv.Serve(fleethttp.LimitConnections(ln, 2))
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
