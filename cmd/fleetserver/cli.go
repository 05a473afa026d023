package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetstore"
)

// The command line: a table of commands, each with its flags, help and
// example. `fleetserver help`, `fleetserver CMD --help` and
// `fleetserver GROUP --help` print help and exit 0; a mistake in the
// arguments is a usageError (exit 2), naming the flag as it was typed.

// cli is what every command gets: the environment and the outputs.
type cli struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// command is one command of the table.
type command struct {
	name    string // "serve", "accounts create"
	args    string // the positional arguments, as the synopsis shows them
	summary string // one line, for the list of commands
	about   string // what it does, for its help
	example string
	// define declares the command's flags on f and returns what runs it
	// with the positional arguments.
	define func(c *cli, f *flags) func(ctx context.Context, args []string) error
}

// commands is the table, in the order help lists them.
func commands() []command {
	return []command{
		serveCommand(),
		accountsCreateCommand(), accountsListCommand(),
		keysCreateCommand(), keysListCommand(), keysRevokeCommand(),
		usersCreateCommand(), usersListCommand(), usersRemoveCommand(), usersLinkCommand(),
		devicesUnknownCommand(), devicesCommandCommand(),
		migrateCommand(), checkCommand(), backupCommand(),
		loadCommand(),
		versionCommand(),
	}
}

// usageError is a mistake in the arguments: main prints it with a hint to
// the command's help and exits 2.
type usageError struct {
	cmd string // the command whose help to point at ("" for the global one)
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// run is the whole program: main only wires it to the process, so tests run
// it in-process with their own arguments, environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := &cli{getenv: getenv, stdout: stdout, stderr: stderr}
	table := commands()
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			if len(args) > 1 { // help CMD
				return run(ctx, append(args[1:], "--help"), getenv, stdout, stderr)
			}
			c.globalHelp(table)
			return nil
		case "-version", "--version":
			args = append([]string{"version"}, args[1:]...)
		}
	}
	name := "serve" // the default: `fleetserver --addr ...` serves
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
		if group := groupOf(table, name); len(group) > 0 {
			if len(args) == 0 || strings.HasPrefix(args[0], "-") {
				if len(args) > 0 && isHelp(args[0]) {
					c.groupHelp(name, group)
					return nil
				}
				return usagef(name, "%s needs a subcommand: %s", name, subcommands(group))
			}
			sub := args[0]
			if !slices.ContainsFunc(group, func(cmd command) bool { return cmd.name == name+" "+sub }) {
				return usagef(name, "unknown subcommand %q of %s (want %s)", sub, name, subcommands(group))
			}
			name, args = name+" "+sub, args[1:]
		}
	}
	for _, cmd := range table {
		if cmd.name == name {
			return c.runCommand(ctx, cmd, args)
		}
	}
	return usagef("", "unknown command %q", name)
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// groupOf returns the commands of a group ("accounts": accounts create,
// accounts list...), none when name is not a group.
func groupOf(table []command, name string) []command {
	var out []command
	for _, cmd := range table {
		if strings.HasPrefix(cmd.name, name+" ") {
			out = append(out, cmd)
		}
	}
	return out
}

func subcommands(group []command) string {
	var names []string
	for _, cmd := range group {
		names = append(names, cmd.name[strings.LastIndex(cmd.name, " ")+1:])
	}
	return strings.Join(names, ", ")
}

func (c *cli) runCommand(ctx context.Context, cmd command, args []string) error {
	f := newFlags(cmd.name, c.getenv)
	runner := cmd.define(c, f)
	rest, err := f.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.commandHelp(cmd, f)
		return nil
	}
	if err != nil {
		return err
	}
	return runner(ctx, rest)
}

