package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// keepRecorder remembers what the service asked the store to keep of the
// records of unknown identifiers.
type keepRecorder struct {
	fleet.Store
	keep atomic.Int64
}

func (s *keepRecorder) RecordUnknownDevice(ctx context.Context, u fleet.UnknownDevice, keep int) error {
	s.keep.Store(int64(keep))
	return s.Store.RecordUnknownDevice(ctx, u, keep)
}

// The records of unknown identifiers are bounded on each server: at most
// UnknownRecordsPerSecond written a second, whatever addresses they come
// from (past it they are counted only), and UnknownRecordsKept kept by
// the store (API.md §13).
func TestUnknownDeviceRecordsAreBounded(t *testing.T) {
	is := is.New(t)
	store := &keepRecorder{Store: memstore.New()}
	e := newDeviceEnv(t, store, fleet.PlanPro)
	edge := e.svc.DeviceEdge()
	attempt := func(i int) {
		t.Helper()
		ok, err := edge.Known(ctx, fmt.Sprintf("35630704%07d", i), "teltonika", fmt.Sprintf("10.%d.%d.%d:5027", i>>16&255, i>>8&255, i&255))
		is.NoErr(err)
		is.True(!ok)
	}
	records := func() int {
		got, err := e.svc.Operator().UnknownDevices(ctx, fleet.MaxUnknownDevices)
		is.NoErr(err)
		return len(got)
	}
	for i := range 250 { // 250 addresses, one attempt each, in one instant
		attempt(i)
	}
	is.Equal(records(), fleet.UnknownRecordsPerSecond)
	st := e.svc.Stats().Devices
	is.Equal(st.Unknown, uint64(250)) // all counted
	is.Equal(st.UnknownRecorded, uint64(fleet.UnknownRecordsPerSecond))
	is.Equal(store.keep.Load(), int64(fleet.UnknownRecordsKept))

	e.clock.Advance(500 * time.Millisecond) // half a second's records
	for i := 250; i < 330; i++ {
		attempt(i)
	}
	is.Equal(records(), fleet.UnknownRecordsPerSecond*3/2)
}

// reportBatch is n positions of one report, a second apart from from.
func reportBatch(from time.Time, n int) []fleet.DevicePosition {
	ps := make([]fleet.DevicePosition, n)
	for i := range ps {
		ps[i] = pos(from.Add(time.Duration(i)*time.Second), 52.5, 13.4)
	}
	return ps
}

// pointsUsed is what a quota subject has taken in its window now (a take
// of nothing).
func pointsUsed(t *testing.T, store fleet.Store, subject string, now time.Time) int {
	t.Helper()
	q, err := store.TakeQuotaN(ctx, subject, 0, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	return q.Used
}

// One identifier cannot spend its account's points allowance: a device
// stores at most a fifth of it an hour (at least 20,000), counted exactly
// across servers sharing the store, as the account's is. A report past it
// is refused unacknowledged (rate_limit_exceeded), last_report says
// device_points_allowance, and it takes nothing of the account's
// allowance, whose other devices and API clients go on (API.md §3).
func TestDevicePointsAllowance(t *testing.T) {
	onSharedStores(t, func(t *testing.T, storeA, storeB fleet.Store) {
		is := is.New(t)
		e := newDeviceEnv(t, storeA, fleet.PlanFree)
		other := fleet.NewService(storeB, fleet.Options{Now: e.clock.Now}) // another server
		is.Equal(e.p.Account.PointsPerHour(), 100_000)
		is.Equal(e.p.Account.DevicePointsPerHour(), 20_000)

		// 24 reports of 1,000 points at once, half through each server:
		// exactly 20 are stored.
		const reports, per = 24, fleet.MaxPointsPerVehicleBatch
		start := e.clock.Now().Add(-6 * 24 * time.Hour) // within the free plan's week
		type outcome struct {
			i   int // the report's batch
			r   fleet.DeviceResult
			err error
		}
		out := make(chan outcome, reports)
		for i := range reports {
			svc := e.svc
			if i%2 == 1 {
				svc = other
			}
			go func() {
				r, err := e.reportAs(svc, e.d.Identifier, reportBatch(start.Add(time.Duration(i*per)*time.Second), per)...)
				out <- outcome{i, r, err}
			}()
		}
		stored, refused, storedBatch := 0, 0, -1
		for range reports {
			o := <-out
			switch {
			case o.err == nil:
				stored++
				storedBatch = o.i
				is.Equal(o.r.Accepted, per)
			case fleet.ErrorCode(o.err) == fleet.CodeRateLimitExceeded:
				refused++
				is.Equal(o.r.Reason, fleet.ReasonDevicePointsAllowance)
				var fe *fleet.Error
				is.True(errors.As(o.err, &fe))
				is.True(fe.RetryAfter > 0)
				is.True(strings.Contains(fe.Message, "20,000")) // names the device's allowance
			default:
				t.Fatalf("report: %v", o.err)
			}
		}
		is.Equal(stored, 20)
		is.Equal(refused, reports-20)
		now := e.clock.Now()
		is.Equal(pointsUsed(t, storeA, "points:"+e.p.Account.ID, now), 20_000) // the refused took nothing of the account's

		// The next report is refused too, unacknowledged, and says why.
		_, err := e.report(pos(now.Add(-time.Minute), 52.6, 13.5))
		is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
		d := e.device()
		is.Equal(d.LastReport.Reason, fleet.ReasonDevicePointsAllowance)
		is.True(!d.LastReport.Stored)

		// A resent report of points it stored is answered as duplicates
		// (which 20 of the 24 were stored is the race's choice).
		r, err := e.reportAs(other, e.d.Identifier, reportBatch(start.Add(time.Duration(storedBatch*per)*time.Second), per)...)
		is.NoErr(err)
		is.Equal(r.Duplicates, per)

		// The account's other devices and its API clients go on.
		truck2 := e.vehicle("Truck 2")
		d2, err := e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "356307042441099", VehicleID: truck2.ID})
		is.NoErr(err)
		_, err = e.reportAs(other, d2.Identifier, reportBatch(start, per)...)
		is.NoErr(err)
		_, err = e.svc.IngestLocations(ctx, e.p, truck2.ID, []fleet.Point{{Latitude: 1, Longitude: 2, Timestamp: now.Add(-time.Second)}})
		is.NoErr(err)
		is.Equal(pointsUsed(t, storeB, "points:"+e.p.Account.ID, now), 20_000+per+1)

		// The next hour, the device stores again.
		e.clock.Advance(time.Hour)
		r, err = e.report(pos(e.clock.Now().Add(-time.Minute), 52.6, 13.5))
		is.NoErr(err)
		is.True(r.Stored)
	})
}
