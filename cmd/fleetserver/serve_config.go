package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetmail"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// serveConfig is what serve runs with: its flags (each with its FLEET_*
// variable, serveSettings), then what check derives from them.
type serveConfig struct {
	Addr             string
	DB               string
	Demo             bool
	InsecureWebhooks bool
	LogJSON          bool
	LogLevel         string
	MetricsAddr      string
	HeaderTimeout    time.Duration
	AnonymousLimit   int
	BodyTimeout      time.Duration
	BatchBodyTimeout time.Duration
	MaxConns         int
	StoreTimeout     time.Duration
	CORSOrigins      string
	Signup           bool
	InsecureCookies  bool
	UnknownDevices   bool
	PublicURL        string
	MapTiles         string
	Devices          string
	DeviceMaxConns   int
	DeviceMaxPerAddr int
	SecretsKeyFile   string
	SMTPURL          string
	MailFrom         string

	// Derived by check.
	addressLimit    int // fleet.Options.AddressLimit: AnonymousLimit, or fleet.AddressLimitOff for 0
	origins         []string
	deviceEndpoints []fleetdevice.Endpoint
	smtpServer      *fleetmail.Server
	level           slog.Level
	localDemo       []string          // what a local --demo turned on, for its first line
	byDemo          map[string]string // flag -> why it is on, for its warning
}

// setting is one row of serveSettings: a flag, its variable, its default
// and help, where its value goes, and the check of that value alone.
type setting struct {
	flag string
	env  string // always envName(flag)
	def  any    // string, bool, int or time.Duration, as the field
	help string
	// field is the serveConfig field the flag sets: a *string, *bool,
	// *int or *time.Duration matching def.
	field func(c *serveConfig) any
	// validate checks the value once every flag and variable is applied;
	// nil when any value of the type will do. Its error is the usage
	// message.
	validate func(c *serveConfig) error
}

// dbHelp is --db's help, the same in every command.
const dbHelp = "the store, a `DSN`: sqlite:PATH, memory:, or postgres://USER@HOST:PORT/DB"

