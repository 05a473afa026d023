package fleet_test

import (
	"context"
	"fmt"
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
