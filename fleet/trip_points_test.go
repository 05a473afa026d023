package fleet_test

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// A trip's reports come a page of at most MaxHistoryLimit at a time, to a
// program calling the service as to the API: Trip with points gives the
// first page, TripPoints walks on with the cursor.
func TestTripPointsComeAPageAtATime(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise})
	is.NoErr(err)
	p := fleet.SystemPrincipal(a)
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Long hauler"})
	is.NoErr(err)
	const n = fleet.MaxHistoryLimit + 1
	start := clock.Now().Add(-n * time.Second)
	speed := 60.0
	for i := 0; i < n; i += fleet.MaxPointsPerVehicleBatch {
		var pts []fleet.Point
		for j := i; j < min(n, i+fleet.MaxPointsPerVehicleBatch); j++ {
			pts = append(pts, fleet.Point{Latitude: 52, Longitude: 13 + float64(j)/1e5, Timestamp: start.Add(time.Duration(j) * time.Second), Speed: &speed})
		}
		_, err := svc.IngestLocations(ctx, p, v.ID, pts)
		is.NoErr(err)
	}
	trips, err := svc.ListTrips(ctx, p, v.ID, fleet.TripQuery{})
	is.NoErr(err)
	is.Equal(len(trips.Items), 1)
	id := trips.Items[0].ID

	d, err := svc.Trip(ctx, p, id, true)
	is.NoErr(err)
	is.Equal(len(d.Locations), fleet.MaxHistoryLimit) // capped
	is.True(d.PointsPagination.HasMore)
	d, err = svc.TripPoints(ctx, p, id, fleet.TripPointsQuery{Cursor: *d.PointsPagination.NextCursor})
	is.NoErr(err)
	is.Equal(len(d.Locations), 1) // the last one
	is.True(d.Locations[0].Timestamp.Equal(start.Add((n - 1) * time.Second)))
	is.Equal(*d.PointsPagination, fleet.Pagination{})

	var walked int
	q := fleet.TripPointsQuery{Limit: 3000}
	for {
		d, err := svc.TripPoints(ctx, p, id, q)
		is.NoErr(err)
		walked += len(d.Locations)
		if !d.PointsPagination.HasMore {
			break
		}
		q.Cursor = *d.PointsPagination.NextCursor
	}
	is.Equal(walked, n)

	for _, bad := range []fleet.TripPointsQuery{{Limit: -1}, {Limit: fleet.MaxHistoryLimit + 1}, {Cursor: "nope"}} {
		_, err := svc.TripPoints(ctx, p, id, bad)
		is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
	}
	d, err = svc.Trip(ctx, p, id, false)
	is.NoErr(err)
	is.True(d.Locations == nil && d.PointsPagination == nil) // no points asked for, none given
}