// serveSettings is every serve flag with its FLEET_* variable, default,
// help and validation, in the order their values are checked. The checks
// that weigh several settings together are in serveConfig.check.
func serveSettings() []setting {
	return []setting{
		{flag: "addr", env: "FLEET_ADDR", def: "127.0.0.1:8080", help: "address to listen on (`host:port`; port 0 picks one)",
			field: func(c *serveConfig) any { return &c.Addr }},
		{flag: "db", env: "FLEET_DB", def: fleetstore.DefaultDSN, help: dbHelp,
			field: func(c *serveConfig) any { return &c.DB }},
		{flag: "demo", env: "FLEET_DEMO", def: false, help: "seed a demo account with a simulated fleet and print its key (reused on the next run); on a loopback --addr it also turns on --insecure-webhooks and --dashboard-insecure-cookies, unless they are given",
			field: func(c *serveConfig) any { return &c.Demo }},
		{flag: "insecure-webhooks", env: "FLEET_INSECURE_WEBHOOKS", def: false, help: "allow http and private webhook addresses (development and tests only)",
			field: func(c *serveConfig) any { return &c.InsecureWebhooks }},
		{flag: "log-json", env: "FLEET_LOG_JSON", def: false, help: "write logs as JSON instead of text",
			field: func(c *serveConfig) any { return &c.LogJSON }},
		{flag: "anonymous-limit", env: "FLEET_ANONYMOUS_LIMIT", def: fleet.DefaultAddressLimit, help: "`N` requests per hour and client address without a valid API key (0: no limit, for local development)",
			field: func(c *serveConfig) any { return &c.AnonymousLimit },
			validate: func(c *serveConfig) error {
				if c.AnonymousLimit < 0 {
					return fmt.Errorf("--anonymous-limit must be 0 (off) or more, not %d", c.AnonymousLimit)
				}
				return nil
			}},
		{flag: "store-timeout", env: "FLEET_STORE_TIMEOUT", def: sqlstore.DefaultTimeout, help: "answer 503 to a request whose store call takes longer than this (PostgreSQL's statement_timeout and connect_timeout too)",
			field:    func(c *serveConfig) any { return &c.StoreTimeout },
			validate: func(c *serveConfig) error { return positive("store-timeout", c.StoreTimeout) }},
		{flag: "body-timeout", env: "FLEET_BODY_TIMEOUT", def: fleethttp.DefaultBodyTimeout, help: "cut off a request body that takes longer than this to arrive (API, dashboard and metrics)",
			field:    func(c *serveConfig) any { return &c.BodyTimeout },
			validate: func(c *serveConfig) error { return positive("body-timeout", c.BodyTimeout) }},
		{flag: "batch-body-timeout", env: "FLEET_BATCH_BODY_TIMEOUT", def: fleethttp.DefaultBatchBodyTimeout, help: "cut off a location batch that takes longer than this to arrive",
			field:    func(c *serveConfig) any { return &c.BatchBodyTimeout },
			validate: func(c *serveConfig) error { return positive("batch-body-timeout", c.BatchBodyTimeout) }},
		{flag: "read-header-timeout", env: "FLEET_READ_HEADER_TIMEOUT", def: 10 * time.Second, help: "close a connection whose request headers take longer than this",
			field:    func(c *serveConfig) any { return &c.HeaderTimeout },
			validate: func(c *serveConfig) error { return positive("read-header-timeout", c.HeaderTimeout) }},
		{flag: "max-connections", env: "FLEET_MAX_CONNECTIONS", def: fleethttp.DefaultMaxConnections, help: "answer 503 to connections beyond `N` open at once (0: no cap)",
			field: func(c *serveConfig) any { return &c.MaxConns },
			validate: func(c *serveConfig) error {
				if c.MaxConns < 0 {
					return fmt.Errorf("--max-connections must be 0 (no cap) or more, not %d", c.MaxConns)
				}
				return nil
			}},
		{flag: "cors-origins", env: "FLEET_CORS_ORIGINS", def: "", help: "let browser pages from these `ORIGINS` call the API (comma-separated, e.g. https://app.example.com; none by default)",
			field: func(c *serveConfig) any { return &c.CORSOrigins },
			validate: func(c *serveConfig) (err error) {
				if c.origins, err = fleethttp.ParseOrigins(c.CORSOrigins); err != nil {
					return fmt.Errorf("--cors-origins: %v", err)
				}
				return nil
			}},
		{flag: "devices", env: "FLEET_DEVICES", def: "", help: "listen for GPS trackers and phone apps: `LIST` of protocol=host:port, comma-separated (e.g. teltonika=0.0.0.0:5027,osmand=0.0.0.0:5055; port 0 picks one), or all: every protocol on its conventional port on the host of --addr (" + conventionalPorts() + "; off when empty)",
			field: func(c *serveConfig) any { return &c.Devices },
			validate: func(c *serveConfig) error {
				addrHost, _, err := net.SplitHostPort(c.Addr)
				if err != nil && c.Devices != "" {
					return fmt.Errorf("--addr must be host:port, not %q", c.Addr)
				}
				if c.deviceEndpoints, err = fleetdevice.ParseEndpoints(c.Devices, addrHost); err != nil {
					return fmt.Errorf("--%v", err)
				}
				return nil
			}},
		{flag: "device-max-connections", env: "FLEET_DEVICE_MAX_CONNECTIONS", def: fleetdevice.DefaultMaxConns, help: "with --devices: at most `N` device connections open, all listeners together; those not yet logged in hold three quarters at most, the oldest making way for a new connection",
			field: func(c *serveConfig) any { return &c.DeviceMaxConns }, validate: checkDeviceMaxConns},
		{flag: "device-max-connections-per-address", env: "FLEET_DEVICE_MAX_CONNECTIONS_PER_ADDRESS", def: fleetdevice.DefaultMaxConnsPerAddr, help: "with --devices: at most `N` device connections open from one IP address (IPv6: one /64), the oldest not yet logged in making way for a new one; a fleet behind a carrier's NAT may need more",
			field: func(c *serveConfig) any { return &c.DeviceMaxPerAddr }, validate: checkDeviceMaxConns},
		{flag: "smtp-url", env: "FLEET_SMTP_URL", def: "", help: "send notification e-mails and scheduled reports through this SMTP server, `URL` smtp://user:password@host:port (STARTTLS whenever the server offers it; default port 587) or smtps://... (TLS from the first byte; default port 465); without it rules are kept and nothing is sent",
			field: func(c *serveConfig) any { return &c.SMTPURL },
			validate: func(c *serveConfig) error {
				if c.SMTPURL == "" {
					return nil
				}
				srv, err := fleetmail.ParseServerURL(c.SMTPURL)
				if err != nil {
					return fmt.Errorf("--smtp-url: %v", err)
				}
				c.smtpServer = &srv
				if c.MailFrom == "" {
					return errors.New("--mail-from is needed with --smtp-url: the address e-mails come from, e.g. \"Fleet <fleet@example.com>\"")
				}
				return nil
			}},
		{flag: "mail-from", env: "FLEET_MAIL_FROM", def: "", help: "the sender of notification e-mails, `ADDRESS` such as \"Fleet <fleet@example.com>\" (needed with --smtp-url)",
			field: func(c *serveConfig) any { return &c.MailFrom },
			validate: func(c *serveConfig) error {
				if c.MailFrom == "" {
					return nil
				}
				if err := fleetmail.CheckFrom(c.MailFrom); err != nil {
					return fmt.Errorf("--mail-from %v", err)
				}
				return nil
			}},
		{flag: "public-url", env: "FLEET_PUBLIC_URL", def: "", help: "the dashboard's address as people reach it, `URL` (https://fleet.example.com): sign-in links, share links and the API's address shown on the dashboard are made from it rather than from a request's Host",
			field: func(c *serveConfig) any { return &c.PublicURL },
			validate: func(c *serveConfig) error {
				if c.PublicURL == "" {
					return nil
				}
				u, err := fleetweb.ParsePublicURL(c.PublicURL)
				if err != nil {
					return fmt.Errorf("--public-url: %v", err)
				}
				c.PublicURL = u
				return nil
			}},
		{flag: "signup", env: "FLEET_SIGNUP", def: false, help: "open the dashboard's sign-up page: anyone may open a free account with its first admin",
			field: func(c *serveConfig) any { return &c.Signup }},
		{flag: "dashboard-insecure-cookies", env: "FLEET_DASHBOARD_INSECURE_COOKIES", def: false, help: "name the dashboard's session cookie fleet_session without Secure, for plain http on a loopback --addr (development only)",
			field: func(c *serveConfig) any { return &c.InsecureCookies }},
		{flag: "dashboard-unknown-devices", env: "FLEET_DASHBOARD_UNKNOWN_DEVICES", def: false, help: "show account admins, on the dashboard's Unknown devices page, the devices that tried to reach --devices unregistered, to register them: every account's, so only where one company runs the server (--demo on a loopback address turns it on)",
			field: func(c *serveConfig) any { return &c.UnknownDevices }},
		{flag: "map-tiles", env: "FLEET_MAP_TILES", def: fleetweb.DefaultMapTiles, help: "the live map's tile `URL` template ({z}/{x}/{y}, optionally {s}); off: no tiles, the vehicle list only",
			field: func(c *serveConfig) any { return &c.MapTiles }},
		{flag: "metrics-addr", env: "FLEET_METRICS_ADDR", def: "", help: "serve Prometheus metrics at /metrics on this address, `host:port` (off when empty)",
			field: func(c *serveConfig) any { return &c.MetricsAddr }},
		{flag: "secrets-key-file", env: "FLEET_SECRETS_KEY_FILE", def: "", help: "the key file (`PATH`) that seals webhook signing secrets in the store: base64 keys, newest first (SQLite: the database's path + .key, made on first start; PostgreSQL: required once a webhook exists)",
			field: func(c *serveConfig) any { return &c.SecretsKeyFile }},
		{flag: "log-level", env: "FLEET_LOG_LEVEL", def: "info", help: "the least severe `LEVEL` of log lines written: debug, info, warn or error",
			field: func(c *serveConfig) any { return &c.LogLevel },
			validate: func(c *serveConfig) error {
				if err := c.level.UnmarshalText([]byte(c.LogLevel)); err != nil {
					return fmt.Errorf("--log-level must be debug, info, warn or error, not %q", c.LogLevel)
				}
				return nil
			}},
	}
}

