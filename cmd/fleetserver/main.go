// Command fleetserver is the reference server of the Fleet API.
//
//	fleetserver [serve] [--addr 127.0.0.1:8080] [--db DSN] [--demo] [--insecure-webhooks]
//	fleetserver accounts create --company NAME [--plan free|pro|enterprise] [--rate-limit N] [--db DSN] [--json]
//	fleetserver keys create --account ACC_ID --name NAME [--permissions a,b] [--db DSN] [--json]
//	fleetserver migrate [--db DSN]
//
// FLEET_DB and FLEET_ADDR stand in for --db and --addr.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fleetserver:", err)
		os.Exit(1)
	}
}
