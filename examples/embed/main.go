// Command embed mounts the Fleet API inside a program's own HTTP server, on
// an in-memory store, next to the program's own routes.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	svc := fleet.NewService(memstore.New(), fleet.Options{})
	go svc.Run(ctx) // usage flushing and clean-up

	// The program's own account and key; a real program would keep them.
	acc, key, err := svc.CreateAccount(ctx, fleet.AccountParams{CompanyName: "My Company", Plan: fleet.PlanPro})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	api := fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.Default()))
	mux.Handle("/v1/", api)
	mux.Handle("/healthz", api)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "My product. The fleet API is under /v1 (account %s).\n", acc.ID)
	})

	srv := &http.Server{Addr: "127.0.0.1:8081", Handler: mux}
	go func() { <-ctx.Done(); srv.Shutdown(context.Background()) }()
	fmt.Printf("listening on http://%s\ncurl -H 'Authorization: Bearer %s' http://%s/v1/account\n", srv.Addr, key.Secret, srv.Addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
