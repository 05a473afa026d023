package readmetest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// stepRef is a script line that names a step: run FILE, start NAME FILE,
// notrun FILE REASON, poll FILE FILTER.
var stepRef = regexp.MustCompile(`^\s*(?:run\s+(\S+)|start\s+\S+\s+(\S+)|notrun\s+(\S+)\s|poll\s+(\S+)\s)`)

// fixedDate is a calendar date written into a command: it goes stale (a
// day later the default history is empty and the vehicle offline).
var fixedDate = regexp.MustCompile(`\b20\d\d-\d\d-\d\d`)

// ScriptCommands returns the commands of the steps a session script names
// (run, start, poll or notrun), in the script's order. Every step file
// (NAME.sh) must be named; other files (expected outputs) are free.
func ScriptCommands(script []byte) ([]Command, error) {
	ar := txtar.Parse(script)
	files := map[string]string{}
	for _, f := range ar.Files {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("the script holds %s twice", f.Name)
		}
		files[f.Name] = string(f.Data)
	}
	var cmds []Command
	used := map[string]bool{}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		m := stepRef.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[1] + m[2] + m[3] + m[4]
		body, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("the script names the step %s, which it does not hold", name)
		}
		if used[name] {
			continue // run again (poll): its commands are in the README once
		}
		used[name] = true
		c, err := ParseCommands(body, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		cmds = append(cmds, c...)
	}
	var errs []error
	for _, f := range ar.Files {
		if strings.HasSuffix(f.Name, ".sh") && !used[f.Name] {
			errs = append(errs, fmt.Errorf("the step %s is neither run nor marked as not run", f.Name))
		}
	}
	return cmds, errors.Join(errs...)
}

// InSync reports how a walkthrough's document and its session script
// differ: each has to hold the other's commands, in the same order, and no
// command may name a fixed date.
func InSync(w Walkthrough, doc string, script []byte) error {
	want, err := DocCommands(doc, w)
	if err != nil {
		return err
	}
	got, err := ScriptCommands(script)
	if err != nil {
		return err
	}
	for _, c := range want {
		if d := fixedDate.FindString(c.Text); d != "" {
			return fmt.Errorf("%s: the command names the date %s, which goes stale; use $(date -u -d '-2 min' +%%Y-%%m-%%dT%%H:%%M:%%SZ) and the like:\n%s", w.Doc, d, c.Text)
		}
	}
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Errorf("%s's command %d is not in %s (run it, or mark it notrun with a reason):\n%s", w.Doc, i+1, w.Script, want[i].Text)
		case i >= len(want):
			return fmt.Errorf("%s's command %d is not in %s:\n%s", w.Script, i+1, w.Doc, got[i].Text)
		case want[i].Text != got[i].Text:
			return fmt.Errorf("command %d differs\n%s: %s\n%s: %s", i+1, w.Doc, want[i].Text, w.Script, got[i].Text)
		}
	}
	return nil
}
