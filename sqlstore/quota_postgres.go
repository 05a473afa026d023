package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Rate limiting on PostgreSQL, the one store call of every request.
//
// takeQuotaSQL is fleet.TakeQuota in one statement, for several subjects
// at once: for each it inserts the subject's row or updates it in place,
// holding the row lock only for the statement (an autocommit transaction
// that does not wait for the disk: synchronous_commit is off for the
// store's quota connections, see takeQuotaPostgres). It takes n requests of
// a subject at once, all at the same time now: the window rolls over as
// TakeQuota rolls it, then as many of the n as the allowance has left are
// counted, the first ones, and `taken` says how many, so that each request
// learns its own outcome (see quotaOutcome). Concurrent statements on one
// subject take turns on its row, so the count is exact over every server
// sharing the database; rows are taken in subject order, so statements of
// several servers do not deadlock.
//
// The arguments are arrays, an element per subject (no subject twice):
// $1 subjects, $2 now (Unix µs), $3 n, $4 the limit; then $5 the window
// (µs) and $6 the zero window start (a subject never seen). The update
// reads a subject's n and limit from the row it would have inserted
// (excluded.req, excluded.lim: columns kept for that, migration 0013). One
// statement for all the subjects of a round trip costs the database about
// 30% less than one statement each in a pipeline (pgbench, 32 subjects).
const takeQuotaSQL = `INSERT INTO quotas AS q (subject, window_start, used, taken, req, lim)
	SELECT s, n, LEAST(r, GREATEST(l, 0)), LEAST(r, GREATEST(l, 0)), r, l
	FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS t(s, n, r, l)
	ORDER BY s
	ON CONFLICT (subject) DO UPDATE SET
		window_start = CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5
			THEN excluded.window_start ELSE q.window_start END,
		used = CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END
			+ LEAST(excluded.req, GREATEST(excluded.lim
				- CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END, 0)),
		taken = LEAST(excluded.req, GREATEST(excluded.lim
			- CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END, 0)),
		req = excluded.req,
		lim = excluded.lim
	RETURNING subject, window_start, used, taken`

// quotaOutcome is the outcome of the i-th (from 0) of the requests one
// take counted for: the window starting at start holds used requests after
// the take, which counted the first taken of them.
func quotaOutcome(i int, start time.Time, used, taken, limit int) fleet.Quota {
	q := fleet.Quota{Limit: limit, Reset: start.Add(fleet.QuotaWindow), Used: used}
	if i < taken {
		q.Allowed = true
		q.Used = used - taken + i + 1
	}
	q.Remaining = max(0, limit-q.Used)
	return q
}

// quotaTake is one subject's row of takeQuotaSQL: n requests at now under
// limit, and what the statement returned for them.
type quotaTake struct {
	subject     string
	now         time.Time
	n, limit    int
	start       time.Time
	used, taken int
}

// takeQuotaNSQL is fleet.TakeQuotaN in one statement, for one subject: the
// window rolls over as in takeQuotaSQL; then the n units ($3) are counted
// if they all fit under the limit ($4), and none otherwise; `taken` says
// which. $2 is now, $5 the window and $6 the zero window start (all µs).
// Concurrent statements on the subject take turns on its row, so the
// count is exact over every server sharing the database.
var takeQuotaNSQL = `INSERT INTO quotas AS q (subject, window_start, used, taken, req, lim)
	VALUES ($1, $2::bigint,
		CASE WHEN $3::bigint <= $4::bigint THEN $3::bigint ELSE 0 END,
		CASE WHEN $3::bigint <= $4::bigint THEN $3::bigint ELSE 0 END,
		$3::bigint, $4::bigint)
	` + takeNConflict("$5", "$6") + `
	RETURNING window_start, used, taken`

// takeNConflict is the ON CONFLICT clause of a take of `req` units, all or
// none, under `lim` (the row that would have been inserted), with window
// the window's length and zero the zero window start (µs): takeQuotaNSQL's,
// and the quota part of a group's write-set statement (group_writes.go).
func takeNConflict(window, zero string) string {
	return strings.NewReplacer("$5", window, "$6", zero).Replace(`ON CONFLICT (subject) DO UPDATE SET
		window_start = CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5
			THEN excluded.window_start ELSE q.window_start END,
		used = CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END
			+ CASE WHEN excluded.req <= excluded.lim
				- CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END
				THEN excluded.req ELSE 0 END,
		taken = CASE WHEN excluded.req <= excluded.lim
				- CASE WHEN q.window_start = $6 OR excluded.window_start >= q.window_start + $5 THEN 0 ELSE q.used END
				THEN excluded.req ELSE 0 END,
		req = excluded.req,
		lim = excluded.lim`)
}

