package fleet_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// streamer is an account with a vehicle and a key, on a service.
type streamer struct {
	t     *testing.T
	svc   *fleet.Service
	clock *testclock.Clock
	p     fleet.Principal
	key   fleet.NewKey
	v     fleet.Vehicle
}

func newStreamer(t *testing.T, svc *fleet.Service, clock *testclock.Clock, plan fleet.Plan) *streamer {
	t.Helper()
	is := is.New(t)
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: plan})
	is.NoErr(err) // create account
	p, err := svc.Authenticate(ctx, nk.Secret)
	is.NoErr(err) // authenticate
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck"})
	is.NoErr(err) // create vehicle
	return &streamer{t: t, svc: svc, clock: clock, p: p, key: nk, v: v}
}

// report posts n points of the vehicle, a millisecond apart, ending now.
func (s *streamer) report(n int) {
	s.t.Helper()
	now := s.clock.Now()
	for done := 0; done < n; {
		size := min(n-done, fleet.MaxPointsPerVehicleBatch)
		pts := make([]fleet.Point, size)
		for i := range pts {
			pts[i] = fleet.Point{Latitude: 1, Longitude: 1, Timestamp: now.Add(time.Duration(done+i-n+1) * time.Millisecond)}
		}
		if _, err := s.svc.IngestLocations(ctx, s.p, s.v.ID, pts); err != nil {
			s.t.Fatalf("ingest: %v", err)
		}
		done += size
	}
}

// readAll reads what is waiting on sub, in batches of batch.
func readAll(t *testing.T, sub *fleet.Subscription, batch int) []fleet.StreamItem {
	t.Helper()
	var out []fleet.StreamItem
	for {
		items, err := sub.Next(batch)
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		out = append(out, items...)
		if len(items) < batch {
			return out
		}
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An idle subscription costs at most 16 KiB (it allocates no buffer of its
// own), and the memory of closed ones goes back.
func TestIdleSubscriptionsAreSmall(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	s := newStreamer(t, svc, clock, fleet.PlanEnterprise)
	const n = 1000
	perKey := fleet.PlanEnterprise.Limits().StreamsPerKey
	principals := make([]fleet.Principal, 0, n/perKey)
	for range n / perKey {
		nk, err := svc.CreateKey(ctx, s.p, fleet.KeyParams{Name: "viewer"})
		is.NoErr(err) // create key
		p, err := svc.Authenticate(ctx, nk.Secret)
		is.NoErr(err) // authenticate
		principals = append(principals, p)
	}
	s.report(10) // the replay buffer exists before the measurement
	subs := make([]*fleet.Subscription, 0, n)
	before := heapInUse()
	for i := range n {
		sub, err := svc.Subscribe(ctx, principals[i/perKey], nil, "")
		is.NoErr(err) // subscribe
		subs = append(subs, sub)
	}
	open := heapInUse()
	perSub := float64(open-min(open, before)) / n
	t.Logf("%.0f bytes per idle subscription", perSub)
	is.True(perSub <= 16<<10) // an idle subscription costs at most 16 KiB
	for _, sub := range subs {
		sub.Close()
	}
	subs = nil
	after := heapInUse()
	t.Logf("after Close: %d bytes above the heap before the subscriptions", int64(after)-int64(before))
	is.True(after < before+16<<10) // the memory of closed subscriptions went back
	is.Equal(svc.OpenStreams(principals[0]), 0)
}

// A subscriber that does not read for a while catches up from the shared
// replay buffer: nothing is lost and the order holds, well beyond what a
// private buffer held.
func TestSlowSubscriberCatchesUp(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	s := newStreamer(t, svc, clock, fleet.PlanPro)
	other := newStreamer(t, svc, clock, fleet.PlanPro)
	sub, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err) // subscribe
	defer sub.Close()
	const n = 6000
	s.report(n / 2)
	other.report(500) // another account's reports are not for this subscriber
	clock.Advance(time.Minute)
	s.report(n / 2)
	select {
	case <-sub.Ready():
	default:
		t.Fatal("Ready was not signalled")
	}
	got := readAll(t, sub, 256)
	is.Equal(len(got), n)
	for i := 1; i < len(got); i++ {
		if got[i].ID <= got[i-1].ID || got[i].VehicleID != s.v.ID {
			t.Fatalf("item %d: id %s after %s, vehicle %s", i, got[i].ID, got[i-1].ID, got[i].VehicleID)
		}
	}
	items, err := sub.Next(256)
	is.NoErr(err)
	is.Equal(len(items), 0) // nothing more waits
}

// A subscriber whose unread reports left the replay buffer (ten minutes)
// ends with ErrStreamBehind; a reconnect gets what the buffer still holds.
func TestSubscriberBehindTheReplayBufferEnds(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	s := newStreamer(t, svc, clock, fleet.PlanPro)
	sub, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err) // subscribe
	s.report(1)
	clock.Advance(fleet.StreamReplayWindow + time.Minute)
	s.report(1) // the first report leaves the buffer unread
	_, err = sub.Next(10)
	is.Equal(err, fleet.ErrStreamBehind)
	<-sub.Done()
	is.Equal(sub.Err(), fleet.ErrStreamBehind)
	is.Equal(svc.OpenStreams(s.p), 0) // its slot is free

	again, err := svc.Subscribe(ctx, s.p, nil, "1")
	is.NoErr(err) // reconnect from the start
	defer again.Close()
	is.Equal(len(readAll(t, again, 10)), 1) // the report still held
}

// Concurrent streams are capped per key by plan, on each service: one more
// is rate_limit_exceeded naming the limit; closing one frees a slot; another
// key of the account, and another service, count their own.
func TestStreamsPerKeyCap(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	s := newStreamer(t, svc, clock, fleet.PlanFree)
	limit := fleet.PlanFree.Limits().StreamsPerKey
	is.Equal(limit, 2)
	var subs []*fleet.Subscription
	for range limit {
		sub, err := svc.Subscribe(ctx, s.p, nil, "")
		is.NoErr(err) // subscribe within the cap
		subs = append(subs, sub)
	}
	_, err := svc.Subscribe(ctx, s.p, nil, "")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	is.Equal(fleet.ErrorMessage(err), "This API key has 2 live streams open, the most the free plan allows; close one first.")

	nk, err := svc.CreateKey(ctx, s.p, fleet.KeyParams{Name: "second"})
	is.NoErr(err) // another key
	p2, err := svc.Authenticate(ctx, nk.Secret)
	is.NoErr(err)
	sub2, err := svc.Subscribe(ctx, p2, nil, "")
	is.NoErr(err) // another key of the account has its own allowance
	defer sub2.Close()

	two := fleet.NewService(store, fleet.Options{Now: clock.Now})
	p, err := two.Authenticate(ctx, s.key.Secret)
	is.NoErr(err)
	elsewhere, err := two.Subscribe(ctx, p, nil, "")
	is.NoErr(err) // the cap is per server
	defer elsewhere.Close()

	subs[0].Close()
	subs[0].Close() // a second Close frees nothing more
	is.Equal(svc.OpenStreams(s.p), 1)
	sub, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err) // a closed stream frees its slot
	defer sub.Close()
	_, err = svc.Subscribe(ctx, s.p, nil, "")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded) // and only one
	subs[1].Close()

	pro := newStreamer(t, svc, clock, fleet.PlanPro)
	for i := range fleet.PlanPro.Limits().StreamsPerKey {
		sub, err := svc.Subscribe(ctx, pro.p, nil, "")
		is.NoErr(err) // a pro key has ten
		defer sub.Close()
		_ = i
	}
	_, err = svc.Subscribe(ctx, pro.p, nil, "")
	is.True(strings.Contains(fleet.ErrorMessage(err), "10 live streams open, the most the pro plan allows"))
}

