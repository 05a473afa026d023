//go:build unix

package readmetest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// rewrites are the only changes made to a step's commands before they run:
// the test's own ports instead of the documents', and the binary it built
// instead of `go run` (the same program, without compiling it again).
func rewrites(ts *testscript.TestScript) *strings.Replacer {
	return strings.NewReplacer(
		"127.0.0.1:8080", ts.Getenv("FLEET_ADDR"),
		"127.0.0.1:9000", ts.Getenv("RECEIVER_ADDR"),
		"go run ./cmd/fleetserver", "fleetserver",
	)
}

// sessionFile keeps the shell variables a step set (the tour's `export
// VEH=...`) for the steps after it, as one terminal would.
const sessionFile = ".session.sh"

// shellScript is what bash runs for a step: the session so far, the
// step's commands with every variable they set exported, then the session
// saved again.
func shellScript(ts *testscript.TestScript, cmds []Command, save bool) string {
	var b strings.Builder
	b.WriteString("set -a\n[ -f " + sessionFile + " ] && . ./" + sessionFile + "\nset -eo pipefail\n")
	r := rewrites(ts)
	for _, c := range cmds {
		b.WriteString(r.Replace(c.Text))
		b.WriteString("\n")
	}
	if save {
		b.WriteString("export -p > " + sessionFile + ".new && mv " + sessionFile + ".new " + sessionFile + "\n")
	}
	return b.String()
}

// stepCommands reads a step's file, which is where the script's files are,
// $WORK, whatever directory the script went to since (cd).
func stepCommands(ts *testscript.TestScript, file string) []Command {
	cmds, err := ParseCommands(ts.ReadFile(filepath.Join(ts.Getenv("WORK"), file)), true)
	if err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	if len(cmds) == 0 {
		ts.Fatalf("%s holds no command", file)
	}
	return cmds
}

// background is a long-running step (the server, the receiver, a stream):
// its output goes to NAME.log in the work directory.
type background struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

type stateKey struct{}

type sessionState struct {
	mu  sync.Mutex
	bgs map[string]*background
}

func state(ts *testscript.TestScript) *sessionState {
	return ts.Value(stateKey{}).(*sessionState)
}

const waitLimit = 30 * time.Second

var sessionCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// run FILE: run the step's commands in the session; its output is
	// stdout and stderr for the checks after it.
	"run": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: run FILE")
		}
		err := ts.Exec("bash", "-c", shellScript(ts, stepCommands(ts, args[0]), true))
		if neg {
			if err == nil {
				ts.Fatalf("%s succeeded", args[0])
			}
			return
		}
		ts.Check(err)
	},
	// start NAME FILE: run the step in the background until end NAME or
	// the end of the script.
	"start": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: start NAME FILE")
		}
		name := args[0]
		st := state(ts)
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.bgs[name] != nil {
			ts.Fatalf("%s is started already", name)
		}
		logPath := ts.MkAbs(name + ".log")
		out, err := os.Create(logPath)
		ts.Check(err)
		cmd := exec.Command("bash", "-c", shellScript(ts, stepCommands(ts, args[1]), false))
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = sessionEnv(ts)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		ts.Check(cmd.Start())
		bg := &background{cmd: cmd, log: logPath, done: make(chan struct{})}
		go func() {
			bg.err = cmd.Wait()
			out.Close()
			close(bg.done)
		}()
		st.bgs[name] = bg
		ts.Defer(func() { bg.stop() })
	},
	// waitlog NAME REGEXP: wait until NAME's output matches.
	"waitlog": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: waitlog NAME REGEXP")
		}
		waitFor(ts, args[0], args[1])
	},
	// grab VAR NAME REGEXP: wait until NAME's output matches and set the
	// session's VAR to the first group, as a user copies from the screen.
	"grab": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 3 {
			ts.Fatalf("usage: grab VAR NAME REGEXP")
		}
		m := waitFor(ts, args[1], args[2])
		if len(m) < 2 {
			ts.Fatalf("grab: %q has no group", args[2])
		}
		f, err := os.OpenFile(ts.MkAbs(sessionFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		ts.Check(err)
		_, err = fmt.Fprintf(f, "export %s='%s'\n", args[0], strings.ReplaceAll(m[1], "'", `'\''`))
		ts.Check(errors.Join(err, f.Close()))
		ts.Setenv(args[0], m[1])
	},
	// end NAME: end a background step (SIGTERM to it and its children);
	// its output becomes stdout.
	"end": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: end NAME")
		}
		bg := lookup(ts, args[0])
		if !bg.stop() {
			ts.Fatalf("%s did not stop within %v", args[0], waitLimit)
		}
		out, err := os.ReadFile(bg.log)
		ts.Check(err)
		fmt.Fprint(ts.Stdout(), string(out))
	},
	// poll FILE FILTER: run the step again until `jq -e FILTER` holds of
	// its stdout, as a user looks again at what the server does in the
	// background (a webhook delivery's outcome); 30 s at most.
	"poll": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: poll FILE FILTER")
		}
		script := shellScript(ts, stepCommands(ts, args[0]), true)
		deadline := time.Now().Add(waitLimit)
		for {
			ts.Check(ts.Exec("bash", "-c", script))
			if jqHolds(ts.ReadFile("stdout"), args[1]) == nil {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("jq -e %s did not hold of %s's output within %v", args[1], args[0], waitLimit)
			}
			time.Sleep(100 * time.Millisecond)
		}
	},
	// json FILTER: the last stdout, given to `jq -e FILTER`, is true.
	"json": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: json FILTER")
		}
		err := jqHolds(ts.ReadFile("stdout"), args[0])
		if neg {
			if err == nil {
				ts.Fatalf("jq -e %s holds", args[0])
			}
			return
		}
		ts.Check(err)
	},
	// notrun FILE REASON: the step's commands are in the document but not
	// run here, for the reason given.
	"notrun": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 || strings.TrimSpace(args[1]) == "" {
			ts.Fatalf("usage: notrun FILE REASON")
		}
		stepCommands(ts, args[0])
		ts.Logf("not run: %s (%s)", args[0], args[1])
	},
}

