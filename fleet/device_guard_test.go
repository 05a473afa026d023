package fleet_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// Registered answers whether an identifier is registered, recording
// nothing when it is not (what a listener asks for a braked address).
func TestRegisteredRecordsNothing(t *testing.T) {
	is := is.New(t)
	e := newDeviceEnv(t, memstore.New(), fleet.PlanPro)
	edge := e.svc.DeviceEdge()
	ok, err := edge.Registered(ctx, e.d.Identifier)
	is.NoErr(err)
	is.True(ok)
	for _, id := range []string{"999999999999999", "bad id", ""} {
		ok, err = edge.Registered(ctx, id)
		is.NoErr(err)
		is.True(!ok)
	}
	got, err := e.svc.Operator().UnknownDevices(ctx, 0)
	is.NoErr(err)
	is.Equal(len(got), 0)
	is.Equal(e.svc.Stats().Devices.Unknown, uint64(0))
}
