package fleethttp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// faultyStore fails the k-th write of every transaction while armed, as a
// store whose disk or connection gives out midway would.
type faultyStore struct {
	*memstore.Store
	failAt atomic.Int64 // 0: never
	writes atomic.Int64 // writes seen by the last transaction
}

var errDisk = errors.New("disk gave out")

func (s *faultyStore) Update(ctx context.Context, fn func(fleet.Tx) error) error {
	return s.Store.Update(ctx, func(tx fleet.Tx) error {
		ft := &faultyTx{Tx: tx, s: s}
		err := fn(ft)
		s.writes.Store(ft.n)
		return err
	})
}

type faultyTx struct {
	fleet.Tx
	s *faultyStore
	n int64
}

func (t *faultyTx) write() error {
	t.n++
	if k := t.s.failAt.Load(); k != 0 && t.n == k {
		return errDisk
	}
	return nil
}

func (t *faultyTx) InsertPoints(id string, pts []fleet.Point) ([]fleet.Point, error) {
	if err := t.write(); err != nil {
		return nil, err
	}
	return t.Tx.InsertPoints(id, pts)
}

func (t *faultyTx) UpdateVehicle(v fleet.Vehicle) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.Tx.UpdateVehicle(v)
}

func (t *faultyTx) AppendEvent(e fleet.Event) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.Tx.AppendEvent(e)
}

func (t *faultyTx) CreateAlert(a fleet.Alert) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.Tx.CreateAlert(a)
}

func (t *faultyTx) CreateDelivery(d fleet.Delivery) error {
	if err := t.write(); err != nil {
		return err
	}
	return t.Tx.CreateDelivery(d)
}

// TestFailedWriteLeavesNoPartialState: a bulk batch for three vehicles is
// many writes (points, vehicles, status events, the speeding alerts a rule
// opens, their events, and the webhook deliveries of every event). Failing
// each one in turn must answer 5xx and leave the store exactly as it was;
// then the same batch succeeds whole.
func TestFailedWriteLeavesNoPartialState(t *testing.T) {
	is := is.New(t)
	store := &faultyStore{Store: memstore.New()}
	e := newEnvOn(t, store, testclock.New(T0))
	_, key := e.account(fleet.PlanPro)
	ids := []string{e.vehicle(key, "A"), e.vehicle(key, "B"), e.vehicle(key, "C")}
	watch := func(key string) string { // a speeding rule the batch breaks, and an endpoint for every event
		is.Equal(e.do("POST", "/v1/alerts/rules", key, map[string]any{"type": "speeding", "threshold_kmh": 30}).status, http.StatusCreated)
		r := e.do("POST", "/v1/webhooks", key, map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}})
		is.Equal(r.status, http.StatusCreated)
		return r.data()["webhook_id"].(string)
	}
	hook := watch(key)
	now := e.clock.Now()
	var pts []map[string]any
	for i, id := range ids {
		for j := range 3 {
			p := pt(now.Add(-time.Duration(j)*time.Minute), float64(i), float64(j), 40)
			p["vehicle_id"] = id
			pts = append(pts, p)
		}
	}
	state := func() string {
		return string(e.do("GET", "/v1/vehicles", key, nil).body) + string(e.do("GET", "/v1/events?limit=500", key, nil).body) +
			string(e.do("GET", "/v1/vehicles/"+ids[2]+"/locations", key, nil).body) +
			string(e.do("GET", "/v1/alerts?limit=500", key, nil).body) +
			string(e.do("GET", "/v1/webhooks/"+hook+"/deliveries?limit=500", key, nil).body)
	}
	before := state()

	// Count the writes of the operation with a run that fails nothing, on
	// another account's vehicles.
	_, other := e.account(fleet.PlanPro)
	watch(other)
	var dry []map[string]any
	for i := range ids {
		id := e.vehicle(other, "dry")
		for j := range 3 {
			p := pt(now.Add(-time.Duration(j)*time.Minute), float64(i), float64(j), 40)
			p["vehicle_id"] = id
			dry = append(dry, p)
		}
	}
	is.Equal(e.do("POST", "/v1/vehicles/locations", other, batch(dry...)).status, http.StatusOK)
	total := store.writes.Load()
	t.Logf("the batch is %d writes", total)
	// The batch's write-set (its 3 points, 3 vehicles and their status
	// events, applied in one call), 3 alerts, and a delivery for each of
	// the 6 events, at least.
	is.True(total >= 10)

	for k := int64(1); k <= total; k++ {
		store.failAt.Store(k)
		r := e.do("POST", "/v1/vehicles/locations", key, batch(pts...))
		is.True(r.status >= 500)                                    // a store failure is a server error
		is.True(!strings.Contains(string(r.body), errDisk.Error())) // never its text
		is.Equal(state(), before)                                   // and nothing of the batch stays
	}
	store.failAt.Store(0)
	r := e.do("POST", "/v1/vehicles/locations", key, batch(pts...))
	is.Equal(r.status, http.StatusOK)
	is.Equal(r.data()["accepted"], float64(9)) // the same batch now goes in whole
	is.Equal(len(e.do("GET", "/v1/alerts", key, nil).list()), 3)
	is.True(len(e.do("GET", "/v1/webhooks/"+hook+"/deliveries?limit=500", key, nil).list()) >= 6)
}
