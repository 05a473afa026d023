package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
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
