package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/matryer/is"
)

// cmdRun runs the command line in-process with env as its environment.
func cmdRun(env map[string]string, args ...string) (string, error) {
	var out, errb syncBuf
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return out.String(), err
}

// Every command and group has its own help, and asking for it is no error.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"Commands:", "accounts create", "keys revoke", "migrate", "check", "version"}},
		{[]string{"help"}, []string{"Commands:"}},
		{[]string{"-h"}, []string{"Commands:"}},
		{[]string{"serve", "--help"}, []string{"--addr host:port", "(default 127.0.0.1:8080)", "[$FLEET_ADDR]", "--db", "[$FLEET_DB]",
			"--anonymous-limit", "[$FLEET_ANONYMOUS_LIMIT]", "--log-level", "[$FLEET_LOG_LEVEL]", "--devices LIST", "[$FLEET_DEVICES]", "GPS trackers", "Example:"}},
		{[]string{"accounts", "--help"}, []string{"fleetserver accounts SUBCOMMAND", "accounts create", "accounts list"}},
		{[]string{"keys", "-h"}, []string{"keys create", "keys list", "keys revoke"}},
		{[]string{"accounts", "create", "--help"}, []string{"--company", "required", "--plan", "(default free)", "--rate-limit", "--json", "Example:"}},
		{[]string{"help", "keys", "revoke"}, []string{"fleetserver keys revoke KEY_ID", "5 seconds"}},
		{[]string{"users", "--help"}, []string{"users create", "users list", "users remove", "users link"}},
		{[]string{"users", "list", "--help"}, []string{"--account", "required", "--json", "Example:"}},
		{[]string{"users", "remove", "--help"}, []string{"fleetserver users remove USER", "only admin", "--json", "Example:"}},
		{[]string{"users", "link", "--help"}, []string{"fleetserver users link USER", "forgot", "24 hours", "--url", "--json", "Example:"}},
		{[]string{"check", "--help"}, []string{"integrity_check", "does not exist"}},
		{[]string{"load", "--help"}, []string{"--devices", "--interval", "--batch", "--streams", "--readers", "[$FLEET_URL]", "[$FLEET_KEY]", "Example:"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			is := is.New(t)
			out, err := cmdRun(nil, c.args...)
			is.NoErr(err) // help is not an error
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("help lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// Mistakes name the flag as it was typed, once, and point at the help.
func TestUsageErrors(t *testing.T) {
	env := map[string]string{"FLEET_DB": "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")}
	for _, c := range []struct {
		args []string
		want string
		help string // the command whose help the error points at
	}{
		{[]string{"accounts", "create", "--company", "X", "--bogus"}, "unknown flag --bogus", "accounts create"},
		{[]string{"accounts", "create", "-bogus"}, "unknown flag -bogus", "accounts create"},
		{[]string{"serve", "--deomo"}, "unknown flag --deomo (did you mean --demo?)", "serve"},
		{[]string{"--deomo"}, "unknown flag --deomo (did you mean --demo?)", "serve"},
		{[]string{"accounts", "create", "--compnay=X"}, "unknown flag --compnay (did you mean --company?)", "accounts create"},
		{[]string{"accounts", "create"}, "--company is required", "accounts create"},
		{[]string{"keys", "create", "--name", "x"}, "--account is required", "keys create"},
		{[]string{"keys", "list"}, "--account is required", "keys list"},
		{[]string{"accounts", "create", "--company", "X", "--rate-limit", "many"}, `invalid value "many" for --rate-limit`, "accounts create"},
		{[]string{"serve", "--addr"}, "--addr needs a value", "serve"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level must be", "serve"},
		{[]string{"serve", "--smtp-url", "mail.example.com:25"}, "--smtp-url: the scheme must be smtp or smtps", "serve"},
		{[]string{"serve", "--smtp-url", "smtp://mail.example.com:99999", "--mail-from", "a@example.com"}, "--smtp-url: the port must be", "serve"},
		{[]string{"serve", "--smtp-url", "smtp://mail.example.com"}, "--mail-from is needed with --smtp-url", "serve"},
		{[]string{"serve", "--mail-from", "a@example.com\r\nBcc: x@example.com"}, "--mail-from must be one address", "serve"},
		{[]string{"keys", "revoke"}, "one key id", "keys revoke"},
		{[]string{"accounts"}, "accounts needs a subcommand: create, list", "accounts"},
		{[]string{"accounts", "delete"}, `unknown subcommand "delete"`, "accounts"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			is := is.New(t)
			_, err := cmdRun(env, c.args...)
			var ue *usageError
			is.True(errors.As(err, &ue)) // a usage error (exit 2)
			is.True(strings.Contains(err.Error(), c.want))
			is.Equal(ue.cmd, c.help)
		})
	}
}

// A FLEET_* variable that is not a setting is told apart, so a misspelt one
// is not silently ignored; every serve flag has its variable.
func TestEnvironment(t *testing.T) {
	is := is.New(t)
	is.Equal(unknownEnv([]string{"FLEET_DB=x", "FLEET_ADDR=y", "FLEET_ADRESS=z", "FLEET_TEST_POSTGRES=p", "PATH=/bin", "FLEET_MAX_CONNECTIONS=1"}),
		[]string{"FLEET_ADRESS"})
	known := knownEnv()
	f := newFlags("serve", func(string) string { return "" })
	defineServe(&cli{}, f)
	n := 0
	f.fs.VisitAll(func(fl *flag.Flag) {
		n++
		is.True(known[envName(fl.Name)]) // each serve flag has its variable
	})
	is.True(n >= 12)

	// A flag wins over its variable; a malformed variable is a usage error naming it.
	_, err := cmdRun(map[string]string{"FLEET_LOG_LEVEL": "loud"}, "serve", "--db", "memory:")
	is.True(err != nil && strings.Contains(err.Error(), "--log-level must be"))
	_, err = cmdRun(map[string]string{"FLEET_MAX_CONNECTIONS": "lots"}, "serve", "--db", "memory:")
	is.True(err != nil && strings.Contains(err.Error(), `FLEET_MAX_CONNECTIONS="lots"`))
}

// The operator's commands: list accounts, list an account's keys, revoke a
// key by its id (a server then refuses it), all with --json for scripts.
func TestOperatorCommands(t *testing.T) {
	is := is.New(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	env := map[string]string{"FLEET_DB": dsn}

	_, err := cmdRun(env, "accounts", "list")
	is.True(err != nil && strings.Contains(err.Error(), "does not exist")) // no store yet: not made by listing

	out, err := cmdRun(env, "accounts", "create", "--company", "Acme Haulage", "--plan", "pro", "--rate-limit", "20000", "--json")
	is.NoErr(err)
	var acc map[string]string
	is.NoErr(json.Unmarshal([]byte(out), &acc))
	_, err = cmdRun(env, "accounts", "create", "--company", "Tiny", "--rate-limit", "10")
	is.True(err != nil && strings.Contains(err.Error(), "--rate-limit can only raise")) // refused, not ignored

	out, err = cmdRun(env, "accounts", "list", "--json")
	is.NoErr(err)
	var accounts []map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &accounts))
	is.Equal(len(accounts), 1)
	is.Equal(accounts[0]["account_id"], acc["account_id"])
	is.Equal(accounts[0]["rate_limit_per_hour"], 20000.0) // honoured
	out, err = cmdRun(env, "accounts", "list")
	is.NoErr(err)
	is.True(strings.Contains(out, "Acme Haulage") && strings.Contains(out, "20000"))

	out, err = cmdRun(env, "keys", "create", "--account", acc["account_id"], "--name", "Gateway A", "--permissions", "locations:write", "--environment", "development", "--json")
	is.NoErr(err)
	var gw map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &gw))
	_, err = cmdRun(env, "keys", "create", "--account", acc["account_id"], "--name", "x", "--permissions", "everything")
	is.True(err != nil && strings.Contains(err.Error(), "--permissions unknown permission")) // the flag, not the field

	out, err = cmdRun(env, "keys", "list", "--account", acc["account_id"], "--json")
	is.NoErr(err)
	var keys []map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &keys))
	is.Equal(len(keys), 2)
	is.Equal(keys[1]["name"], "Gateway A")
	is.Equal(keys[1]["environment"], "development")
	is.Equal(keys[1]["status"], "active")
	is.True(!strings.Contains(out, gw["api_key"].(string))) // never the secret

	out, err = cmdRun(env, "keys", "revoke", gw["key_id"].(string), "--json") // a flag after the id
	is.NoErr(err)
	is.True(strings.Contains(out, `"status": "revoked"`))
	store, err := fleetstore.Open(context.Background(), dsn)
	is.NoErr(err)
	defer store.Close()
	_, err = fleet.NewService(store, fleet.Options{}).Authenticate(context.Background(), gw["api_key"].(string))
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // refused by a server
	_, err = cmdRun(env, "keys", "revoke", "key_nope")
	is.True(err != nil && strings.Contains(err.Error(), "key_nope"))
}

