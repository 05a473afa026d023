// Command apicompat checks that a change keeps the compatibility promises
// of docs/compatibility.md, against the last
// release. CI (.ci/run) runs it; so can anyone, from the repository:
//
//	go run ./internal/apicompat http [-changes FILE] [-selftest]
//	go run ./internal/apicompat go
//	go run ./internal/apicompat break -o FILE DOC
//
// http: the breaking changes that `oasdiff breaking` finds between the last
// release's OpenAPI document (api/openapi.v1.released.json) and the current
// one (fleethttp/openapi.json) fail the check unless api/breaking-changes.txt
// lists each, with its reason. With -changes it judges oasdiff's JSON output
// from that file instead of running oasdiff; with -selftest it removes an
// operation from a copy of the document and fails unless the check catches
// it.
//
// go: apidiff compares the exported API of fleet, fleethttp, fleetclient,
// fleetwire, memstore, sqlstore (and fleetweb, once it exists) with the
// last release, named in api/release.txt (a package new since then is
// reported as new); while the module is v0 incompatible changes are allowed,
// but each must be named in CHANGELOG.md's "Unreleased" section.
//
// break: writes a copy of an OpenAPI document with its first operation
// removed (what the self-test feeds the HTTP check), and prints which
// ("GET /account").
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The tools, at the versions CI pins (.ci/run names the same; a test
// checks that they agree).
const (
	oasdiffModule = "github.com/oasdiff/oasdiff@v1.36.0"
	apidiffModule = "golang.org/x/exp/cmd/apidiff@v0.0.0-20261014143641-f0251eb4aa3e"
)

// Files of the repository the checks read.
const (
	releasedDoc   = "api/openapi.v1.released.json"
	currentDoc    = "fleethttp/openapi.json"
	breakingList  = "api/breaking-changes.txt"
	releaseFile   = "api/release.txt"
	changelogFile = "CHANGELOG.md"
	modulePath    = "github.com/fleetkit/fleetapi"
)

// checkedPackages are the packages whose Go API is checked (those of them
// that exist).
var checkedPackages = []string{"fleet", "fleethttp", "fleetclient", "fleetwire", "memstore", "sqlstore", "fleetweb"}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	// The checks read the repository's files from its root.
	root, err := git("rev-parse", "--show-toplevel")
	if err == nil {
		err = os.Chdir(root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: run apicompat inside the repository:", err)
		os.Exit(1)
	}
	switch os.Args[1] {
	case "http":
		err = httpCmd(os.Args[2:], os.Stdout)
	case "go":
		err = goCmd(os.Args[2:], os.Stdout)
	case "break":
		err = breakCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: apicompat http [-changes FILE] [-selftest] | go | break -o FILE DOC")
	os.Exit(2)
}

func httpCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("http", flag.ExitOnError)
	changesFile := fs.String("changes", "", "judge this JSON output of `oasdiff breaking --format json` instead of running oasdiff")
	selftest := fs.Bool("selftest", false, "check that removing an operation from a copy of the document fails the check")
	fs.Parse(args)
	listed, err := readBreakingList(breakingList)
	if err != nil {
		return err
	}
	rel, err := readRelease(releaseFile)
	if err != nil {
		return err
	}
	if err := checkReleasedCopy(rel, releasedDoc, out); err != nil {
		return err
	}
	if *selftest {
		return httpSelfTest(listed, out)
	}
	var raw []byte
	if *changesFile != "" {
		raw, err = os.ReadFile(*changesFile)
	} else {
		raw, err = oasdiffBreaking(releasedDoc, currentDoc)
	}
	if err != nil {
		return err
	}
	changes, err := parseChanges(raw)
	if err != nil {
		return err
	}
	return judgeHTTP(changes, listed, out)
}

// oasdiffBreaking runs `oasdiff breaking` on two documents and returns its
// JSON report.
func oasdiffBreaking(base, rev string) ([]byte, error) {
	cmd := exec.Command("go", "run", oasdiffModule, "breaking", base, rev, "--format", "json")
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go run %s breaking: %v", oasdiffModule, err)
	}
	return b, nil
}

// httpSelfTest feeds the check a copy of the current document with an
// operation removed, and fails unless the check refuses it, naming it.
func httpSelfTest(listed []listedChange, out io.Writer) error {
	dir, err := os.MkdirTemp("", "apicompat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	doc, err := os.ReadFile(currentDoc)
	if err != nil {
		return err
	}
	broken, removed, err := removeFirstOperation(doc)
	if err != nil {
		return err
	}
	brokenFile := dir + "/broken.json"
	if err := os.WriteFile(brokenFile, broken, 0o644); err != nil {
		return err
	}
	raw, err := oasdiffBreaking(releasedDoc, brokenFile)
	if err != nil {
		return err
	}
	changes, err := parseChanges(raw)
	if err != nil {
		return err
	}
	var report strings.Builder
	if judgeHTTP(changes, listed, &report) == nil {
		return fmt.Errorf("self-test: the check passed a document without %s", removed)
	}
	if !strings.Contains(report.String(), removed) {
		return fmt.Errorf("self-test: the check failed without naming %s:\n%s", removed, report.String())
	}
	fmt.Fprintf(out, "self-test: the HTTP check refuses a document without %s, as it should\n", removed)
	return nil
}

func breakCmd(args []string) error {
	fs := flag.NewFlagSet("break", flag.ExitOnError)
	o := fs.String("o", "", "where to write the broken copy")
	fs.Parse(args)
	if *o == "" || fs.NArg() != 1 {
		usage()
	}
	doc, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	broken, removed, err := removeFirstOperation(doc)
	if err != nil {
		return err
	}
	fmt.Println(removed)
	return os.WriteFile(*o, broken, 0o644)
}
