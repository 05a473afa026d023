package readmetest

import (
	"fmt"
	"strings"
)

// A Command is one shell command of a walkthrough: the lines after its
// "$ " prompt, continuation lines included, each trimmed of its
// indentation.
type Command struct {
	Text string
}

// ParseCommands reads shell commands written as the README writes them: a
// command starts with "$ " and goes on over the next lines while a line
// ends with a backslash or leaves a quote open. Lines that are neither are
// output; strict refuses them (a step of the session script holds commands
// only).
func ParseCommands(text string, strict bool) ([]Command, error) {
	var cmds []Command
	var cur []string
	var st quoteState
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if !strings.HasPrefix(trimmed, "$ ") {
				if strict && trimmed != "" {
					return nil, fmt.Errorf("line %d: %q is not a command (commands start with \"$ \")", i+1, trimmed)
				}
				continue
			}
			trimmed = strings.TrimPrefix(trimmed, "$ ")
			st = quoteState{}
		}
		cur = append(cur, trimmed)
		st.scan(trimmed)
		if st.open() || strings.HasSuffix(trimmed, `\`) {
			continue
		}
		cmds = append(cmds, Command{Text: strings.Join(cur, "\n")})
		cur = nil
	}
	if cur != nil {
		return nil, fmt.Errorf("the command %q does not end (an open quote, or a backslash at its end)", strings.Join(cur, "\n"))
	}
	return cmds, nil
}

// quoteState follows the shell's quotes over a command's lines.
type quoteState struct {
	single, double bool
}

func (q *quoteState) open() bool { return q.single || q.double }

func (q *quoteState) scan(line string) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q.single:
			if c == '\'' {
				q.single = false
			}
		case q.double:
			if c == '\\' {
				i++
			} else if c == '"' {
				q.double = false
			}
		case c == '\\':
			i++
		case c == '\'':
			q.single = true
		case c == '"':
			q.double = true
		}
	}
}

// A Walkthrough is a document's sections that a session script runs,
// command by command.
type Walkthrough struct {
	Doc      string   // the document, a path from the repository's root
	Sections []string // its "## " sections whose commands the script runs, in order
	// Bare are those of Sections whose indented lines are each a command
	// as they stand, without a "$ " prompt (the README's two commands, kept
	// ready to copy).
	Bare   []string
	Script string // the session script, a path from the repository's root
}

// Walkthroughs are the documentation's walkthroughs that CI runs: the API
// tour, and the README's two commands and five-minute tour.
var Walkthroughs = []Walkthrough{
	{
		Doc: "docs/api-tour.md",
		Sections: []string{
			"A first session with curl",
			"Vehicles and real-time tracking",
			"Events",
			"Webhooks",
			"Maintenance",
			"Alerts",
		},
		Script: "docs/api-tour.session.txtar",
	},
	{
		Doc:      "README.md",
		Sections: []string{"Two commands", "A five-minute tour"},
		Bare:     []string{"Two commands"},
		Script:   "docs/readme-tour.session.txtar",
	},
}

// DocCommands returns the commands of the indented code blocks of a
// walkthrough's "## " sections of doc, in order. Fenced blocks (Go code)
// are not shell sessions and are left out.
func DocCommands(doc string, w Walkthrough) ([]Command, error) {
	want, bare := map[string]bool{}, map[string]bool{}
	for _, s := range w.Sections {
		want[s] = true
	}
	for _, s := range w.Bare {
		bare[s] = true
	}
	found := map[string]bool{}
	var block []string
	var cmds []Command
	in, inBare, fenced := false, false, false
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		defer func() { block = nil }()
		if inBare {
			for _, l := range block {
				if t := strings.TrimSpace(l); t != "" {
					cmds = append(cmds, Command{Text: t})
				}
			}
			return nil
		}
		c, err := ParseCommands(strings.Join(block, "\n"), false)
		cmds = append(cmds, c...)
		return err
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if title, ok := strings.CutPrefix(line, "## "); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			title = strings.TrimSpace(title)
			in, inBare = want[title], bare[title]
			found[title] = in
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(line, "    ") || (strings.TrimSpace(line) == "" && len(block) > 0) {
			block = append(block, line)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	for _, s := range w.Sections {
		if !found[s] {
			return nil, fmt.Errorf("%s has no section %q", w.Doc, s)
		}
	}
	return cmds, nil
}