func (c *cli) globalHelp(table []command) {
	w := c.stdout
	fmt.Fprint(w, "fleetserver is the reference server of the Fleet API, and its operator's tools.\n\nUsage:\n  fleetserver [command] [flags]\n\nCommands:\n")
	for _, cmd := range table {
		fmt.Fprintf(w, "  %-17s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprint(w, "\nWithout a command, fleetserver serves. `fleetserver COMMAND --help` tells more of each.\n"+
		"Stores (--db): sqlite:PATH (the default, sqlite:fleet.db), memory:, or postgres://USER@HOST:PORT/DB.\n")
}

func (c *cli) groupHelp(name string, group []command) {
	fmt.Fprintf(c.stdout, "Usage:\n  fleetserver %s SUBCOMMAND [flags]\n\nSubcommands:\n", name)
	for _, cmd := range group {
		fmt.Fprintf(c.stdout, "  %-17s %s\n", cmd.name, cmd.summary)
	}
	fmt.Fprintf(c.stdout, "\n`fleetserver %s SUBCOMMAND --help` tells more of each.\n", name)
}

func (c *cli) commandHelp(cmd command, f *flags) {
	w := c.stdout
	synopsis := "fleetserver " + cmd.name
	if cmd.args != "" {
		synopsis += " " + cmd.args
	}
	fmt.Fprintf(w, "Usage:\n  %s [flags]\n\n%s\n", synopsis, cmd.about)
	fmt.Fprint(w, "\nFlags:\n")
	f.fs.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		head := "  --" + fl.Name
		if name != "" {
			head += " " + name
		}
		fmt.Fprintf(w, "%s\n      %s", head, usage)
		if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" {
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		if v, ok := f.env[fl.Name]; ok {
			fmt.Fprintf(w, " [$%s]", v)
		}
		fmt.Fprintln(w)
	})
	if len(f.env) > 0 {
		fmt.Fprint(w, "\nEach flag in [$NAME] may be set by that environment variable instead; a flag given wins.\n")
	}
	if cmd.example != "" {
		fmt.Fprintf(w, "\nExample:\n  %s\n", cmd.example)
	}
}

// flags is a command's flag set. Flags marked with fromEnv may also be set by
// a FLEET_* environment variable (FLEET_ and the flag's name in capitals,
// dashes as underscores); a flag on the command line wins over it.
type flags struct {
	cmd      string
	fs       *flag.FlagSet
	getenv   func(string) string
	env      map[string]string // flag name -> variable name
	required []string
}

func newFlags(cmd string, getenv func(string) string) *flags {
	fs := flag.NewFlagSet("fleetserver "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are written by the command line, once
	fs.Usage = func() {}
	return &flags{cmd: cmd, fs: fs, getenv: getenv, env: map[string]string{}}
}

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "FLEET_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fromEnv lets the environment set the named flags.
func (f *flags) fromEnv(names ...string) {
	for _, n := range names {
		if f.fs.Lookup(n) == nil {
			panic("fleetserver: no flag " + n)
		}
		f.env[n] = envName(n)
	}
}

// require names flags that must be given.
func (f *flags) require(names ...string) { f.required = append(f.required, names...) }

// db declares --db, which FLEET_DB may set.
func (f *flags) db() *string {
	s := f.fs.String("db", fleetstore.DefaultDSN, dbHelp)
	f.fromEnv("db")
	return s
}

// parse applies the arguments (flags may come before or after positional
// arguments), then the environment to the flags not given, and returns the
// positional ones. A flag given wins over its variable, which is then not
// even read (a malformed value of it is no error).
func (f *flags) parse(args []string) ([]string, error) {
	var rest []string
	for {
		if err := f.fs.Parse(args); err != nil {
			return nil, f.explain(err, args)
		}
		args = f.fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			rest = append(rest, args[1:]...)
			break
		}
		rest, args = append(rest, args[0]), args[1:]
	}
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	names := make([]string, 0, len(f.env))
	for name := range f.env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if v := f.env[name]; !given[name] {
			if val := f.getenv(v); val != "" {
				if err := f.fs.Set(name, val); err != nil {
					return nil, usagef(f.cmd, "%s=%q: %v", v, val, err)
				}
				given[name] = true
			}
		}
	}
	for _, n := range f.required {
		if !given[n] {
			return nil, usagef(f.cmd, "--%s is required", n)
		}
	}
	return rest, nil
}

