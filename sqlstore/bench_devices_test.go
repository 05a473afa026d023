package sqlstore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
)

// BenchmarkDeviceReportVsIngest measures durable single-position device
// reports through DeviceEdge.Report against single-point posts through
// IngestLocations (what POST /v1/vehicles/{id}/locations calls), on the
// SQLite store in a file, from the same number of goroutines, round by
// round in one run: each round, every goroutine sends reportsPerRound of
// one kind for a vehicle of its own, then the same of the other kind (the
// order alternating between rounds). Each report is a new point, durable
// when the call returns. It reports each side's operations per second,
// ratio = device reports/s over API posts/s (target >= 0.9), and the
// median of that ratio over the pairs of rounds.
func BenchmarkDeviceReportVsIngest(b *testing.B) {
	const goroutines, reportsPerRound = 16, 4
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	store := MustOpenSQLite(b)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Bench", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	p := fleet.SystemPrincipal(a)
	apiVehicles := make([]string, goroutines)
	identifiers := make([]string, goroutines)
	for i := range goroutines {
		v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("API %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		apiVehicles[i] = v.ID
		w, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: fmt.Sprintf("Device %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		identifiers[i] = fmt.Sprintf("35630704%07d", i)
		if _, err := svc.CreateDevice(ctx, p, fleet.Device{Identifier: identifiers[i], VehicleID: w.ID}); err != nil {
			b.Fatal(err)
		}
	}
	// Each goroutine's reports are 100 ms apart, and the clock follows
	// them round by round: every report is a new point, under a second
	// old, of a vehicle that keeps moving (as a tracker's are).
	t0 := clock.Now()
	seq := make([]int, goroutines)
	speed := 42.0
	api := func(g int) error {
		seq[g]++
		_, err := svc.IngestLocations(ctx, p, apiVehicles[g], []fleet.Point{{Latitude: 52.5, Longitude: 13.4,
			Timestamp: t0.Add(time.Duration(seq[g]) * 100 * time.Millisecond), Speed: &speed}})
		return err
	}
	dev := func(g int) error {
		seq[g]++
		r, err := svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: identifiers[g], Protocol: "teltonika", RemoteAddr: "192.0.2.7:5027",
			Positions: []fleet.DevicePosition{{Latitude: 52.5, Longitude: 13.4, Timestamp: t0.Add(time.Duration(seq[g]) * 100 * time.Millisecond),
				Speed: &speed, Valid: true, Attrs: fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("battery", 12.6)}}}})
		if err == nil && !r.Stored {
			err = fmt.Errorf("report not stored: %s", r.Reason)
		}
		return err
	}
	pairedRounds(b, goroutines, reportsPerRound, func() { clock.Set(t0.Add(time.Duration(slices.Max(seq)) * 100 * time.Millisecond)) },
		api, dev, "api-posts/s", "device-reports/s")
}
