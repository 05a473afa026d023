package fleetclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// The client's driver methods against the real handler.
func TestClientDrivers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()
	van := vehicle(t, c, "Van 3")

	ana, err := c.CreateDriver(ctx, fleet.Driver{Name: "Ana Lima", Identifier: "01A2B3C4D5E6F708", Phone: "+351 912 345 678",
		LicenseExpiresOn: "2029-03-31", ExternalID: "hr-17"})
	is.NoErr(err)
	is.Equal(ana.Identifier, "01A2B3C4D5E6F708")
	is.Equal(ana.Email, "") // null, read as unset
	is.Equal(ana.VehicleID, "")
	_, err = c.CreateDriver(ctx, fleet.Driver{Name: "Copy", Identifier: "01a2b3c4d5e6f708"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // the key, in another case
	_, err = c.CreateDriver(ctx, fleet.Driver{Name: "Bad", Email: "nope"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	var others []string
	for _, name := range []string{"Bo Berg", "Cy Ward"} {
		d, err := c.CreateDriver(ctx, fleet.Driver{Name: name})
		is.NoErr(err)
		others = append(others, d.ID)
	}

	// Assigned: the vehicle and the driver say so.
	vd, err := c.AssignDriver(ctx, van, ana.ID)
	is.NoErr(err)
	is.Equal(vd, fleet.VehicleDriver{VehicleID: van, DriverID: ana.ID})
	v, err := c.Vehicle(ctx, van)
	is.NoErr(err)
	is.Equal(v.DriverID, ana.ID)
	got, err := c.Driver(ctx, ana.ID)
	is.NoErr(err)
	is.Equal(got.VehicleID, van)

	// Every page, one page, the filters.
	var walked []string
	for d, err := range c.Drivers(ctx, fleet.DriverFilter{}) {
		is.NoErr(err)
		walked = append(walked, d.ID)
	}
	is.Equal(walked, []string{ana.ID, others[0], others[1]}) // two pages of two
	l, err := c.ListDrivers(ctx, fleet.DriverFilter{}, fleet.ListQuery{Limit: 2})
	is.NoErr(err)
	is.True(l.HasMore)
	is.Equal(len(l.Items), 2)
	l, err = c.ListDrivers(ctx, fleet.DriverFilter{VehicleID: van}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	is.Equal(l.Items[0].ID, ana.ID)
	l, err = c.ListDrivers(ctx, fleet.DriverFilter{Query: "ward"}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)

	// A merge patch: Set fields change, "" clears.
	up, err := c.UpdateDriver(ctx, ana.ID, fleet.DriverPatch{Phone: fleet.Some(""), Notes: fleet.Some("Days.")})
	is.NoErr(err)
	is.Equal(up.Phone, "")
	is.Equal(up.Notes, "Days.")
	is.Equal(up.ExternalID, "hr-17")

	// Her trip carries her, and the summary by driver counts it.
	drive(t, c, van, e.clock.Now())
	trips := collect(t, c.Trips(ctx, van, time.Time{}, time.Time{}))
	is.Equal(len(trips), 2)
	is.True(trips[0].DriverID != nil && *trips[0].DriverID == ana.ID)
	rows := collect(t, c.DriverSummary(ctx, fleetclient.SummaryQuery{TZ: "Europe/Berlin"}))
	is.Equal(len(rows), 1)
	is.True(rows[0].DriverID != nil && *rows[0].DriverID == ana.ID)
	is.Equal(rows[0].Trips, 2)
	is.True(rows[0].DistanceKm > 15 && rows[0].DistanceKm < 17)

	// Cleared, then deleted.
	vd, err = c.AssignDriver(ctx, van, "")
	is.NoErr(err)
	is.Equal(vd.DriverID, "")
	is.NoErr(c.DeleteDriver(ctx, ana.ID))
	_, err = c.Driver(ctx, ana.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	trips = collect(t, c.Trips(ctx, van, time.Time{}, time.Time{}))
	is.True(trips[0].DriverID != nil && *trips[0].DriverID == ana.ID) // history
}
