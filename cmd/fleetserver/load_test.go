package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// TestLoadCommand runs `fleetserver load` briefly against a real server:
// it creates its vehicles once, reuses them, and reports what it measured.
func TestLoadCommand(t *testing.T) {
	is := is.New(t)
	quiet := slog.New(slog.DiscardHandler)
	svc := fleet.NewService(memstore.New(), fleet.Options{Logger: quiet})
	a, nk, err := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Load", Plan: fleet.PlanEnterprise, RateLimitPerHour: 10_000_000})
	is.NoErr(err)
	srv := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(quiet)))
	defer srv.Close()

	args := []string{"load", "--url", srv.URL, "--devices", "20", "--interval", "200ms", "--duration", "1500ms",
		"--streams", "2", "--readers", "2", "--read-interval", "200ms", "--progress", "500ms"}
	var out, errb syncBuf
	is.NoErr(run(context.Background(), args, func(k string) string { return map[string]string{"FLEET_KEY": nk.Secret}[k] }, &out, &errb))
	t.Log(out.String())
	is.True(strings.Contains(errb.String(), "creating 20 vehicles"))
	is.True(strings.Contains(errb.String(), "reports ")) // a progress line

	count := func(name string) int {
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\d+) ok`).FindStringSubmatch(out.String())
		is.True(m != nil) // the line is printed
		n, _ := strconv.Atoi(m[1])
		return n
	}
	reports, reads, delivered := count("reports"), count("reads"), count("stream")
	is.True(reports >= 20)                                                                           // every device reported
	is.True(reads >= 2)                                                                              // every reader read
	is.True(delivered >= reports/2)                                                                  // the streams saw the reports
	is.True(!regexp.MustCompile(`by status [^\n]*\b(4\d\d|5\d\d|error):`).MatchString(out.String())) // no failures
	is.True(regexp.MustCompile(`p50 \S+\s+p95 \S+\s+p99 \S+`).MatchString(out.String()))

	p := fleet.SystemPrincipal(a)
	vs, err := svc.ListVehicles(context.Background(), p, fleet.VehicleFilter{}, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	is.Equal(len(vs.Items), 20) // one vehicle a device

	// A second run reuses them, and --max-p99 fails a run that misses it.
	errb = syncBuf{}
	err = run(context.Background(), append(args, "--duration", "300ms", "--max-p99", "1ns"), func(k string) string { return map[string]string{"FLEET_KEY": nk.Secret}[k] }, &out, &errb)
	is.True(err != nil && strings.Contains(err.Error(), "--max-p99"))
	is.True(!strings.Contains(errb.String(), "creating"))
}

// TestLoadCommandRefusesBadFlags: mistakes are usage errors.
func TestLoadCommandRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"load", "--key", "k"},
		{"load", "--url", "http://x", "--key", "k", "--batch", "0"},
		{"load", "--url", "http://x", "--key", "k", "--batch", "1001"},
		{"load", "--url", "ftp://x", "--key", "k"},
		{"load", "--url", "http://x", "--key", "k", "--interval", "0s"},
		{"load", "--url", "http://x", "--key", "k", "--protocol", "traccar"},
		{"load", "--url", "http://x", "--key", "k", "--protocol", "osmand", "--batch", "2"},
		{"load", "--url", "http://x", "--key", "k", "--device-addr", "x:5027"},
		{"load", "--url", "http://x", "--key", "k", "--protocol", "teltonika", "--device-addr", "x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			is := is.New(t)
			_, err := cmdRun(nil, args...)
			var ue *usageError
			is.True(errors.As(err, &ue)) // a usage error
		})
	}
}
