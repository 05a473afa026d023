package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// lineWriter keeps every line written to it and wakes whoever waits for one.
type lineWriter struct {
	mu      sync.Mutex
	partial strings.Builder
	lines   []string
	changed chan struct{}
}

func newLineWriter() *lineWriter { return &lineWriter{changed: make(chan struct{})} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial.Write(p)
	s := w.partial.String()
	added := false
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, s[:i])
		s = s[i+1:]
		added = true
	}
	w.partial.Reset()
	w.partial.WriteString(s)
	if added {
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// waitFor returns the first submatch of the first line, written so far or
// later, that matches re.
func (w *lineWriter) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if m := re.FindStringSubmatch(l); m != nil {
				w.mu.Unlock()
				return m[1]
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("no line matching %s in:\n%s", re, w.String())
		}
	}
}

type server struct {
	base   string
	stdout *lineWriter
	stderr *lineWriter
	stop   func() error
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the server in-process on a free loopback port.
func start(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: newLineWriter(), stderr: newLineWriter()}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), func(k string) string { return env[k] }, s.stdout, s.stderr)
	}()
	var once sync.Once
	var runErr error
	s.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { s.stop() })
	s.base = s.stdout.waitFor(t, regexp.MustCompile(`listening on (http://\S+)`))
	return s
}

func get(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(res.Body)
	json.Unmarshal(b, &m)
	return res.StatusCode, m
}

func TestServeDemo(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"FLEET_DB": "memory:"}
	ctx, cancel := context.WithCancel(context.Background())
	out := newLineWriter()
	stderr := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--demo"}, func(k string) string { return env[k] }, out, stderr)
	}()
	key := out.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	curl := out.waitFor(t, regexp.MustCompile(`^\s+(curl .*)$`))
	base := out.waitFor(t, regexp.MustCompile(`listening on (http://\S+)`))
	is.True(strings.Contains(curl, key))
	is.True(strings.Contains(curl, base+"/v1/account")) // a ready curl line

	status, body := get(t, base+"/v1/account", key)
	is.Equal(status, 200)
	data := body["data"].(map[string]any)
	is.Equal(data["plan"], "enterprise")
	is.Equal(data["company_name"], "Demo Logistics")
	is.Equal(data["api_version"], "v1")

	status, body = get(t, base+"/v1/vehicles/locations?limit=100", key)
	is.Equal(status, 200)
	is.Equal(len(body["data"].([]any)), 25) // the simulated fleet is on the map at once
	status, body = get(t, base+"/v1/alerts/rules", key)
	is.Equal(status, 200)
	is.Equal(len(body["data"].([]any)), 3) // rules the fleet will break: speeding, and a geofence's enter and exit

	status, _ = get(t, base+"/v1/account", "")
	is.Equal(status, 401)
	status, _ = get(t, base+"/healthz", "")
	is.Equal(status, 200)

	cancel() // as SIGTERM does
	select {
	case err := <-done:
		is.NoErr(err) // a clean shutdown
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
	}
	is.True(strings.Contains(stderr.String(), "shutting down"))
	is.True(!strings.Contains(stderr.String(), key)) // the key is never logged
}

func TestServeFinishesInFlightRequestsOnShutdown(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	addr := strings.TrimPrefix(s.base, "http://")
	conn, err := dialAddr(addr)
	is.NoErr(err)
	defer conn.Close()
	body := `{"name":"made during shutdown"}`
	_, err = fmt.Fprintf(conn, "POST /v1/api_keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, len(body))
	is.NoErr(err)
	rd := bufio.NewReader(conn)
	line, err := rd.ReadString('\n')
	is.NoErr(err)
	is.True(strings.Contains(line, "100 Continue")) // the handler is now running
	rd.ReadString('\n')

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	s.stderr.waitFor(t, regexp.MustCompile(`(shutting down)`))
	_, err = io.WriteString(conn, body)
	is.NoErr(err)
	res, err := http.ReadResponse(rd, nil)
	is.NoErr(err)
	is.Equal(res.StatusCode, 201) // the in-flight request was finished
	is.NoErr(<-stopped)
	_, err = dialAddr(addr)
	is.True(err != nil) // and new connections are refused
}

func TestUnknownCommandAndStore(t *testing.T) {
	is := is.New(t)
	var out, errb syncBuf
	err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &out, &errb)
	is.True(err != nil)
	err = run(context.Background(), []string{"serve", "--db", "redis://x"}, func(string) string { return "" }, &out, &errb)
	is.True(err != nil && strings.Contains(err.Error(), "unknown store"))
	is.True(strings.Contains(err.Error(), "redis://x")) // the DSN as given
}

