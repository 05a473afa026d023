package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/matryer/is"
)

// A 2xx means durable: the real binary is killed with SIGKILL while
// location batches are being posted from several goroutines, again and
// again on the same database, and in the end every point of every
// acknowledged batch is in the history — and no batch is there in part.

func TestSIGKILLKeepsAcknowledgedPointsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.db")
	checkKillDuringIngest(t, "sqlite:"+path, sqliteKillRounds, func(t *testing.T) {
		// The file the killed process left is sound: `fleetserver check`
		// opens it (replaying the WAL, as the restarted server will) and
		// runs PRAGMA integrity_check and foreign_key_check.
		out, err := exec.Command(serverBinary(t), "check", "--db", "sqlite:"+path).CombinedOutput()
		if err != nil {
			t.Fatalf("fleetserver check: %v\n%s", err, out)
		}
	})
}

func TestSIGKILLKeepsAcknowledgedPointsPostgres(t *testing.T) {
	checkKillDuringIngest(t, pgtest.NewDSN(t), 3, nil)
}

// sqliteKillRounds is how many times the SQLite server is killed during
// ingest, on one database file, with an integrity check after each kill.
const sqliteKillRounds = 20

// binDir holds the fleetserver binary that the tests of this package build
// once; TestMain removes it.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// serverBinary builds fleetserver once per test run and returns its path.
func serverBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binError = os.MkdirTemp("", "fleetserver-test-")
		if binError != nil {
			return
		}
		binPath = filepath.Join(binDir, "fleetserver")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// child is a fleetserver process.
type child struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuf
	done   chan struct{} // closed when the process has been waited for
	err    error         // Wait's result, once done
}

var listeningLine = regexp.MustCompile(`^fleetserver listening on (http://\S+)`)

// startChild runs "fleetserver serve" on dsn and a free loopback port and
// returns once it prints the address it listens on. The process is killed
// when the test ends if it still runs.
func startChild(t *testing.T, bin, dsn string) *child {
	t.Helper()
	c := &child{stderr: &syncBuf{}, done: make(chan struct{})}
	c.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dsn)
	c.cmd.Stderr = c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// One goroutine reads stdout to its end, handing over the address,
	// then waits for the process (Wait must follow the last read).
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil && !found {
				found = true
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case c.base = <-addr:
		return c
	case <-c.done:
		t.Fatalf("fleetserver exited before listening: %v\n%s", c.err, c.stderr.String())
	case <-timeout.C:
		t.Fatalf("fleetserver did not say where it listens within 30s:\n%s", c.stderr.String())
	}
	return nil
}

// wait waits for the process to exit and returns Wait's result.
func (c *child) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(30 * time.Second):
		t.Fatalf("fleetserver did not exit:\n%s", c.stderr.String())
		return nil
	}
}

// stoppedBy fails the test unless err, the server's exit, is what sig
// makes of it: a clean exit after SIGTERM, death by SIGKILL.
func stoppedBy(t *testing.T, sig syscall.Signal, err error, stderr *syncBuf) {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case sig == syscall.SIGTERM && err != nil:
		t.Fatalf("after SIGTERM the server exited with %v\n%s", err, stderr.String())
	case sig == syscall.SIGKILL && (!errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL):
		t.Fatalf("the server was not killed by SIGKILL: %v", err)
	}
}

// call sends a JSON request with the key and decodes the response.
func call(client *http.Client, method, url, key string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return res.StatusCode, nil, fmt.Errorf("response is not JSON: %s", b)
	}
	return res.StatusCode, m, nil
}

// Shape of the ingest: writers goroutines, each posting batches of
// batchSize points of its own vehicle; the server is killed when
// killAfter batches have been acknowledged.
const (
	writers   = 4
	batchSize = 250
	killAfter = 40
	// maxBatches bounds each writer's loop, should the kill not stop it.
	maxBatches = 1000
)

