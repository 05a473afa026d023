package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// openFiles lists the files under dir this process holds open.
func openFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("listing open files needs /proc: %v", err)
	}
	var open []string
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, dir) {
			open = append(open, l)
		}
	}
	return open
}

// TestStmtCacheCloseWaitsForItsPrepares: statements prepared in the
// background while the cache closes hold no connection once close and the
// pool's Close have returned, so the file is free to reopen at once.
func TestStmtCacheCloseWaitsForItsPrepares(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.db")
	for round := range 20 {
		db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)")
		is.NoErr(err)
		db.SetMaxOpenConns(1)
		is.NoErr(db.PingContext(context.Background()))
		c := newStmtCache(db)
		for i := range 16 {
			c.get(fmt.Sprintf("SELECT %d + %d", round, i)) // prepared in the background
		}
		is.NoErr(c.close())
		is.NoErr(db.Close())
		is.Equal(openFiles(t, dir), nil) // nothing left open after close
	}
}
