package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/jackc/pgx/v5"
)

// The live feed shared by the servers on a PostgreSQL database
// (fleet.LiveFeed). Each server appends the reports it ingests to
// live_reports, taking their ids from live_seq in the same statement, and
// notifies the channel liveChannel; each server listens on that channel and
// reads the rows after the last id it took. The row of live_seq stays
// locked until the appending statement commits, so ids become visible in
// order: a reader that sees an id has seen every smaller one, and reading
// "after the last id" misses nothing. A notification only wakes the
// readers; they also read every liveIdle, so a lost one delays reports by
// at most that.

// liveChannel is the channel of the notifications. Channels are
// database-wide: servers on other schemas of the database wake for nothing
// and find no rows.
const liveChannel = "fleet_live"

// liveIdle is how long a reader waits for a notification before it reads
// all the same.
const liveIdle = time.Second

// liveReadPace is the least time between two reads of a busy feed
// reader: at most 100 a second. Every group of every server notifies the
// readers of all of them, and each read is a statement; a reader woken
// sooner waits for the rest of it, and reads the groups that committed
// meanwhile together. A reader that has not read for longer reads at
// once, so a report at a quiet time reaches the streams without delay.
const liveReadPace = 10 * time.Millisecond

// liveQuietPace is liveReadPace while no stream of the server listens
// (fleet.LiveListeners): the reader still follows, for the streams that
// open and resume from the server's replay buffer, four times a second
// at most instead of a hundred. pg-scale.sh's servers, streamless, spent
// 0.06 of a commit a report (one server) and 0.12 (two) on feed reads.
const liveQuietPace = 250 * time.Millisecond

// livePace returns the least time between two reads of a busy feed
// reader: liveQuietPace while listeners says none listens.
func livePace(listeners func() int) time.Duration {
	if listeners != nil && listeners() == 0 {
		return liveQuietPace
	}
	return liveReadPace
}

// liveReadLimit bounds the rows a reader takes per query.
const liveReadLimit = 500

// liveItem is one report as live_reports.items holds it.
type liveItem struct {
	VehicleID string               `json:"v"`
	Record    fleet.LocationRecord `json:"r"`
}

// appendLiveSQL appends the rows of several ingests in one statement. $1 is
// the number of ids they take; the arrays hold, per row, its first id's
// offset from the first of the statement, its count, account, items and
// time.
const appendLiveSQL = `WITH s AS (UPDATE live_seq SET last = last + $1::bigint WHERE id = 1 RETURNING last),
	ins AS (INSERT INTO live_reports (first_id, count, account_id, items, created_at)
		SELECT s.last - $1::bigint + 1 + u.off, u.n, u.acct, u.items, u.at
		FROM s, unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[]) AS u(off, n, acct, items, at)
		RETURNING 1)
	SELECT (SELECT COUNT(*) FROM ins), pg_notify('` + liveChannel + `', '')`

// liveAppender coalesces the appends of one server: while a statement is on
// its way, the appends that arrive queue, and the next statement takes them
// all (as quotaBatcher does). AppendLive returns once its reports are in
// the feed: a client that posts one report and then, after the answer,
// another (to any server) finds them on every stream in that order.
// Appending in the background would spare the request that round trip, but
// two servers' queues could then put the second before the first.
type liveAppender struct {
	mu      sync.Mutex
	busy    bool
	waiting []*liveWaiter
	// lastSend is when the last statement was sent: the next waits for
	// liveLinger to pass since, taking the appends that arrive meanwhile.
	lastSend time.Time
}

// liveLinger is the least time between two appends of a busy appender.
// Each append is a statement and a commit, and wakes every server's
// reader for a read of its own: at hundreds of reports a second a server
// sent one for every report or two, and 3 ms make it one for several. An
// append waits for it only while another's is on its way, and then at
// most 3 ms more.
const liveLinger = 3 * time.Millisecond

type liveWaiter struct {
	accountID string
	items     string
	n         int
	at        time.Time
	done      chan struct{}
	lead      []*liveWaiter
	err       error
}

// liveArgs gathers appends to the feed into appendLiveSQL's arguments
// (and those of the live part of a group's write-set statement,
// group_writes.go): per row, its first id's offset from the statement's
// first, its count, account, items (JSON) and time; total is the ids they
// take.
type liveArgs struct {
	total         int64
	offs, ns, ats []int64
	accts, items  []string
}