// TestOperatorBootstrapOnSQLite: accounts create --json prints a working
// key, keys create adds another, and the data survives a restart.
func TestOperatorBootstrapOnSQLite(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + t.TempDir() + "/fleet.db"
	env := map[string]string{"FLEET_DB": dsn}
	getenv := func(k string) string { return env[k] }
	var out, errb syncBuf
	is.NoErr(run(context.Background(), []string{"migrate"}, getenv, &out, &errb))
	is.True(strings.Contains(out.String(), "up to date"))

	out = syncBuf{}
	is.NoErr(run(context.Background(), []string{"accounts", "create", "--company", "Acme Haulage", "--plan", "pro", "--json"}, getenv, &out, &errb))
	var acc map[string]string
	is.NoErr(json.Unmarshal([]byte(out.String()), &acc))
	is.True(strings.HasPrefix(acc["account_id"], "acc_"))
	is.Equal(acc["company_name"], "Acme Haulage")
	is.Equal(acc["plan"], "pro")
	is.True(strings.HasPrefix(acc["key_id"], "key_"))
	is.True(strings.HasPrefix(acc["api_key"], "fleet_"))

	out = syncBuf{}
	is.NoErr(run(context.Background(), []string{"keys", "create", "--account", acc["account_id"], "--name", "gateway", "--permissions", "locations:write,vehicles:read", "--json"}, getenv, &out, &errb))
	var key map[string]any
	is.NoErr(json.Unmarshal([]byte(out.String()), &key))
	is.Equal(key["permissions"], []any{"locations:write", "vehicles:read"})

	err := run(context.Background(), []string{"keys", "create", "--account", "acc_nope", "--name", "x"}, getenv, &out, &errb)
	is.True(err != nil) // an unknown account is refused
	err = run(context.Background(), []string{"accounts", "create", "--company", "X", "--plan", "gold"}, getenv, &out, &errb)
	is.True(err != nil && strings.Contains(err.Error(), "plan"))

	s := start(t, env)
	status, body := get(t, s.base+"/v1/account", acc["api_key"])
	is.Equal(status, 200) // the printed key works
	is.Equal(body["data"].(map[string]any)["company_name"], "Acme Haulage")
	req, _ := http.NewRequest("POST", s.base+"/v1/vehicles", strings.NewReader(`{"name":"Truck 1"}`))
	req.Header.Set("Authorization", "Bearer "+acc["api_key"])
	res, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	res.Body.Close()
	is.Equal(res.StatusCode, 201)
	is.NoErr(s.stop())

	s = start(t, env) // a restart on the same file
	status, body = get(t, s.base+"/v1/vehicles", acc["api_key"])
	is.Equal(status, 200)
	is.Equal(len(body["data"].([]any)), 1) // the vehicle survived
	status, _ = get(t, s.base+"/v1/account", key["api_key"].(string))
	is.Equal(status, 200)
}

