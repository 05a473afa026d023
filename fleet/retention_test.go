package fleet_test

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func TestMaintainPurgesOldEventsAndPoints(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "V"})
	is.NoErr(err)
	now := clock.Now()
	_, err = svc.IngestLocations(ctx, p, v.ID, []fleet.Point{
		{Latitude: 1, Longitude: 1, Timestamp: now.Add(-400 * 24 * time.Hour)}, // beyond every plan's reach
		{Latitude: 1, Longitude: 1, Timestamp: now.Add(-300 * 24 * time.Hour)},
	})
	is.NoErr(err)

	clock.Advance(31 * 24 * time.Hour)
	_, err = svc.UpdateVehicle(ctx, p, v.ID, fleet.VehiclePatch{Name: fleet.Optional[string]{Set: true, Value: "W"}})
	is.NoErr(err)
	is.NoErr(svc.Jobs().Maintain(ctx))

	events, err := svc.ListEvents(ctx, p, fleet.EventFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(events.Items), 1) // only the update is younger than 30 days
	is.Equal(events.Items[0].Type, fleet.EventVehicleUpdated)

	var stored []fleet.Point
	is.NoErr(svc.Store().View(ctx, func(tx fleet.Tx) (err error) {
		stored, err = tx.Points(v.ID, now.Add(-1000*24*time.Hour), clock.Now(), 10)
		return err
	}))
	is.Equal(len(stored), 1) // the point older than 365 days is gone from the store
	is.True(stored[0].Timestamp.Equal(now.Add(-300 * 24 * time.Hour)))
}