// The real binary: help exits 0, a mistake exits 2 with its message once.
func TestExitCodes(t *testing.T) {
	is := is.New(t)
	bin := serverBinary(t)
	out, err := exec.Command(bin, "--help").CombinedOutput()
	is.NoErr(err) // exit 0
	is.True(strings.Contains(string(out), "Commands:"))
	out, err = exec.Command(bin, "accounts", "create", "--bogus").CombinedOutput()
	var ee *exec.ExitError
	is.True(errors.As(err, &ee))
	is.Equal(ee.ExitCode(), 2)
	is.Equal(strings.Count(string(out), "--bogus"), 1) // said once, as typed
	is.True(strings.Contains(string(out), "fleetserver accounts create --help"))
	out, err = exec.Command(bin, "--version").CombinedOutput()
	is.NoErr(err)
	is.True(strings.HasPrefix(string(out), "fleetserver "))
	cmd := exec.Command(bin, "check", "--db", "sqlite:"+filepath.Join(t.TempDir(), "none.db"))
	err = cmd.Run()
	is.True(errors.As(err, &ee))
	is.Equal(ee.ExitCode(), 1) // a failure, not a usage error
}

// --demo run again on the same store keeps its account: one demo account,
// the same vehicles moving again, a new key, and the old key revoked.
func TestDemoIsReused(t *testing.T) {
	is := is.New(t)
	env := map[string]string{"FLEET_DB": "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")}
	first := start(t, env, "--demo")
	key1 := first.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	_, body := get(t, first.base+"/v1/vehicles?limit=100", key1)
	vehicles1 := ids(body, "vehicle_id")
	is.Equal(len(vehicles1), 25)
	is.NoErr(first.stop())

	second := start(t, env, "--demo")
	key2 := second.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	is.True(key2 != key1)
	is.True(strings.Contains(second.stdout.String(), "earlier --demo run")) // says what happened
	status, body := get(t, second.base+"/v1/vehicles?limit=100", key2)
	is.Equal(status, 200)
	is.Equal(ids(body, "vehicle_id"), vehicles1) // the same vehicles
	status, _ = get(t, second.base+"/v1/account", key1)
	is.Equal(status, 401) // the old key was revoked
	status, body = get(t, second.base+"/v1/alerts/rules", key2)
	is.Equal(status, 200)
	is.Equal(len(body["data"].([]any)), 3) // its rules, not a second set
	is.NoErr(second.stop())
	out, err := cmdRun(env, "accounts", "list", "--json")
	is.NoErr(err)
	is.Equal(strings.Count(out, "Demo Logistics"), 1) // one demo account
}

// A server with no account says how to make one: with accounts create on
// its store, or, on a memory: store that no other process reaches, with
// --demo or a file.
func TestServeHintsAtAccountsCreate(t *testing.T) {
	is := is.New(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	s := start(t, map[string]string{"FLEET_DB": db})
	is.True(strings.Contains(s.stdout.String(), "No account yet: make one with `fleetserver accounts create --company NAME --db "+db+"`"))
	mem := start(t, map[string]string{"FLEET_DB": "memory:"})
	is.True(strings.Contains(mem.stdout.String(), "a memory: store belongs to this process alone: run with --demo"))
	is.True(!strings.Contains(mem.stdout.String(), "--db memory:")) // no command that cannot work
	withDemo := start(t, map[string]string{"FLEET_DB": "memory:"}, "--demo")
	withDemo.stdout.waitFor(t, regexp.MustCompile(`API key \(shown once\): (\S+)`))
	is.True(!strings.Contains(withDemo.stdout.String(), "No account yet"))
}

func ids(body map[string]any, field string) []string {
	var out []string
	for _, x := range body["data"].([]any) {
		out = append(out, x.(map[string]any)[field].(string))
	}
	return out
}
