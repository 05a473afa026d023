package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A value for each setting other than its default, valid alone.
var settingSamples = map[string]string{
	"addr": "127.0.0.1:9090", "db": "memory:", "demo": "true", "insecure-webhooks": "true", "log-json": "true",
	"anonymous-limit": "7", "store-timeout": "3s", "body-timeout": "4s", "batch-body-timeout": "5s",
	"read-header-timeout": "6s", "max-connections": "8", "cors-origins": "https://app.example.com",
	"devices": "osmand=127.0.0.1:0", "device-max-connections": "9", "device-max-connections-per-address": "3",
	"smtp-url": "smtp://mail.example.com", "mail-from": "Fleet <fleet@example.com>", "public-url": "https://fleet.example.com",
	"signup": "true", "dashboard-insecure-cookies": "true", "dashboard-unknown-devices": "true",
	"map-tiles": "off", "metrics-addr": "127.0.0.1:0", "secrets-key-file": "/tmp/fleet.key", "log-level": "debug",
}

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// Each row of the table: its variable is FLEET_ and the flag's name, it
// sets the same field as the flag, and that field differs from the
// default; no two rows share a flag.
func TestEachVariableSetsItsFlag(t *testing.T) {
	is := is.New(t)
	defaults, err := parseServeConfig(nil, env(nil))
	is.NoErr(err) // the defaults are valid
	seen := map[string]bool{}
	for _, s := range serveSettings() {
		t.Run(s.flag, func(t *testing.T) {
			is := is.New(t)
			is.True(!seen[s.flag]) // one row a flag
			seen[s.flag] = true
			is.Equal(s.env, envName(s.flag))
			v, ok := settingSamples[s.flag]
			is.True(ok) // every setting has a sample in this test
			args := []string{"--" + s.flag + "=" + v}
			vars := map[string]string{s.env: v}
			if s.flag == "smtp-url" { // needs --mail-from
				args = append(args, "--mail-from", settingSamples["mail-from"])
				vars["FLEET_MAIL_FROM"] = settingSamples["mail-from"]
			}
			byFlag, err := parseServeConfig(args, env(nil))
			is.NoErr(err)
			byEnv, err := parseServeConfig(nil, env(vars))
			is.NoErr(err)
			is.Equal(byFlag, byEnv) // the variable sets what the flag sets
			is.True(!equalField(s.field(byEnv), s.field(defaults)))
		})
	}
	is.Equal(len(seen), len(settingSamples)) // no sample for a setting that is gone
}

// equalField compares the values two settings' fields point at.
func equalField(a, b any) bool {
	switch a := a.(type) {
	case *string:
		return *a == *b.(*string)
	case *bool:
		return *a == *b.(*bool)
	case *int:
		return *a == *b.(*int)
	case *time.Duration:
		return *a == *b.(*time.Duration)
	}
	panic("unknown field type")
}

// A bad value is refused with the usage error serve has always given, by
// flag and by variable (the variable's parse error names it); a mistyped
// flag is told its nearest name.
func TestBadSettingsAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--deomo"}, nil, "unknown flag --deomo (did you mean --demo?)"},
		{[]string{"--store-timeout", "0s"}, nil, "--store-timeout must be above 0, not 0s"},
		{nil, map[string]string{"FLEET_BODY_TIMEOUT": "-1s"}, "--body-timeout must be above 0, not -1s"},
		{nil, map[string]string{"FLEET_STORE_TIMEOUT": "soon"}, `FLEET_STORE_TIMEOUT="soon": parse error`},
		{[]string{"--max-connections", "lots"}, nil, `invalid value "lots" for --max-connections: parse error`},
		{[]string{"--max-connections", "-1"}, nil, "--max-connections must be 0 (no cap) or more, not -1"},
		{[]string{"--anonymous-limit", "-1"}, nil, "--anonymous-limit must be 0 (off) or more, not -1"},
		{nil, map[string]string{"FLEET_LOG_LEVEL": "loud"}, `--log-level must be debug, info, warn or error, not "loud"`},
		{[]string{"--cors-origins", "*"}, nil, "--cors-origins: "},
		{[]string{"--addr", "nowhere", "--devices", "all"}, nil, `--addr must be host:port, not "nowhere"`},
		{[]string{"--devices", "foo"}, nil, `--devices: "foo": want protocol=host:port, or all`},
		{[]string{"--device-max-connections", "0"}, nil, "--device-max-connections and --device-max-connections-per-address must be at least 1"},
		{[]string{"--smtp-url", "smtp://mail.example.com"}, nil, "--mail-from is needed with --smtp-url"},
		{[]string{"--mail-from", "nobody"}, nil, "--mail-from "},
		{[]string{"--public-url", "ftp://x"}, nil, "--public-url: "},
		{[]string{"--addr", "0.0.0.0:8080", "--dashboard-insecure-cookies"}, nil, "--dashboard-insecure-cookies needs a loopback --addr"},
		{[]string{"extra"}, nil, `serve takes no arguments, got "extra"`},
	} {
		t.Run(c.want, func(t *testing.T) {
			is := is.New(t)
			_, err := parseServeConfig(c.args, env(c.env))
			is.True(err != nil)
			is.True(strings.Contains(err.Error(), c.want)) // the message
			ue, ok := err.(*usageError)
			is.True(ok) // a usage error: exit 2, with a hint to serve --help
			is.Equal(ue.cmd, "serve")
		})
	}
}

// --demo on a loopback address turns on what a local demo needs, unless a
// flag or its variable says otherwise; elsewhere it turns on nothing.
func TestLocalDemoSettings(t *testing.T) {
	is := is.New(t)
	cfg, err := parseServeConfig([]string{"--demo"}, env(nil))
	is.NoErr(err)
	is.True(cfg.InsecureWebhooks && cfg.InsecureCookies && cfg.UnknownDevices)
	is.Equal(len(cfg.localDemo), 2)
	cfg, err = parseServeConfig([]string{"--demo"}, env(map[string]string{"FLEET_INSECURE_WEBHOOKS": "false"}))
	is.NoErr(err)
	is.True(!cfg.InsecureWebhooks && cfg.InsecureCookies) // the variable said no
	is.Equal(len(cfg.localDemo), 1)
	cfg, err = parseServeConfig([]string{"--demo", "--addr", "0.0.0.0:0"}, env(nil))
	is.NoErr(err)
	is.True(!cfg.InsecureWebhooks && !cfg.InsecureCookies && !cfg.UnknownDevices)
	cfg, err = parseServeConfig([]string{"--anonymous-limit", "0"}, env(nil))
	is.NoErr(err)
	is.Equal(cfg.addressLimit, fleet.AddressLimitOff) // 0 is off
}
