package doctest

import (
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/matryer/is"
)

// TestDocumentationLinksResolve checks the repository: every relative link
// and #anchor of the Markdown files at its root and under docs/ resolves.
func TestDocumentationLinksResolve(t *testing.T) {
	is := is.New(t)
	root := os.DirFS("../..")
	docs, err := Documents(root)
	is.NoErr(err)
	is.True(len(docs) > 10) // the root's files and the guides were found
	errs, err := Check(root)
	is.NoErr(err)
	for _, e := range errs {
		t.Error(e)
	}
}

// TestEveryGuideIsListed: the README's table of contents links every guide
// of docs/, so that a new one is found from the front page.
func TestEveryGuideIsListed(t *testing.T) {
	is := is.New(t)
	root := os.DirFS("../..")
	readme, err := os.ReadFile("../../README.md")
	is.NoErr(err)
	linked := map[string]bool{}
	for _, l := range Links(string(readme)) {
		p, _, _ := strings.Cut(l.Target, "#")
		linked[path.Clean(p)] = true
	}
	docs, err := Documents(root)
	is.NoErr(err)
	for _, d := range docs {
		if strings.HasPrefix(d, "docs/") && !linked[d] {
			t.Errorf("README.md does not link %s: add it to the table of its guides", d)
		}
	}
}

func TestSlug(t *testing.T) {
	is := is.New(t)
	for heading, want := range map[string]string{
		"The server":                  "the-server",
		"Faults and what clients see": "faults-and-what-clients-see",
		"Group commit, the request path and webhooks on SQLite": "group-commit-the-request-path-and-webhooks-on-sqlite",
		"People, roles, passwords and sessions":                 "people-roles-passwords-and-sessions",
		"The generator, and the rules of the code":              "the-generator-and-the-rules-of-the-code",
		"`--demo` on a file":                                    "--demo-on-a-file",
		"[Linked](x.md) *and* **bold**":                         "linked-and-bold",
		"fleet_session & Café":                                  "fleet_session--café",
		"Trips, stops and summaries":                            "trips-stops-and-summaries",
		"v1.2: what's new?":                                     "v12-whats-new",
	} {
		is.Equal(Slug(heading), want) // GitHub's anchor
	}
}

func TestAnchors(t *testing.T) {
	is := is.New(t)
	a := Anchors("# Title ##\n\n## Setup\n\ntext\n\n```\n## Not a heading\n```\n\n    ## Indented code\n\n### Setup\n\n<a id=\"custom\"></a>\n")
	is.True(a["title"])          // a closing run of #s is not text
	is.True(a["setup"])          // the first
	is.True(a["setup-1"])        // the repeat, as GitHub numbers it
	is.True(a["custom"])         // an HTML id
	is.True(!a["not-a-heading"]) // code is not a heading
	is.True(!a["indented-code"])
}

func TestLinks(t *testing.T) {
	is := is.New(t)
	doc := "See [the tour](docs/api-tour.md#alerts) and ![shot](docs/s.png \"title\").\n" +
		"`[not](a-link.md)` in code, <img src=\"pic.png\" width=\"2\">\n" +
		"```md\n[fenced](no.md)\n```\n" +
		"    [indented](no.md)\n" +
		"[ref]: <other.md>\n" +
		"[a [nested] text](nested.md)\n"
	var got []string
	for _, l := range Links(doc) {
		got = append(got, l.Target)
	}
	is.Equal(got, []string{"docs/api-tour.md#alerts", "docs/s.png", "pic.png", "other.md", "nested.md"})
	is.Equal(Links(doc)[2].Line, 2) // lines count from 1
}

// TestCheckFindsWhatDoesNotResolve: a missing file, a missing anchor in the
// same file or another, a path out of the tree and an absolute path are
// each named with the file and line; what resolves is not.
func TestCheckFindsWhatDoesNotResolve(t *testing.T) {
	is := is.New(t)
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Fleet\n\n## Two commands\n\n" +
			"[ok](docs/guide.md) [ok](docs/guide.md#the-server) [ok](#two-commands) [ok](docs/screens/a.png)\n" +
			"[ok](https://example.com/x#y) [ok](docs/) [ok](LICENSE#L3)\n" +
			"[bad](docs/missing.md)\n" +
			"[bad](#three-commands)\n" +
			"[bad](docs/guide.md#The-Server)\n")},
		"LICENSE":             {Data: []byte("licence")},
		"docs/screens/a.png":  {Data: []byte{0}},
		"docs/guide.md":       {Data: []byte("# Guide\n\n## The server\n\n[ok](../README.md#fleet) [bad](../../out.md) [bad](/README.md) [bad](guide.md#nowhere)\n")},
		"docs/notes/extra.md": {Data: []byte("[bad](../guide.md#faults)\n")},
		"cmd/ignored.md":      {Data: []byte("[not read](missing.md)\n")},
	}
	errs, err := Check(fsys)
	is.NoErr(err)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	is.Equal(got, []string{
		"README.md:7: docs/missing.md: no such file",
		"README.md:8: #three-commands: README.md has no heading whose anchor is #three-commands",
		"README.md:9: docs/guide.md#The-Server: docs/guide.md has no heading whose anchor is #The-Server",
		"docs/guide.md:5: ../../out.md: a path that leaves the repository",
		"docs/guide.md:5: /README.md: an absolute path: make it relative to docs/guide.md",
		"docs/guide.md:5: guide.md#nowhere: docs/guide.md has no heading whose anchor is #nowhere",
		"docs/notes/extra.md:1: ../guide.md#faults: docs/guide.md has no heading whose anchor is #faults",
	})
}
