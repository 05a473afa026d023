// Package doctest checks the links of the documentation: every relative
// link of the Markdown files at the repository's root and under docs/ names
// a file that exists and, with an #anchor, a heading of that file, as GitHub
// makes the heading's anchor. Its test runs the check on the repository.
package doctest

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Slug is the anchor GitHub gives a heading: its text as rendered, in lower
// case, with every character that is not a letter, a mark, a digit, an
// underscore, a hyphen or a space dropped, and spaces turned to hyphens.
func Slug(heading string) string {
	text := plainText(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)]*)\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	htmlAttr   = regexp.MustCompile(`\b(?:href|src)\s*=\s*"([^"]*)"`)
	htmlID     = regexp.MustCompile(`\b(?:id|name)\s*=\s*"([^"]*)"`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
)

// plainText is a heading's text as GitHub renders it: code spans keep their
// text without backticks, links and images their text, HTML tags go, and
// emphasis markers are punctuation, which Slug drops anyway.
func plainText(s string) string {
	s = stripCode(s, true)
	s = inlineLink.ReplaceAllString(s, "$1")
	return htmlTag.ReplaceAllString(s, "")
}

// stripCode removes the code spans of a line of Markdown, or with keep,
// only their backticks.
func stripCode(line string, keep bool) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			b.WriteString(line)
			return b.String()
		}
		n := i
		for n < len(line) && line[n] == '`' {
			n++
		}
		ticks := line[i:n]
		end := strings.Index(line[n:], ticks)
		if end < 0 { // no closing run: the backticks are text
			b.WriteString(line[:n])
			line = line[n:]
			continue
		}
		b.WriteString(line[:i])
		if keep {
			b.WriteString(line[n : n+end])
		}
		line = line[n+end+len(ticks):]
	}
}

// prose returns the lines of a Markdown document that are neither in a
// fenced code block nor indented as code (four spaces or a tab), each with
// its number from 1. Indented list continuations of four spaces or more
// count as code too: a link there goes unchecked, never wrongly refused.
func prose(doc string) (lines []string, numbers []int) {
	fence := "" // the opening run of the fenced block we are in
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence != "" {
			if indent < 4 && strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
			continue
		}
		if indent >= 4 || strings.HasPrefix(trimmed, "\t") {
			continue
		}
		if n := fenceRun(trimmed); n >= 3 {
			fence = trimmed[:n]
			continue
		}
		lines = append(lines, line)
		numbers = append(numbers, i+1)
	}
	return lines, numbers
}

// fenceRun is the length of the run of backticks or tildes a line starts
// with.
func fenceRun(line string) int {
	if line == "" || (line[0] != '`' && line[0] != '~') {
		return 0
	}
	return len(line) - len(strings.TrimLeft(line, line[:1]))
}

// Anchors returns the anchors of a Markdown document: each ATX heading's
// slug (a repeated one gets -1, -2... as on GitHub), and the id and name
// attributes of its HTML.
func Anchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	lines, _ := prose(doc)
	for _, line := range lines {
		for _, m := range htmlID.FindAllStringSubmatch(stripCode(line, false), -1) {
			anchors[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// A Link is a link of a document, as written, and the line it is on.
type Link struct {
	Target string
	Line   int
}

// Links returns the links of a Markdown document outside code: inline links
// and images, reference definitions, and the href and src attributes of its
// HTML.
func Links(doc string) []Link {
	var links []Link
	lines, numbers := prose(doc)
	for i, line := range lines {
		line = stripCode(line, false)
		add := func(target string) {
			target = strings.TrimSpace(target)
			if t, _, ok := strings.Cut(target, " "); ok { // [x](target "title")
				target = t
			}
			target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
			links = append(links, Link{Target: target, Line: numbers[i]})
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			add(m[1])
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			add(m[2])
		}
		for _, m := range htmlAttr.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	}
	return links
}

// Documents returns the Markdown files the check reads: those at the root
// of fsys and those anywhere under docs/.
func Documents(fsys fs.FS) ([]string, error) {
	docs, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(fsys, "docs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	slices.Sort(docs)
	return docs, nil
}

// Check returns an error for each relative link of the documents of fsys
// (Documents) that does not resolve: a path that leaves fsys or names
// nothing, or an #anchor that no heading of its Markdown target makes.
// Links with a scheme (https:, mailto:) are not followed.
func Check(fsys fs.FS) ([]error, error) {
	docs, err := Documents(fsys)
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := anchors[p]; ok {
			return a, nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		anchors[p] = Anchors(string(b))
		return anchors[p], nil
	}
	var errs []error
	for _, doc := range docs {
		b, err := fs.ReadFile(fsys, doc)
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(b)) {
			if msg := resolve(fsys, doc, l.Target, anchorsOf); msg != "" {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %s", doc, l.Line, l.Target, msg))
			}
		}
	}
	return errs, nil
}

// resolve says what is wrong with a link of doc, or "" when it resolves.
func resolve(fsys fs.FS, doc, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if target == "" {
		return "an empty link"
	}
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	p, anchor, _ := strings.Cut(target, "#")
	if q, _, ok := strings.Cut(p, "?"); ok {
		p = q
	}
	file := doc
	if p != "" {
		unescaped, err := url.PathUnescape(p)
		if err != nil {
			return "a path that does not decode: " + err.Error()
		}
		if strings.HasPrefix(unescaped, "/") {
			return "an absolute path: make it relative to " + doc
		}
		file = path.Join(path.Dir(doc), unescaped)
		if file == ".." || strings.HasPrefix(file, "../") {
			return "a path that leaves the repository"
		}
		if _, err := fs.Stat(fsys, file); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	a, err := anchorsOf(file)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return fmt.Sprintf("%s has no heading whose anchor is #%s", file, anchor)
	}
	return ""
}
