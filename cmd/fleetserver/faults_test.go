package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/matryer/is"
)

// TestPostgresCrashUnderLoadAnswers503 crashes a private PostgreSQL
// cluster (pg_ctl stop -m immediate) while location batches are being
// posted to the real server, and starts it again: every answer is 200 or
// 503 unavailable with Retry-After — never a 500, whatever the requests in
// flight at the crash were doing —, /readyz is 503 while the database is
// down and 200 again once it is back, writes succeed again without a
// restart of the server, and every acknowledged batch is stored whole.
func TestPostgresCrashUnderLoadAnswers503(t *testing.T) {
	is := is.New(t)
	cluster := pgtest.NewCluster(t)
	bin := serverBinary(t)
	srv, client, key, vehicles := bootIngest(t, bin, cluster.DSN)
	client.Timeout = 60 * time.Second

	const size = 50 // points per batch
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)

	var (
		acked    [writers][]int
		mu       sync.Mutex // guards acked
		ok, n503 atomic.Int64
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for b := 0; b < maxBatches*10; b++ {
				select {
				case <-stop:
					return
				default:
				}
				status, hdr, body, err := post(client, srv.base+"/v1/vehicles/"+vehicles[w]+"/locations", key, batchBody(base, size, w, b))
				switch {
				case err != nil:
					t.Errorf("writer %d batch %d: %v", w, b, err)
					return
				case status == http.StatusOK:
					mu.Lock()
					acked[w] = append(acked[w], b)
					mu.Unlock()
					ok.Add(1)
				case status == http.StatusServiceUnavailable:
					if hdr.Get("Retry-After") == "" || !bytes.Contains(body, []byte(`"code":"unavailable"`)) {
						t.Errorf("writer %d batch %d: 503 without Retry-After or code unavailable: %v %s", w, b, hdr, body)
					}
					n503.Add(1)
				default:
					t.Errorf("writer %d batch %d: status %d %s", w, b, status, body)
					return
				}
			}
		})
	}
	waitFor(t, "20 acknowledged batches", func() bool { return ok.Load() >= 20 })
	cluster.Stop("immediate") // a crash, with batches in flight
	waitFor(t, "503s while the database is down", func() bool { return n503.Load() >= int64(writers) })
	status, _, _, err := getRaw(client, srv.base+"/readyz")
	is.NoErr(err)
	is.Equal(status, http.StatusServiceUnavailable) // not ready without its database

	cluster.Start()
	waitFor(t, "/readyz to be 200 again", func() bool {
		status, _, _, err := getRaw(client, srv.base+"/readyz")
		return err == nil && status == http.StatusOK
	})
	after := ok.Load()
	waitFor(t, "writes to succeed again", func() bool { return ok.Load() >= after+20 })
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.Logf("server log:\n%s", srv.stderr.String())
		t.FailNow()
	}
	t.Logf("%d batches acknowledged, %d answered 503", ok.Load(), n503.Load())

	checkBatchesWhole(t, client, srv.base, key, vehicles, base, batchAt(base, size, maxBatches*10, 0), size, &acked, "stored")
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a real server, not timing a test
	}
}

// post sends a JSON body with the key and returns the status, headers and
// body of the answer.
func post(client *http.Client, url, key string, body any) (int, http.Header, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, nil, err
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return do(client, req)
}

func getRaw(client *http.Client, url string) (int, http.Header, []byte, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	return do(client, req)
}

func do(client *http.Client, req *http.Request) (int, http.Header, []byte, error) {
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", err)
	}
	return res.StatusCode, res.Header, b, nil
}
