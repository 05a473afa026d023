package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/internal/sim"
)

const usage = `usage:
  fleetserver [serve] [--addr 127.0.0.1:8080] [--db DSN] [--demo] [--insecure-webhooks]
              [--log-json] [--metrics-addr ADDR] [--read-header-timeout 10s] [--anonymous-limit 60]
              [--body-timeout 30s] [--batch-body-timeout 120s] [--max-connections 10000]
  fleetserver accounts create --company NAME [--plan free|pro|enterprise] [--rate-limit N] [--db DSN] [--json]
  fleetserver keys create --account ACC_ID --name NAME [--permissions a,b] [--db DSN] [--json]
  fleetserver migrate [--db DSN]
  fleetserver check [--db DSN]

DSN: sqlite:PATH (default sqlite:fleet.db), memory:, or postgres://...
FLEET_DB, FLEET_ADDR, FLEET_METRICS_ADDR, FLEET_ANONYMOUS_LIMIT, FLEET_BODY_TIMEOUT,
FLEET_BATCH_BODY_TIMEOUT and FLEET_MAX_CONNECTIONS stand in for --db, --addr, --metrics-addr,
--anonymous-limit, --body-timeout, --batch-body-timeout and --max-connections.
`

// run is the whole program: main only wires it to the process, so tests run
// it in-process with their own arguments, environment and outputs.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "accounts", "keys":
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("%s: unknown subcommand (want: %s create)\n%s", cmd, cmd, usage)
		}
		if cmd == "accounts" {
			return createAccount(ctx, args[1:], getenv, stdout, stderr)
		}
		return createKey(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stdout, stderr)
	case "check":
		return check(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fleetserver "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

func dbFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	def := getenv("FLEET_DB")
	if def == "" {
		def = fleetstore.DefaultDSN
	}
	return fs.String("db", def, "store: sqlite:PATH, memory:, or postgres://...")
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	defAddr := getenv("FLEET_ADDR")
	if defAddr == "" {
		defAddr = "127.0.0.1:8080"
	}
	addr := fs.String("addr", defAddr, "address to listen on")
	dsn := dbFlag(fs, getenv)
	demo := fs.Bool("demo", false, "seed a demo account with a simulated fleet and print its key")
	insecure := fs.Bool("insecure-webhooks", false, "allow http and private webhook addresses (development and tests only)")
	logJSON := fs.Bool("log-json", false, "write logs as JSON instead of text")
	metricsAddr := fs.String("metrics-addr", getenv("FLEET_METRICS_ADDR"), "serve Prometheus metrics at /metrics on this address (off when empty)")
	headerTimeout := fs.Duration("read-header-timeout", 10*time.Second, "close a connection whose request headers take longer than this")
	defBody, err := envDuration(getenv, "FLEET_BODY_TIMEOUT", fleethttp.DefaultBodyTimeout)
	if err != nil {
		return err
	}
	defBatch, err := envDuration(getenv, "FLEET_BATCH_BODY_TIMEOUT", fleethttp.DefaultBatchBodyTimeout)
	if err != nil {
		return err
	}
	defConns, err := envInt(getenv, "FLEET_MAX_CONNECTIONS", fleethttp.DefaultMaxConnections)
	if err != nil {
		return err
	}
	defAnon, err := envInt(getenv, "FLEET_ANONYMOUS_LIMIT", fleet.DefaultAddressLimit)
	if err != nil {
		return err
	}
	anonLimit := fs.Int("anonymous-limit", defAnon, "requests per hour and client address without a valid API key (0: no limit, for local development)")
	bodyTimeout := fs.Duration("body-timeout", defBody, "cut off a request body that takes longer than this to arrive")
	batchBodyTimeout := fs.Duration("batch-body-timeout", defBatch, "cut off a location batch that takes longer than this to arrive")
	maxConns := fs.Int("max-connections", defConns, "answer 503 to connections beyond this many open at once (0: no cap)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *anonLimit < 0 {
		return fmt.Errorf("--anonymous-limit must be 0 (off) or more, not %d", *anonLimit)
	}
	addressLimit := *anonLimit
	if addressLimit == 0 {
		addressLimit = fleet.AddressLimitOff
	}
	if *bodyTimeout <= 0 || *batchBodyTimeout <= 0 || *maxConns < 0 {
		return fmt.Errorf("--body-timeout and --batch-body-timeout must be above 0, --max-connections 0 or more\n%s", usage)
	}
	var lh slog.Handler = slog.NewTextHandler(stderr, nil)
	if *logJSON {
		lh = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(lh)
	if *insecure {
		log.Warn("--insecure-webhooks is on: webhook URLs may use http and private addresses; never use this in production")
	}
	if addressLimit == fleet.AddressLimitOff {
		log.Warn("--anonymous-limit is 0: requests without a valid API key are not limited per address; never use this in production")
	}

	store, err := fleetstore.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	svc := fleet.NewService(store, fleet.Options{Logger: log, AddressLimit: addressLimit, Webhooks: fleet.WebhookOptions{Insecure: *insecure}})
	sender := fleethttp.NewSender(svc, fleethttp.SenderOptions{Insecure: *insecure, Logger: log})
	handler := fleethttp.NewHandler(svc, fleethttp.WithLogger(log), fleethttp.WithBodyTimeouts(*bodyTimeout, *batchBodyTimeout))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	ln = fleethttp.LimitConnections(ln, *maxConns) // 0: no cap
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: *headerTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(lh, slog.LevelWarn),
	}

	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	bgDone := make(chan struct{})
	go func() {
		defer close(bgDone)
		var wg sync.WaitGroup
		wg.Go(func() { sender.Run(bg) }) // webhook deliveries
		svc.Run(bg)
		wg.Wait()
	}()

	if *demo {
		if err := seedDemo(bg, svc, base, stdout); err != nil {
			stopBG()
			return err
		}
	}
	if *metricsAddr != "" {
		mln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			stopBG()
			<-bgDone
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", handler.Metrics())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: *headerTimeout}
		go msrv.Serve(mln)
		defer msrv.Close()
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", mln.Addr())
	}
	fmt.Fprintf(stdout, "fleetserver listening on %s (store %s)\n", base, fleetstore.Redact(*dsn))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		stopBG()
		<-bgDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	stopBG() // Run flushes what it holds before it returns
	<-bgDone
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// demoVehicles and demoEvery shape the demo's simulated fleet.
const (
	demoVehicles = 25
	demoEvery    = 2 * time.Second
)

// seedDemo creates the demo account with a simulated fleet that reports
// through the service until ctx ends, and prints the key and a curl line.
func seedDemo(ctx context.Context, svc *fleet.Service, base string, stdout io.Writer) error {
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Demo Logistics", Plan: fleet.PlanEnterprise})
	if err != nil {
		return fmt.Errorf("seed demo account: %w", err)
	}
	f, err := sim.New(ctx, svc, fleet.SystemPrincipal(a), demoVehicles, uint64(svc.Now().UnixNano()))
	if err != nil {
		return fmt.Errorf("seed demo fleet: %w", err)
	}
	if err := seedDemoAlerts(ctx, svc, fleet.SystemPrincipal(a)); err != nil {
		return fmt.Errorf("seed demo alert rules: %w", err)
	}
	if err := f.Step(ctx, svc.Now(), demoEvery); err != nil { // positions from the first second
		return fmt.Errorf("seed demo fleet: %w", err)
	}
	go f.Run(ctx, demoEvery)
	fmt.Fprintf(stdout, "Demo account %s (enterprise plan) with %d vehicles reporting every %s\n"+
		"API key (shown once): %s\nTry:\n  curl -s -H 'Authorization: Bearer %s' %s/v1/account\n"+
		"  curl -s -H 'Authorization: Bearer %s' %s/v1/vehicles/locations\n"+
		"  curl -N -H 'Authorization: Bearer %s' %s/v1/vehicles/locations/stream\n"+
		"  curl -s -H 'Authorization: Bearer %s' '%s/v1/alerts?status=open'\n\n",
		a.ID, demoVehicles, demoEvery, nk.Secret, nk.Secret, base, nk.Secret, base, nk.Secret, base, nk.Secret, base)
	return nil
}

// seedDemoAlerts gives the demo account rules that the simulated fleet
// breaks within minutes: speeding above 70 km/h, and entering or leaving
// a 4 km circle around Berlin's centre.
func seedDemoAlerts(ctx context.Context, svc *fleet.Service, p fleet.Principal) error {
	limit, radius := 70.0, 4000.0
	if _, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: fleet.AlertSpeeding, Severity: fleet.SeverityWarning, ThresholdKmh: &limit}, nil); err != nil {
		return err
	}
	g, err := svc.CreateGeofence(ctx, p, fleet.Geofence{Name: "Berlin centre",
		Geometry: fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{13.405, 52.52}}, RadiusM: &radius})
	if err != nil {
		return err
	}
	for _, t := range []fleet.AlertType{fleet.AlertGeofenceEnter, fleet.AlertGeofenceExit} {
		if _, err := svc.CreateAlertRule(ctx, p, fleet.AlertRule{Type: t, Severity: fleet.SeverityInfo, GeofenceID: g.ID}, nil); err != nil {
			return err
		}
	}
	return nil
}

