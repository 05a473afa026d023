package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/matryer/is"
)

func openPostgresForTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), pgtest.NewDSN(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// quotaCase is a subject's stored window, the limit and time of a take, and
// how many requests it takes for at once.
type quotaCase struct {
	stored bool // false: the subject has no row yet
	state  fleet.QuotaState
	limit  int
	now    time.Time
	n      int
}

func (c quotaCase) String() string {
	return fmt.Sprintf("stored=%v start=%s count=%d limit=%d now=%s n=%d",
		c.stored, c.state.WindowStart.Format(time.RFC3339Nano), c.state.Count, c.limit, c.now.Format(time.RFC3339Nano), c.n)
}

// randomQuotaCase draws a case, favouring the edges: a window that ends
// exactly now or a microsecond either side of it, a count one below the
// limit, at it or over it (the account's limit was lowered), limits of 0
// and 1, and a window start in the future (another server's clock ahead).
func randomQuotaCase(r *rand.Rand, now time.Time) quotaCase {
	c := quotaCase{now: now, n: 1 + r.IntN(4)}
	if r.IntN(8) == 0 {
		c.n = 1 + r.IntN(40)
	}
	c.limit = []int{0, 1, 2, 5, 1000, r.IntN(50)}[r.IntN(6)]
	switch r.IntN(8) {
	case 0: // never seen
	case 1: // a row whose window never started
		c.stored = true
	default:
		c.stored = true
		ago := []time.Duration{
			fleet.QuotaWindow, fleet.QuotaWindow + time.Microsecond, fleet.QuotaWindow - time.Microsecond,
			0, -time.Second, time.Duration(r.Int64N(int64(2 * fleet.QuotaWindow))),
		}[r.IntN(6)]
		c.state.WindowStart = now.Add(-ago).Truncate(time.Microsecond)
		c.state.Count = []int{0, c.limit - 1, c.limit, c.limit + 3, r.IntN(60)}[r.IntN(5)]
		c.state.Count = max(0, c.state.Count)
	}
	return c
}

// TestTakeQuotaStatementAgreesWithTakeQuota: the one statement of
// PostgreSQL's TakeQuota, taking n requests of each of several subjects at
// once, answers each as n calls of fleet.TakeQuota at the same time answer
// them, one after the other, and leaves the window they leave, over random
// cases that favour the edges (window roll-over, at the limit, over it,
// refused requests not counted, limits of 0 and 1), one to twelve subjects
// a statement.
func TestTakeQuotaStatementAgreesWithTakeQuota(t *testing.T) {
	s := openPostgresForTest(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	now := fleet.Timestamp(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	type drawn struct {
		c     quotaCase
		want  []fleet.Quota
		final fleet.QuotaState
	}
	for i := 0; i < 1500; {
		var cases []drawn
		var takes []quotaTake
		for range 1 + r.IntN(12) {
			c := randomQuotaCase(r, now.Add(time.Duration(r.Int64N(int64(time.Hour)))).Truncate(time.Microsecond))
			subject := fmt.Sprintf("key_%d", i)
			i++
			if c.stored {
				if _, err := s.wdb.ExecContext(ctx, `INSERT INTO quotas (subject, window_start, used) VALUES ($1, $2, $3)`,
					subject, toDB(c.state.WindowStart), int64(c.state.Count)); err != nil {
					t.Fatal(err)
				}
			}
			d := drawn{c: c, want: make([]fleet.Quota, c.n), final: c.state}
			for j := range d.want {
				d.final, d.want[j] = fleet.TakeQuota(d.final, c.limit, c.now)
			}
			cases = append(cases, d)
			takes = append(takes, quotaTake{subject: subject, now: c.now, n: c.n, limit: c.limit})
		}
		if err := s.postgres().sendQuotaTakes(ctx, [][]quotaTake{takes}); err != nil {
			t.Fatalf("%v: %v", cases[0].c, err)
		}
		for k, d := range cases {
			tk := takes[k]
			for j := range d.want {
				if got := quotaOutcome(j, tk.start, tk.used, tk.taken, d.c.limit); got != d.want[j] {
					t.Fatalf("%v (subject %d of %d in the statement): request %d: got %+v, want %+v", d.c, k+1, len(cases), j, got, d.want[j])
				}
			}
			var ws, u int64
			if err := s.rdb.QueryRowContext(ctx, `SELECT window_start, used FROM quotas WHERE subject = $1`, tk.subject).Scan(&ws, &u); err != nil {
				t.Fatal(err)
			}
			if got := (fleet.QuotaState{WindowStart: fromDB(ws), Count: int(u)}); !got.WindowStart.Equal(d.final.WindowStart) || got.Count != d.final.Count {
				t.Fatalf("%v: stored %+v, want %+v", d.c, got, d.final)
			}
		}
	}
}

// TestTakeQuotaNStatementAgreesWithTakeQuotaN: PostgreSQL's TakeQuotaN,
// one statement taking n units at once or none, answers as
// fleet.TakeQuotaN answers and leaves the window it leaves, and
// RefundQuota's statement then leaves what fleet.RefundQuota leaves, over
// random cases that favour the edges (window roll-over, exactly what is
// left, one more, limits of 0 and 1, a refund to an ended window).
func TestTakeQuotaNStatementAgreesWithTakeQuotaN(t *testing.T) {
	s := openPostgresForTest(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	now := fleet.Timestamp(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	for i := range 600 {
		c := randomQuotaCase(r, now.Add(time.Duration(r.Int64N(int64(time.Hour)))).Truncate(time.Microsecond))
		if left := c.limit - c.state.Count; r.IntN(3) == 0 && left >= 0 {
			c.n = left + r.IntN(2) // exactly what is left, or one more
		}
		subject := fmt.Sprintf("points:%d", i)
		if c.stored {
			if _, err := s.wdb.ExecContext(ctx, `INSERT INTO quotas (subject, window_start, used) VALUES ($1, $2, $3)`,
				subject, toDB(c.state.WindowStart), int64(c.state.Count)); err != nil {
				t.Fatal(err)
			}
		}
		final, want := fleet.TakeQuotaN(c.state, c.n, c.limit, c.now)
		got, err := s.TakeQuotaN(ctx, subject, c.n, c.limit, c.now)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if !got.Reset.Equal(want.Reset) || got.Allowed != want.Allowed || got.Used != want.Used || got.Remaining != want.Remaining || got.Limit != want.Limit {
			t.Fatalf("%v: got %+v, want %+v", c, got, want)
		}
		reset := want.Reset
		if r.IntN(4) == 0 {
			reset = c.state.WindowStart.Add(fleet.QuotaWindow) // the window before, which may have ended
		}
		back := r.IntN(c.n + 3)
		final = fleet.RefundQuota(final, back, reset)
		if err := s.RefundQuota(ctx, subject, back, reset); err != nil {
			t.Fatal(err)
		}
		var ws, u int64
		if err := s.rdb.QueryRowContext(ctx, `SELECT window_start, used FROM quotas WHERE subject = $1`, subject).Scan(&ws, &u); err != nil {
			t.Fatal(err)
		}
		if !fromDB(ws).Equal(final.WindowStart) || int(u) != final.Count {
			t.Fatalf("%v, %d back to the window ending %s: stored start %s count %d, want %+v", c, back, reset, fromDB(ws), u, final)
		}
	}
}

// TestTakeQuotaOneSubjectTwoLimits: requests of one subject under two
// limits in one round trip (its account's limit changed meanwhile) are two
// statements of the round trip, each exact, the second seeing the first.
func TestTakeQuotaOneSubjectTwoLimits(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	now := fleet.Timestamp(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	mk := func(limit, n int) *quotaGroup {
		g := &quotaGroup{key: quotaLaneKey{"key_two_limits", limit}, now: now}
		for range n {
			g.waiters = append(g.waiters, &quotaWaiter{key: g.key, now: now})
		}
		return g
	}
	low, high, other := mk(3, 2), mk(5, 4), mk(10, 1)
	other.key.subject = "key_other"
	is.NoErr(s.postgres().sendQuotaGroups([]*quotaGroup{low, high, other}))
	allowed := func(g *quotaGroup) (n int) {
		for _, w := range g.waiters {
			if w.q.Allowed {
				n++
			}
		}
		return n
	}
	is.Equal(allowed(low), 2)                 // both under 3
	is.Equal(allowed(high), 3)                // 5 less the 2 already counted
	is.Equal(high.waiters[2].q.Used, 5)       // the third of them is the fifth
	is.True(!high.waiters[3].q.Allowed)       // and the fourth is refused
	is.Equal(other.waiters[0].q.Remaining, 9) // another subject, in the first statement
}

// TestTakeQuotaCoalesces: many simultaneous requests of one key on one
// server share statements (fewer statements than requests), exactly the
// allowance is granted, each allowed request sees its own count, and a
// refused one is not counted.
func TestTakeQuotaCoalesces(t *testing.T) {
	is := is.New(t)
	s := openPostgresForTest(t)
	now := fleet.Timestamp(time.Now())
	const limit, requests = 300, 500
	before := s.postgres().quotaBatch.sent.Load()
	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := map[int]bool{}
	allowed, refused := 0, 0
	start := make(chan struct{})
	for range requests {
		wg.Go(func() {
			<-start
			q, err := s.TakeQuota(context.Background(), "key_busy", limit, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("take: %v", err)
				return
			}
			if !q.Allowed {
				refused++
				if q.Used != limit || q.Remaining != 0 {
					t.Errorf("refused: %+v", q)
				}
				return
			}
			allowed++
			if seen[q.Used] || q.Remaining != limit-q.Used {
				t.Errorf("allowed twice at %d, or wrong remaining: %+v", q.Used, q)
			}
			seen[q.Used] = true
		})
	}
	close(start)
	wg.Wait()
	is.Equal(allowed, limit)
	is.Equal(refused, requests-limit)
	sent := s.postgres().quotaBatch.sent.Load() - before
	t.Logf("%d requests, %d subject takes", requests, sent)
	is.True(sent < requests) // requests shared statements
	s.postgres().quotaBatch.mu.Lock()
	is.True(!s.postgres().quotaBatch.busy) // nothing left in flight
	is.Equal(len(s.postgres().quotaBatch.waiting), 0)
	s.postgres().quotaBatch.mu.Unlock()
}

// TestTakeQuotaManyKeysShareRoundTrips: simultaneous requests of many keys,
// with limits of their own, on two servers: each key grants exactly its
// limit, and each server sends fewer round trips than it got requests.
func TestTakeQuotaManyKeysShareRoundTrips(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewDSN(t)
	var servers []*Store
	for range 2 {
		s, err := Open(context.Background(), dsn)
		is.NoErr(err)
		defer s.Close()
		servers = append(servers, s)
	}
	now := fleet.Timestamp(time.Now())
	const keys, perKey = 40, 12
	var mu sync.Mutex
	granted := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for k := range keys {
		subject, limit := fmt.Sprintf("key_%02d", k), k%10 // limits 0 to 9, fewer than the requests
		for i := range perKey {
			s := servers[i%2]
			wg.Go(func() {
				<-start
				q, err := s.TakeQuota(context.Background(), subject, limit, now)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("take: %v", err)
				} else if q.Allowed {
					granted[subject]++
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for k := range keys {
		is.Equal(granted[fmt.Sprintf("key_%02d", k)], k%10) // exactly the limit of each key
	}
	for _, s := range servers {
		t.Logf("%d round trips, %d subject takes for %d requests", s.postgres().quotaBatch.trips.Load(), s.postgres().quotaBatch.sent.Load(), keys*perKey/2)
		is.True(s.postgres().quotaBatch.trips.Load() < keys*perKey/2)
	}
}

// TestAddressQuotaInMemory: the brake on requests without a valid key is
// counted in the server's memory on PostgreSQL: nothing reaches the
// database, and another server has its own count.
func TestAddressQuotaInMemory(t *testing.T) {
	is := is.New(t)
	dsn := pgtest.NewDSN(t)
	one, err := Open(context.Background(), dsn)
	is.NoErr(err)
	defer one.Close()
	two, err := Open(context.Background(), dsn)
	is.NoErr(err)
	defer two.Close()
	now := fleet.Timestamp(time.Now())
	for range 3 {
		q, err := one.TakeQuota(context.Background(), "addr:192.0.2.1", 3, now)
		is.NoErr(err)
		is.True(q.Allowed)
	}
	q, err := one.TakeQuota(context.Background(), "addr:192.0.2.1", 3, now)
	is.NoErr(err)
	is.True(!q.Allowed)
	q, err = two.TakeQuota(context.Background(), "addr:192.0.2.1", 3, now)
	is.NoErr(err)
	is.True(q.Allowed) // the other server counts its own
	var n int
	is.NoErr(one.rdb.QueryRow(`SELECT COUNT(*) FROM quotas`).Scan(&n))
	is.Equal(n, 0)
}
