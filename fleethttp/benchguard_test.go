package fleethttp_test

import (
	"flag"
	"testing"

	"github.com/fleetkit/fleetapi/memstore"
)

// ratioFloor, when set, makes TestGetAccountRatioFloor run
// BenchmarkGetAccount and fail when its ratio falls below it: CI's guard
// against a slower request path (.ci/run sets it well below the target of
// docs/performance.md, so that only a real regression fails, not a busy
// machine).
var ratioFloor = flag.Float64("getaccount-floor", 0, "fail when BenchmarkGetAccount's ratio (bare / Fleet) is below this; 0: skip")

// TestGetAccountRatioFloor runs BenchmarkGetAccount (at -test.benchtime)
// up to three times and passes as soon as one run's ratio reaches the
// floor: a run slowed by the machine is run again, a slower request path
// fails all three.
func TestGetAccountRatioFloor(t *testing.T) {
	if *ratioFloor == 0 {
		t.Skip("set -getaccount-floor to check BenchmarkGetAccount's ratio")
	}
	var ratios []float64
	for range 3 {
		r := testing.Benchmark(func(b *testing.B) { benchGetAccount(b, memstore.New()) })
		ratio := r.Extra["ratio"]
		ratios = append(ratios, ratio)
		t.Logf("BenchmarkGetAccount: %d requests, ratio %.3f (same bytes %.0f ns, Fleet %.0f ns a request; body alone %.0f ns)", r.N, ratio, r.Extra["same-ns/req"], r.Extra["fleet-ns/req"], r.Extra["bare-ns/req"])
		if ratio >= *ratioFloor {
			return
		}
	}
	t.Fatalf("BenchmarkGetAccount's ratio %.3f is below the floor %.2f in three runs: the request path got slower (docs/performance.md)", ratios, *ratioFloor)
}
