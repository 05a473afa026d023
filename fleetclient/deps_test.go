package fleetclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fleetkit/fleetapi"

// pkgInfo is what go list says of one package the client links.
type pkgInfo struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// linked runs go list -deps on this package: every package a program that
// imports it links, by import path.
func linked(t *testing.T) map[string]pkgInfo {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the client's import graph: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Standard,Imports", ".")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkgInfo{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -deps: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if _, ok := pkgs[module+"/fleetclient"]; !ok {
		t.Fatalf("go list -deps did not list the client itself: %s", out)
	}
	return pkgs
}

// reach is the set of packages from imports, transitively, without
// entering the packages stop names.
func reach(t *testing.T, pkgs map[string]pkgInfo, from string, stop ...string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] || path == "C" { // "C" is cgo, not a package
			return
		}
		seen[path] = true
		p, ok := pkgs[path]
		if !ok {
			t.Fatalf("go list named %s as an import but did not list it", path)
		}
		if slices.Contains(stop, path) {
			return
		}
		for _, imp := range p.Imports {
			walk(imp)
		}
	}
	walk(from)
	return seen
}

// under reports whether path is root or a package below it.
func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// A program that only calls the API links the client, the wire types, the
// domain types it speaks in (fleet) and the standard library: none of the
// handler, the dashboard, the device edge, the stores and their drivers,
// the metrics or the rate limiter.
func TestClientLinksNoServerPackages(t *testing.T) {
	pkgs := linked(t)
	forbidden := []string{
		module + "/fleethttp", module + "/fleetweb", module + "/fleetdevice", module + "/fleetstore",
		module + "/sqlstore", module + "/memstore", module + "/internal",
		"github.com/prometheus", "golang.org/x/time", "golang.org/x/crypto",
		"modernc.org", "github.com/jackc", "github.com/chromedp", "github.com/getkin",
	}
	for path, p := range pkgs {
		for _, root := range forbidden {
			if !under(path, root) {
				continue
			}
			var by []string
			for _, q := range pkgs {
				if slices.Contains(q.Imports, path) {
					by = append(by, q.ImportPath)
				}
			}
			slices.Sort(by)
			t.Errorf("the client links %s (imported by %v)", p.ImportPath, by)
		}
	}
}

// The client links no package of golang.org/x/crypto: fleet hashes
// passwords with the standard library's PBKDF2 by default, and the Argon2id
// that fleetserver stores is in fleetpass, which only servers import.
func TestClientLinksNoXCrypto(t *testing.T) {
	for path := range linked(t) {
		if under(path, "golang.org/x/crypto") {
			t.Errorf("the client links %s", path)
		}
	}
}

// What the client adds to the domain types is the standard library, the
// wire types and uuid (the Idempotency-Key of each POST): walking its
// imports without entering fleet meets nothing else.
func TestClientAddsOnlyTheWireTypes(t *testing.T) {
	pkgs := linked(t)
	allowed := []string{module + "/fleetclient", module + "/fleetwire", module + "/fleet", "github.com/google/uuid"}
	// What the domain links is the domain's (TestClientLinksNoServerPackages
	// checks it): the walk stops at fleet.
	seen := reach(t, pkgs, module+"/fleetclient", module+"/fleet")
	for path := range seen {
		if !pkgs[path].Standard && !slices.Contains(allowed, path) {
			t.Errorf("the client links %s", path)
		}
	}
	if !seen[module+"/fleetwire"] {
		t.Error("the client no longer reads the wire types of fleetwire: update this test and the package doc")
	}
}