// takeQuota counts q in the transaction (takeQuotaNSQL): the subject's
// row stays locked until the transaction ends. A take that does not fit
// is a *fleet.QuotaRefused.
func (t *tx) takeQuota(q fleet.QuotaTake) error {
	var ws, used, taken int64
	if err := t.queryRow(takeQuotaNSQL, q.Subject, toDB(fleet.Timestamp(q.Now)), int64(q.N), int64(q.Limit),
		fleet.QuotaWindow.Microseconds(), toDB(time.Time{})).Scan(&ws, &used, &taken); err != nil {
		return wrap(t.failed(err), "take quota")
	}
	if taken != int64(q.N) {
		out := fleet.Quota{Limit: q.Limit, Used: int(used), Reset: fromDB(ws).Add(fleet.QuotaWindow)}
		out.Remaining = max(0, q.Limit-out.Used)
		return &fleet.QuotaRefused{Subject: q.Subject, Quota: out}
	}
	return nil
}

// refundQuotaSQL is fleet.RefundQuota: $2 units back to subject $1's
// window if it still starts at $3.
const refundQuotaSQL = `UPDATE quotas SET used = GREATEST(used - $2::bigint, 0)
	WHERE subject = $1 AND window_start = $3`

// takeQuotaNPostgres runs takeQuotaNSQL on the pool whose commits do not
// wait for the disk, as the request allowance's statements do. A take of
// many units is one batch's, not one request's: takes are rare enough
// that they need no batcher.
func (e *pgEngine) takeQuotaNPostgres(ctx context.Context, subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	var ws, used, taken int64
	e.trips.add(tripStatement)
	err := e.fast.QueryRowContext(ctx, takeQuotaNSQL, subject, toDB(now), int64(n), int64(limit),
		fleet.QuotaWindow.Microseconds(), toDB(time.Time{})).Scan(&ws, &used, &taken)
	if err != nil {
		return fleet.Quota{}, err
	}
	q := fleet.Quota{Allowed: taken == int64(n), Limit: limit, Used: int(used), Reset: fromDB(ws).Add(fleet.QuotaWindow)}
	q.Remaining = max(0, limit-q.Used)
	return q, nil
}

// refundQuotaPostgres runs refundQuotaSQL.
func (e *pgEngine) refundQuotaPostgres(ctx context.Context, subject string, n int, reset time.Time) error {
	e.trips.add(tripStatement)
	_, err := e.fast.ExecContext(ctx, refundQuotaSQL, subject, int64(n), toDB(reset.Add(-fleet.QuotaWindow)))
	return err
}

// sendQuotaTakes runs takeQuotaSQL once for each element of statements
// (whose subjects differ), all in one round trip, and fills in each take's
// outcome.
func (e *pgEngine) sendQuotaTakes(ctx context.Context, statements [][]quotaTake) error {
	conn, err := e.fast.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		var pb pgx.Batch
		for _, takes := range statements {
			subjects := make([]string, len(takes))
			nows, ns, limits := make([]int64, len(takes)), make([]int64, len(takes)), make([]int64, len(takes))
			for i, t := range takes {
				subjects[i], nows[i], ns[i], limits[i] = t.subject, toDB(t.now), int64(t.n), int64(t.limit)
			}
			pb.Queue(takeQuotaSQL, subjects, nows, ns, limits, fleet.QuotaWindow.Microseconds(), toDB(time.Time{}))
		}
		br := sc.Conn().SendBatch(ctx, &pb)
		for _, takes := range statements {
			index := make(map[string]int, len(takes))
			for i, t := range takes {
				index[t.subject] = i
			}
			rows, err := br.Query()
			if err != nil {
				br.Close()
				return err
			}
			got := 0
			for rows.Next() {
				var subject string
				var ws, u, tk int64
				if err := rows.Scan(&subject, &ws, &u, &tk); err != nil {
					rows.Close()
					br.Close()
					return err
				}
				i, ok := index[subject]
				if !ok {
					rows.Close()
					br.Close()
					return fmt.Errorf("sqlstore: quota: the database returned subject %q, not asked for", subject)
				}
				takes[i].start, takes[i].used, takes[i].taken = fromDB(ws), int(u), int(tk)
				got++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				br.Close()
				return err
			}
			if got != len(takes) {
				br.Close()
				return fmt.Errorf("sqlstore: quota: %d rows returned for %d subjects", got, len(takes))
			}
		}
		return br.Close()
	})
}