// A stream ends within 5 s of its key being revoked, expiring or leaving its
// rotation grace, on another service sharing the store too.
func TestStreamEndsWhenItsKeyStopsBeingValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, one *fleet.Service, s *streamer) // makes the key invalid, through service one
	}{
		{"revoked", func(t *testing.T, one *fleet.Service, s *streamer) {
			_, err := one.RevokeKey(ctx, s.p, s.key.Key.ID)
			is.New(t).NoErr(err) // revoke
		}},
		{"rotated with a grace period that passes", func(t *testing.T, one *fleet.Service, s *streamer) {
			_, err := one.RotateKey(ctx, s.p, s.key.Key.ID, 30*time.Second)
			is.New(t).NoErr(err) // rotate
			s.clock.Advance(30 * time.Second)
		}},
		{"expired", func(t *testing.T, one *fleet.Service, s *streamer) {
			s.clock.Advance(time.Hour) // the key below expires after an hour
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			store := memstore.New()
			clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
			one := fleet.NewService(store, fleet.Options{Now: clock.Now})
			two := fleet.NewService(store, fleet.Options{Now: clock.Now})
			owner := newStreamer(t, one, clock, fleet.PlanPro)
			exp := clock.Now().Add(time.Hour)
			nk, err := one.CreateKey(ctx, owner.p, fleet.KeyParams{Name: "map", ExpiresAt: &exp})
			is.NoErr(err) // the streaming key
			p, err := two.Authenticate(ctx, nk.Secret)
			is.NoErr(err) // service two caches the key
			s := &streamer{t: t, svc: one, clock: clock, p: owner.p, key: nk}
			sub, err := two.Subscribe(ctx, p, nil, "")
			is.NoErr(err) // subscribe on service two
			defer sub.Close()
			other, err := two.Subscribe(ctx, owner.p, nil, "")
			is.NoErr(err) // another key's stream
			defer other.Close()

			n, err := two.Jobs().CheckStreams(ctx)
			is.NoErr(err)
			is.Equal(n, 0) // valid keys keep their streams

			tc.end(t, one, s)
			clock.Advance(3 * time.Second) // past service two's key cache (2 s)
			n, err = two.Jobs().CheckStreams(ctx)
			is.NoErr(err)
			is.Equal(n, 1)
			select {
			case <-sub.Done():
			default:
				t.Fatal("the stream of the key is still open")
			}
			is.Equal(fleet.ErrorCode(sub.Err()), fleet.CodeUnauthorized)
			_, err = sub.Next(10)
			is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
			is.Equal(two.OpenStreams(p), 0) // its slot is free
			select {
			case <-other.Done():
				t.Fatal("another key's stream ended")
			default:
			}
		})
	}
}
