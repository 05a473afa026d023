package sqlstore

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// TestFlushVehicleColumnsFollowVehicleArgs: the flush statement sets the
// columns UpdateVehicle sets, one for each of vehicleArgs' values but
// created_at, and a write-set's vehicle fills every one.
func TestFlushVehicleColumnsFollowVehicleArgs(t *testing.T) {
	is := is.New(t)
	args, err := vehicleArgs(fleet.Vehicle{ID: "veh_1", AccountID: "acc_1", Name: "A", Status: fleet.StatusOffline})
	is.NoErr(err)
	is.Equal(len(flushVehicles), 2+len(args)-1) // id, account_id, and all but created_at
	a := newFlushArgs()
	is.NoErr(a.add(fleet.IngestWrites{
		Points:   []fleet.VehiclePoints{{VehicleID: "veh_1", Points: []fleet.Point{{Latitude: 1, Longitude: 2}}}},
		Vehicles: []fleet.Vehicle{{ID: "veh_1", AccountID: "acc_1", Name: "A", Status: fleet.StatusOffline}},
		Trips:    []fleet.Trip{{ID: "trip_1", AccountID: "acc_1", VehicleID: "veh_1"}},
		Devices:  []fleet.Device{{ID: "dev_1", AccountID: "acc_1", VehicleID: "veh_1"}},
		Events:   []fleet.Event{{ID: "evt_1", AccountID: "acc_1", Type: fleet.EventVehicleStatusChanged, Data: []byte(`{}`)}},
	}))
	vals, err := a.args()
	is.NoErr(err)
	n := 0
	for _, part := range flushParts {
		n += len(part)
	}
	is.Equal(len(vals), n)
	q := expand("{p.args} {v.args} {t.args} {d.args} {e.args}")
	is.True(strings.Contains(q, "$"+strconv.Itoa(n)+"::")) // every array a parameter
	is.True(!strings.Contains(q, "$"+strconv.Itoa(n+1)+"::"))
}
