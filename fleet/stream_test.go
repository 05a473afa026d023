package fleet_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
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

// A subscription carries the reports its account ingests, as they are
// stored, each with an id, of the vehicles it names only when it names
// any; a Last-Event-ID resumes after it, and one that is not an id of the
// stream is invalid_request. (The broker behind it is tested in
// internal/broker.)
func TestSubscribeFollowsIngest(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	s := newStreamer(t, svc, clock, fleet.PlanPro)
	other := newStreamer(t, svc, clock, fleet.PlanPro)
	second, err := svc.CreateVehicle(ctx, s.p, fleet.Vehicle{Name: "Van"})
	is.NoErr(err) // a second vehicle
	all, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err) // every vehicle
	defer all.Close()
	one, err := svc.Subscribe(ctx, s.p, []string{second.ID}, "")
	is.NoErr(err) // the second vehicle only
	defer one.Close()

	s.report(3)
	other.report(2) // another account's reports are not for these
	_, err = svc.IngestLocations(ctx, s.p, second.ID, []fleet.Point{{Latitude: 52.5, Longitude: 13.4, Timestamp: clock.Now()}})
	is.NoErr(err)
	select {
	case <-all.Ready():
	default:
		t.Fatal("Ready was not signalled")
	}
	got := readAll(t, all, 10)
	is.Equal(len(got), 4)
	for i, it := range got {
		is.True(it.ID != "")
		is.Equal(it.Record.VehicleID, it.VehicleID)
		if i > 0 {
			prev, _ := strconv.ParseUint(got[i-1].ID, 10, 64)
			this, err := strconv.ParseUint(it.ID, 10, 64)
			is.NoErr(err)
			is.True(this > prev) // ids increase
		}
	}
	is.Equal(got[0].VehicleID, s.v.ID)
	is.Equal(got[3].VehicleID, second.ID)
	is.Equal(got[3].Record.Location.Latitude, 52.5)
	only := readAll(t, one, 10)
	is.Equal(len(only), 1)
	is.Equal(only[0], got[3])

	resumed, err := svc.Subscribe(ctx, s.p, nil, got[1].ID)
	is.NoErr(err) // reconnect after the second report
	defer resumed.Close()
	again := readAll(t, resumed, 10)
	is.Equal(again, got[2:])

	_, err = svc.Subscribe(ctx, s.p, nil, "not-an-id")
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)
}

// A report's attributes reach every reader of the stream as they were
// stored, a reader resuming from the replay buffer included, and a reader
// changing what it got changes nothing for the next.
func TestStreamCarriesAttributes(t *testing.T) {
	is := is.New(t)
	svc, clock := newService(t)
	s := newStreamer(t, svc, clock, fleet.PlanPro)
	sub, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err)
	defer sub.Close()
	sent := []fleet.Attributes{
		storetest.TypicalAttributes(3),
		nil,
		{fleet.NumberAttr("a_custom", math.Pi), fleet.TextAttr("alarm", "sos"), fleet.NumberAttr("io70000", -1.5)},
	}
	pts := make([]fleet.Point, len(sent))
	for i := range pts {
		pts[i] = fleet.Point{Latitude: 52.5, Longitude: 13.4, Timestamp: clock.Now().Add(time.Duration(i-3) * time.Second), Attributes: sent[i].Clone()}
	}
	_, err = svc.IngestLocations(ctx, s.p, s.v.ID, pts)
	is.NoErr(err)
	got := readAll(t, sub, 10)
	is.Equal(len(got), 3)
	for i := range got {
		is.Equal(got[i].Record.Attributes, sent[i]) // as sent
	}
	got[0].Record.Attributes[0].Num = 99 // the reader's own copy

	resumed, err := svc.Subscribe(ctx, s.p, nil, "1")
	is.NoErr(err)
	defer resumed.Close()
	again := readAll(t, resumed, 10)
	is.Equal(len(again), 3)
	for i := range again {
		is.Equal(again[i].Record.Attributes, sent[i]) // from the replay buffer, unchanged
	}
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

// listeningFeed is a memstore that says it is a LiveFeed: its follower
// hands over what its context carries, then follows until the end.
type listeningFeed struct {
	*memstore.Store
	got chan func() int
}

func (f listeningFeed) AppendLive(context.Context, string, []fleet.StreamItem, time.Time) error {
	return nil
}

func (f listeningFeed) FollowLive(ctx context.Context, _ time.Time, _ func([]fleet.LiveBatch)) error {
	f.got <- fleet.LiveListeners(ctx)
	<-ctx.Done()
	return ctx.Err()
}

func (f listeningFeed) PurgeLive(context.Context, time.Time) (int, error) { return 0, nil }

// TestFollowLiveSaysWhoListens: the service follows a shared feed with
// the number of its open streams in the context (fleet.LiveListeners),
// so that the feed may read less often while none listens.
func TestFollowLiveSaysWhoListens(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(storetest.T0)
	feed := listeningFeed{Store: memstore.New(), got: make(chan func() int, 1)}
	svc := fleet.NewService(feed, fleet.Options{Now: clock.Now})
	s := newStreamer(t, svc, clock, fleet.PlanPro)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { svc.Jobs().FollowLive(fctx); close(done) }()
	defer func() { stop(); <-done }()
	listeners := <-feed.got
	is.True(listeners != nil)
	is.Equal(listeners(), 0)
	sub, err := svc.Subscribe(ctx, s.p, nil, "")
	is.NoErr(err)
	is.Equal(listeners(), 1)
	sub.Close()
	is.Equal(listeners(), 0)
	is.True(fleet.LiveListeners(ctx) == nil) // none without WithLiveListeners
}
