package fleethttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// follow makes e's live streams follow the shared feed of its PostgreSQL
// store (what Run does) until the test ends, and waits until they do.
func follow(t *testing.T, e *env) {
	t.Helper()
	fctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.svc.Jobs().FollowLive(fctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(e.logs.String())
		}
	})
	waitUntil(t, "the live feed followed", e.svc.Jobs().FollowingLive)
}

// TestPostgresTwoServersOneLiveStream: with two servers on one PostgreSQL
// database, a stream on either carries the reports ingested by both, with
// the same ids in the same order, a report posted to one reaches a stream
// on the other within a second, and a client resumes with Last-Event-ID on
// the other server, or on a third that started later, without losing or
// repeating a report.
func TestPostgresTwoServersOneLiveStream(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewDSN(t)
	clock := testclock.New(T0)
	open := func() *env {
		s, err := sqlstore.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		e := newEnvOn(t, s, clock)
		follow(t, e)
		return e
	}
	one, two := open(), open()
	_, key := one.account(fleet.PlanPro)
	_, other := one.account(fleet.PlanPro)
	a, b := one.vehicle(key, "A"), two.vehicle(key, "B")
	stranger := two.vehicle(other, "S")
	onOne, onTwo := one.openStream(key, "", ""), two.openStream(key, "", "")

	now := clock.Now()
	posted := time.Now()
	r := one.do("POST", "/v1/vehicles/"+a+"/locations", key, batch(pt(now, 1, 1, 10)))
	is.Equal(r.status, http.StatusOK)
	first := onTwo.next() // posted to one, streamed by two
	is.True(time.Since(posted) < time.Second)
	is.Equal(first.data["vehicle_id"], a)

	is.Equal(two.do("POST", "/v1/vehicles/"+stranger+"/locations", other, batch(pt(now, 9, 9, 9))).status, http.StatusOK)
	is.Equal(two.do("POST", "/v1/vehicles/"+b+"/locations", key, batch(pt(now, 2, 2, 20))).status, http.StatusOK)
	is.Equal(one.do("POST", "/v1/vehicles/"+a+"/locations", key, batch(pt(now.Add(time.Second), 1.5, 1, 30))).status, http.StatusOK)
	second, third := onTwo.next(), onTwo.next()
	is.Equal(second.data["vehicle_id"], b) // the other account's report is not this stream's
	is.Equal(third.data["location"].(map[string]any)["latitude"], 1.5)

	// The stream on one carries the same reports with the same ids.
	for _, want := range []sseEvent{first, second, third} {
		got := onOne.next()
		is.Equal(got.id, want.id)
		is.Equal(got.data["vehicle_id"], want.data["vehicle_id"])
	}

	// Resuming on the other server, and on a server that started since,
	// after an id seen on this one: the reports after it, each once.
	three := open()
	for _, e := range []*env{one, three} {
		again := e.openStream(key, "", first.id)
		is.Equal(again.next().id, second.id)
		is.Equal(again.next().id, third.id)
		is.Equal(e.do("POST", "/v1/vehicles/"+b+"/locations", key, batch(pt(clock.Now().Add(time.Minute), 3, 3, 0))).status, http.StatusOK)
		live := again.next()
		is.Equal(live.data["vehicle_id"], b)
		is.True(live.id > third.id) // ids are decimal numbers of one length here
		again.cancel()
		clock.Advance(2 * time.Minute)
	}
}