// TestSlowHeadersAreCut: a client that opens a connection and never
// finishes its request headers (slowloris) has its connection closed by the
// server once the header timeout passes, while a prompt client on another
// connection is served.
func TestSlowHeadersAreCut(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--read-header-timeout", "300ms")
	addr := strings.TrimPrefix(s.base, "http://")

	slow, err := dialAddr(addr)
	is.NoErr(err)
	defer slow.Close()
	_, err = io.WriteString(slow, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ") // and nothing more
	is.NoErr(err)

	status, _ := get(t, s.base+"/healthz", "")
	is.Equal(status, 200) // others are served meanwhile

	// The read ends because the server closed the connection, long before
	// this deadline (which is only a guard against a hang).
	slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := io.Copy(io.Discard, slow)
	var ne net.Error
	is.True(!(errors.As(err, &ne) && ne.Timeout())) // closed by the server, not timed out here
	t.Logf("slow connection closed after %d bytes of answer (err %v)", n, err)
}

func TestMetricsListener(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--metrics-addr", "127.0.0.1:0")
	metrics := s.stdout.waitFor(t, regexp.MustCompile(`metrics on (http://\S+)`))
	is.True(!strings.HasPrefix(metrics, s.base)) // a listener of its own
	status, _ := get(t, s.base+"/v1/account", "")
	is.Equal(status, 401)
	res, err := http.Get(metrics)
	is.NoErr(err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	is.Equal(res.StatusCode, 200)
	is.True(strings.Contains(string(b), `fleet_http_requests_total{code="4xx",route="none"} 1`))
	status, _ = get(t, s.base+"/metrics", "")
	is.Equal(status, 404) // not on the API's listener (where paths outside /v1 are the dashboard's)
}

func TestCheckCommand(t *testing.T) {
	is := is.New(t)
	file := filepath.Join(t.TempDir(), "fleet.db")
	dsn := "sqlite:" + file
	var out, errb syncBuf
	err := run(context.Background(), []string{"check", "--db", dsn}, func(string) string { return "" }, &out, &errb)
	is.True(err != nil && strings.Contains(err.Error(), "does not exist")) // a missing file is refused...
	_, serr := os.Stat(file)
	is.True(os.IsNotExist(serr)) // ...and not made
	is.NoErr(run(context.Background(), []string{"migrate", "--db", dsn}, func(string) string { return "" }, &out, &errb))
	is.NoErr(run(context.Background(), []string{"check", "--db", dsn}, func(string) string { return "" }, &out, &errb))
	is.True(strings.Contains(out.String(), ": ok"))

	// A file that is not a database is reported, not passed.
	bad := filepath.Join(t.TempDir(), "bad.db")
	is.NoErr(os.WriteFile(bad, []byte(strings.Repeat("not a database ", 1000)), 0o644))
	err = run(context.Background(), []string{"check", "--db", "sqlite:" + bad}, func(string) string { return "" }, &out, &errb)
	is.True(err != nil)
}

// TestKeysCreateCountsAgainstTheCap: keys made from the command line count
// against the plan's cap of active keys, the first key of accounts create
// included, and one more is refused with the cap named.
func TestKeysCreateCountsAgainstTheCap(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"FLEET_DB": "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")}
	getenv := func(k string) string { return env[k] }
	var out, errb syncBuf
	is.NoErr(run(context.Background(), []string{"accounts", "create", "--company", "Acme", "--json"}, getenv, &out, &errb))
	var acc map[string]string
	is.NoErr(json.Unmarshal([]byte(out.String()), &acc))
	limit := fleet.PlanFree.Limits().ActiveKeys
	for i := 1; i < limit; i++ {
		is.NoErr(run(context.Background(), []string{"keys", "create", "--account", acc["account_id"], "--name", fmt.Sprint("k", i)}, getenv, &out, &errb))
	}
	err := run(context.Background(), []string{"keys", "create", "--account", acc["account_id"], "--name", "one more"}, getenv, &out, &errb)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), fmt.Sprintf("at most %d active API keys", limit)))
}

// TestAnonymousLimitFlag: --anonymous-limit sets the hourly allowance per
// address of requests without a valid key, whose 429 says what it is;
// FLEET_ANONYMOUS_LIMIT=0 turns the brake off; a bad value is refused.
func TestAnonymousLimitFlag(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--anonymous-limit", "2")
	for range 2 {
		status, _ := get(t, s.base+"/v1/account", "fleet_typo")
		is.Equal(status, 401)
	}
	status, body := get(t, s.base+"/v1/account", "fleet_typo")
	is.Equal(status, 429)
	is.Equal(body["error"].(map[string]any)["message"], "Too many requests without a valid API key from this address; retry after 3600 seconds.")

	s = start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_ANONYMOUS_LIMIT": "0"})
	for range fleet.DefaultAddressLimit + 5 {
		status, _ := get(t, s.base+"/v1/account", "fleet_typo")
		is.Equal(status, 401) // never braked
	}
	is.True(strings.Contains(s.stderr.String(), "--anonymous-limit is 0"))

	var out, errb syncBuf
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{map[string]string{"FLEET_ANONYMOUS_LIMIT": "lots"}, nil},
		{nil, []string{"--anonymous-limit", "-1"}},
	} {
		err := run(context.Background(), append([]string{"serve", "--db", "memory:", "--addr", "127.0.0.1:0"}, c.args...),
			func(k string) string { return c.env[k] }, &out, &errb)
		is.True(err != nil && strings.Contains(strings.ToLower(err.Error()), "anonymous"))
	}
}