func createAccount(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("accounts create", stderr)
	company := fs.String("company", "", "company name (required)")
	plan := fs.String("plan", "free", "plan: free, pro or enterprise")
	limit := fs.Int("rate-limit", 0, "the account's own hourly allowance per key, above the plan's")
	dsn := dbFlag(fs, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var a fleet.Account
	var nk fleet.NewKey
	err := withService(ctx, *dsn, func(svc *fleet.Service) (err error) {
		a, nk, err = svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: *company, Plan: fleet.Plan(*plan), RateLimitPerHour: *limit})
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{
			"account_id": a.ID, "company_name": a.CompanyName, "plan": string(a.Plan), "key_id": nk.Key.ID, "api_key": nk.Secret,
		})
	}
	fmt.Fprintf(stdout, "account %s (%s, %s plan)\nkey %s with every permission: %s\n(the key is shown only now)\n",
		a.ID, a.CompanyName, a.Plan, nk.Key.ID, nk.Secret)
	return nil
}

func createKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("keys create", stderr)
	account := fs.String("account", "", "account id (required)")
	name := fs.String("name", "", "key name (required)")
	perms := fs.String("permissions", "*", "comma-separated permissions")
	dsn := dbFlag(fs, getenv)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var list []string
	for _, p := range strings.Split(*perms, ",") {
		if p = strings.TrimSpace(p); p != "" {
			list = append(list, p)
		}
	}
	var nk fleet.NewKey
	err := withService(ctx, *dsn, func(svc *fleet.Service) (err error) {
		nk, err = svc.Operator().CreateKey(ctx, *account, fleet.KeyParams{Name: *name, Permissions: list})
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"key_id": nk.Key.ID, "api_key": nk.Secret, "permissions": nk.Key.Permissions})
	}
	fmt.Fprintf(stdout, "key %s (%s): %s\n(the key is shown only now)\n", nk.Key.ID, strings.Join(nk.Key.Permissions, ","), nk.Secret)
	return nil
}

