package main

import (
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestEverySettingFromTheEnvironment checks configuration from the environment whole: every
// serve flag has its FLEET_* variable and serve --help lists it; the
// variable sets the flag when the flag is not given; a flag given wins
// over its variable (even a malformed one); a FLEET_* variable that is no
// setting is warned about when the program starts; --log-level filters the
// log.
func TestEverySettingFromTheEnvironment(t *testing.T) {
	is := is.New(t)
	help, err := cmdRun(nil, "serve", "--help")
	is.NoErr(err)
	f := newFlags("serve", func(string) string { return "" })
	defineServe(&cli{}, f)
	f.fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(help, "--"+fl.Name) || !strings.Contains(help, "[$"+envName(fl.Name)+"]") {
			t.Errorf("serve --help does not list --%s with [$%s]", fl.Name, envName(fl.Name))
		}
	})
	is.True(strings.Contains(help, "--store-timeout"))

	// The variable sets what no flag does: metrics and a debug log.
	s := start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_METRICS_ADDR": "127.0.0.1:0", "FLEET_LOG_LEVEL": "debug",
		"FLEET_STORE_TIMEOUT": "3s"})
	s.stdout.waitFor(t, regexp.MustCompile(`metrics on (http://\S+)`))
	status, _ := get(t, s.base+"/healthz", "")
	is.Equal(status, 200)
	is.NoErr(s.stop())
	// The flag wins: FLEET_ADDR and FLEET_MAX_CONNECTIONS are not even
	// read when their flags are given (start gives --addr).
	s = start(t, map[string]string{"FLEET_DB": "memory:", "FLEET_ADDR": "not an address", "FLEET_MAX_CONNECTIONS": "lots",
		"FLEET_LOG_LEVEL": "loud"}, "--max-connections", "5", "--log-level", "error")
	status, _ = get(t, s.base+"/healthz", "")
	is.Equal(status, 200)
	is.NoErr(s.stop())
	is.True(!strings.Contains(s.stderr.String(), "level=INFO")) // --log-level error: no info lines
	// A malformed variable of a flag not given is refused, naming it.
	_, err = cmdRun(map[string]string{"FLEET_STORE_TIMEOUT": "soon"}, "serve", "--db", "memory:")
	is.True(err != nil && strings.Contains(err.Error(), `FLEET_STORE_TIMEOUT="soon"`))
	_, err = cmdRun(map[string]string{"FLEET_STORE_TIMEOUT": "0s"}, "serve", "--db", "memory:")
	is.True(err != nil && strings.Contains(err.Error(), "store-timeout"))

	// An unknown FLEET_* variable is warned about at start.
	cmd := exec.Command(serverBinary(t), "version")
	cmd.Env = append(os.Environ(), "FLEET_STORE_TIMEOUTS=1s")
	out, err := cmd.CombinedOutput()
	is.NoErr(err)
	is.True(strings.Contains(string(out), "warning: FLEET_STORE_TIMEOUTS is set but is not a setting"))
}

// The served metrics include the store's pools (SQLite: read and write),
// the webhook sender's figures and the Go runtime's.
func TestServedMetricsCoverStoreSenderAndRuntime(t *testing.T) {
	is := is.New(t)
	s := start(t, map[string]string{"FLEET_DB": "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")}, "--metrics-addr", "127.0.0.1:0")
	metrics := s.stdout.waitFor(t, regexp.MustCompile(`metrics on (http://\S+)`))
	res, err := http.Get(metrics)
	is.NoErr(err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, want := range []string{`fleet_store_connections{pool="write",state="in_use"}`, `fleet_store_connections_max{pool="read"}`,
		`fleet_webhook_deliveries_total{outcome="delivered"} 0`, `fleet_webhook_deliveries_held 0`, "go_goroutines ", "process_resident_memory_bytes ",
		`fleet_job_duration_seconds_count{job="sweep"}`, "fleet_points_ingested_total 0"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
