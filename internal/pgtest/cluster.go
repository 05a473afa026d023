package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Cluster is a PostgreSQL server of a test's own: initdb in a temporary
// directory, listening on a free loopback port, which the test may crash
// (Stop with "immediate") and start again. It needs PostgreSQL's server
// programs (initdb, pg_ctl in /usr/lib/postgresql/*/bin or on PATH); the
// test is skipped with a clear message without them. PostgreSQL refuses to
// run as root: as root the cluster runs as the "postgres" user (runuser).
type Cluster struct {
	tb   testing.TB
	bin  string // directory of initdb and pg_ctl
	dir  string // data directory
	port int
	as   string // user to run as, "" for the current one
	// DSN connects to the cluster's "postgres" database as its superuser.
	DSN string
}

// NewCluster creates and starts a private cluster; it is stopped and
// removed when the test ends.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bin := serverBin()
	if bin == "" {
		tb.Skip("no PostgreSQL server programs (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or on PATH: skipping the private cluster test")
	}
	c := &Cluster{tb: tb, bin: bin}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			tb.Skip("running as root and there is no postgres user to run initdb as: skipping the private cluster test")
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			tb.Skip("running as root without runuser: skipping the private cluster test")
		}
		c.as = "postgres"
	}
	// Not t.TempDir: its parents are private to the current user.
	root, err := os.MkdirTemp("", "fleet-pgcluster-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	if c.as != "" {
		u, _ := user.Lookup(c.as)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(root, uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	c.dir = filepath.Join(root, "data")
	c.port = freePort(tb)
	c.run("initdb", "-D", c.dir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	c.Start()
	tb.Cleanup(func() { c.ctl("stop", "-m", "immediate") })
	return c
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.tb.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, filepath.Dir(c.dir))
	if out, err := c.ctl("start", "-w", "-t", "60", "-l", filepath.Join(filepath.Dir(c.dir), "log"), "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(c.dir), "log"))
		c.tb.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server: mode "immediate" is a crash (no checkpoint,
// connections cut), "fast" a clean stop.
func (c *Cluster) Stop(mode string) {
	c.tb.Helper()
	if out, err := c.ctl("stop", "-w", "-m", mode); err != nil {
		c.tb.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
}

func (c *Cluster) ctl(args ...string) ([]byte, error) {
	return c.command("pg_ctl", append([]string{"-D", c.dir}, args...)...).CombinedOutput()
}

func (c *Cluster) run(prog string, args ...string) {
	c.tb.Helper()
	if out, err := c.command(prog, args...).CombinedOutput(); err != nil {
		c.tb.Fatalf("%s: %v\n%s", prog, err, out)
	}
}

func (c *Cluster) command(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, prog)
	if c.as != "" {
		return exec.Command("runuser", append([]string{"-u", c.as, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// serverBin returns the directory of initdb and pg_ctl: the newest
// /usr/lib/postgresql/*/bin, else the one on PATH, else "".
func serverBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if fileExists(filepath.Join(d, "initdb")) && fileExists(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(tb testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
