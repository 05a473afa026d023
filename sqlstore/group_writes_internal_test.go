package sqlstore

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

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
		Live:     &fleet.LiveAppend{AccountID: "acc_1", Items: []fleet.StreamItem{{VehicleID: "veh_1"}, {VehicleID: "veh_1"}}},
		Quota:    []fleet.QuotaTake{{Subject: "points:acc_1", N: 1, Limit: 5}},
	}))
	is.NoErr(a.add(fleet.IngestWrites{Quota: []fleet.QuotaTake{{Subject: "points:acc_1", N: 2, Limit: 5}}}))
	is.True(a.add(fleet.IngestWrites{Quota: []fleet.QuotaTake{{Subject: "points:acc_1", N: 2, Limit: 6}}}) != nil) // two limits: one by one
	vals, err := a.args()
	is.NoErr(err)
	n := 0
	for _, part := range flushParts {
		n += len(part)
	}
	// The live feed's (the ids it takes, its rows' five arrays) and the
	// allowance's (four arrays, the window, the zero window start).
	n += 6 + 6
	is.Equal(len(vals), n)                  // every value a parameter
	is.Equal(vals[n-12], int64(2))          // two ids taken
	is.Equal(vals[n-4], []int64{3})         // one subject, three points
	is.Equal(a.shape(), flushShape(1<<7-1)) // every part
	q := flushText(&tx{}, a.shape())
	is.True(strings.Contains(q, "$"+strconv.Itoa(n)+"::")) // every array a parameter
	is.True(!strings.Contains(q, "$"+strconv.Itoa(n+1)+"::"))
}

// TestFlushStatementHoldsItsPartsAlone: the flush statement of a group of
// single-point reports names no table that they do not write, and takes
// their parts' arrays alone, numbered from $1.
func TestFlushStatementHoldsItsPartsAlone(t *testing.T) {
	is := is.New(t)
	a := newFlushArgs()
	is.NoErr(a.add(fleet.IngestWrites{
		Points:   []fleet.VehiclePoints{{VehicleID: "veh_1", Points: []fleet.Point{{Latitude: 1, Longitude: 2}}}},
		Vehicles: []fleet.Vehicle{{ID: "veh_1", AccountID: "acc_1", Name: "A", Status: fleet.StatusOffline}},
		Live:     &fleet.LiveAppend{AccountID: "acc_1", Items: []fleet.StreamItem{{VehicleID: "veh_1"}}},
	}))
	is.Equal(a.shape(), flushShape(1|2|shapeLive))
	vals, err := a.args()
	is.NoErr(err)
	n := len(flushPoints) + len(flushVehicles) + 6
	is.Equal(len(vals), n)
	is.Equal(vals[n-6], int64(1)) // one id taken
	q := flushText(&tx{}, a.shape())
	for _, absent := range []string{"trips", "devices", "events", "quotas"} {
		is.True(!strings.Contains(q, absent)) // a part it does not hold
	}
	for _, present := range []string{"INSERT INTO points", "UPDATE vehicles", "INSERT INTO live_reports", "pg_notify"} {
		is.True(strings.Contains(q, present))
	}
	is.True(strings.Contains(q, "$1::text[]"))
	is.True(strings.Contains(q, "$"+strconv.Itoa(n)+"::"))
	is.True(!strings.Contains(q, "$"+strconv.Itoa(n+1)+"::"))
	is.Equal(strings.Count(q, "0::bigint"), 4) // trips, devices, events, allowance: none written
}

// TestLiveRowsJoinAnAccountsMembers: consecutive members of one account
// in a group are one row of the feed, their items in the members' order
// and their ids consecutive; another account's member starts a row.
func TestLiveRowsJoinAnAccountsMembers(t *testing.T) {
	is := is.New(t)
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	item := func(v string) fleet.StreamItem {
		return fleet.StreamItem{VehicleID: v, Record: fleet.LocationRecord{VehicleID: v, Name: v}}
	}
	var a liveArgs
	for i, m := range []struct {
		account string
		items   []fleet.StreamItem
	}{
		{"acc_a", []fleet.StreamItem{item("v1")}},
		{"acc_a", []fleet.StreamItem{item("v2"), item("v3")}},
		{"acc_b", []fleet.StreamItem{item("v4")}},
		{"acc_a", []fleet.StreamItem{item("v5")}},
	} {
		is.NoErr(a.addJoined(fleet.LiveAppend{AccountID: m.account, Items: m.items, At: at.Add(time.Duration(i) * time.Millisecond)}))
	}
	is.Equal(a.total, int64(5))
	is.Equal(a.accts, []string{"acc_a", "acc_b", "acc_a"})
	is.Equal(a.offs, []int64{0, 3, 4}) // consecutive ids
	is.Equal(a.ns, []int64{3, 1, 1})
	is.Equal(a.ats[0], toDB(at.Add(time.Millisecond))) // the latest of its members'
	var first []liveItem
	is.NoErr(json.Unmarshal([]byte(a.items[0]), &first)) // one JSON array
	is.Equal(len(first), 3)
	is.Equal([]string{first[0].VehicleID, first[1].VehicleID, first[2].VehicleID}, []string{"v1", "v2", "v3"})
}
