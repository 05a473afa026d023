package fleet_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// The gates a server's writes of one account wait for (fleet/gate.go),
// seen through two hooks: the judgement of a batch outside the write
// transaction, which a test holds until it lets it go, and the start of
// a request's wait for a gate.

// judgement is a batch being judged outside the write transaction: it
// goes on when proceed is closed. enterEnabled is whether the account's
// enter rule was enabled as it started.
type judgement struct {
	proceed      chan struct{}
	enterEnabled bool
}

// queuedAt is a request that started waiting for the gate of key.
type queuedAt struct {
	key   string
	alone bool
}

type gateProbe struct {
	judgements chan judgement
	queued     chan queuedAt
	calls      atomic.Int32
}

// probeGates holds the first hold judgements of f's account on svc (all
// when hold is negative) until the test lets each go.
func probeGates(t *testing.T, svc *fleet.Service, f *fenced, hold int) *gateProbe {
	pr := &gateProbe{judgements: make(chan judgement), queued: make(chan queuedAt, 64)}
	fleet.SetJudging(svc, func(accountID string) {
		if accountID != f.p.Account.ID {
			return
		}
		if n := int(pr.calls.Add(1)); hold >= 0 && n > hold {
			return
		}
		r, err := svc.AlertRule(ctx, f.p, f.enter.ID)
		if err != nil {
			t.Error(err)
		}
		j := judgement{proceed: make(chan struct{}), enterEnabled: r.Enabled}
		pr.judgements <- j
		<-j.proceed
	})
	fleet.SetGateQueued(svc, func(key string, alone bool) { pr.queued <- queuedAt{key, alone} })
	return pr
}

// async runs fn in a goroutine; its error comes on the channel.
func async(fn func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- fn() }()
	return c
}

func recvT[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func setEnter(ctx context.Context, svc *fleet.Service, f *fenced, on bool) error {
	_, err := svc.UpdateAlertRule(ctx, f.p, f.enter.ID, fleet.AlertRulePatch{Enabled: fleet.Optional[*bool]{Set: true, Value: &on}})
	return err
}

func ingestAt(ctx context.Context, svc *fleet.Service, f *fenced, vehicleID string, pts ...fleet.Point) <-chan error {
	return async(func() error {
		_, err := svc.IngestLocations(ctx, f.p, vehicleID, pts)
		return err
	})
}

// A batch light enough to be judged in its write transaction takes no
// gate of its account, only its vehicle's: it goes through while a rule
// edit waits for a heavy batch of the account being judged.
func TestLightBatchesPassARuleEditWaitingForAHeavyOne(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		f := newFenced(t, svc, clock)
		van, err := svc.CreateVehicle(ctx, f.p, fleet.Vehicle{Name: "Van"})
		is.NoErr(err)
		// The rules change: the next batch compiles them, outside the
		// write transaction.
		g, err := svc.CreateGeofence(ctx, f.p, polygon([][]float64{{14.0, 52.0}, {14.2, 52.0}, {14.2, 52.2}, {14.0, 52.2}, {14.0, 52.0}}))
		is.NoErr(err)
		_, err = svc.CreateAlertRule(ctx, f.p, fleet.AlertRule{Type: fleet.AlertGeofenceEnter, GeofenceID: g.ID}, nil)
		is.NoErr(err)
		pr := probeGates(t, svc, f, 1)

		heavy := ingestAt(ctx, svc, f, f.v.ID, f.at(1, true))
		j := recvT(t, pr.judgements, "the heavy batch's judgement")
		edit := async(func() error { return setEnter(ctx, svc, f, false) })
		is.Equal(recvT(t, pr.queued, "the edit to wait"), queuedAt{f.p.Account.ID, true})

		light := ingestAt(ctx, svc, f, van.ID, f.at(1, true))
		select {
		case err := <-light:
			is.NoErr(err)
		case q := <-pr.queued:
			t.Fatalf("the light batch waited for the gate of %s", q.key)
		case <-time.After(20 * time.Second):
			t.Fatal("the light batch did not go through")
		}
		is.Equal(int(pr.calls.Load()), 1) // judged in its write transaction

		close(j.proceed)
		is.NoErr(recvT(t, heavy, "the heavy batch"))
		is.NoErr(recvT(t, edit, "the edit"))
		is.Equal(fleet.Gates(svc), 0)
	})
}

// A batch being judged outside the write transaction holds its vehicles'
// gates from before the reads it is judged on: another batch of the
// vehicle and a resolution of its alert, on the same server, wait for it
// instead of sending it back to judge again.
func TestWritesOfAVehicleWaitForItsBatchBeingJudged(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		f := newFenced(t, svc, clock)
		_, err := svc.IngestLocations(ctx, f.p, f.v.ID, []fleet.Point{f.at(1, true)})
		is.NoErr(err)
		open, err := svc.ListAlerts(ctx, f.p, fleet.AlertFilter{Status: fleet.AlertOpen}, fleet.ListQuery{})
		is.NoErr(err)
		is.Equal(len(open.Items), 1)
		fleet.SetJudgeBudget(svc, 0)
		pr := probeGates(t, svc, f, 1)

		heavy := ingestAt(ctx, svc, f, f.v.ID, f.at(3, false))
		j := recvT(t, pr.judgements, "the batch's judgement")
		other := ingestAt(ctx, svc, f, f.v.ID, f.at(2, true))
		is.Equal(recvT(t, pr.queued, "the other batch to wait"), queuedAt{f.v.ID, true})
		resolve := async(func() error { _, err := svc.ResolveAlert(ctx, f.p, open.Items[0].ID); return err })
		is.Equal(recvT(t, pr.queued, "the resolution to wait"), queuedAt{f.v.ID, true})

		close(j.proceed)
		is.NoErr(recvT(t, heavy, "the batch"))
		is.NoErr(recvT(t, other, "the other batch"))
		is.NoErr(recvT(t, resolve, "the resolution"))
		is.Equal(int(pr.calls.Load()), 2) // each batch judged once
		is.Equal(fleet.Gates(svc), 0)
	})
}