// checkKillDuringIngest runs the crash test on dsn, rounds times over the
// same database; afterKill, when not nil, inspects the database while no
// server runs, after every kill.
func checkKillDuringIngest(t *testing.T, dsn string, rounds int, afterKill func(t *testing.T)) {
	is := is.New(t)
	bin := serverBinary(t)
	srv, client, key, vehicles := bootIngest(t, bin, dsn)

	// Point j of batch b of writer w is at base + ((b*batchSize)+j) ms, so
	// every point has a timestamp of its own and its batch is known from it;
	// round r numbers its batches from r*maxBatches.
	base := time.Now().UTC().Add(-time.Duration(rounds+1) * maxBatches * batchSize * time.Millisecond).Truncate(time.Second)

	var acked [writers][]int // acknowledged batches, by writer, of every round
	for r := range rounds {
		if r > 0 {
			srv = startChild(t, bin, dsn)
		}
		ingestUntilKilled(t, srv, client, key, vehicles, r*maxBatches, base, &acked)
		if afterKill != nil {
			afterKill(t)
		}
	}

	// Started again on the same database, the server has every point of
	// every acknowledged batch; each batch is there whole or not at all.
	srv = startChild(t, bin, dsn)
	checkBatchesWhole(t, client, srv.base, key, vehicles, base, batchAt(base, batchSize, rounds*maxBatches, 0), batchSize, &acked, "stored")
	// A graceful stop ends the last run.
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
}

// bootIngest bootstraps an account from the shell as an operator does,
// starts the server on dsn and gives it a vehicle for each writer.
func bootIngest(t *testing.T, bin, dsn string) (srv *child, client *http.Client, key string, vehicles []string) {
	t.Helper()
	is := is.New(t)
	out, err := exec.Command(bin, "accounts", "create", "--company", "Crash Test Haulage", "--plan", "enterprise", "--db", dsn, "--json").Output()
	if err != nil {
		t.Fatalf("accounts create: %v (%s)", err, out)
	}
	var acc map[string]string
	is.NoErr(json.Unmarshal(out, &acc))
	key = acc["api_key"]
	srv = startChild(t, bin, dsn)
	client = &http.Client{Timeout: 30 * time.Second}
	vehicles = make([]string, writers)
	for i := range vehicles {
		status, body, err := call(client, "POST", srv.base+"/v1/vehicles", key, map[string]any{"name": fmt.Sprintf("Truck %d", i)})
		is.NoErr(err)
		is.Equal(status, http.StatusCreated)
		vehicles[i] = body["data"].(map[string]any)["vehicle_id"].(string)
	}
	return srv, client, key, vehicles
}

// ingestUntilKilled posts batches from several writers, numbered from
// first, and kills the server with SIGKILL once killAfter of them are
// acknowledged, while others are in flight. It appends the acknowledged
// batches to acked.
func ingestUntilKilled(t *testing.T, srv *child, client *http.Client, key string, vehicles []string, first int, base time.Time, acked *[writers][]int) {
	ingestUntilSignal(t, syscall.SIGKILL, srv, client, key, vehicles, first, base, acked)
}

// batchAt is the time of point j of batch b of size points after base:
// base + (b*size + j) ms, so that every point has a timestamp of its own
// and a stored point names its batch (checkBatchesWhole reads it so).
func batchAt(base time.Time, size, b, j int) time.Time {
	return base.Add(time.Duration(b*size+j) * time.Millisecond)
}

// batchBody is the body of batch b of writer w: size points at batchAt.
func batchBody(base time.Time, size, w, b int) map[string]any {
	pts := make([]map[string]any, size)
	for j := range pts {
		pts[j] = map[string]any{"latitude": 52 + float64(w)/10, "longitude": 13 + float64(j)/1000,
			"timestamp": batchAt(base, size, b, j).Format(time.RFC3339Nano), "speed": 30}
	}
	return map[string]any{"locations": pts}
}

// ingestUntilSignal is ingestUntilKilled with another signal: after
// SIGTERM the server must exit cleanly.
func ingestUntilSignal(t *testing.T, sig syscall.Signal, srv *child, client *http.Client, key string, vehicles []string, first int, base time.Time, acked *[writers][]int) {
	is := is.New(t)
	var (
		total    atomic.Int64 // acknowledged batches, all writers
		inFlight atomic.Int64 // requests sent and not yet answered
		atKill   atomic.Int64 // inFlight when the kill was sent
		killed   atomic.Bool
		killOnce sync.Once
		wg       sync.WaitGroup
	)
	kill := func() {
		killOnce.Do(func() {
			atKill.Store(inFlight.Load())
			killed.Store(true)
			srv.cmd.Process.Signal(sig)
		})
	}
	for w := range writers {
		wg.Go(func() {
			for b := first; b < first+maxBatches; b++ {
				inFlight.Add(1)
				status, body, err := call(client, "POST", srv.base+"/v1/vehicles/"+vehicles[w]+"/locations", key, batchBody(base, batchSize, w, b))
				inFlight.Add(-1)
				if err != nil { // the server is gone: stop
					if !killed.Load() {
						t.Errorf("writer %d batch %d: %v", w, b, err)
					}
					return
				}
				if status != http.StatusOK {
					t.Errorf("writer %d batch %d: status %d %v\nserver log:\n%s", w, b, status, body, srv.stderr.String())
					kill()
					return
				}
				if got := body["data"].(map[string]any)["accepted"]; got != float64(batchSize) {
					t.Errorf("writer %d batch %d: accepted %v", w, b, got)
				}
				acked[w] = append(acked[w], b)
				if total.Add(1) == killAfter {
					kill() // batches of the other writers are in flight
				}
			}
		})
	}
	wg.Wait()
	kill()
	stoppedBy(t, sig, srv.wait(t), srv.stderr)
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%v after %d acknowledged batches, with %d requests in flight", sig, total.Load(), atKill.Load())
	is.True(total.Load() >= killAfter) // the kill came after killAfter acknowledgements
	is.True(atKill.Load() > 0)         // and while batches were in flight
}

