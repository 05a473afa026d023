// Command embed mounts the Fleet API inside a program's own HTTP server,
// next to the program's own routes: the complete wiring an embedding
// program needs — a store, the service and its background work, the
// webhook sender, the API, health checks — and the order to stop them in.
//
//	go run ./examples/embed                              # in memory
//	FLEET_DB=sqlite:embed.db go run ./examples/embed     # or any DSN fleetserver takes
//
// FLEET_INSECURE_WEBHOOKS=1 lets webhook URLs use http and private
// addresses, for trying deliveries against a local receiver;
// FLEET_SECRETS_KEY_FILE names the key file that seals webhook signing
// secrets in a store on disk.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	insecure := os.Getenv("FLEET_INSECURE_WEBHOOKS") == "1"
	if err := run(ctx, os.Getenv("FLEET_DB"), "127.0.0.1:8081", insecure, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then stops everything in order.
func run(ctx context.Context, dsn, addr string, insecureWebhooks bool, out io.Writer) error {
	if dsn == "" {
		dsn = "memory:"
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	// 1. The store, and the service over it.
	store, err := fleetstore.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer store.Close() // last of all
	// Webhook signing secrets are sealed before the store sees them with
	// the keys of the file FLEET_SECRETS_KEY_FILE names (one base64 key a
	// line, newest first: `head -c 32 /dev/urandom | base64`); a store in
	// memory needs none. The start's step seals secrets an earlier run
	// kept in plain text.
	webhooks := fleet.WebhookOptions{Insecure: insecureWebhooks}
	if path := os.Getenv("FLEET_SECRETS_KEY_FILE"); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if webhooks.SecretKeys, err = fleet.ParseSecretKeys(b); err != nil {
			return err
		}
	}
	svc := fleet.NewService(store, fleet.Options{Logger: log, Webhooks: webhooks})
	if _, err := svc.Operator().SealWebhookSecrets(ctx); err != nil {
		return err
	}

	// 2. Background work: svc.Run flushes usage counts, sweeps vehicle
	// statuses (and vehicle_offline alerts), checks maintenance schedules
	// and purges old records; the Sender delivers webhooks. Both stop
	// when bg ends; they get a context of their own so that they outlive
	// the requests in flight at shutdown.
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var work sync.WaitGroup
	work.Go(func() { svc.Run(bg) })
	work.Go(func() {
		fleethttp.NewSender(svc, fleethttp.SenderOptions{Logger: log, Insecure: insecureWebhooks}).Run(bg)
	})
	defer func() { stopBG(); work.Wait() }()

	// The program's own account and key; a real program keeps them.
	acc, key, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "My Company", Plan: fleet.PlanPro})
	if err != nil {
		return err
	}

	// 3. The API under /v1, with /healthz (alive) and /readyz (the store
	// answers) for the load balancer, next to the program's own routes.
	api := fleethttp.NewHandler(svc, fleethttp.WithLogger(log))
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle("/healthz", api)
	mux.Handle("/readyz", api)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "My product. The fleet API is under /v1 (account %s).\n", acc.ID)
	})
	// The API bounds how long a request body may hold a connection by
	// itself; LimitBodyTime gives the program's own routes the same bound
	// (an answer given without reading the body closes the connection).
	srv := &http.Server{Handler: fleethttp.LimitBodyTime(mux, fleethttp.DefaultBodyTimeout),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "listening on http://%s\ncurl -H 'Authorization: Bearer %s' http://%s/v1/account\n", ln.Addr(), key.Secret, ln.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}

	// Shutdown, in this order: stop taking requests and finish the ones in
	// flight (their changes commit, their webhook deliveries are stored);
	// then stop the background work (the sender finishes or releases what
	// it holds, Run flushes usage counts); then close the store (deferred).
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
