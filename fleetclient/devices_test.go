package fleetclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// The client's device methods against the real handler.
func TestClientDevices(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()
	truck, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)

	d, err := c.CreateDevice(ctx, fleet.Device{Identifier: "356307042441013", VehicleID: truck.ID, Name: "Cab"})
	is.NoErr(err)
	is.Equal(d.VehicleID, truck.ID)
	is.Equal(d.Name, "Cab")
	is.True(d.LastReport == nil && d.LastSeenAt == nil && d.Protocol == "")
	_, err = c.CreateDevice(ctx, fleet.Device{Identifier: "356307042441013"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeConflict) // taken
	_, err = c.CreateDevice(ctx, fleet.Device{Identifier: "bad identifier"})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	var ids []string
	for _, ident := range []string{"862095050001234", "traccar-7"} {
		x, err := c.CreateDevice(ctx, fleet.Device{Identifier: ident})
		is.NoErr(err)
		ids = append(ids, x.ID)
	}

	// What the device sent, decoded.
	at := e.clock.Now().Add(-time.Minute)
	_, err = e.svc.DeviceEdge().Report(ctx, fleet.DeviceReport{Identifier: d.Identifier, Protocol: "teltonika", RemoteAddr: "192.0.2.1:1",
		Positions: []fleet.DevicePosition{{Latitude: 54.68, Longitude: 25.27, Timestamp: at, Valid: true,
			Attrs: fleet.Attributes{fleet.BoolAttr("io239", true), fleet.NumberAttr("battery", 12.6), fleet.TextAttr("iccid", "893720")}}}})
	is.NoErr(err)
	got, err := c.Device(ctx, d.ID)
	is.NoErr(err)
	is.Equal(got.Protocol, "teltonika")
	is.True(got.LastSeenAt != nil && got.LastSeenAt.Equal(e.clock.Now()))
	is.True(got.LastReport != nil && got.LastReport.Stored && got.LastReport.Reason == "")
	is.True(got.LastReport.Position.Timestamp.Equal(at))
	is.True(got.LastReport.Position.Speed == nil)
	is.Equal(got.LastReport.Position.Attrs, fleet.Attributes{fleet.NumberAttr("battery", 12.6), fleet.TextAttr("iccid", "893720"), fleet.BoolAttr("io239", true)}) // in name order

	// Every page, one page, and the filters.
	var walked []string
	for x, err := range c.Devices(ctx, fleet.DeviceFilter{}) {
		is.NoErr(err)
		walked = append(walked, x.ID)
	}
	is.Equal(walked, []string{d.ID, ids[0], ids[1]}) // two pages of two
	first, err := c.ListDevices(ctx, fleet.DeviceFilter{}, fleet.ListQuery{Limit: 2})
	is.NoErr(err)
	is.Equal(len(first.Items), 2)
	is.True(first.HasMore)
	rest, err := c.ListDevices(ctx, fleet.DeviceFilter{}, fleet.ListQuery{Limit: 2, Cursor: first.NextCursor})
	is.NoErr(err)
	is.Equal(len(rest.Items), 1)
	is.True(!rest.HasMore && rest.NextCursor == "")
	onTruck, err := c.ListDevices(ctx, fleet.DeviceFilter{VehicleID: truck.ID}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(onTruck.Items), 1)
	is.Equal(onTruck.Items[0].ID, d.ID)
	byIdent, err := c.ListDevices(ctx, fleet.DeviceFilter{Identifier: "traccar-7"}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(byIdent.Items[0].ID, ids[1])
	_, err = c.ListDevices(ctx, fleet.DeviceFilter{VehicleID: "truck"}, fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)

	// The merge patch: a Set "" detaches.
	moved, err := c.UpdateDevice(ctx, ids[0], fleet.DevicePatch{VehicleID: fleet.Some(truck.ID)})
	is.NoErr(err)
	is.Equal(moved.VehicleID, truck.ID)
	detached, err := c.UpdateDevice(ctx, d.ID, fleet.DevicePatch{VehicleID: fleet.Some(""), Name: fleet.Some("Spare")})
	is.NoErr(err)
	is.Equal(detached.VehicleID, "")
	is.Equal(detached.Name, "Spare")

	is.NoErr(c.DeleteDevice(ctx, d.ID))
	_, err = c.Device(ctx, d.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	is.Equal(fleet.ErrorCode(c.DeleteDevice(ctx, d.ID)), fleet.CodeNotFound)
}
