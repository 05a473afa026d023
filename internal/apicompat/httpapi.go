package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// change is one entry of `oasdiff breaking --format json`.
type change struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"` // 3 error, 2 warning, 1 info
	Operation string `json:"operation"`
	Path      string `json:"path"`
	Section   string `json:"section"`
}

// key is how a change is named in api/breaking-changes.txt: its id, then
// the operation it touches ("api-removed-without-deprecation DELETE
// /vehicles/{vehicle_id}"), or its section for a change of no operation.
func (c change) key() string {
	if c.Operation == "" && c.Path == "" {
		return c.ID + " " + c.Section
	}
	return strings.TrimSpace(c.ID + " " + c.Operation + " " + c.Path)
}

func parseChanges(raw []byte) ([]change, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var cs []change
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, fmt.Errorf("reading oasdiff's report: %v", err)
	}
	return cs, nil
}

// listedChange is an entry of api/breaking-changes.txt: "KEY -- REASON".
type listedChange struct {
	key, reason string
	line        int
}

// readBreakingList reads the list of breaking changes that are accepted,
// each with its reason: one a line, "<id> <METHOD> <path> -- <reason>";
// blank lines and lines starting with # are comments. An entry without a
// reason is an error: the list is what the release notes are made from.
func readBreakingList(name string) ([]listedChange, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: it lists the accepted breaking changes of the HTTP API (it may list none)", name)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseBreakingList(f, name)
}

func parseBreakingList(r io.Reader, name string) ([]listedChange, error) {
	var out []listedChange
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, ok := strings.Cut(line, " -- ")
		key, reason = strings.Join(strings.Fields(key), " "), strings.TrimSpace(reason)
		if !ok || reason == "" || key == "" {
			return nil, fmt.Errorf("%s:%d: an entry is \"<id> <METHOD> <path> -- <reason>\", with its reason: %q", name, n, line)
		}
		out = append(out, listedChange{key: key, reason: reason, line: n})
	}
	return out, sc.Err()
}

// growsWithinV1 are the oasdiff findings that the /v1 rules allow
// (docs/compatibility.md): a response may carry enumeration values and
// event types a client does not know yet, which clients must ignore (the Go
// client does). oasdiff warns of them because some clients validate enums
// strictly; Fleet's contract says they must not.
var growsWithinV1 = map[string]bool{
	"response-property-enum-value-added": true,
}

// judgeHTTP fails unless every breaking change (errors and warnings alike)
// is listed, except the growth /v1 allows (growsWithinV1); it writes what it
// found to out.
func judgeHTTP(changes []change, listed []listedChange, out io.Writer) error {
	var missing []change
	used := map[string]bool{}
	allowed := 0
	for _, c := range changes {
		if c.Level < 2 {
			continue
		}
		if growsWithinV1[c.ID] {
			allowed++
			continue
		}
		i := slices.IndexFunc(listed, func(l listedChange) bool { return strings.EqualFold(l.key, c.key()) })
		if i < 0 {
			missing = append(missing, c)
			continue
		}
		used[listed[i].key] = true
		fmt.Fprintf(out, "accepted breaking change: %s (%s) -- %s\n", c.key(), c.Text, listed[i].reason)
	}
	for _, l := range listed {
		if !used[l.key] {
			fmt.Fprintf(out, "note: %s:%d lists %q, which oasdiff no longer reports\n", breakingList, l.line, l.key)
		}
	}
	if allowed > 0 {
		fmt.Fprintf(out, "HTTP API: %d new enumeration value(s) in responses, which /v1 allows (clients ignore what they do not know)\n", allowed)
	}
	if len(missing) == 0 {
		fmt.Fprintf(out, "HTTP API: no unlisted breaking change against %s\n", releasedDoc)
		return nil
	}
	fmt.Fprintf(out, "HTTP API: %d breaking change(s) against the last release (%s):\n", len(missing), releasedDoc)
	for _, c := range missing {
		fmt.Fprintf(out, "  %s  (%s)\n", c.key(), c.Text)
	}
	fmt.Fprintf(out, "/v1 only grows (docs/compatibility.md): deprecate instead, and remove in a new version of the API.\n"+
		"A change that must break anyway (a security fix) is listed in %s as \"<the line above> -- <reason>\".\n", breakingList)
	return fmt.Errorf("%d breaking change(s) of the HTTP API not listed in %s", len(missing), breakingList)
}

// removeFirstOperation returns doc without its first operation (the first
// method of its first path), and names what it removed ("GET /account").
func removeFirstOperation(doc []byte) ([]byte, string, error) {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, "", err
	}
	// The first path in document order: decode the keys of "paths" in order.
	var top struct {
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, "", err
	}
	dec := json.NewDecoder(bytes.NewReader(top.Paths))
	if _, err := dec.Token(); err != nil {
		return nil, "", err
	}
	t, err := dec.Token()
	if err != nil {
		return nil, "", errors.New("the document has no paths")
	}
	first, _ := t.(string)
	paths, _ := d["paths"].(map[string]any)
	item, _ := paths[first].(map[string]any)
	for _, m := range []string{"get", "post", "put", "patch", "delete"} {
		if _, ok := item[m]; ok {
			delete(item, m)
			b, err := json.MarshalIndent(d, "", "  ")
			return b, strings.ToUpper(m) + " " + first, err
		}
	}
	return nil, "", fmt.Errorf("path %s has no operation", first)
}

// checkReleasedCopy fails unless the released document kept at copyPath is
// the release's own fleethttp/openapi.json, so that the baseline cannot be
// edited to hide a breaking change. In a clone that has neither the tag nor
// the commit it says so and checks nothing more.
func checkReleasedCopy(rel release, copyPath string, out io.Writer) error {
	ref, err := git("rev-parse", "--verify", "-q", rel.tag+"^{commit}")
	if err != nil {
		if ref, err = git("rev-parse", "--verify", "-q", rel.commit+"^{commit}"); err != nil {
			fmt.Fprintf(out, "note: neither %s nor %s is in this clone: %s is not compared with the release's document\n", rel.tag, rel.commit, copyPath)
			return nil
		}
	}
	cmd := exec.Command("git", "show", ref+":"+currentDoc)
	released, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git show %s:%s: %v", ref, currentDoc, err)
	}
	kept, err := os.ReadFile(copyPath)
	if err != nil {
		return err
	}
	if !bytes.Equal(released, kept) {
		return fmt.Errorf("%s is not the document of %s (%s): the baseline changes only at a release; restore it with "+
			"`git show %s:%s > %s`", copyPath, rel.tag, ref[:12], ref[:12], currentDoc, copyPath)
	}
	return nil
}
