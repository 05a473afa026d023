package fleetclient_test

import (
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// drive posts 34 minutes of a vehicle's reports, ending now: 10 minutes
// at 50 km/h, 8 minutes standing (a delivery), 10 minutes driving again,
// then standing.
func drive(t *testing.T, c *fleetclient.Client, vehicleID string, now time.Time) {
	t.Helper()
	var pts []fleet.Point
	start := now.Add(-34 * time.Minute)
	lon := 13.0
	for i := 1; i <= 68; i++ {
		speed := 50.0
		if i > 20 && i <= 36 || i > 56 {
			speed = 0
		}
		if speed > 0 {
			lon += 0.0061 // about 0.42 km at 52 N
		}
		pts = append(pts, fleet.Point{Latitude: 52.0, Longitude: lon, Timestamp: start.Add(time.Duration(i) * 30 * time.Second), Speed: ptrF(speed)})
	}
	if _, err := c.IngestLocations(ctx, vehicleID, pts); err != nil {
		t.Fatalf("ingest: %v", err)
	}
}

func TestClientTrips(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(1))
	vid := vehicle(t, c, "Van 3")
	drive(t, c, vid, e.clock.Now())

	trips := collect(t, c.Trips(ctx, vid, time.Time{}, time.Time{}))
	is.Equal(len(trips), 2) // the delivery stop splits the drive; two pages of one
	for _, tr := range trips {
		is.Equal(tr.Status, fleet.TripCompleted)
		is.Equal(tr.VehicleID, vid)
		is.Equal(tr.Points, 20)
		is.True(tr.DistanceKm > 7.5 && tr.DistanceKm < 8.5)
	}
	stops := collect(t, c.Stops(ctx, vid, time.Time{}, time.Time{}))
	is.Equal(len(stops), 2)
	is.True(stops[0].Start.Equal(trips[0].End.Timestamp))
	is.True(stops[0].End.Equal(trips[1].Start.Timestamp))
	is.Equal(stops[1].End, nil) // still standing

	d, err := c.Trip(ctx, trips[0].ID, true)
	is.NoErr(err)
	is.Equal(d.ID, trips[0].ID)
	is.Equal(len(d.Locations), 20) // its reports from start to end
	d, err = c.Trip(ctx, trips[0].ID, false)
	is.NoErr(err)
	is.Equal(d.Locations, nil)

	rows := collect(t, c.Summary(ctx, fleetclient.SummaryQuery{}))
	is.Equal(len(rows), 1)
	is.Equal(rows[0].Day, T0.Format(time.DateOnly))
	is.Equal(rows[0].Trips, 2)
	is.True(rows[0].StoppedSeconds >= 8*60) // the delivery, and the stop since
	is.True(rows[0].FirstDeparture.Equal(trips[0].Start.Timestamp))
	is.True(rows[0].LastArrival.Equal(trips[1].End.Timestamp))
	byVehicle := collect(t, c.Summary(ctx, fleetclient.SummaryQuery{GroupBy: fleet.GroupByVehicle, VehicleID: vid, TZ: "America/New_York"}))
	is.Equal(len(byVehicle), 1)
	is.Equal(byVehicle[0].Day, "")

	// The trip events are in the log, and webhooks may ask for them.
	is.Equal(len(collect(t, c.Events(ctx, fleet.EventTripStarted, time.Time{}))), 2)
	is.Equal(len(collect(t, c.Events(ctx, fleet.EventTripCompleted, time.Time{}))), 2)
	_, err = c.CreateWebhook(ctx, fleetclient.WebhookParams{URL: "http://127.0.0.1:9/hook", Events: []string{fleet.EventTripStarted, fleet.EventTripCompleted}})
	is.NoErr(err)
}

// TripPoints walks every report of a trip longer than a page, in time
// order, none twice, whatever the page size; Trip gives the first page.
func TestClientTripPoints(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanEnterprise)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()))
	vid := vehicle(t, c, "Long hauler")
	const n = fleet.MaxHistoryLimit + 50
	start := e.clock.Now().Add(-n * time.Second)
	for i := 0; i < n; i += fleet.MaxPointsPerVehicleBatch {
		var pts []fleet.Point
		for j := i; j < min(n, i+fleet.MaxPointsPerVehicleBatch); j++ {
			pts = append(pts, fleet.Point{Latitude: 52.0, Longitude: 13.0 + float64(j)/1e5, Timestamp: start.Add(time.Duration(j) * time.Second), Speed: ptrF(60)})
		}
		_, err := c.IngestLocations(ctx, vid, pts)
		is.NoErr(err)
	}
	trips := collect(t, c.Trips(ctx, vid, time.Time{}, time.Time{}))
	is.Equal(len(trips), 1)
	trip := trips[0].ID

	all := collect(t, c.TripPoints(ctx, trip))
	is.Equal(len(all), n)
	for i, p := range all {
		if !p.Timestamp.Equal(start.Add(time.Duration(i) * time.Second)) {
			t.Fatalf("point %d is at %s", i, p.Timestamp)
		}
	}
	small := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(4000))
	is.Equal(len(collect(t, small.TripPoints(ctx, trip))), n) // three pages
	d, err := c.Trip(ctx, trip, true)
	is.NoErr(err)
	is.Equal(len(d.Locations), fleet.MaxHistoryLimit) // the first page
	is.True(d.PointsPagination.HasMore)
}
