package gate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
)

// gateTimeout bounds how long a test waits for what must happen; it is
// never slept, only waited on.
const gateTimeout = 20 * time.Second

// newTestGates returns gates whose queued hook sends each key that starts
// waiting on the returned channel.
func newTestGates() (*Gates, chan string) {
	g := New(unavailable)
	queued := make(chan string, 64)
	g.Queued = func(key string, alone bool) { queued <- key }
	return g, queued
}

// errUnavailable stands for the answer of a request whose wait ended
// (fleet's: unavailable); unavailable wraps the context's error in it.
var errUnavailable = errors.New("unavailable")

func unavailable(err error) error { return fmt.Errorf("%w: %w", errUnavailable, err) }

// taken is the outcome of one acquire run in its goroutine.
type taken struct {
	release func()
	err     error
}

func holdAsync(ctx context.Context, g *Gates, key string, alone bool) <-chan taken {
	c := make(chan taken, 1)
	go func() {
		r, err := g.hold(ctx, g.accounts, key, alone)
		c <- taken{r, err}
	}()
	return c
}

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(gateTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// state is the gate of key's holders and waiters (nil: no gate).
func (g *Gates) state(key string) (shared int, alone bool, waiting int, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.accounts[key]
	if e == nil {
		return 0, false, 0, false
	}
	return e.shared, e.alone, len(e.waiting), true
}

// A waiter whose context is cancelled returns at once, while the gate is
// still held, with unavailable and context.Canceled in the chain; it took
// nothing, so the request behind it gets the gate when the holder gives
// it back, and the gate is dropped once no one holds it.
func TestGateWaiterWhoseContextIsCancelledTakesNothing(t *testing.T) {
	is := is.New(t)
	g, queued := newTestGates()
	holder, err := g.hold(context.Background(), g.accounts, "acc", true)
	is.NoErr(err)

	ctx, cancel := context.WithCancel(context.Background())
	w := holdAsync(ctx, g, "acc", false)
	recv(t, queued, "the shared waiter to queue")
	behind := holdAsync(context.Background(), g, "acc", true)
	recv(t, queued, "the other waiter to queue")

	cancel()
	got := recv(t, w, "the cancelled waiter to return") // the holder still holds the gate
	is.True(got.release == nil)
	is.True(errors.Is(got.err, errUnavailable))
	is.True(errors.Is(got.err, context.Canceled))
	shared, alone, waiting, _ := g.state("acc")
	is.Equal(shared, 0)
	is.True(alone)
	is.Equal(waiting, 1) // only the one behind

	holder()
	b := recv(t, behind, "the waiter behind to get the gate")
	is.NoErr(b.err)
	b.release()
	_, _, _, ok := g.state("acc")
	is.True(!ok) // dropped
}

// A cancelled waiter that held back shared waiters (it waited to hold the
// gate alone while others shared it) lets them go at once.
func TestGateCancelledWaiterLetsThoseBehindGo(t *testing.T) {
	is := is.New(t)
	g, queued := newTestGates()
	reader, err := g.hold(context.Background(), g.accounts, "acc", false)
	is.NoErr(err)
	ctx, cancel := context.WithCancel(context.Background())
	edit := holdAsync(ctx, g, "acc", true)
	recv(t, queued, "the edit to queue")
	next := holdAsync(context.Background(), g, "acc", false)
	recv(t, queued, "the next reader to queue behind the edit")

	cancel()
	is.True(errors.Is(recv(t, edit, "the edit to give up").err, errUnavailable))
	n := recv(t, next, "the next reader to share the gate") // while the first still holds it
	is.NoErr(n.err)
	shared, alone, waiting, _ := g.state("acc")
	is.Equal(shared, 2)
	is.True(!alone)
	is.Equal(waiting, 0)
	n.release()
	reader()
	_, _, _, ok := g.state("acc")
	is.True(!ok)
}

// A waiter whose deadline passes answers unavailable with the deadline in
// the chain; a request whose context has already ended takes nothing, even
// a free gate.
func TestGateWaiterWhoseDeadlinePasses(t *testing.T) {
	is := is.New(t)
	g, _ := newTestGates()
	holder, err := g.hold(context.Background(), g.accounts, "acc", true)
	is.NoErr(err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = g.hold(ctx, g.accounts, "acc", false)
	is.True(errors.Is(err, errUnavailable))
	is.True(errors.Is(err, context.DeadlineExceeded))
	holder()

	_, err = g.hold(ctx, g.accounts, "other", false)
	is.True(errors.Is(err, context.DeadlineExceeded))
	is.Equal(len(g.accounts), 0)
}

// Waiters are served in their order of arrival, consecutive shared ones
// together: a waiter to hold the gate alone stops the shared ones that
// arrive after it, and it waits only for those ahead of it.
func TestGateGrantsInOrderOfArrival(t *testing.T) {
	is := is.New(t)
	g, queued := newTestGates()
	first, err := g.hold(context.Background(), g.accounts, "acc", false)
	is.NoErr(err)
	var ws []<-chan taken
	for i, alone := range []bool{true, false, false, true, false} {
		ws = append(ws, holdAsync(context.Background(), g, "acc", alone))
		recv(t, queued, fmt.Sprintf("waiter %d to queue", i))
	}
	expect := func(shared int, alone bool, waiting int) {
		t.Helper()
		s, a, w, _ := g.state("acc")
		is.Equal([]any{s, a, w}, []any{shared, alone, waiting})
	}
	expect(1, false, 5)

	first()
	a := recv(t, ws[0], "the first edit")
	expect(0, true, 4)
	a.release()
	b, c := recv(t, ws[1], "reader b"), recv(t, ws[2], "reader c") // together
	expect(2, false, 2)
	b.release()
	expect(1, false, 2) // the edit waits for c, the reader after it for the edit
	c.release()
	d := recv(t, ws[3], "the second edit")
	expect(0, true, 1)
	d.release()
	e := recv(t, ws[4], "the last reader")
	expect(1, false, 0)
	e.release()
	_, _, _, ok := g.state("acc")
	is.True(!ok)
}

// A batch's hold gives back every gate it took (its bulk gate, the
// account's, the vehicles' before the one it waits for) when its context
// ends while it waits for a vehicle's.
func TestGateIngestGivesBackWhatItTookWhenItStopsWaiting(t *testing.T) {
	is := is.New(t)
	g, queued := newTestGates()
	busy, err := g.Vehicle(context.Background(), "v2")
	is.NoErr(err)
	ctx, cancel := context.WithCancel(context.Background())
	h := g.Ingest("acc")
	is.NoErr(h.TakeBulk(ctx))
	done := make(chan error, 1)
	go func() { done <- h.Take(ctx, []string{"v1", "v2", "v3"}, true) }()
	is.Equal(recv(t, queued, "the batch to wait for v2"), "v2")
	cancel()
	is.True(errors.Is(recv(t, done, "the batch to give up"), context.Canceled))
	sizes := func() []int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return []int{len(g.bulks), len(g.accounts), len(g.vehicles)}
	}
	is.Equal(sizes(), []int{0, 0, 1}) // v2, still held by another
	h.Release()                       // as the batch returns: nothing more to give back
	busy()
	is.Equal(sizes(), []int{0, 0, 0})
}

// A batch tried in the write transaction holds only its vehicles' gates;
// to be judged outside it takes the account's gate first, giving back the
// vehicles' and taking them again after it.
func TestGateIngestTakesTheAccountBeforeItsVehicles(t *testing.T) {
	is := is.New(t)
	g, queued := newTestGates()
	h := g.Ingest("acc")
	ids := []string{"v1", "v2"}
	is.NoErr(h.Take(context.Background(), ids, false))
	is.Equal(len(g.accounts), 0)
	edit := holdAsync(context.Background(), g, "acc", true) // holds the account's gate
	e := recv(t, edit, "the edit")
	is.NoErr(e.err)
	done := make(chan error, 1)
	go func() { done <- h.Take(context.Background(), ids, true) }()
	is.Equal(recv(t, queued, "the batch to wait for the account"), "acc")
	// It waits for the account's gate holding no vehicle's: a resolution
	// of v1 goes through.
	resolve, err := g.Vehicle(context.Background(), "v1")
	is.NoErr(err)
	resolve()
	e.release()
	is.NoErr(recv(t, done, "the batch to take its gates"))
	ctx, cancel := context.WithCancel(context.Background())
	again := make(chan error, 1)
	go func() { _, err := g.Vehicle(ctx, "v1"); again <- err }()
	is.Equal(recv(t, queued, "a resolution to wait for v1"), "v1") // the batch holds it again
	cancel()
	is.True(errors.Is(recv(t, again, "the resolution to give up"), errUnavailable))
	h.ReleaseStored()
	is.Equal(len(g.accounts), 0)
	h.Release()
	is.Equal(len(g.vehicles), 0)
}

// Many requests mixing shared and lone holds of several gates, taken in
// the service's order (bulk, account, vehicles in id order), some with
// contexts cancelled as they wait, never deadlock, never find a gate held
// against what they hold, and leave no gate behind.
func TestGatesUnderLoad(t *testing.T) {
	is := is.New(t)
	g := New(unavailable)
	type count struct{ shared, alone int }
	var (
		cmu    sync.Mutex
		counts = map[string]*count{}
		bad    []string
	)
	enter := func(key string, alone bool) {
		cmu.Lock()
		defer cmu.Unlock()
		c := counts[key]
		if c == nil {
			c = &count{}
			counts[key] = c
		}
		if c.alone > 0 || alone && c.shared > 0 {
			bad = append(bad, fmt.Sprintf("%s taken alone=%v while held %+v", key, alone, *c))
		}
		if alone {
			c.alone++
		} else {
			c.shared++
		}
	}
	leave := func(key string, alone bool) {
		cmu.Lock()
		defer cmu.Unlock()
		if alone {
			counts[key].alone--
		} else {
			counts[key].shared--
		}
	}
	accounts := []string{"a0", "a1", "a2"}
	vehicles := []string{"v0", "v1", "v2", "v3", "v4", "v5"}
	const workers, ops = 24, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range ops {
				ctx, cancel := context.WithCancel(context.Background())
				if r.IntN(4) == 0 {
					go cancel() // ends while it waits, or before, or after
				}
				acc := accounts[r.IntN(len(accounts))]
				var releases []func()
				ok := true
				take := func(m map[string]*gate, key, label string, alone bool) {
					if !ok {
						return
					}
					release, err := g.hold(ctx, m, key, alone)
					if err != nil {
						ok = false
						return
					}
					enter(label, alone)
					releases = append(releases, func() { leave(label, alone); release() })
				}
				switch r.IntN(4) {
				case 0: // a bulk ingest
					take(g.bulks, acc, "bulk/"+acc, true)
					fallthrough
				case 1: // an ingest
					take(g.accounts, acc, "account/"+acc, false)
					picked := map[string]bool{}
					for range 1 + r.IntN(3) {
						picked[vehicles[r.IntN(len(vehicles))]] = true
					}
					ids := make([]string, 0, len(picked))
					for id := range picked {
						ids = append(ids, id)
					}
					slices.Sort(ids)
					for _, id := range ids {
						take(g.vehicles, id, "vehicle/"+id, true)
					}
				case 2: // a rule edit
					take(g.accounts, acc, "account/"+acc, true)
				case 3: // a resolved alert
					id := vehicles[r.IntN(len(vehicles))]
					take(g.vehicles, id, "vehicle/"+id, true)
				}
				runtime.Gosched()
				for _, release := range slices.Backward(releases) {
					release()
				}
				cancel()
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	recv(t, done, "every request to finish (a deadlock?)")
	is.Equal(bad, nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	is.Equal(len(g.accounts)+len(g.vehicles)+len(g.bulks), 0)
}