func lookup(ts *testscript.TestScript, name string) *background {
	st := state(ts)
	st.mu.Lock()
	defer st.mu.Unlock()
	bg := st.bgs[name]
	if bg == nil {
		ts.Fatalf("%s is not started", name)
	}
	return bg
}

// stop ends the step's process group and reports whether it ended.
func (bg *background) stop() bool {
	select {
	case <-bg.done:
		return true
	default:
	}
	_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-bg.done:
		return true
	case <-time.After(waitLimit):
		_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
		<-bg.done
		return false
	}
}

// waitFor polls a background step's output until it matches re, and fails
// when the step ends first or waitLimit passes.
func waitFor(ts *testscript.TestScript, name, expr string) []string {
	re, err := regexp.Compile(expr)
	ts.Check(err)
	bg := lookup(ts, name)
	deadline := time.Now().Add(waitLimit)
	for {
		out, err := os.ReadFile(bg.log)
		ts.Check(err)
		if m := re.FindStringSubmatch(string(out)); m != nil {
			return m
		}
		select {
		case <-bg.done:
			out, _ := os.ReadFile(bg.log)
			ts.Fatalf("%s ended (%v) without printing %q:\n%s", name, bg.err, expr, out)
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not print %q within %v:\n%s", name, expr, waitLimit, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// envNames are the variables a background step gets from the script's
// environment.
var envNames = []string{"PATH", "HOME", "TMPDIR", "WORK", "FLEET_ADDR", "RECEIVER_ADDR"}

func sessionEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range envNames {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// freeAddr returns a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// needTools checks what the walkthroughs need besides Go. Without them the
// sessions are skipped with a message, unless FLEET_README_SESSION=require
// (CI), where they fail.
func needTools(t *testing.T) {
	var missing []string
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if err := exec.Command("date", "-u", "-d", "-2 min", "+%Y-%m-%dT%H:%M:%SZ").Run(); err != nil {
		missing = append(missing, "GNU date")
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("the documentation's sessions need %s", strings.Join(missing, ", "))
	if os.Getenv("FLEET_README_SESSION") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg + " (set FLEET_README_SESSION=require to fail instead)")
}

// TestSessions follows each walkthrough as a user would (Walkthroughs):
// the API tour starts fleetserver --demo on a SQLite file in a folder of its
// own and the webhook receiver, on free ports, and runs every command of the
// tour with curl and jq; the README's session starts the server as its two
// commands say and follows the five-minute tour. Each output is checked
// (docs/api-tour.session.txtar, docs/readme-tour.session.txtar).
func TestSessions(t *testing.T) {
	needTools(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/fleetserver", "./examples/webhook-receiver")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var files []string
	for _, w := range Walkthroughs {
		files = append(files, filepath.Join(root, w.Script))
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			env.Setenv("FLEET_ADDR", "127.0.0.1:0") // fleetserver picks a port; the script takes it from its output
			env.Setenv("RECEIVER_ADDR", freeAddr(t))
			env.Values[stateKey{}] = &sessionState{bgs: map[string]*background{}}
			return nil
		},
		Cmds: sessionCmds,
	})
}

// jqHolds reports whether `jq -e filter` holds of input.
func jqHolds(input, filter string) error {
	cmd := exec.Command("jq", "-e", filter)
	cmd.Stdin = strings.NewReader(input)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("jq -e %s does not hold (%v): %s", filter, err, out)
	}
	return nil
}
