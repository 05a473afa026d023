package main

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/matryer/is"
)

// The real binary: what --version prints is what every response of its
// server names in Fleet-Version, so a bug report can quote either.
func TestVersionNamesTheBuild(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	is.NoErr(err)
	line := strings.TrimSpace(string(out))
	is.True(strings.HasPrefix(line, "fleetserver "))
	version := strings.TrimPrefix(line, "fleetserver ")
	is.True(strings.Contains(version, "go1.")) // the toolchain that built it
	out2, err := exec.Command(bin, "version").Output()
	is.NoErr(err)
	is.Equal(string(out2), string(out)) // the command and the flag agree

	c := startChild(t, bin, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	for _, path := range []string{"/healthz", "/v1/account", "/v1/openapi.json"} {
		res, err := http.Get(c.base + path)
		is.NoErr(err)
		res.Body.Close()
		is.Equal(res.Header.Get(fleethttp.VersionHeader), version)
	}
}

func TestDescribeBuild(t *testing.T) {
	is := is.New(t)
	// go install github.com/fleetkit/fleetapi/cmd/fleetserver@v0.1.0
	is.Equal(describeBuild(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}}), "v0.1.0 go1.26.8")
	// go build in a checkout, with a change not committed
	is.Equal(describeBuild(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "075f69a76f0df18f7a9da799cac412c8d790f4e4"}, {Key: "vcs.time", Value: "2026-11-23T14:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}),
		"(devel) (commit 075f69a76f0d, 2026-11-23T14:00:00Z, modified) go1.26.8")
	// built without version control information (-buildvcs=false)
	is.Equal(describeBuild(&debug.BuildInfo{GoVersion: "go1.26.8"}), "(devel) go1.26.8")
}
