package fleet_test

import (
	"os/exec"
	"strings"
	"testing"
)

// fleet builds on the standard library, uuid and x/text (NFC) alone
// (password hashing is the standard library's PBKDF2, or what
// Options.Passwords brings), and of the project on its own
// internal packages only, which keep to the same: a program that embeds
// fleet takes in nothing else.
func TestFleetImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list fleet's imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/fleetkit/fleetapi/fleet":                       true,
		"github.com/fleetkit/fleetapi/fleet/internal/broker":       true,
		"github.com/fleetkit/fleetapi/fleet/internal/cache":        true,
		"github.com/fleetkit/fleetapi/fleet/internal/gate":         true,
		"github.com/fleetkit/fleetapi/fleet/internal/geo":          true,
		"github.com/fleetkit/fleetapi/fleet/internal/password":     true,
		"github.com/fleetkit/fleetapi/fleet/internal/secret":       true,
		"github.com/fleetkit/fleetapi/fleet/internal/unknownlimit": true,
		"github.com/google/uuid":                                   true,
		"golang.org/x/text/transform":                              true,
		"golang.org/x/text/unicode/norm":                           true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("fleet imports %s", p)
		}
	}
}
