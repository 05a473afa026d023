package readmetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestSessionsInSync checks that each session script runs its document's
// walkthrough: every command of those sections is a command of a step the
// script runs or marks as not run (with a reason), in the document's order,
// and the script has no command the document lacks. Edit one and this fails
// until the other follows.
func TestSessionsInSync(t *testing.T) {
	for _, w := range Walkthroughs {
		t.Run(w.Doc, func(t *testing.T) {
			is := is.New(t)
			doc, err := os.ReadFile(filepath.Join("..", "..", w.Doc))
			is.NoErr(err)
			script, err := os.ReadFile(filepath.Join("..", "..", w.Script))
			is.NoErr(err)
			cmds, err := DocCommands(string(doc), w)
			is.NoErr(err)
			is.True(len(cmds) >= 8) // the walkthrough's commands were found
			is.NoErr(InSync(w, string(doc), script))
		})
	}
}

// mini is a walkthrough of miniReadme: its "Start" section is bare.
var mini = Walkthrough{
	Doc:      "README.md",
	Sections: []string{"Start", "A first session with curl", "Vehicles and real-time tracking", "Events", "Webhooks", "Maintenance", "Alerts"},
	Bare:     []string{"Start"},
	Script:   "mini.txtar",
}

const miniReadme = `# Product

## Start

    go run ./cmd/fleetserver --demo

## A first session with curl

Start it:

    $ fleetserver --demo
    API key (shown once): fleet_x

` + "```go\n$ not a command: Go code\n```" + `

    $ curl -s -d '{"a":[
        1,2]}' \
        http://127.0.0.1:8080/v1/x
    {"success":true}

## Vehicles and real-time tracking

    $ export VEH=$(jq -r .data.vehicle_id truck.json)

## Events
## Webhooks
## Maintenance
## Alerts

    $ curl -s "http://127.0.0.1:8080/v1/alerts?from=$(date -u -d '-1 hour' +%FT%TZ)"

## Use it from Go

    $ go run .
`

const miniScript = `notrun bare.sh 'a bare command'
notrun start.sh 'the test starts it'
run post.sh
stdout success
poll veh.sh '.data'
run alerts.sh
-- bare.sh --
$ go run ./cmd/fleetserver --demo
-- start.sh --
$ fleetserver --demo
-- post.sh --
$ curl -s -d '{"a":[
    1,2]}' \
    http://127.0.0.1:8080/v1/x
-- veh.sh --
$ export VEH=$(jq -r .data.vehicle_id truck.json)
-- alerts.sh --
$ curl -s "http://127.0.0.1:8080/v1/alerts?from=$(date -u -d '-1 hour' +%FT%TZ)"
-- alerts.want --
anything
`

func TestInSync(t *testing.T) {
	is := is.New(t)
	is.NoErr(InSync(mini, miniReadme, []byte(miniScript)))

	cmds, err := DocCommands(miniReadme, mini)
	is.NoErr(err)
	is.Equal(len(cmds), 5)                                                                // fenced Go code and sections outside the walkthrough are not commands
	is.Equal(cmds[0].Text, "go run ./cmd/fleetserver --demo")                             // a bare section's line is a command without its prompt
	is.Equal(cmds[2].Text, "curl -s -d '{\"a\":[\n1,2]}' \\\nhttp://127.0.0.1:8080/v1/x") // an open quote and a backslash continue a command

	for _, c := range []struct {
		name, readme, script, want string
	}{
		{"a README command changed", strings.Replace(miniReadme, "$ fleetserver --demo", "$ fleetserver --demo --insecure-webhooks", 1), miniScript,
			"command 2 differs"},
		{"a README command added", strings.Replace(miniReadme, "## Events\n", "## Events\n\n    $ curl -s http://127.0.0.1:8080/v1/events\n", 1), miniScript,
			"command 5 differs"},
		{"a README command removed", strings.Replace(miniReadme, "    $ export VEH=$(jq -r .data.vehicle_id truck.json)\n", "", 1), miniScript,
			"command 4 differs"},
		{"the last README command not in the script", miniReadme, strings.Replace(miniScript, "run alerts.sh\n", "", 1),
			"the step alerts.sh is neither run nor marked as not run"},
		{"a script command the README lacks", miniReadme, miniScript + "-- extra.sh --\n$ curl -s http://127.0.0.1:8080/v1/extra\n",
			"the step extra.sh is neither run nor marked as not run"},
		{"a script command run that the README lacks", miniReadme,
			strings.Replace(miniScript, "run alerts.sh\n", "run alerts.sh\nrun extra.sh\n", 1) + "-- extra.sh --\n$ curl -s http://127.0.0.1:8080/v1/extra\n",
			"mini.txtar's command 6 is not in README.md"},
		{"a step named but not held", miniReadme, "run missing.sh\n" + miniScript,
			"the script names the step missing.sh, which it does not hold"},
		{"a step file holding output", miniReadme, strings.Replace(miniScript, "$ export VEH=$(jq -r .data.vehicle_id truck.json)\n", "$ export VEH=$(jq -r .data.vehicle_id truck.json)\nveh_123\n", 1),
			`is not a command`},
		{"a fixed date", strings.ReplaceAll(miniReadme, "$(date -u -d '-1 hour' +%FT%TZ)", "2026-11-22T10:00:00Z"),
			strings.ReplaceAll(miniScript, "$(date -u -d '-1 hour' +%FT%TZ)", "2026-11-22T10:00:00Z"),
			"names the date 2026-11-22, which goes stale"},
		{"a walkthrough section gone", strings.Replace(miniReadme, "## Events\n", "", 1), miniScript,
			`README.md has no section "Events"`},
		{"a bare command changed", strings.Replace(miniReadme, "    go run ./cmd/fleetserver --demo", "    go run ./cmd/fleetserver", 1), miniScript,
			"command 1 differs"},
	} {
		err := InSync(mini, c.readme, []byte(c.script))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestParseCommands(t *testing.T) {
	is := is.New(t)
	cmds, err := ParseCommands(`    $ curl -s "http://127.0.0.1:8080/v1/events?from=$(date -u -d '-1 hour' +%FT%TZ)"
    {"success":true}
    $ echo "a \" b" 'c\'
    $ export A=1 \
        B=2
    a line of output`, false)
	is.NoErr(err)
	is.Equal(len(cmds), 3)
	is.Equal(cmds[0].Text, `curl -s "http://127.0.0.1:8080/v1/events?from=$(date -u -d '-1 hour' +%FT%TZ)"`) // single quotes inside double quotes
	is.Equal(cmds[1].Text, `echo "a \" b" 'c\'`)                                                             // an escaped double quote; a backslash in single quotes is literal
	is.Equal(cmds[2].Text, "export A=1 \\\nB=2")

	_, err = ParseCommands("$ echo 'open\n", false)
	is.True(err != nil) // a quote left open to the end
	_, err = ParseCommands("$ echo ok\noutput\n", true)
	is.True(err != nil) // strict: a step holds commands only
}