// quotaBatcher coalesces the takes of one server: while a round trip is on
// its way, the requests that arrive wait in a queue, and the next round trip
// takes them all. The requests of one subject (and limit) in it are one
// statement, which takes them all at once and hands the allowance out in
// their order of arrival; the statements of the subjects go together in one
// pipeline, sorted by subject. A busy key then costs one statement per
// batch, not per request, and a busy server one round trip per batch.
//
// Exactness does not change: each statement is atomic on its row,
// whichever server sends it. The statements of a round trip commit
// together (one implicit transaction), holding their rows for the length
// of the pipeline; servers lock rows in the same order, so they do not
// deadlock each other, and a round trip the database aborts (a deadlock
// with maintenance, say) is sent again whole.
type quotaBatcher struct {
	mu      sync.Mutex
	busy    bool
	waiting []*quotaWaiter
	// lastSend is when the last round trip was sent: the next, handed to
	// a waiter, waits for quotaLinger to pass since (leadQuotaBatch).
	lastSend time.Time
	sent     atomic.Int64 // subjects' takes sent (a row of a statement each), for tests
	trips    atomic.Int64 // round trips, for tests
}

// quotaLaneKey separates the requests of a subject by limit (an account's
// limit changes while requests are in flight): a statement has one limit.
type quotaLaneKey struct {
	subject string
	limit   int
}

type quotaWaiter struct {
	key  quotaLaneKey
	now  time.Time
	done chan struct{}
	// lead, set before done is closed, makes this waiter send the next
	// round trip, for the waiters it names (itself first).
	lead []*quotaWaiter
	q    fleet.Quota
	err  error
}

// quotaLinger is the least time between two round trips of a busy
// batcher: at most 200 a second. Each is a commit: at a few thousand
// requests a second a server sent one for every three or four requests;
// waiting for this makes it one for many. Only a request that found a
// round trip on its way waits for it, and then at most this much more: a
// request that finds the batcher idle is sent at once.
const quotaLinger = 5 * time.Millisecond

// maxQuotaBatch bounds the requests one round trip takes for.
const maxQuotaBatch = 1024

// quotaTimeout bounds a round trip sent for a batch: it serves the
// requests of several callers, so it runs on none of their contexts.
const quotaTimeout = 10 * time.Second

// takeQuotaPostgres is TakeQuota on PostgreSQL through the batcher.
func (e *pgEngine) takeQuotaPostgres(ctx context.Context, subject string, limit int, now time.Time) (fleet.Quota, error) {
	b := &e.quotaBatch
	me := &quotaWaiter{key: quotaLaneKey{subject, limit}, now: now}
	b.mu.Lock()
	if b.busy {
		me.done = make(chan struct{})
		b.waiting = append(b.waiting, me)
		b.mu.Unlock()
		select {
		case <-me.done:
		case <-ctx.Done():
			// The request is counted all the same when its batch is
			// taken; if it is picked to send that batch, it still does.
			go func() {
				<-me.done
				if me.lead != nil {
					e.leadQuotaBatch(me.lead)
				}
			}()
			return fleet.Quota{}, ctx.Err()
		}
		if me.lead != nil {
			e.leadQuotaBatch(me.lead)
		}
		return me.q, me.err
	}
	b.busy = true
	b.mu.Unlock()
	e.runQuotaBatch([]*quotaWaiter{me})
	return me.q, me.err
}

// quotaGroup is the requests of one statement.
type quotaGroup struct {
	key     quotaLaneKey
	now     time.Time // the latest of its requests' times
	waiters []*quotaWaiter
}

// leadQuotaBatch sends the round trip of batch, handed on by the last
// one's lead, once quotaLinger has passed since that one was sent, with
// the requests that arrived meanwhile.
func (e *pgEngine) leadQuotaBatch(batch []*quotaWaiter) {
	b := &e.quotaBatch
	b.mu.Lock()
	last := b.lastSend
	b.mu.Unlock()
	e.runQuotaBatch(linger(&b.mu, &b.waiting, batch, last, quotaLinger))
}