func checkDeviceMaxConns(c *serveConfig) error {
	if c.DeviceMaxConns < 1 || c.DeviceMaxPerAddr < 1 {
		return errors.New("--device-max-connections and --device-max-connections-per-address must be at least 1")
	}
	return nil
}

// declare defines every setting's flag on f, bound to its field of c, with
// its variable.
func (c *serveConfig) declare(f *flags) {
	for _, s := range serveSettings() {
		switch p := s.field(c).(type) {
		case *string:
			f.fs.StringVar(p, s.flag, s.def.(string), s.help)
		case *bool:
			f.fs.BoolVar(p, s.flag, s.def.(bool), s.help)
		case *int:
			f.fs.IntVar(p, s.flag, s.def.(int), s.help)
		case *time.Duration:
			f.fs.DurationVar(p, s.flag, s.def.(time.Duration), s.help)
		default:
			panic(fmt.Sprintf("fleetserver: setting %s has a field of type %T", s.flag, p))
		}
		f.env[s.flag] = s.env
	}
}

// check validates the values once flags and variables are applied, in
// the table's order, and derives what serve needs from them. given names
// the settings a flag or a variable set (a local --demo turns on only
// what none of them set). Its error is the usage message.
func (c *serveConfig) check(given map[string]bool) error {
	for _, s := range serveSettings() {
		if s.validate == nil {
			continue
		}
		if err := s.validate(c); err != nil {
			return err
		}
	}
	c.addressLimit = c.AnonymousLimit
	if c.addressLimit == 0 {
		c.addressLimit = fleet.AddressLimitOff
	}
	// --demo on a loopback address is a local demo: it turns on what
	// local use needs, webhooks to receivers on this machine and the
	// dashboard's cookie over plain http, unless a flag (or its
	// variable) says otherwise. Elsewhere it turns on neither.
	c.byDemo = map[string]string{}
	if c.Demo && loopback(c.Addr) {
		if !given["insecure-webhooks"] {
			c.InsecureWebhooks = true
			c.byDemo["insecure-webhooks"] = " (turned on by --demo on a loopback address)"
			c.localDemo = append(c.localDemo, "webhooks may go to http://127.0.0.1 and other private addresses")
		}
		if !given["dashboard-unknown-devices"] {
			c.UnknownDevices = true
		}
		if !given["dashboard-insecure-cookies"] {
			c.InsecureCookies = true
			c.byDemo["dashboard-insecure-cookies"] = " (turned on by --demo on a loopback address)"
			c.localDemo = append(c.localDemo, "the dashboard signs in over plain http")
		}
	}
	if c.InsecureCookies && !loopback(c.Addr) {
		return fmt.Errorf("--dashboard-insecure-cookies needs a loopback --addr (127.0.0.1, ::1 or localhost), not %q: over a network the session cookie must be Secure", c.Addr)
	}
	return nil
}

// parseServeConfig reads serve's arguments and environment into a checked
// config, as `fleetserver serve ARGS` does before it serves.
func parseServeConfig(args []string, getenv func(string) string) (*serveConfig, error) {
	f := newFlags("serve", getenv)
	cfg := &serveConfig{}
	cfg.declare(f)
	rest, err := f.parse(args)
	if err != nil {
		return nil, err
	}
	if err := cfg.checkArgs(rest, f.given()); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkArgs checks the positional arguments (serve takes none) and then
// the values, as usage errors.
func (c *serveConfig) checkArgs(args []string, given map[string]bool) error {
	if len(args) > 0 {
		return usagef("serve", "serve takes no arguments, got %q", args[0])
	}
	if err := c.check(given); err != nil {
		return usagef("serve", "%v", err)
	}
	return nil
}

// given names the flags that the arguments or their variables set.
func (f *flags) given() map[string]bool {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	return given
}