// withService runs fn on a service over the store dsn names, then closes
// the store; a fleet error comes back as a message for the operator.
func withService(ctx context.Context, dsn string, fn func(*fleet.Service) error) error {
	store, err := fleetstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := fn(fleet.NewService(store, fleet.Options{})); err != nil {
		return describe(err)
	}
	return nil
}

// describe turns a fleet error into a message for the operator.
func describe(err error) error {
	var fe *fleet.Error
	if errors.As(err, &fe) {
		msg := fe.Message
		for _, d := range fe.Details {
			msg += fmt.Sprintf("\n  %s: %s", d.Field, d.Message)
		}
		return errors.New(msg)
	}
	return err
}

// check verifies a store's consistency (SQLite: integrity and foreign
// keys), as after a crash or before a backup is trusted.
func check(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	dsn := dbFlag(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := fleetstore.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer store.Close()
	if c, ok := store.(interface{ Check(context.Context) error }); ok {
		if err := c.Check(ctx); err != nil {
			return fmt.Errorf("store %s is damaged: %w", fleetstore.Redact(*dsn), err)
		}
	}
	fmt.Fprintf(stdout, "store %s: ok\n", fleetstore.Redact(*dsn))
	return nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", stderr)
	dsn := dbFlag(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := fleetstore.Open(ctx, *dsn) // opening applies pending migrations
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "store %s is up to date\n", fleetstore.Redact(*dsn))
	return nil
}
