// Package archtest holds the tests of the module's layout: which package
// may import which. Adapters import fleet and never each other; only cmd/
// and examples/ wire them together.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"
)

const module = "github.com/fleetkit/fleetapi/"

// adapters are the packages around fleet, each owning one technology.
var adapters = []string{"fleethttp", "fleetweb", "fleetdevice", "fleetmail", "memstore", "sqlstore"}

// TestAdaptersDoNotImportEachOther: no adapter imports another, and the
// HTTP adapter knows nothing of database/sql (a SQL store serves its own
// metrics through Collectors).
func TestAdaptersDoNotImportEachOther(t *testing.T) {
	is := is.New(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	args := []string{"list", "-json=ImportPath,Imports"}
	for _, a := range adapters {
		args = append(args, module+a)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(gobin, args...)
	cmd.Dir = "../.."
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	is.NoErr(err) // go list
	dec := json.NewDecoder(bytes.NewReader(out))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.String())
		}
		seen++
		for _, imp := range p.Imports {
			for _, a := range adapters {
				other := p.ImportPath != module+a
				if other && (imp == module+a || strings.HasPrefix(imp, module+a+"/")) {
					t.Errorf("%s imports the adapter %s", p.ImportPath, imp)
				}
			}
		}
		if p.ImportPath == module+"fleethttp" && slices.Contains(p.Imports, "database/sql") {
			t.Errorf("fleethttp imports database/sql")
		}
	}
	is.Equal(seen, len(adapters)) // every adapter listed
}
