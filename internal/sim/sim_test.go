package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/sim"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

func TestFleetMovesAndReports(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Sim", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	f, err := sim.New(ctx, svc, p, 25, 1)
	is.NoErr(err)
	is.Equal(len(f.VehicleIDs()), 25)
	for range 30 {
		clock.Advance(2 * time.Second)
		is.NoErr(f.Step(ctx, clock.Now(), 2*time.Second))
	}
	snap, err := svc.ListLocations(ctx, p, fleet.VehicleFilter{}, fleet.ListQuery{Limit: 100})
	is.NoErr(err)
	is.Equal(len(snap.Items), 25) // every vehicle has reported
	moving := 0
	for _, r := range snap.Items {
		is.True(r.Location.Latitude > 47 && r.Location.Latitude < 55) // somewhere plausible
		if r.Status == fleet.StatusMoving {
			moving++
		}
	}
	is.True(moving > 15) // most are driving
	hist, err := svc.ListHistory(ctx, p, f.VehicleIDs()[0], fleet.HistoryQuery{})
	is.NoErr(err)
	is.Equal(len(hist.Items), 30)
	first, last := hist.Items[0], hist.Items[29]
	is.True(*last.OdometerKm >= *first.OdometerKm) // odometers only grow
	// What the tracker says besides: ignition, power, fuel, engine hours
	// and the driver's key.
	on, ok := last.Attributes.Bool(fleet.AttrIgnition)
	is.True(ok && on) // driving
	fuel, ok := last.Attributes.Number(fleet.AttrFuelLevel)
	is.True(ok && fuel > 0 && fuel <= 100)
	h0, _ := first.Attributes.Number(fleet.AttrEngineHours)
	h1, _ := last.Attributes.Number(fleet.AttrEngineHours)
	is.True(h1 > h0) // the engine ran
	key, _ := last.Attributes.Text(fleet.AttrDriverIdentifier)
	is.Equal(key, sim.DriverKey(0))
}

// TestFleetMakesTrips: within minutes of running, the demo fleet has
// started trips, and completed some at a delivery.
func TestFleetMakesTrips(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Sim", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	f, err := sim.New(ctx, svc, p, 25, 1)
	is.NoErr(err)
	count := func(typ string) int {
		l, err := svc.ListEvents(ctx, p, fleet.EventFilter{Type: typ}, fleet.ListQuery{Limit: 500})
		is.NoErr(err)
		return len(l.Items)
	}
	completedAt := time.Duration(0)
	for step := 1; step <= 8*30; step++ { // 8 minutes of 2-second steps
		clock.Advance(2 * time.Second)
		is.NoErr(f.Step(ctx, clock.Now(), 2*time.Second))
		if completedAt == 0 && step%15 == 0 && count(fleet.EventTripCompleted) > 0 {
			completedAt = time.Duration(step) * 2 * time.Second
		}
	}
	is.Equal(count(fleet.EventTripStarted) >= 25, true) // every vehicle drove off
	is.True(completedAt > 0 && completedAt <= 8*time.Minute)
	trips, err := svc.ListTrips(ctx, p, f.VehicleIDs()[0], fleet.TripQuery{})
	is.NoErr(err)
	is.True(len(trips.Items) >= 1)
	is.Equal(trips.Items[0].Status, fleet.TripCompleted) // ended at its first delivery
	is.True(trips.Items[0].DistanceKm > 0)
	stops, err := svc.ListStops(ctx, p, f.VehicleIDs()[0], fleet.TripQuery{})
	is.NoErr(err)
	is.True(len(stops.Items) >= 1)
	is.True(stops.Items[0].DurationSeconds >= 300)
}
