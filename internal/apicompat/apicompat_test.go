package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// What `oasdiff breaking --format json` printed for a document with the
// DELETE of a vehicle removed and a required response member dropped.
const oasdiffReport = `[{"id":"response-required-property-removed","text":"removed the required property ` + "`data/plan`" + ` from the response with the ` + "`200`" + ` status","level":3,"operation":"GET","operationId":"getAccount","path":"/account","section":"paths"},
{"id":"api-removed-without-deprecation","text":"api removed without deprecation","level":3,"operation":"DELETE","operationId":"deleteVehicle","path":"/vehicles/{vehicle_id}","section":"paths"},
{"id":"response-optional-property-removed","text":"removed the optional property","level":2,"operation":"GET","path":"/vehicles","section":"paths"}]`

func TestHTTPCheckFailsOnUnlistedBreakingChanges(t *testing.T) {
	is := is.New(t)
	changes, err := parseChanges([]byte(oasdiffReport))
	is.NoErr(err)
	is.Equal(len(changes), 3)

	var out strings.Builder
	err = judgeHTTP(changes, nil, &out)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "3 breaking change(s)"))
	is.True(strings.Contains(out.String(), "api-removed-without-deprecation DELETE /vehicles/{vehicle_id}"))
	is.True(strings.Contains(out.String(), "response-optional-property-removed GET /vehicles")) // warnings count too

	// Listing two of three (case and spacing aside) leaves one.
	listed, err := parseBreakingList(strings.NewReader("# comment\n\n"+
		"api-removed-without-deprecation  DELETE /vehicles/{vehicle_id} -- removed after its sunset, 2027-12-31\n"+
		"RESPONSE-REQUIRED-PROPERTY-REMOVED GET /account -- plan leaked to keys without keys:read (security fix)\n"), "list")
	is.NoErr(err)
	out.Reset()
	err = judgeHTTP(changes, listed, &out)
	is.True(err != nil)
	is.True(strings.Contains(err.Error(), "1 breaking change(s)"))
	is.True(strings.Contains(out.String(), "accepted breaking change: api-removed-without-deprecation DELETE /vehicles/{vehicle_id}"))

	listed = append(listed, listedChange{key: "response-optional-property-removed GET /vehicles", reason: "r"})
	out.Reset()
	is.NoErr(judgeHTTP(changes, listed, &out))

	// Nothing breaking: an empty report, or oasdiff's null.
	for _, raw := range []string{"", "null", "[]"} {
		cs, err := parseChanges([]byte(raw))
		is.NoErr(err)
		is.NoErr(judgeHTTP(cs, nil, &out))
	}
	// A new enumeration value in a response (a new event type) is growth
	// /v1 allows: not a failure, and said so.
	growth, err := parseChanges([]byte(`[{"id":"response-property-enum-value-added","text":"added the new ` + "`trip.started`" + ` enum value","level":2,"operation":"GET","path":"/events","section":"paths"}]`))
	is.NoErr(err)
	out.Reset()
	is.NoErr(judgeHTTP(growth, nil, &out))
	is.True(strings.Contains(out.String(), "1 new enumeration value(s) in responses, which /v1 allows"))
	// ...but a removed one is not.
	growth[0].ID = "response-property-enum-value-removed"
	is.True(judgeHTTP(growth, nil, &out) != nil)

	_, err = parseChanges([]byte("No breaking changes"))
	is.True(err != nil) // not JSON: a misuse of oasdiff, not a pass
}

func TestBreakingListNeedsReasons(t *testing.T) {
	is := is.New(t)
	for _, bad := range []string{
		"api-removed-without-deprecation DELETE /vehicles/{vehicle_id}",
		"api-removed-without-deprecation DELETE /vehicles/{vehicle_id} -- ",
		" -- a reason without a change",
	} {
		_, err := parseBreakingList(strings.NewReader(bad), "api/breaking-changes.txt")
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "api/breaking-changes.txt:1"))
	}
	// The committed list parses.
	_, err := readBreakingList("../../" + breakingList)
	is.NoErr(err)
}