// add adds one ingest's reports as a row.
func (a *liveArgs) add(l fleet.LiveAppend) error {
	b, err := liveJSON(l.Items)
	if err != nil {
		return err
	}
	a.addJSON(l.AccountID, b, len(l.Items), l.At)
	return nil
}

// addJoined adds one ingest's reports to the last row when it is of the
// same account, else as a row: a group's members of one account are one
// row of the feed, which every server's reader reads as one batch (rows
// are what a read costs, and a group of a busy account is many members).
// Their ids stay consecutive in the members' order; the row's time is the
// latest of theirs.
func (a *liveArgs) addJoined(l fleet.LiveAppend) error {
	last := len(a.accts) - 1
	if last < 0 || a.accts[last] != l.AccountID {
		return a.add(l)
	}
	b, err := liveJSON(l.Items)
	if err != nil {
		return err
	}
	// Two JSON arrays, [x] and [y], are one: [x,y].
	a.items[last] = a.items[last][:len(a.items[last])-1] + "," + b[1:]
	a.ns[last] += int64(len(l.Items))
	a.ats[last] = max(a.ats[last], toDB(l.At))
	a.total += int64(len(l.Items))
	return nil
}

func (a *liveArgs) addJSON(accountID, items string, n int, at time.Time) {
	a.offs, a.ns, a.accts, a.items, a.ats = append(a.offs, a.total), append(a.ns, int64(n)), append(a.accts, accountID),
		append(a.items, items), append(a.ats, toDB(at))
	a.total += int64(n)
}

// liveJSON is items as live_reports.items holds them.
func liveJSON(items []fleet.StreamItem) (string, error) {
	return string(appendLiveItems(make([]byte, 0, 256*len(items)), items)), nil
}

// appendLive appends one ingest's reports to the feed, in one statement
// with the appends that arrived while the last was on its way
// (liveAppender), and returns once they are in the feed.
func (e *pgEngine) appendLive(ctx context.Context, accountID string, items []fleet.StreamItem, at time.Time) error {
	if len(items) == 0 {
		return nil
	}
	b, err := liveJSON(items)
	if err != nil {
		return err
	}
	me := &liveWaiter{accountID: accountID, items: b, n: len(items), at: at}
	a := &e.liveAppend
	a.mu.Lock()
	if a.busy {
		me.done = make(chan struct{})
		a.waiting = append(a.waiting, me)
		a.mu.Unlock()
		<-me.done // bounded by the statement's timeout
		if me.lead != nil {
			e.leadLiveAppend(me.lead)
		}
		return me.err
	}
	a.busy = true
	a.mu.Unlock()
	e.runLiveAppend([]*liveWaiter{me})
	return me.err
}

// leadLiveAppend sends the statement of batch, handed on by the last
// one's lead, once liveLinger has passed since that one was sent, with
// the appends that arrived meanwhile.
func (e *pgEngine) leadLiveAppend(batch []*liveWaiter) {
	a := &e.liveAppend
	e.runLiveAppend(linger(&a.mu, &a.waiting, batch, a.lastSend, liveLinger))
}

// runLiveAppend sends one statement for batch (whose first waiter is the
// caller) and passes the appender on, as runQuotaBatch does.
func (e *pgEngine) runLiveAppend(batch []*liveWaiter) {
	e.liveAppend.lastSend = time.Now()
	args := &liveArgs{}
	for _, w := range batch {
		args.addJSON(w.accountID, w.items, w.n, w.at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), quotaTimeout)
	e.trips.add(tripStatement)
	var rows int64
	var notified string
	err := e.fast.QueryRowContext(ctx, appendLiveSQL, args.total, args.offs, args.ns, args.accts, args.items, args.ats).Scan(&rows, &notified)
	cancel()
	if err == nil && rows != int64(len(batch)) {
		err = fmt.Errorf("sqlstore: live feed: appended %d rows of %d", rows, len(batch))
	}
	for _, w := range batch {
		w.err = wrap(err, "append to the live feed")
	}
	a := &e.liveAppend
	a.mu.Lock()
	var next []*liveWaiter
	if n := min(len(a.waiting), maxQuotaBatch); n > 0 {
		next = a.waiting[:n:n]
		a.waiting = a.waiting[n:]
		if len(a.waiting) == 0 {
			a.waiting = nil
		}
	} else {
		a.busy = false
	}
	a.mu.Unlock()
	for _, w := range batch[1:] {
		close(w.done)
	}
	if next != nil {
		next[0].lead = next
		close(next[0].done)
	}
}