// explain turns the flag package's error into one that names the flag as
// it was typed.
func (f *flags) explain(err error, args []string) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	typed := func(name string) string {
		for _, a := range args {
			n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if strings.HasPrefix(a, "-") && n == name {
				before, _, _ := strings.Cut(a, "=")
				return before
			}
		}
		return "--" + name
	}
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: -"):
		name := strings.TrimPrefix(msg, "flag provided but not defined: -")
		if near := f.nearest(name); near != "" {
			return usagef(f.cmd, "unknown flag %s (did you mean --%s?)", typed(name), near)
		}
		return usagef(f.cmd, "unknown flag %s", typed(name))
	case strings.HasPrefix(msg, "flag needs an argument: -"):
		return usagef(f.cmd, "%s needs a value", typed(strings.TrimPrefix(msg, "flag needs an argument: -")))
	case strings.HasPrefix(msg, "invalid value "):
		// invalid value "x" for flag -name: reason
		rest := strings.TrimPrefix(msg, "invalid value ")
		val, rest, _ := strings.Cut(rest, " for flag -")
		name, reason, _ := strings.Cut(rest, ": ")
		return usagef(f.cmd, "invalid value %s for %s: %s", val, typed(name), reason)
	case strings.HasPrefix(msg, "invalid boolean value "):
		return usagef(f.cmd, "%s", msg)
	}
	return usagef(f.cmd, "%s", msg)
}

// nearest returns the command's flag a mistyped name most likely meant
// (--deomo: demo), "" when none is near: at most two letters changed,
// added, removed or swapped, and fewer than half of them.
func (f *flags) nearest(name string) string {
	best, bestD := "", 3
	f.fs.VisitAll(func(fl *flag.Flag) {
		if d := editDistance(name, fl.Name); d < bestD && 2*d < len(fl.Name) {
			best, bestD = fl.Name, d
		}
	})
	return best
}

// editDistance counts the letters to change, add, remove or swap (two
// side by side) to turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// knownEnv lists every FLEET_* variable the commands read, and the ones the
// examples and tests read, which are not the server's business.
func knownEnv() map[string]bool {
	known := map[string]bool{
		"FLEET_TEST_POSTGRES":     true, // the tests' database
		"FLEET_README_SESSION":    true, // internal/readmetest: require the documentation's sessions
		"FLEET_URL":               true, // examples/client
		"FLEET_KEY":               true, // examples/client
		"FLEET_WEBHOOK_SECRET":    true, // examples/webhook-receiver
		"FLEET_INSECURE_WEBHOOKS": true, // examples/embed
		"FLEET_CHROMIUM":          true, // the dashboard's browser tests
		"FLEET_REQUIRE_BROWSER":   true, // CI: those tests may not skip
		"FLEET_SCREENSHOTS":       true, // those tests refresh docs/screenshots
	}
	c := &cli{getenv: func(string) string { return "" }, stdout: io.Discard, stderr: io.Discard}
	for _, cmd := range commands() {
		f := newFlags(cmd.name, c.getenv)
		cmd.define(c, f)
		for _, v := range f.env {
			known[v] = true
		}
	}
	return known
}

// unknownEnv returns the FLEET_* variables of environ that no setting
// reads: a misspelt one would otherwise be silently ignored.
func unknownEnv(environ []string) []string {
	known := knownEnv()
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "FLEET_") && !known[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// describe turns a fleet error into a message for the operator, naming
// each field by the flag that sets it (fields maps one to the other).
func describe(err error, fields map[string]string) error {
	var fe *fleet.Error
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Code == fleet.CodeValidation && len(fe.Details) > 0 {
		var parts []string
		for _, d := range fe.Details {
			name := d.Field
			if i := strings.IndexAny(name, "[."); i >= 0 {
				name = name[:i]
			}
			if flag, ok := fields[name]; ok {
				parts = append(parts, "--"+flag+" "+d.Message)
			} else {
				parts = append(parts, d.Field+": "+d.Message)
			}
		}
		return errors.New(strings.Join(parts, "; "))
	}
	return errors.New(fe.Message)
}

// positive checks that a duration flag is above zero.
func positive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--%s must be above 0, not %s", name, d)
	}
	return nil
}