// A rule edit that arrives while batches of its account are being judged
// waits for them, and the batches that arrive after it wait for it, all
// granted together once it is done: it is not overtaken, and they are not
// held longer than its transaction.
func TestRuleEditIsServedBeforeTheBatchesAfterIt(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		f := newFenced(t, svc, clock)
		var later []fleet.Vehicle
		for range 2 {
			v, err := svc.CreateVehicle(ctx, f.p, fleet.Vehicle{Name: "Van"})
			is.NoErr(err)
			later = append(later, v)
		}
		fleet.SetJudgeBudget(svc, 0)
		pr := probeGates(t, svc, f, -1)

		first := ingestAt(ctx, svc, f, f.v.ID, f.at(1, true))
		j := recvT(t, pr.judgements, "the first batch's judgement")
		is.True(j.enterEnabled)
		edit := async(func() error { return setEnter(ctx, svc, f, false) })
		is.Equal(recvT(t, pr.queued, "the edit to wait"), queuedAt{f.p.Account.ID, true})
		var after []<-chan error
		for _, v := range later {
			after = append(after, ingestAt(ctx, svc, f, v.ID, f.at(1, true)))
			is.Equal(recvT(t, pr.queued, "a later batch to wait"), queuedAt{f.p.Account.ID, false})
		}

		close(j.proceed)
		is.NoErr(recvT(t, first, "the first batch"))
		is.NoErr(recvT(t, edit, "the edit"))
		// Both later batches are judged at once, after the edit.
		j1 := recvT(t, pr.judgements, "a later batch's judgement")
		j2 := recvT(t, pr.judgements, "the other later batch's judgement")
		is.True(!j1.enterEnabled && !j2.enterEnabled)
		close(j1.proceed)
		close(j2.proceed)
		for _, c := range after {
			is.NoErr(recvT(t, c, "a later batch"))
		}
		// Only the first batch was judged with the enter rule on.
		is.Equal(alertsOf(t, svc, f.p), []string{"geofence_enter open " + f.at(1, true).Timestamp.Format(time.RFC3339) + " 13.1"})
		is.Equal(fleet.Gates(svc), 0)
	})
}

// A request whose context ends while it waits for a gate returns at once,
// while the gate is still held, unavailable with the context's error in
// the chain, and nothing of it is done; the gates serve the next requests.
func TestRequestsStopWaitingWhenTheirContextEnds(t *testing.T) {
	onStores(t, func(t *testing.T, store fleet.Store) {
		is := is.New(t)
		clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
		f := newFenced(t, svc, clock)
		fleet.SetJudgeBudget(svc, 0)
		pr := probeGates(t, svc, f, 1)

		first := ingestAt(ctx, svc, f, f.v.ID, f.at(1, true))
		j := recvT(t, pr.judgements, "the batch's judgement")

		// A rule edit whose client leaves.
		editCtx, cancelEdit := context.WithCancel(ctx)
		edit := async(func() error { return setEnter(editCtx, svc, f, false) })
		is.Equal(recvT(t, pr.queued, "the edit to wait"), queuedAt{f.p.Account.ID, true})
		cancelEdit()
		err := recvT(t, edit, "the edit to give up")
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
		is.True(errors.Is(err, context.Canceled))

		// A batch of the same vehicle whose client leaves.
		batchCtx, cancelBatch := context.WithCancel(ctx)
		batch := ingestAt(batchCtx, svc, f, f.v.ID, f.at(2, false))
		is.Equal(recvT(t, pr.queued, "the batch to wait"), queuedAt{f.v.ID, true})
		cancelBatch()
		err = recvT(t, batch, "the batch to give up")
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
		is.True(errors.Is(err, context.Canceled))

		close(j.proceed)
		is.NoErr(recvT(t, first, "the first batch"))
		// Nothing of the two: the rule is on, the vehicle where the first
		// batch left it.
		r, err := svc.AlertRule(ctx, f.p, f.enter.ID)
		is.NoErr(err)
		is.True(r.Enabled)
		v, err := svc.Vehicle(ctx, f.p, f.v.ID)
		is.NoErr(err)
		is.True(v.LastLocation.Timestamp.Equal(f.at(1, true).Timestamp))
		is.Equal(alertsOf(t, svc, f.p), []string{"geofence_enter open " + f.at(1, true).Timestamp.Format(time.RFC3339) + " 13.1"})
		is.Equal(fleet.Gates(svc), 0)

		// The gates serve the next requests.
		is.NoErr(setEnter(ctx, svc, f, false))
		is.NoErr(recvT(t, ingestAt(ctx, svc, f, f.v.ID, f.at(2, false)), "a new batch"))
		is.Equal(fleet.Gates(svc), 0)
	})
}
