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

// Walkthrough is the README's sections whose commands the session runs.
var Walkthrough = []string{
	"A first session with curl",
	"Vehicles and real-time tracking",
	"Events",
	"Webhooks",
	"Maintenance",
	"Alerts",
}

// READMECommands returns the commands of the indented code blocks of the
// given "## " sections of a README, in order. Fenced blocks (Go code) are
// not shell sessions and are left out.
func READMECommands(readme string, sections []string) ([]Command, error) {
	want := map[string]bool{}
	for _, s := range sections {
		want[s] = true
	}
	found := map[string]bool{}
	var block []string
	var cmds []Command
	in, fenced := false, false
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		c, err := ParseCommands(strings.Join(block, "\n"), false)
		block = nil
		cmds = append(cmds, c...)
		return err
	}
	for _, line := range strings.Split(readme, "\n") {
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
			in = want[strings.TrimSpace(title)]
			found[strings.TrimSpace(title)] = in
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
	for _, s := range sections {
		if !found[s] {
			return nil, fmt.Errorf("the README has no section %q", s)
		}
	}
	return cmds, nil
}
