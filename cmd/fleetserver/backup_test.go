package main

import (
	"net/http"
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

	"github.com/matryer/is"
)

// TestBackupUnderWriteLoad backs a SQLite store up with `fleetserver
// backup` while location batches are being posted to a server on it: the
// copy passes the checks, says what it holds, and has every point of every
// batch acknowledged before the backup began — and no batch in part.
func TestBackupUnderWriteLoad(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	src := filepath.Join(t.TempDir(), "fleet.db")
	dst := filepath.Join(t.TempDir(), "copy.db")
	srv, client, key, vehicles := bootIngest(t, bin, "sqlite:"+src)

	const size = 100
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var (
		mu    sync.Mutex
		acked [writers][]int
		total atomic.Int64
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for b := 0; b < maxBatches; b++ {
				select {
				case <-stop:
					return
				default:
				}
				status, _, body, err := post(client, srv.base+"/v1/vehicles/"+vehicles[w]+"/locations", key, batchBody(base, size, w, b))
				if err != nil || status != http.StatusOK {
					t.Errorf("writer %d batch %d: %d %s %v", w, b, status, body, err)
					return
				}
				mu.Lock()
				acked[w] = append(acked[w], b)
				mu.Unlock()
				total.Add(1)
			}
		})
	}
	waitFor(t, "20 acknowledged batches", func() bool { return total.Load() >= 20 })
	mu.Lock()
	var before [writers][]int // acknowledged before the backup began
	for w := range acked {
		before[w] = append([]int(nil), acked[w]...)
	}
	mu.Unlock()
	atStart := total.Load()
	out, err := exec.Command(bin, "backup", "--db", "sqlite:"+src, "--to", dst).CombinedOutput()
	atEnd := total.Load()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("fleetserver backup: %v\n%s", err, out)
	}
	t.Logf("backup with %d batches acknowledged during it:\n%s", atEnd-atStart, out)
	is.True(strings.Contains(string(out), "check ok"))
	is.True(regexp.MustCompile(`(?m)^\s+points\s+\d+$`).Match(out))
	is.True(regexp.MustCompile(`(?m)^\s+vehicles\s+4$`).Match(out))

	// The copy, served: every batch acknowledged before the backup began
	// is there whole, and every batch there is whole.
	is.NoErr(srv.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(srv.wait(t))
	cp := startChild(t, bin, "sqlite:"+dst)
	// (before: the batches acknowledged before the backup began)
	checkBatchesWhole(t, client, cp.base, key, vehicles, base, batchAt(base, size, maxBatches, 0), size, &before, "in the copy")
	is.NoErr(cp.cmd.Process.Signal(syscall.SIGTERM))
	is.NoErr(cp.wait(t))
}

// backup refuses what it cannot do: a copy over an existing file, a
// missing --to, a store that does not exist; for PostgreSQL it shows the
// pg_dump command (without the password) and fails.
func TestBackupRefusals(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "fleet.db")
	_, err := cmdRun(nil, "migrate", "--db", "sqlite:"+src)
	is.NoErr(err)
	exists := filepath.Join(dir, "exists.db")
	is.NoErr(os.WriteFile(exists, []byte("keep me"), 0o644))

	_, err = cmdRun(nil, "backup", "--db", "sqlite:"+src, "--to", exists)
	is.True(err != nil && strings.Contains(err.Error(), "exists"))
	b, _ := os.ReadFile(exists)
	is.Equal(string(b), "keep me") // untouched
	_, err = cmdRun(nil, "backup", "--db", "sqlite:"+src)
	is.True(err != nil && strings.Contains(err.Error(), "--to is required"))
	_, err = cmdRun(nil, "backup", "--db", "sqlite:"+filepath.Join(dir, "missing.db"), "--to", filepath.Join(dir, "c.db"))
	is.True(err != nil && strings.Contains(err.Error(), "does not exist"))
	_, err = cmdRun(nil, "backup", "--db", "memory:", "--to", filepath.Join(dir, "c.db"))
	is.True(err != nil)

	out, err := cmdRun(nil, "backup", "--db", "postgres://fleet:s3cret@db.internal:5432/fleet", "--to", "/backups/fleet.dump")
	is.True(err != nil && strings.Contains(err.Error(), "pg_dump"))
	is.True(strings.Contains(out, "pg_dump --format=custom --file='/backups/fleet.dump' 'postgres://fleet@db.internal:5432/fleet'"))
	is.True(!strings.Contains(out, "s3cret"))

	out, err = cmdRun(nil, "backup", "--db", "sqlite:"+src, "--to", filepath.Join(dir, "copy.db"))
	is.NoErr(err)
	is.True(strings.Contains(out, "check ok"))
}