// TestSIGTERMUnderLoadLosesNothing: SIGTERM while location batches are
// being posted from several goroutines — the requests in flight are
// finished and answered, new ones are refused, the process exits cleanly,
// and after a restart exactly the acknowledged batches are stored: none
// lost, and none stored without its answer having gone out.
func TestSIGTERMUnderLoadLosesNothing(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	srv, client, key, vehicles := bootIngest(t, bin, dsn)
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var acked [writers][]int
	ingestUntilSignal(t, syscall.SIGTERM, srv, client, key, vehicles, 0, base, &acked)
	is.True(strings.Contains(srv.stderr.String(), "shutting down"))

	srv = startChild(t, bin, dsn)
	for w, veh := range vehicles {
		have := history(t, client, srv.base, key, veh, base, batchAt(base, batchSize, maxBatches, 0))
		byBatch := map[int]int{}
		for ms := range have {
			byBatch[int(ms)/batchSize]++
		}
		for _, b := range acked[w] {
			if byBatch[b] != batchSize {
				t.Errorf("writer %d batch %d was acknowledged, but %d of its %d points are stored", w, b, byBatch[b], batchSize)
			}
			delete(byBatch, b)
		}
		for b, n := range byBatch {
			t.Errorf("writer %d batch %d: %d points stored, but its answer never came", w, b, n)
		}
	}
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
}

// history walks a vehicle's history from from to to by cursor and returns
// the stored points' offsets from from, in milliseconds.
func history(t *testing.T, client *http.Client, base, key, vehicle string, from, to time.Time) map[int64]bool {
	t.Helper()
	have := map[int64]bool{}
	cursor := ""
	for {
		q := url.Values{"from": {from.Format(time.RFC3339Nano)}, "to": {to.Format(time.RFC3339Nano)}, "limit": {"10000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		status, body, err := call(client, "GET", base+"/v1/vehicles/"+vehicle+"/locations?"+q.Encode(), key, nil)
		if err != nil || status != http.StatusOK {
			t.Fatalf("history: %d %v %v", status, body, err)
		}
		for _, p := range body["data"].([]any) {
			ts, err := time.Parse(time.RFC3339Nano, p.(map[string]any)["timestamp"].(string))
			if err != nil {
				t.Fatal(err)
			}
			ms := ts.Sub(from).Milliseconds()
			if have[ms] {
				t.Fatalf("history repeats the point at %s", ts)
			}
			have[ms] = true
		}
		next, _ := body["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			return have
		}
		cursor = next
	}
}

// checkBatchesWhole reads each writer's vehicle's history from from to to
// on the server at base and fails the test for a batch of size points that
// is there in part, or for an acknowledged batch that is not there whole.
// where says where the points are looked for ("stored", "in the copy").
func checkBatchesWhole(t *testing.T, client *http.Client, base, key string, vehicles []string, from, to time.Time, size int, acked *[writers][]int, where string) {
	t.Helper()
	for w, veh := range vehicles {
		byBatch := map[int]int{}
		for ms := range history(t, client, base, key, veh, from, to) {
			byBatch[int(ms)/size]++
		}
		for b, n := range byBatch {
			if n != size {
				t.Errorf("writer %d batch %d: %d of %d points %s", w, b, n, size, where)
			}
		}
		for _, b := range acked[w] {
			if byBatch[b] != size {
				t.Errorf("writer %d batch %d was acknowledged, but %d of its %d points are %s", w, b, byBatch[b], size, where)
			}
		}
	}
}
