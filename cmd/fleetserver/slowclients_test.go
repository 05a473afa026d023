package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestSlowBodiesAreCut: a request body that has not arrived within
// --body-timeout (FLEET_BODY_TIMEOUT), or --batch-body-timeout for location
// batches, is answered 400 and its connection closed.
func TestSlowBodiesAreCut(t *testing.T) {
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_BODY_TIMEOUT": "300ms"}, "--demo", "--batch-body-timeout", "400ms")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	addr := strings.TrimPrefix(s.base, "http://")
	for path, limit := range map[string]string{"/v1/vehicles": "300ms", "/v1/vehicles/locations": "400ms"} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			conn, err := dialAddr(addr)
			is.NoErr(err)
			defer conn.Close()
			_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{", path, key)
			is.NoErr(err)                                          // a body that stalls
			conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a guard against a hang only
			rd := bufio.NewReader(conn)
			res, err := http.ReadResponse(rd, nil)
			is.NoErr(err) // answered
			b, _ := io.ReadAll(res.Body)
			is.Equal(res.StatusCode, http.StatusBadRequest)
			is.True(strings.Contains(string(b), "did not arrive within "+limit))
			_, err = rd.ReadByte()
			is.Equal(err, io.EOF) // closed
		})
	}
}

// TestConnectionsAreCapped: with --max-connections 2, a third open
// connection is answered 503 and closed.
func TestConnectionsAreCapped(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--max-connections", "2")
	addr := strings.TrimPrefix(s.base, "http://")
	send := func() (*http.Response, net.Conn) {
		t.Helper()
		c, err := dialAddr(addr)
		is.NoErr(err)
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(20 * time.Second))
		_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		is.NoErr(err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		is.NoErr(err)
		io.Copy(io.Discard, res.Body)
		return res, c
	}
	for range 2 {
		res, _ := send()
		is.Equal(res.StatusCode, http.StatusOK) // kept open
	}
	res, _ := send()
	is.Equal(res.StatusCode, http.StatusServiceUnavailable)
	is.Equal(res.Header.Get("Retry-After"), "1")
}

func TestServeFlagsFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	for _, env := range []map[string]string{
		{"FLEET_MAX_CONNECTIONS": "lots"},
		{"FLEET_BODY_TIMEOUT": "soon"},
		{"FLEET_BATCH_BODY_TIMEOUT": "-1s"},
	} {
		env["FLEET_DB"] = "memory:"
		var out, errb syncBuf
		err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, &out, &errb)
		is.True(err != nil) // a bad value is refused before the server starts
	}
}

// stallBody sends a request that announces a body of 200,000 bytes and
// sends none of it, on a connection of its own.
func stallBody(t *testing.T, addr, method, path string, hdr ...string) net.Conn {
	t.Helper()
	c, err := dialAddr(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var extra strings.Builder
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&extra, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	if _, err := fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: 200000\r\n\r\n", method, path, extra.String()); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedAfterAnswer reads the answer on c and fails the test unless the
// server then closes the connection (the read deadline is only a guard
// against a hang).
func closedAfterAnswer(t *testing.T, c net.Conn, what string) *http.Response {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(c)
	res, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("%s: no answer: %v", what, err)
	}
	io.Copy(io.Discard, res.Body)
	if _, err := rd.ReadByte(); err != io.EOF {
		t.Fatalf("%s: answered %d, then the connection stayed open (%v)", what, res.StatusCode, err)
	}
	return res
}

// TestUnreadBodiesDoNotHoldConnections: a request that announces a body and
// sends none holds its connection no longer than --body-timeout, whatever
// answers it: the API, the dashboard (whose sign-in form waits for its
// body) and the metrics listener. So connections that do so cannot keep
// the server at its --max-connections: once the deadline has passed, a
// tenant's request is served.
func TestUnreadBodiesDoNotHoldConnections(t *testing.T) {
	is := is.New(t)
	const cap = 3
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_BODY_TIMEOUT": "300ms"}, "--demo",
		"--max-connections", strconv.Itoa(cap), "--metrics-addr", "127.0.0.1:0")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	metrics := s.stdout.waitFor(t, regexp.MustCompile(`metrics on http://(\S+)/metrics`))
	addr := strings.TrimPrefix(s.base, "http://")
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}

	res := closedAfterAnswer(t, stallBody(t, addr, "POST", "/v1/vehicles", "Content-Type", "application/json"), "API without a key")
	is.Equal(res.StatusCode, http.StatusUnauthorized)
	res = closedAfterAnswer(t, stallBody(t, addr, "POST", "/sign-in", form...), "dashboard sign-in")
	is.Equal(res.StatusCode, http.StatusBadRequest) // the form never came
	res = closedAfterAnswer(t, stallBody(t, metrics, "GET", "/metrics"), "metrics")
	is.Equal(res.StatusCode, http.StatusOK)

	// The cap's worth of connections, each waiting on a body.
	var held []net.Conn
	for i := range cap {
		if i%2 == 0 {
			held = append(held, stallBody(t, addr, "POST", "/sign-in", form...))
		} else {
			held = append(held, stallBody(t, addr, "POST", "/v1/vehicles", "Authorization", "Bearer "+key, "Content-Type", "application/json"))
		}
	}
	for i, c := range held {
		closedAfterAnswer(t, c, fmt.Sprintf("held connection %d", i))
	}
	c, err := dialAddr(addr)
	is.NoErr(err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	_, err = fmt.Fprintf(c, "GET /v1/account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", key)
	is.NoErr(err)
	res, err = http.ReadResponse(bufio.NewReader(c), nil)
	is.NoErr(err)
	is.Equal(res.StatusCode, http.StatusOK) // served, not 503
}
