package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetmail"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/logbuf"
	"github.com/fleetkit/fleetapi/sqlstore"
)

func serveCommand() command {
	return command{
		name:    "serve",
		summary: "serve the API (the default command)",
		about: "Serves the Fleet API at /v1, with /healthz and /readyz, on the store --db names (created on\n" +
			"first use), and runs the background work: usage counts, the vehicle status sweep and its\n" +
			"alerts, maintenance checks, purges and webhook deliveries. With --devices it also listens for\n" +
			"GPS trackers and phone apps in their own protocols (osmand, teltonika, gt06, h02, queclink,\n" +
			"gps103; docs/devices.md). SIGINT or SIGTERM stops it gracefully: requests in flight are\n" +
			"finished and device reports being stored are acknowledged, new ones refused.",
		example: "fleetserver serve --addr 127.0.0.1:8080 --db sqlite:fleet.db --demo --devices teltonika=0.0.0.0:5027,osmand=0.0.0.0:5055",
		define:  defineServe,
	}
}

func defineServe(c *cli, f *flags) func(context.Context, []string) error {
	fs := f.fs
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (`host:port`; port 0 picks one)")
	dsn := f.db()
	demo := fs.Bool("demo", false, "seed a demo account with a simulated fleet and print its key (reused on the next run); on a loopback --addr it also turns on --insecure-webhooks and --dashboard-insecure-cookies, unless they are given")
	insecure := fs.Bool("insecure-webhooks", false, "allow http and private webhook addresses (development and tests only)")
	logJSON := fs.Bool("log-json", false, "write logs as JSON instead of text")
	logLevel := fs.String("log-level", "info", "the least severe `LEVEL` of log lines written: debug, info, warn or error")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics at /metrics on this address, `host:port` (off when empty)")
	headerTimeout := fs.Duration("read-header-timeout", 10*time.Second, "close a connection whose request headers take longer than this")
	anonLimit := fs.Int("anonymous-limit", fleet.DefaultAddressLimit, "`N` requests per hour and client address without a valid API key (0: no limit, for local development)")
	bodyTimeout := fs.Duration("body-timeout", fleethttp.DefaultBodyTimeout, "cut off a request body that takes longer than this to arrive (API, dashboard and metrics)")
	batchBodyTimeout := fs.Duration("batch-body-timeout", fleethttp.DefaultBatchBodyTimeout, "cut off a location batch that takes longer than this to arrive")
	maxConns := fs.Int("max-connections", fleethttp.DefaultMaxConnections, "answer 503 to connections beyond `N` open at once (0: no cap)")
	storeTimeout := fs.Duration("store-timeout", sqlstore.DefaultTimeout, "answer 503 to a request whose store call takes longer than this (PostgreSQL's statement_timeout and connect_timeout too)")
	corsOrigins := fs.String("cors-origins", "", "let browser pages from these `ORIGINS` call the API (comma-separated, e.g. https://app.example.com; none by default)")
	signup := fs.Bool("signup", false, "open the dashboard's sign-up page: anyone may open a free account with its first admin")
	insecureCookies := fs.Bool("dashboard-insecure-cookies", false, "name the dashboard's session cookie fleet_session without Secure, for plain http on a loopback --addr (development only)")
	unknownDevices := fs.Bool("dashboard-unknown-devices", false, "show account admins, on the dashboard's Unknown devices page, the devices that tried to reach --devices unregistered, to register them: every account's, so only where one company runs the server (--demo on a loopback address turns it on)")
	publicURL := fs.String("public-url", "", "the dashboard's address as people reach it, `URL` (https://fleet.example.com): sign-in links, share links and the API's address shown on the dashboard are made from it rather than from a request's Host")
	mapTiles := fs.String("map-tiles", fleetweb.DefaultMapTiles, "the live map's tile `URL` template ({z}/{x}/{y}, optionally {s}); off: no tiles, the vehicle list only")
	devicesList := fs.String("devices", "", "listen for GPS trackers and phone apps: `LIST` of protocol=host:port, comma-separated (e.g. teltonika=0.0.0.0:5027,osmand=0.0.0.0:5055; port 0 picks one), or all: every protocol on its conventional port on the host of --addr ("+conventionalPorts()+"; off when empty)")
	deviceMaxConns := fs.Int("device-max-connections", fleetdevice.DefaultMaxConns, "with --devices: at most `N` device connections open, all listeners together; those not yet logged in hold three quarters at most, the oldest making way for a new connection")
	deviceMaxPerAddr := fs.Int("device-max-connections-per-address", fleetdevice.DefaultMaxConnsPerAddr, "with --devices: at most `N` device connections open from one IP address (IPv6: one /64), the oldest not yet logged in making way for a new one; a fleet behind a carrier's NAT may need more")
	secretsKeyFile := fs.String("secrets-key-file", "", "the key file (`PATH`) that seals webhook signing secrets in the store: base64 keys, newest first (SQLite: the database's path + .key, made on first start; PostgreSQL: required once a webhook exists)")
	smtpURL := fs.String("smtp-url", "", "send notification e-mails and scheduled reports through this SMTP server, `URL` smtp://user:password@host:port (STARTTLS whenever the server offers it; default port 587) or smtps://... (TLS from the first byte; default port 465); without it rules are kept and nothing is sent")
	mailFrom := fs.String("mail-from", "", "the sender of notification e-mails, `ADDRESS` such as \"Fleet <fleet@example.com>\" (needed with --smtp-url)")
	fs.VisitAll(func(fl *flag.Flag) { f.fromEnv(fl.Name) }) // every serve flag has its FLEET_* variable

	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usagef("serve", "serve takes no arguments, got %q", args[0])
		}
		if *anonLimit < 0 {
			return usagef("serve", "--anonymous-limit must be 0 (off) or more, not %d", *anonLimit)
		}
		addressLimit := *anonLimit
		if addressLimit == 0 {
			addressLimit = fleet.AddressLimitOff
		}
		for name, d := range map[string]time.Duration{"store-timeout": *storeTimeout, "body-timeout": *bodyTimeout, "batch-body-timeout": *batchBodyTimeout, "read-header-timeout": *headerTimeout} {
			if err := positive(name, d); err != nil {
				return usagef("serve", "%v", err)
			}
		}
		if *maxConns < 0 {
			return usagef("serve", "--max-connections must be 0 (no cap) or more, not %d", *maxConns)
		}
		origins, err := fleethttp.ParseOrigins(*corsOrigins)
		if err != nil {
			return usagef("serve", "--cors-origins: %v", err)
		}
		addrHost, _, err := net.SplitHostPort(*addr)
		if err != nil && *devicesList != "" {
			return usagef("serve", "--addr must be host:port, not %q", *addr)
		}
		deviceEndpoints, err := fleetdevice.ParseEndpoints(*devicesList, addrHost)
		if err != nil {
			return usagef("serve", "--%v", err)
		}
		if *deviceMaxConns < 1 || *deviceMaxPerAddr < 1 {
			return usagef("serve", "--device-max-connections and --device-max-connections-per-address must be at least 1")
		}
		var smtpServer *fleetmail.Server
		if *smtpURL != "" {
			srv, err := fleetmail.ParseServerURL(*smtpURL)
			if err != nil {
				return usagef("serve", "--smtp-url: %v", err)
			}
			smtpServer = &srv
			if *mailFrom == "" {
				return usagef("serve", "--mail-from is needed with --smtp-url: the address e-mails come from, e.g. \"Fleet <fleet@example.com>\"")
			}
		}
		if *mailFrom != "" {
			if err := fleetmail.CheckFrom(*mailFrom); err != nil {
				return usagef("serve", "--mail-from %v", err)
			}
		}
		if *publicURL != "" {
			u, err := fleetweb.ParsePublicURL(*publicURL)
			if err != nil {
				return usagef("serve", "--public-url: %v", err)
			}
			*publicURL = u
		}
		// --demo on a loopback address is a local demo: it turns on what
		// local use needs, webhooks to receivers on this machine and the
		// dashboard's cookie over plain http, unless a flag (or its
		// variable) says otherwise. Elsewhere it turns on neither.
		var localDemo []string
		byDemo := map[string]string{} // flag -> why it is on, for its warning
		if *demo && loopback(*addr) {
			given := map[string]bool{}
			fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
			if !given["insecure-webhooks"] {
				*insecure = true
				byDemo["insecure-webhooks"] = " (turned on by --demo on a loopback address)"
				localDemo = append(localDemo, "webhooks may go to http://127.0.0.1 and other private addresses")
			}
			if !given["dashboard-unknown-devices"] {
				*unknownDevices = true
			}
			if !given["dashboard-insecure-cookies"] {
				*insecureCookies = true
				byDemo["dashboard-insecure-cookies"] = " (turned on by --demo on a loopback address)"
				localDemo = append(localDemo, "the dashboard signs in over plain http")
			}
		}
		if *insecureCookies && !loopback(*addr) {
			return usagef("serve", "--dashboard-insecure-cookies needs a loopback --addr (127.0.0.1, ::1 or localhost), not %q: over a network the session cookie must be Secure", *addr)
		}
		var level slog.Level
		if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
			return usagef("serve", "--log-level must be debug, info, warn or error, not %q", *logLevel)
		}
		hopts := &slog.HandlerOptions{Level: level}
		// Log lines (the access log's, one a request) are buffered and
		// written every logFlushInterval, or sooner when 64 KiB collect:
		// a write per request would cost a system call each. A process
		// killed outright loses at most that interval's lines.
		logOut := logbuf.New(c.stderr, logFlushInterval)
		defer logOut.Close()
		var lh slog.Handler = slog.NewTextHandler(logOut, hopts)
		if *logJSON {
			lh = slog.NewJSONHandler(logOut, hopts)
		}
		log := slog.New(lh)
		if *insecure {
			log.Warn("--insecure-webhooks is on" + byDemo["insecure-webhooks"] + ": webhook URLs may use http and private addresses; never use this in production")
		}
		if addressLimit == fleet.AddressLimitOff {
			log.Warn("--anonymous-limit is 0: requests without a valid API key are not limited per address; never use this in production")
		}

		if len(deviceEndpoints) > 0 {
			raiseOpenFiles() // room for thousands of device connections
		}
		store, err := fleetstore.OpenWith(ctx, *dsn, fleetstore.Options{Timeout: *storeTimeout})
		if err != nil {
			return err
		}
		defer store.Close()
		webhooks, madeKeyFile, err := secretKeys(*dsn, *secretsKeyFile, log)
		if err != nil {
			return err
		}
		webhooks.Insecure = *insecure
		svc := fleet.NewService(store, fleet.Options{Logger: log, AddressLimit: addressLimit, Webhooks: webhooks})
		if err := sealSecrets(ctx, svc, *dsn, madeKeyFile, log); err != nil {
			return err
		}
		sender := fleethttp.NewSender(svc, fleethttp.SenderOptions{Insecure: *insecure, Logger: log})
		handler := fleethttp.NewHandler(svc, fleethttp.WithLogger(log), fleethttp.WithBodyTimeouts(*bodyTimeout, *batchBodyTimeout),
			fleethttp.WithVersion(buildVersion()), fleethttp.WithCORSOrigins(origins), fleethttp.WithPublicURL(*publicURL))
		// E-mail: through --smtp-url; for a local --demo without it, printed
		// to stdout instead; otherwise not at all (rules are kept).
		mailOpts := fleetmail.Options{Server: smtpServer, From: *mailFrom, Logger: log}
		mailNote := "E-mail is off: this server has no --smtp-url, so notification rules are kept and nothing is sent."
		switch {
		case smtpServer != nil:
			mailNote = ""
		case *demo && loopback(*addr):
			mailOpts.Print = c.stdout
			if mailOpts.From == "" {
				mailOpts.From = "Fleet demo <fleet@localhost>"
			}
			mailNote = "This demo has no --smtp-url: notification e-mails are printed on the server's standard output instead of sent."
		}
		// The device listeners are bound below, before the dashboard serves
		// its first page: it then shows their ports.
		var deviceListenersShown []fleetweb.DeviceListener
		web := fleetweb.New(svc, fleetweb.Options{Signup: *signup, InsecureCookies: *insecureCookies, MapTiles: *mapTiles, PublicURL: *publicURL,
			Logger: log, MailNote: mailNote, UnknownDevices: *unknownDevices, DeviceListeners: func() []fleetweb.DeviceListener { return deviceListenersShown }})
		if *insecureCookies {
			log.Warn("--dashboard-insecure-cookies is on" + byDemo["dashboard-insecure-cookies"] + ": the dashboard's session cookie travels over plain http; development only")
		}

		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return err
		}
		base := "http://" + ln.Addr().String()
		var mailer *fleetmail.Sender
		if mailOpts.Server != nil || mailOpts.Print != nil {
			mailOpts.PublicURL = *publicURL
			if mailOpts.PublicURL == "" {
				mailOpts.PublicURL = base
			}
			if mailer, err = fleetmail.NewSender(svc, mailOpts); err != nil {
				ln.Close()
				return err
			}
		}
		ln = handler.LimitConnections(ln, *maxConns) // 0: no cap
		srv := &http.Server{
			// The API bounds its own request bodies (--body-timeout); the
			// dashboard gets the same bound.
			Handler:           withDashboard(handler, fleethttp.LimitBodyTime(web, *bodyTimeout)),
			ReadHeaderTimeout: *headerTimeout,
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(lh, slog.LevelWarn),
		}
		// Live streams never finish by themselves: end them when shutting
		// down, so that the requests in flight finish and the server stops.
		srv.RegisterOnShutdown(func() { svc.Jobs().EndStreams() })

		bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
		bgDone := make(chan struct{})
		go func() {
			defer close(bgDone)
			var wg sync.WaitGroup
			wg.Go(func() { sender.Run(bg) }) // webhook deliveries
			if mailer != nil {
				wg.Go(func() { mailer.Run(bg) }) // e-mail
			}
			svc.Run(bg)
			wg.Wait()
		}()
		stop := func() { stopBG(); <-bgDone }

		if *demo {
			if len(localDemo) > 0 {
				fmt.Fprintf(c.stdout, "Local demo: %s; never expose this address.\n", strings.Join(localDemo, ", and "))
			}
			switch {
			case smtpServer != nil && loopback(net.JoinHostPort(smtpServer.Host, "0")):
				fmt.Fprintf(c.stdout, "E-mail: notifications are sent to the local SMTP server at %s (a Mailpit there shows them on its web page, http://%s:8025 by default).\n",
					smtpServer.Redacted(), smtpServer.Host)
			case smtpServer != nil:
				fmt.Fprintf(c.stdout, "E-mail: notifications are sent through %s.\n", smtpServer.Redacted())
			case mailOpts.Print != nil:
				fmt.Fprintln(c.stdout, "E-mail: no --smtp-url, so the notification e-mails are printed here instead of sent (--smtp-url smtp://127.0.0.1:1025 sends them to a local Mailpit).")
			}
			if err := seedDemo(bg, svc, base, c.stdout); err != nil {
				stop()
				return err
			}
		} else if l, err := svc.Operator().Accounts(ctx, fleet.ListQuery{Limit: 1}); err == nil && len(l.Items) == 0 {
			if strings.HasPrefix(*dsn, "memory:") {
				// Another process cannot reach this one's memory, so
				// `accounts create` cannot help here.
				fmt.Fprintln(c.stdout, "No account yet, and a memory: store belongs to this process alone: run with --demo, "+
					"or use a file (--db sqlite:fleet.db) and make an account with `fleetserver accounts create --company NAME --db sqlite:fleet.db`.")
			} else {
				fmt.Fprintf(c.stdout, "No account yet: make one with `fleetserver accounts create --company NAME --db %s` (or run with --demo).\n",
					fleetstore.Redact(*dsn))
			}
		}
		var devices *deviceListeners
		if len(deviceEndpoints) > 0 {
			dsrv := fleetdevice.NewServer(svc.DeviceEdge(), fleetdevice.Options{Logger: log, MaxConns: *deviceMaxConns, MaxConnsPerAddr: *deviceMaxPerAddr})
			if devices, err = listenDevices(dsrv, deviceEndpoints, c.stdout, log); err != nil {
				stop()
				return err
			}
			deviceListenersShown = devices.web
			defer dsrv.Close()
			handler.Registry().MustRegister(deviceCollector{devices})
		}
		if *metricsAddr != "" {
			mln, err := net.Listen("tcp", *metricsAddr)
			if err != nil {
				stop()
				return err
			}
			handler.WatchSender(sender)
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", handler.Metrics())
			msrv := &http.Server{Handler: fleethttp.LimitBodyTime(mux, *bodyTimeout), ReadHeaderTimeout: *headerTimeout, IdleTimeout: 120 * time.Second}
			go msrv.Serve(mln)
			defer msrv.Close()
			fmt.Fprintf(c.stdout, "metrics on http://%s/metrics\n", mln.Addr())
		}
		logOut.Flush() // the start's warnings are there before the server answers
		fmt.Fprintf(c.stdout, "fleetserver listening on %s (store %s)\n", base, fleetstore.Redact(*dsn))
		if *insecureCookies {
			fmt.Fprintf(c.stdout, "dashboard at %s/ (plain http on loopback: development only)\n", base)
		} else {
			fmt.Fprintf(c.stdout, "dashboard at %s/ — its session cookie is Secure, so browsers sign in over https (a TLS proxy in front); for plain http on loopback add --dashboard-insecure-cookies\n", base)
		}

		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		var devErr <-chan error // nil without --devices: never ready
		if devices != nil {
			devErr = devices.errc
		}
		var failed error
		select {
		case err := <-served:
			failed = err
		case failed = <-devErr:
		case <-ctx.Done():
		}
		log.Info("shutting down: finishing in-flight requests")
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		// The device listeners stop with the API, with the same grace: a
		// report being stored is acknowledged before its connection
		// closes; then the background work flushes, and the store closes.
		var devShut error
		devDone := make(chan struct{})
		go func() {
			defer close(devDone)
			if devices != nil {
				if devShut = devices.srv.Shutdown(sctx); devShut != nil {
					devices.srv.Close()
				}
			}
		}()
		err = srv.Shutdown(sctx)
		<-devDone
		stop() // Run flushes what it holds before it returns
		if failed != nil {
			return failed
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		if devShut != nil {
			return fmt.Errorf("device listeners: %w", devShut)
		}
		log.Info("stopped")
		return nil
	}
}

// conventionalPorts lists what --devices all serves, as fleetdevice says
// it: "osmand 5055, teltonika 5027 tcp+udp, ...".
func conventionalPorts() string {
	all, err := fleetdevice.ParseEndpoints("all", "")
	if err != nil {
		panic(err) // "all" is fleetdevice's own list
	}
	parts := make([]string, len(all))
	for i, e := range all {
		_, port, _ := net.SplitHostPort(e.Addr)
		parts[i] = e.Protocol + " " + port
		if e.UDP {
			parts[i] += " tcp+udp"
		}
	}
	return strings.Join(parts, ", ")
}

// shutdownGrace is how long a graceful stop waits for the requests and
// device reports in flight.
const shutdownGrace = 20 * time.Second

// logFlushInterval is how long a log line may wait in the buffer.
const logFlushInterval = 100 * time.Millisecond

// withDashboard sends the API's paths (/v1..., /healthz, /readyz) to the
// API and every other path to the dashboard.
func withDashboard(api, web http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/v1" || strings.HasPrefix(p, "/v1/") || p == "/healthz" || p == "/readyz" {
			api.ServeHTTP(w, r)
			return
		}
		web.ServeHTTP(w, r)
	})
}

// loopback reports whether a listen address's host is a loopback one.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
