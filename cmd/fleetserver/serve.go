package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/fleetkit/fleetapi/fleetpass"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/logbuf"
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

// defineServe declares serve's settings (serveSettings) on f; what it
// returns checks them and serves.
func defineServe(c *cli, f *flags) func(context.Context, []string) error {
	cfg := &serveConfig{}
	cfg.declare(f)
	return func(ctx context.Context, args []string) error {
		if err := cfg.checkArgs(args, f.given()); err != nil {
			return err
		}
		return serve(ctx, cfg, c.stdout, c.stderr)
	}
}

// serve wires a checked config together — the store, the service, the
// API, the dashboard, the e-mail sender, the device listeners and the
// metrics — and serves until ctx ends or a listener fails, then stops
// gracefully.
func serve(ctx context.Context, cfg *serveConfig, stdout, stderr io.Writer) error {
	hopts := &slog.HandlerOptions{Level: cfg.level}
	// Log lines (the access log's, one a request) are buffered and
	// written every logFlushInterval, or sooner when 64 KiB collect:
	// a write per request would cost a system call each. A process
	// killed outright loses at most that interval's lines.
	logOut := logbuf.New(stderr, logFlushInterval)
	defer logOut.Close()
	var lh slog.Handler = slog.NewTextHandler(logOut, hopts)
	if cfg.LogJSON {
		lh = slog.NewJSONHandler(logOut, hopts)
	}
	log := slog.New(lh)
	if cfg.InsecureWebhooks {
		log.Warn("--insecure-webhooks is on" + cfg.byDemo["insecure-webhooks"] + ": webhook URLs may use http and private addresses; never use this in production")
	}
	if cfg.addressLimit == fleet.AddressLimitOff {
		log.Warn("--anonymous-limit is 0: requests without a valid API key are not limited per address; never use this in production")
	}

	if len(cfg.deviceEndpoints) > 0 {
		raiseOpenFiles() // room for thousands of device connections
	}
	store, err := fleetstore.OpenWith(ctx, cfg.DB, fleetstore.Options{Timeout: cfg.StoreTimeout})
	if err != nil {
		return err
	}
	defer store.Close()
	webhooks, madeKeyFile, err := secretKeys(cfg.DB, cfg.SecretsKeyFile, log)
	if err != nil {
		return err
	}
	webhooks.Insecure = cfg.InsecureWebhooks
	svc := fleet.NewService(store, fleet.Options{Logger: log, AddressLimit: cfg.addressLimit, Webhooks: webhooks, Protocols: commandProtocols(),
		Passwords:    fleetpass.Argon2id(),
		CheckCommand: fleetdevice.CommandCheck})
	if err := sealSecrets(ctx, svc, cfg.DB, madeKeyFile, log); err != nil {
		return err
	}
	sender := fleethttp.NewSender(svc, fleethttp.SenderOptions{Insecure: cfg.InsecureWebhooks, Logger: log})
	handler := fleethttp.NewHandler(svc, fleethttp.WithLogger(log), fleethttp.WithBodyTimeouts(cfg.BodyTimeout, cfg.BatchBodyTimeout),
		fleethttp.WithVersion(buildVersion()), fleethttp.WithCORSOrigins(cfg.origins), fleethttp.WithPublicURL(cfg.PublicURL))
	// E-mail: through --smtp-url; for a local --demo without it, printed
	// to stdout instead; otherwise not at all (rules are kept).
	mailOpts := fleetmail.Options{Server: cfg.smtpServer, From: cfg.MailFrom, Logger: log}
	mailNote := "E-mail is off: this server has no --smtp-url, so notification rules are kept and nothing is sent."
	switch {
	case cfg.smtpServer != nil:
		mailNote = ""
	case cfg.Demo && loopback(cfg.Addr):
		mailOpts.Print = stdout
		if mailOpts.From == "" {
			mailOpts.From = "Fleet demo <fleet@localhost>"
		}
		mailNote = "This demo has no --smtp-url: notification e-mails are printed on the server's standard output instead of sent."
	}
	// The device listeners are bound below, before the dashboard serves
	// its first page: it then shows their ports.
	var deviceListenersShown []fleetweb.DeviceListener
	web := fleetweb.New(svc, fleetweb.Options{Signup: cfg.Signup, InsecureCookies: cfg.InsecureCookies, MapTiles: cfg.MapTiles, PublicURL: cfg.PublicURL,
		Logger: log, MailNote: mailNote, UnknownDevices: cfg.UnknownDevices, DeviceListeners: func() []fleetweb.DeviceListener { return deviceListenersShown }})
	if cfg.InsecureCookies {
		log.Warn("--dashboard-insecure-cookies is on" + cfg.byDemo["dashboard-insecure-cookies"] + ": the dashboard's session cookie travels over plain http; development only")
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	var mailer *fleetmail.Sender
	if mailOpts.Server != nil || mailOpts.Print != nil {
		mailOpts.PublicURL = cfg.PublicURL
		if mailOpts.PublicURL == "" {
			mailOpts.PublicURL = base
		}
		if mailer, err = fleetmail.NewSender(svc, mailOpts); err != nil {
			ln.Close()
			return err
		}
	}
	ln = handler.LimitConnections(ln, cfg.MaxConns) // 0: no cap
	srv := &http.Server{
		// The API bounds its own request bodies (--body-timeout); the
		// dashboard gets the same bound.
		Handler:           withDashboard(handler, fleethttp.LimitBodyTime(web, cfg.BodyTimeout)),
		ReadHeaderTimeout: cfg.HeaderTimeout,
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

	if cfg.Demo {
		if len(cfg.localDemo) > 0 {
			fmt.Fprintf(stdout, "Local demo: %s; never expose this address.\n", strings.Join(cfg.localDemo, ", and "))
		}
		switch {
		case cfg.smtpServer != nil && loopback(net.JoinHostPort(cfg.smtpServer.Host, "0")):
			fmt.Fprintf(stdout, "E-mail: notifications are sent to the local SMTP server at %s (a Mailpit there shows them on its web page, http://%s:8025 by default).\n",
				cfg.smtpServer.Redacted(), cfg.smtpServer.Host)
		case cfg.smtpServer != nil:
			fmt.Fprintf(stdout, "E-mail: notifications are sent through %s.\n", cfg.smtpServer.Redacted())
		case mailOpts.Print != nil:
			fmt.Fprintln(stdout, "E-mail: no --smtp-url, so the notification e-mails are printed here instead of sent (--smtp-url smtp://127.0.0.1:1025 sends them to a local Mailpit).")
		}
		if err := seedDemo(bg, svc, base, stdout); err != nil {
			stop()
			return err
		}
	} else if l, err := svc.Operator().Accounts(ctx, fleet.ListQuery{Limit: 1}); err == nil && len(l.Items) == 0 {
		if strings.HasPrefix(cfg.DB, "memory:") {
			// Another process cannot reach this one's memory, so
			// `accounts create` cannot help here.
			fmt.Fprintln(stdout, "No account yet, and a memory: store belongs to this process alone: run with --demo, "+
				"or use a file (--db sqlite:fleet.db) and make an account with `fleetserver accounts create --company NAME --db sqlite:fleet.db`.")
		} else {
			fmt.Fprintf(stdout, "No account yet: make one with `fleetserver accounts create --company NAME --db %s` (or run with --demo).\n",
				fleetstore.Redact(cfg.DB))
		}
	}
	var devices *deviceListeners
	if len(cfg.deviceEndpoints) > 0 {
		dsrv := fleetdevice.NewServer(svc.DeviceEdge(), fleetdevice.Options{Logger: log, MaxConns: cfg.DeviceMaxConns, MaxConnsPerAddr: cfg.DeviceMaxPerAddr})
		if devices, err = listenDevices(dsrv, cfg.deviceEndpoints, stdout, log); err != nil {
			stop()
			return err
		}
		deviceListenersShown = devices.web
		defer dsrv.Close()
		handler.Registry().MustRegister(deviceCollector{devices})
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			stop()
			return err
		}
		handler.WatchSender(sender)
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", handler.Metrics())
		msrv := &http.Server{Handler: fleethttp.LimitBodyTime(mux, cfg.BodyTimeout), ReadHeaderTimeout: cfg.HeaderTimeout, IdleTimeout: 120 * time.Second}
		go msrv.Serve(mln)
		defer msrv.Close()
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", mln.Addr())
	}
	logOut.Flush() // the start's warnings are there before the server answers
	fmt.Fprintf(stdout, "fleetserver listening on %s (store %s)\n", base, fleetstore.Redact(cfg.DB))
	if cfg.InsecureCookies {
		fmt.Fprintf(stdout, "dashboard at %s/ (plain http on loopback: development only)\n", base)
	} else {
		fmt.Fprintf(stdout, "dashboard at %s/ — its session cookie is Secure, so browsers sign in over https (a TLS proxy in front); for plain http on loopback add --dashboard-insecure-cookies\n", base)
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