// linger waits, for a batcher whose last round trip was sent at last,
// until d has passed since, then moves onto batch the waiters that queued
// meanwhile (*waiting, under mu), up to maxQuotaBatch in all.
func linger[W any](mu *sync.Mutex, waiting *[]W, batch []W, last time.Time, d time.Duration) []W {
	wait := d - time.Since(last)
	if wait <= 0 || len(batch) >= maxQuotaBatch {
		return batch
	}
	time.Sleep(wait)
	mu.Lock()
	defer mu.Unlock()
	if n := min(len(*waiting), maxQuotaBatch-len(batch)); n > 0 {
		batch = append(batch, (*waiting)[:n]...)
		*waiting = (*waiting)[n:]
		if len(*waiting) == 0 {
			*waiting = nil
		}
	}
	return batch
}

// runQuotaBatch sends one round trip for batch (whose first waiter is the
// caller), gives each waiter its outcome, and passes the batcher on: to
// the first of the waiters that queued meanwhile, or back to idle.
func (e *pgEngine) runQuotaBatch(batch []*quotaWaiter) {
	e.quotaBatch.mu.Lock()
	e.quotaBatch.lastSend = time.Now()
	e.quotaBatch.mu.Unlock()
	byKey := map[quotaLaneKey]*quotaGroup{}
	var groups []*quotaGroup
	for _, w := range batch {
		g := byKey[w.key]
		if g == nil {
			g = &quotaGroup{key: w.key, now: w.now}
			byKey[w.key] = g
			groups = append(groups, g)
		}
		if w.now.After(g.now) {
			g.now = w.now // a statement takes its requests at the latest of their times
		}
		g.waiters = append(g.waiters, w)
	}
	slices.SortFunc(groups, func(a, b *quotaGroup) int {
		if c := strings.Compare(a.key.subject, b.key.subject); c != 0 {
			return c
		}
		return a.key.limit - b.key.limit
	})
	var err error
	for attempt := 1; ; attempt++ {
		err = e.sendQuotaGroups(groups)
		if err == nil || classify(err) != errRetry || attempt == 3 {
			break
		}
	}
	if err != nil {
		for _, w := range batch {
			w.err = err
		}
	}
	b := &e.quotaBatch
	b.mu.Lock()
	var next []*quotaWaiter
	if n := min(len(b.waiting), maxQuotaBatch); n > 0 {
		next = b.waiting[:n:n]
		b.waiting = b.waiting[n:]
		if len(b.waiting) == 0 {
			b.waiting = nil
		}
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	for _, w := range batch[1:] {
		close(w.done)
	}
	if next != nil {
		next[0].lead = next
		close(next[0].done)
	}
}

// sendQuotaGroups takes the requests of groups in one round trip and sets
// each waiter's outcome: one statement for all the subjects, or more when a
// subject has groups of different limits (an account's limit changed while
// its requests were on their way), since a statement takes a subject once.
func (e *pgEngine) sendQuotaGroups(groups []*quotaGroup) error {
	b := &e.quotaBatch
	b.trips.Add(1)
	b.sent.Add(int64(len(groups)))
	e.shared.trips.add(tripStatement) // one statement, or one per limit of a subject
	ctx, cancel := context.WithTimeout(context.Background(), quotaTimeout)
	defer cancel()
	var statements [][]quotaTake
	var where [][2]int // group i's take: statements[where[i][0]][where[i][1]]
	// A subject's k-th group (by limit) goes in the k-th statement.
	lanes := map[string]int{}
	for _, g := range groups {
		k := lanes[g.key.subject]
		lanes[g.key.subject] = k + 1
		if k == len(statements) {
			statements = append(statements, nil)
		}
		where = append(where, [2]int{k, len(statements[k])})
		statements[k] = append(statements[k], quotaTake{subject: g.key.subject, now: g.now, n: len(g.waiters), limit: g.key.limit})
	}
	if err := e.sendQuotaTakes(ctx, statements); err != nil {
		return err
	}
	for i, g := range groups {
		t := statements[where[i][0]][where[i][1]]
		for j, w := range g.waiters {
			w.q = quotaOutcome(j, t.start, t.used, t.taken, g.key.limit)
		}
	}
	return nil
}

// isAddress reports whether subject is a client address's (the brake on
// requests without a valid key), which PostgreSQL stores keep in memory.
func isAddress(subject string) bool { return strings.HasPrefix(subject, "addr:") }
