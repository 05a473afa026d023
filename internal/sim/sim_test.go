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

// A demo run again on the same store drives the simulator's own vehicles
// only: never one a person added, nor one of its own that a real tracker
// now reports for.
func TestResumeDrivesOnlyItsOwnVehicles(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Sim", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	first, err := sim.New(ctx, svc, p, 4, 1)
	is.NoErr(err)
	own := first.VehicleIDs()

	// The person's own vehicle, one with a tracker, and one of the
	// simulator's that got a real tracker.
	truck, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7", Tags: []string{"Berlin"}})
	is.NoErr(err)
	tracked, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Van 2", ExternalID: "VAN-2"})
	is.NoErr(err)
	_, err = svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441013", VehicleID: tracked.ID})
	is.NoErr(err)
	_, err = svc.CreateDevice(ctx, p, fleet.Device{Identifier: "356307042441014", VehicleID: own[3]})
	is.NoErr(err)

	again, err := sim.Resume(ctx, svc, p, 4, 2)
	is.NoErr(err)
	is.Equal(again.VehicleIDs(), own[:3])
	clock.Advance(2 * time.Second)
	is.NoErr(again.Step(ctx, clock.Now(), 2*time.Second))
	for _, id := range []string{truck.ID, tracked.ID, own[3]} {
		v, err := svc.Vehicle(ctx, p, id)
		is.NoErr(err)
		is.True(v.LastLocation == nil) // never simulated
	}
	v, err := svc.Vehicle(ctx, p, own[0])
	is.NoErr(err)
	is.True(v.LastLocation != nil)
}