// The self-test's broken copy lacks the document's first operation, and
// only that.
func TestRemoveFirstOperation(t *testing.T) {
	is := is.New(t)
	doc := []byte(`{"openapi":"3.1.0","paths":{"/b":{"post":{},"get":{}},"/a":{"get":{}}}}`)
	out, removed, err := removeFirstOperation(doc)
	is.NoErr(err)
	is.Equal(removed, "GET /b")
	is.True(strings.Contains(string(out), `"post"`))
	is.True(strings.Contains(string(out), `"/a"`))
	is.Equal(strings.Count(string(out), `"get"`), 1)

	real, err := os.ReadFile("../../" + currentDoc)
	is.NoErr(err)
	_, removed, err = removeFirstOperation(real)
	is.NoErr(err)
	is.Equal(removed, "GET /account")
}

func TestParseRelease(t *testing.T) {
	is := is.New(t)
	r, err := parseRelease("# the last release\nv0.1.0 075f69a76f0df18f7a9da799cac412c8d790f4e4\n", "f")
	is.NoErr(err)
	is.Equal(r, release{tag: "v0.1.0", commit: "075f69a76f0df18f7a9da799cac412c8d790f4e4"})
	is.True(r.v0())
	is.True(!release{tag: "v1.2.0"}.v0())
	for _, bad := range []string{"", "# only comments\n", "v0.1.0\n", "0.1.0 075f69a\n", "v0.1.0 not-a-hash\n"} {
		_, err := parseRelease(bad, "api/release.txt")
		is.True(err != nil)
	}
	_, err = readRelease("../../" + releaseFile) // the committed file
	is.NoErr(err)
}

const apidiffReport = `Incompatible changes:
- (*Handler).Routes: removed
- Options.Logger: changed from *log/slog.Logger to int
Compatible changes:
- (*Handler).RouteList: added
- WithVersion: added
`

func TestGoCheckNeedsChangelogEntries(t *testing.T) {
	is := is.New(t)
	changes := parseAPIDiff("fleethttp", apidiffReport)
	is.Equal(changes, []goChange{{"fleethttp.Handler.Routes", "removed"}, {"fleethttp.Options.Logger", "changed from *log/slog.Logger to int"}})
	is.Equal(len(parseAPIDiff("fleet", "Compatible changes:\n- New: added\n")), 0)

	changelog := "# Changelog\n\n## [Unreleased]\n\n### Changed\n\n- `fleethttp.Handler.Routes` is now `RouteList`.\n\n" +
		"## [0.1.0] - 2026-11-23\n\n- `fleethttp.Options.Logger` was added.\n"
	section := unreleased(changelog)
	is.True(strings.Contains(section, "Handler.Routes"))
	is.True(!strings.Contains(section, "Options.Logger")) // an older release's entry does not count

	v0 := release{tag: "v0.1.0"}
	var out strings.Builder
	err := judgeGo(v0, changes, section, &out)
	is.True(err != nil) // Options.Logger is not named
	is.True(strings.Contains(out.String(), "fleethttp.Options.Logger: changed from *log/slog.Logger to int (NOT in the changelog)"))
	is.True(strings.Contains(out.String(), "While the module is v0, incompatible changes are allowed"))

	out.Reset()
	is.NoErr(judgeGo(v0, changes[:1], section, &out))
	is.True(strings.Contains(out.String(), "Allowed while the module is v0"))

	err = judgeGo(release{tag: "v1.0.0"}, changes[:1], section, &out)
	is.True(err != nil) // past v1, a changelog entry is not enough
	is.True(strings.Contains(err.Error(), "new major version"))

	is.NoErr(judgeGo(v0, nil, "", &out))

	// A longer identifier does not name a shorter one it starts with.
	longer := unreleased("# Changelog\n\n## [Unreleased]\n\n- `fleet.UserTx.DeleteUserSessions` added.\n")
	out.Reset()
	is.True(judgeGo(v0, []goChange{{"fleet.UserTx.DeleteUser", "added"}}, longer, &out) != nil)
	is.NoErr(judgeGo(v0, []goChange{{"fleet.UserTx.DeleteUser", "added"}}, longer+"- `fleet.UserTx.DeleteUser`.\n", &out))
}

