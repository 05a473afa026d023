// Command fleetserver is the reference server of the Fleet API, and its
// operator's tools:
//
//	fleetserver [serve] [flags]          serve the API (the default)
//	fleetserver accounts create|list     accounts, from the shell
//	fleetserver keys create|list|revoke  an account's API keys
//	fleetserver users create             people who sign in to the dashboard
//	fleetserver migrate | check          the store's schema and integrity
//	fleetserver backup --to PATH         a consistent copy of a SQLite store, checked
//	fleetserver version                  this build (also --version)
//
// `fleetserver help` lists the commands and `fleetserver COMMAND --help`
// tells each one's flags. Every serve flag has a FLEET_* variable
// (--db: FLEET_DB, --addr: FLEET_ADDR...).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, name := range unknownEnv(os.Environ()) {
		fmt.Fprintf(os.Stderr, "fleetserver: warning: %s is set but is not a setting of fleetserver (see fleetserver serve --help)\n", name)
	}
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "fleetserver:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		help := "fleetserver help"
		if ue.cmd != "" {
			help = "fleetserver " + ue.cmd + " --help"
		}
		fmt.Fprintf(os.Stderr, "(see %s)\n", help)
		os.Exit(2)
	}
	os.Exit(1)
}
