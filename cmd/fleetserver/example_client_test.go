package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestExampleClientInAFreshModule does what a new user does with
// examples/client: copies it into a module of their own that requires
// this one, builds it, and runs it unchanged against a running server
// (here `fleetserver --demo`).
func TestExampleClientInAFreshModule(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "examples", "client", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	// gocmd runs go in dir; gowork is GOWORK: off for the module alone,
	// "" to find the workspace above dir.
	gocmd := func(t *testing.T, dir, gowork string, args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK="+gowork)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The two ways of docs/go.md: a replace directive in the module's go.mod, or
	// a workspace in the directory above both, go.mod untouched.
	t.Run("replace", func(t *testing.T) {
		is := is.New(t)
		dir := t.TempDir()
		is.NoErr(os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
		gomod := "module example.com/myfleet\n\ngo 1.26\n\nrequire github.com/fleetkit/fleetapi v0.0.0\n\n" +
			"replace github.com/fleetkit/fleetapi => " + root + "\n"
		is.NoErr(os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
		gocmd(t, dir, "off", "mod", "tidy", "-e")
		gocmd(t, dir, "off", "build", "-o", "client", ".")
		runExampleClient(t, filepath.Join(dir, "client"))
	})
	t.Run("workspace", func(t *testing.T) {
		is := is.New(t)
		top := t.TempDir()
		dir := filepath.Join(top, "myfleet")
		is.NoErr(os.Mkdir(dir, 0o755))
		is.NoErr(os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
		gocmd(t, dir, "off", "mod", "init", "example.com/myfleet")
		gocmd(t, top, "", "work", "init", "./myfleet", root)
		gocmd(t, dir, "", "build", "-o", "client", ".")
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		is.NoErr(err)
		is.True(!strings.Contains(string(gomod), "fleetkit")) // go.mod untouched
		runExampleClient(t, filepath.Join(dir, "client"))
	})
}

// runExampleClient runs the example client built at bin against a new
// fleetserver --demo and checks what it prints.
func runExampleClient(t *testing.T, bin string) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo")
	key := s.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, bin)
	run.Env = append(os.Environ(), "FLEET_URL="+s.base, "FLEET_KEY="+key)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	text := string(out)
	is.True(strings.Contains(text, "enterprise plan"))    // checked its key
	is.True(strings.Contains(text, "posted: 1 accepted")) // posted a location
	live := strings.SplitAfter(text, "live reports (Ctrl-C to stop):\n")
	is.Equal(len(live), 2)
	is.Equal(strings.Count(live[1], "\n"), 10) // and followed the stream for 10 reports
}
