package sqlstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// A SQLite store's files are its owner's alone: the database it makes,
// the -wal and -shm files beside it, and a backup (0600), whatever the
// umask lets through.
func TestSQLiteFilesAreTheOwners(t *testing.T) {
	is := is.New(t)
	old := syscall.Umask(0o022) // most systems': it lets others read new files
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "fleet.db")
	s := MustOpen(t, "sqlite:"+path)
	svc := fleet.NewService(s, fleet.Options{})
	_, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme"})
	is.NoErr(err)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		is.NoErr(err)
		is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // the owner's alone
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	is.NoErr(sqlstore.BackupSQLite(ctx, path, dst))
	fi, err := os.Stat(dst)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // the backup too
	is.True(fi.Size() > 0)

	// An existing file keeps its mode: the store does not change it (the
	// server warns about it).
	wide := filepath.Join(t.TempDir(), "wide.db")
	is.NoErr(os.WriteFile(wide, nil, 0o640))
	MustOpen(t, "sqlite:"+wide)
	fi, err = os.Stat(wide)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o640))
}