// The baseline on real clones: the tag when there is one, else the
// recorded commit, and a clear error when neither can be had.
func TestBaselineOnClones(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	origin := filepath.Join(dir, "origin")
	is.NoErr(os.MkdirAll(origin, 0o755))
	run(origin, "init", "-q", "-b", "main")
	is.NoErr(os.WriteFile(filepath.Join(origin, "a.go"), []byte("package a\n"), 0o644))
	is.NoErr(os.MkdirAll(filepath.Join(origin, "fleethttp"), 0o755))
	is.NoErr(os.WriteFile(filepath.Join(origin, currentDoc), []byte(`{"openapi":"3.1.0"}`), 0o644))
	run(origin, "add", ".")
	run(origin, "commit", "-qm", "one")
	first := run(origin, "rev-parse", "HEAD")
	run(origin, "tag", "v0.1.0")
	is.NoErr(os.WriteFile(filepath.Join(origin, "b.go"), []byte("package a\n"), 0o644))
	run(origin, "add", ".")
	run(origin, "commit", "-qm", "two")
	second := run(origin, "rev-parse", "HEAD")

	inDir := func(d string, f func()) {
		wd, err := os.Getwd()
		is.NoErr(err)
		is.NoErr(os.Chdir(d))
		defer os.Chdir(wd)
		f()
	}
	var out strings.Builder
	inDir(origin, func() { // the tag
		c, err := baseline(release{tag: "v0.1.0", commit: first}, &out)
		is.NoErr(err)
		is.Equal(c, first)
		is.Equal(out.String(), "")
		c, err = baseline(release{tag: "v0.1.0", commit: second}, &out) // the file disagrees: the tag wins, and it says so
		is.NoErr(err)
		is.Equal(c, first)
		is.True(strings.Contains(out.String(), "records "+second))
		is.True(!strings.Contains(out.String(), "newest tag"))

		run(origin, "tag", "v0.2.0", second) // tagged, not yet recorded: said, and the recorded release stays the baseline
		out.Reset()
		c, err = baseline(release{tag: "v0.1.0", commit: first}, &out)
		is.NoErr(err)
		is.Equal(c, first)
		is.True(strings.Contains(out.String(), "the newest tag is v0.2.0, but api/release.txt names v0.1.0"))
		run(origin, "tag", "-d", "v0.2.0")

		// The kept copy of the released document must be the release's.
		kept := filepath.Join(dir, "released.json")
		is.NoErr(os.WriteFile(kept, []byte(`{"openapi":"3.1.0"}`), 0o644))
		is.NoErr(checkReleasedCopy(release{tag: "v0.1.0", commit: first}, kept, &out))
		is.NoErr(os.WriteFile(kept, []byte(`{"openapi":"3.1.0","paths":{}}`), 0o644)) // edited to hide a change
		err = checkReleasedCopy(release{tag: "v0.1.0", commit: first}, kept, &out)
		is.True(err != nil)
		is.True(strings.Contains(err.Error(), "is not the document of v0.1.0"))
	})

	clone := filepath.Join(dir, "clone")
	run(dir, "clone", "-q", "--no-tags", "file://"+origin, clone)
	inDir(clone, func() { // no tag: the recorded commit
		out.Reset()
		c, err := baseline(release{tag: "v0.1.0", commit: first}, &out)
		is.NoErr(err)
		is.Equal(c, first)
		is.True(strings.Contains(out.String(), "has no tag v0.1.0"))
	})

	shallow := filepath.Join(dir, "shallow")
	run(dir, "clone", "-q", "--depth=1", "--no-tags", "file://"+origin, shallow)
	inDir(shallow, func() { // a shallow clone: fetched
		c, err := baseline(release{tag: "v0.1.0", commit: first}, &out)
		is.NoErr(err)
		is.Equal(c, first)
		_, err = baseline(release{tag: "v0.9.0", commit: strings.Repeat("0", 40)}, &out)
		is.True(err != nil) // neither exists anywhere
		is.True(strings.Contains(err.Error(), "git fetch --tags origin"))
	})
}

// CI runs the tools at the versions this program pins.
func TestCIPinsTheSameTools(t *testing.T) {
	is := is.New(t)
	ci, err := os.ReadFile("../../.ci/run")
	is.NoErr(err)
	is.True(strings.Contains(string(ci), oasdiffModule))
	is.True(strings.Contains(string(ci), apidiffModule))
}
