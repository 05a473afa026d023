package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// release is the last release, as api/release.txt records it: its tag and
// the commit the tag points at (the baseline when the clone lacks tags).
type release struct {
	tag, commit string
}

// readRelease reads "TAG COMMIT" from the first line of the release file
// that is not a comment.
func readRelease(name string) (release, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return release{}, fmt.Errorf("%s names the last release (\"v0.N.M <commit>\"): %v", name, err)
	}
	return parseRelease(string(b), name)
}

func parseRelease(s, name string) (release, error) {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[0], "v") || len(f[1]) < 7 || strings.Trim(f[1], "0123456789abcdef") != "" {
			return release{}, fmt.Errorf("%s: want \"v0.N.M <commit hash>\", got %q", name, line)
		}
		return release{tag: f[0], commit: f[1]}, nil
	}
	return release{}, fmt.Errorf("%s names no release", name)
}

// v0 reports whether the release is of a v0 module, whose Go API may
// change incompatibly in a minor release.
func (r release) v0() bool { return strings.HasPrefix(r.tag, "v0.") }

func git(args ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// baseline returns the commit to compare with: the release's tag when this
// clone has it, else the commit the release file records (fetched when the
// clone is shallow and lacks it), with a message saying which it took.
func baseline(r release, out io.Writer) (string, error) {
	if newest, err := git("tag", "--list", "v*", "--sort=-v:refname"); err == nil && newest != "" {
		if first, _, _ := strings.Cut(newest, "\n"); first != r.tag {
			fmt.Fprintf(out, "note: the newest tag is %s, but %s names %s: after tagging a release, record it there (CONTRIBUTING.md, \"Releases\")\n", first, releaseFile, r.tag)
		}
	}
	if c, err := git("rev-parse", "--verify", "-q", r.tag+"^{commit}"); err == nil {
		if !strings.HasPrefix(c, r.commit) {
			fmt.Fprintf(out, "note: tag %s is commit %s, but %s records %s: comparing with the tag\n", r.tag, c[:12], releaseFile, r.commit)
		}
		return c, nil
	}
	fmt.Fprintf(out, "note: this clone has no tag %s (a fresh or shallow clone without tags): comparing with the commit %s records, %s\n", r.tag, releaseFile, r.commit)
	if c, err := git("rev-parse", "--verify", "-q", r.commit+"^{commit}"); err == nil {
		return c, nil
	}
	// A shallow clone: fetch the commit, else the tags.
	if _, err := git("fetch", "--quiet", "--depth=1", "origin", r.commit); err == nil {
		if c, err := git("rev-parse", "--verify", "-q", r.commit+"^{commit}"); err == nil {
			return c, nil
		}
	}
	if _, err := git("fetch", "--quiet", "--tags", "origin"); err == nil {
		if c, err := git("rev-parse", "--verify", "-q", r.tag+"^{commit}"); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("cannot compare the Go API with the last release: neither tag %s nor commit %s is in this clone, and fetching them from origin failed; "+
		"fetch them (git fetch --tags origin, or clone without --depth) and run again", r.tag, r.commit)
}

// extract writes the tree of commit into dir.
func extract(commit, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(pipe)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			cmd.Wait()
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(filepath.Separator)) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			var f *os.File
			if f, err = os.Create(name); err == nil {
				_, err = io.Copy(f, tr)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil {
			cmd.Wait()
			return err
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", commit, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// apidiff runs the pinned apidiff in dir.
func apidiff(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"run", apidiffModule}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("apidiff %s (in %s): %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func goCmd(args []string, out io.Writer) error {
	if len(args) > 0 {
		usage()
	}
	rel, err := readRelease(releaseFile)
	if err != nil {
		return err
	}
	base, err := baseline(rel, out)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "apicompat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	baseDir := filepath.Join(dir, "base")
	if err := extract(base, baseDir); err != nil {
		return err
	}
	var changes []goChange
	var checked []string
	for _, pkg := range checkedPackages {
		if !exists(pkg) {
			continue
		}
		checked = append(checked, pkg)
		if !exists(filepath.Join(baseDir, pkg)) {
			fmt.Fprintf(out, "Go API: package %s is new since %s\n", pkg, rel.tag)
			continue
		}
		exp := filepath.Join(dir, pkg+".export")
		if _, err := apidiff(baseDir, "-w", exp, modulePath+"/"+pkg); err != nil {
			return err
		}
		report, err := apidiff(".", exp, modulePath+"/"+pkg)
		if err != nil {
			return err
		}
		changes = append(changes, parseAPIDiff(pkg, report)...)
	}
	changelog, err := os.ReadFile(changelogFile)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Go API of %s compared with %s (%s)\n", strings.Join(checked, ", "), rel.tag, base[:12])
	return judgeGo(rel, changes, unreleased(string(changelog)), out)
}

// goChange is an incompatible change apidiff reports: the identifier as a
// changelog names it ("fleethttp.Handler.Routes") and what changed.
type goChange struct {
	name, what string
}

// parseAPIDiff reads apidiff's report of one package: lines "- IDENT: WHAT"
// under "Incompatible changes:" (the compatible ones follow under their
// own heading). A method, "(*T).M", is named "T.M".
func parseAPIDiff(pkg, report string) []goChange {
	var out []goChange
	incompatible := false
	sc := bufio.NewScanner(strings.NewReader(report))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Incompatible changes"):
			incompatible = true
		case strings.HasSuffix(line, "changes:"):
			incompatible = false
		case incompatible && strings.HasPrefix(line, "- "):
			ident, what, _ := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			ident = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(ident)
			name := pkg
			if ident != "" {
				name += "." + ident
			}
			out = append(out, goChange{name: name, what: what})
		}
	}
	return out
}

// unreleased is the "Unreleased" section of the changelog: from its
// heading to the next release's.
func unreleased(changelog string) string {
	_, rest, ok := strings.Cut(changelog, "## [Unreleased]")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// names reports whether text names the identifier name whole: not as the
// start of a longer one (fleet.UserTx.DeleteUser is not named by
// fleet.UserTx.DeleteUserSessions).
func names(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		end := i + j + len(name)
		if end == len(text) || !identChar(text[end]) {
			return true
		}
		i = end
	}
}

func identChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// judgeGo fails unless the release is v0 and the Unreleased section names
// every incompatible change.
func judgeGo(rel release, changes []goChange, unreleasedText string, out io.Writer) error {
	if len(changes) == 0 {
		fmt.Fprintf(out, "Go API: no incompatible change since %s\n", rel.tag)
		return nil
	}
	var missing []goChange
	for _, c := range changes {
		if !names(unreleasedText, c.name) {
			missing = append(missing, c)
		}
	}
	fmt.Fprintf(out, "Go API: %d incompatible change(s) since %s:\n", len(changes), rel.tag)
	for _, c := range changes {
		mark := "named in the changelog"
		if !names(unreleasedText, c.name) {
			mark = "NOT in the changelog"
		}
		fmt.Fprintf(out, "  %s: %s (%s)\n", c.name, c.what, mark)
	}
	if !rel.v0() {
		return errors.New("incompatible changes of the Go API need a new major version of the module")
	}
	if len(missing) > 0 {
		fmt.Fprintf(out, "While the module is v0, incompatible changes are allowed, but each must be named in %s's \"Unreleased\" section\n"+
			"(e.g. \"- `%s`: ... (use ... instead)\"), so that users know before they upgrade.\n", changelogFile, missing[0].name)
		return fmt.Errorf("%d incompatible change(s) of the Go API not named in %s's Unreleased section", len(missing), changelogFile)
	}
	fmt.Fprintf(out, "Allowed while the module is v0: each is named in %s's Unreleased section.\n", changelogFile)
	return nil
}