// followLive follows the feed on a connection of its own, which listens
// on liveChannel.
func (e *pgEngine) followLive(ctx context.Context, since time.Time, deliver func([]fleet.LiveBatch)) error {
	cfg, err := pgx.ParseConfig(e.dsn)
	if err != nil {
		return fmt.Errorf("sqlstore: live feed: %w", err)
	}
	// Reads by the primary key, never a scan of the feed and a sort, which
	// PostgreSQL chose for a table its statistics said was small.
	cfg.RuntimeParams["enable_seqscan"] = "off"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("sqlstore: live feed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+liveChannel); err != nil {
		return fmt.Errorf("sqlstore: live feed: %w", err)
	}
	listeners := fleet.LiveListeners(ctx)
	// Ids keep increasing across the servers' restarts and after the ids
	// a server gave before it followed the feed: they are at least the
	// start time in microseconds, times 1000 (as fleet's own ids).
	var last int64
	if err := conn.QueryRow(ctx, `UPDATE live_seq SET last = GREATEST(last, $1::bigint) WHERE id = 1 RETURNING last`,
		time.Now().UnixMicro()*1000).Scan(&last); err != nil {
		return fmt.Errorf("sqlstore: live feed: %w", err)
	}
	// What the feed holds since `since`, up to last, first.
	var first []fleet.LiveBatch
	after := int64(0)
	for {
		bs, err := readLive(ctx, conn, after, last, toDB(since))
		if err != nil {
			return err
		}
		first = append(first, bs...)
		if len(bs) < liveReadLimit {
			break
		}
		after = int64(bs[len(bs)-1].FirstID)
	}
	deliver(first)
	for {
		for {
			e.trips.add(tripStatement)
			bs, err := readLive(ctx, conn, last, -1, 0)
			if err != nil {
				return err
			}
			if len(bs) > 0 {
				b := bs[len(bs)-1]
				last = int64(b.FirstID) + int64(len(b.Items)) - 1
				deliver(bs)
			}
			if len(bs) < liveReadLimit {
				break
			}
		}
		read := time.Now()
		wctx, cancel := context.WithTimeout(ctx, liveIdle)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("sqlstore: live feed: %w", err)
		}
		if wait := livePace(listeners) - time.Since(read); err == nil && wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
}

// readLive reads the batches with first ids after `after` (and at most
// upTo unless it is -1) created at or after since, in id order. Following
// (upTo -1, since 0), it reads by the primary key alone: with the other
// conditions PostgreSQL chose live_reports_created, and read every row of
// the replay window on each read.
func readLive(ctx context.Context, conn *pgx.Conn, after, upTo, since int64) ([]fleet.LiveBatch, error) {
	var rows pgx.Rows
	var err error
	if upTo < 0 && since == 0 {
		rows, err = conn.Query(ctx, `SELECT first_id, account_id, items, created_at FROM live_reports
		WHERE first_id > $1::bigint ORDER BY first_id LIMIT `+fmt.Sprint(liveReadLimit), after)
	} else {
		rows, err = conn.Query(ctx, `SELECT first_id, account_id, items, created_at FROM live_reports
		WHERE first_id > $1::bigint AND ($2::bigint < 0 OR first_id <= $2::bigint) AND created_at >= $3::bigint
		ORDER BY first_id LIMIT `+fmt.Sprint(liveReadLimit), after, upTo, since)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: live feed: %w", err)
	}
	defer rows.Close()
	var out []fleet.LiveBatch
	for rows.Next() {
		var firstID, created int64
		var accountID, items string
		if err := rows.Scan(&firstID, &accountID, &items, &created); err != nil {
			return nil, fmt.Errorf("sqlstore: live feed: %w", err)
		}
		li, err := parseLiveItems(items)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: live feed: row %d: %w", firstID, err)
		}
		b := fleet.LiveBatch{FirstID: uint64(firstID), AccountID: accountID, At: fromDB(created), Items: make([]fleet.StreamItem, len(li))}
		for i, it := range li {
			b.Items[i] = fleet.StreamItem{VehicleID: it.VehicleID, Record: it.Record}
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: live feed: %w", err)
	}
	return out, nil
}

// purgeLive deletes the rows appended before before.
func (e *pgEngine) purgeLive(ctx context.Context, before time.Time) (int, error) {
	return e.purge(ctx, `DELETE FROM live_reports WHERE created_at < ?`, before, "purge the live feed")
}
