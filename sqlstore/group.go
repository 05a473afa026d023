package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fleetkit/fleetapi/fleet"
)

// Group commit (SQLite; PostgreSQL's location writes use the same
// machinery, with the differences group_postgres.go describes).
//
// SQLite has one writer and each synced commit costs one fsync, so write
// transactions that run one after another cap the writes per second at
// the disk's syncs per second. Instead, write transactions that arrive
// while the writer is busy join the group that is forming: when the writer
// is free, the group's members run one after another in ONE database
// transaction, each inside its own SAVEPOINT, and then the group commits
// with one sync. A member whose function fails (or panics) is rolled back
// to its savepoint, alone, and gets its own error; every member returns
// only after the group's COMMIT has reached the disk, with the commit's
// error if it failed. So "Update returned nil" still means "durable".
//
// Bounds: a group holds at most maxGroup members (later arrivals form the
// next group), and a lone writer is not delayed: when the writer is free a
// caller starts at once, alone. No caller waits for others to arrive; a
// group forms only while the previous one runs and syncs (about one fsync),
// which is how long its first member has waited at most, besides the
// length of the group ahead of it.
//
// Isolation is unchanged: members run one at a time on the one writer
// connection, each seeing the writes of the members before it, as it would
// have seen them committed had they run alone. A member whose context is
// done before its turn does not run and gets the context's error; once
// running, its context is checked before each of its statements, which
// SQLite does not interrupt.
//
// When the group's transaction cannot go on (SQLite rolled it back itself,
// on a full disk for instance, so that a savepoint cannot be rolled back
// to), the
// members whose functions had succeeded, and those not yet run, run again
// in a later group, as a PostgreSQL transaction that was aborted to keep
// it serialisable runs again: fleet.Store allows a store to run fn more
// than once.

// A claim of webhook deliveries is a lease (engine.writeLease): a crash
// that loses it only makes its deliveries due again. It joins groups too;
// a group of leases only commits without waiting for the disk, and a group
// with any other member syncs for all.

// Turns between accounts (SQLite).
//
// A write transaction that stores many location points takes the writer
// for a long time: about 85 ms for a bulk batch of 10,000 points. In a
// group, every member waits for the whole group; and the groups that form
// behind a busy writer run in their order of arrival. So one account
// posting bulk batches from several connections at once filled the groups
// ahead of another account's one-point report, which waited for all of
// them (1.5 s with four uploaders). The service says what each location
// write is (fleet.WriteCost in its context: the account and the points),
// and the writer serves accounts in turn:
//
//   - A bulk write (at least bulkPoints points) does not join the forming
//     group. It waits in its account's queue; the accounts with bulk
//     writes waiting take turns, and when the writer's turn is the bulk
//     writes', it runs a group of them taken one per account in turn (an
//     account served goes to the back of the line) until the group holds
//     bulkBudget points (at least one write; a batch of 10,000 is alone).
//   - Every other write joins the forming group, as before.
//   - The writer alternates: after a group of bulk writes, the group of
//     other writes that formed meanwhile; after that, bulk writes again,
//     if any wait. Neither kind waits for more than one group of the other.
//
// So a one-point report waits for at most one bulk group and one group of
// other writes besides its own, however many bulk writes are queued; and
// an account with many bulk writes queued delays another account's bulk
// write by one of its own at most (in points, by at most bulkBudget).
// A bulk write is still one transaction, committed whole or not at all,
// and a 2xx still follows its commit: only its place in the line
// changes. Bulk groups are synced like any other, one sync for the group.
// Writes without a cost (everything but location ingest) are never bulk.
// The service itself sends an account's bulk batches one at a time (its
// bulk gate, fleet/gate.go), so a line holds one write of each Service
// over the store; the turns order the accounts, and keep bulk writes out
// of the groups the other writes wait in.

// maxGroup bounds how many write transactions share one commit.
const maxGroup = 256

// bulkPoints is how many location points make a write a bulk one, which
// waits for its account's turn (fleet.BulkPoints: a write under it takes
// well under a millisecond of the writer); bulkBudget is how many points a
// group of bulk writes may hold (fleet.MaxPointsPerBulkBatch: one whole
// bulk batch).
const (
	bulkPoints = fleet.BulkPoints
	bulkBudget = fleet.MaxPointsPerBulkBatch
)

// groupCommit forms and runs the groups of one SQLite store.
type groupCommit struct {
	db    *sql.DB    // the writer: one connection
	sh    *shared    // the store's dialect, claim statements, fairness
	stmts *stmtCache // the writer's prepared statements
	cache *rowCache  // the writer's row cache (rowcache.go)
	mu    sync.Mutex
	queue []*group // groups of other writes waiting for the writer, oldest first
	// runners is how many groups may run at once (SQLite: 1, its one
	// writer; PostgreSQL: pgGroupRunners), running how many do.
	runners, running int
	// bulkRunners is how many of them may run groups of bulk writes
	// (SQLite: its one; PostgreSQL: all but one, kept for the other
	// writes, so that a one-point report never waits for bulk writes to
	// end), bulkRunning how many do.
	bulkRunners, bulkRunning int
	// policy is what the database makes of a group: how it begins,
	// prepares its members, undoes and keeps a member's work, and which
	// failures run members again (sqlitePolicy, pgPolicy).
	policy groupPolicy
	// maxMembers bounds a group of other writes (maxGroup).
	maxMembers int
	// caches are PostgreSQL's row caches not in use by a group (one is
	// taken for each group, emptied: takeCache).
	caches []*rowCache
	// lanes hold each account's bulk writes waiting for the writer, oldest
	// first; turns lists the accounts that have some, in the order they
	// are served. bulkTurn says that the writer's next group is a bulk one
	// when both kinds wait.
	lanes    map[string][]*member
	turns    []string
	bulkTurn bool
	// commits counts the groups that committed, members their members;
	// deferred the members put off to the next group (deferRepeats),
	// fallbacks the groups whose write-sets failed to apply and that ran
	// again one by one.
	commits, members, deferred, fallbacks atomic.Int64
}

// group is one transaction shared by its members.
type group struct {
	members []*member
	conn    *sql.Conn // the writer connection, held for the group
	relaxed bool      // every member is a lease: commit without a sync
	bulk    bool      // a group of bulk writes
	tx      *sql.Tx
	// ctx bounds the group's own statements (PostgreSQL: the store's
	// timeout); cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	// open says that the last member's savepoint is still open (PostgreSQL
	// releases it with the next member's SAVEPOINT, in one round trip).
	open bool
	// locked holds the vehicles the group locked before its members ran
	// (PostgreSQL: lockVehicles).
	locked map[string]bool
	// cache is the row cache its members read through (rowcache.go): the
	// writer's on SQLite, one for the group alone on PostgreSQL.
	cache *rowCache
	// broken is set when the transaction can no longer be used.
	broken error
	// writeSets says that the members' write-sets are staged and applied
	// together before the commit, and that a member takes its savepoint
	// only before its first write of its own (PostgreSQL:
	// group_writes.go).
	writeSets bool
}

// member is one caller's write transaction in a group.
type member struct {
	ctx   context.Context
	fn    func(*tx) error
	lease bool // its commit need not reach the disk (see engine.writeLease)
	// account, points and vehicles are its fleet.WriteCost (points 0
	// without one).
	account  string
	points   int
	vehicles []string
	// state is waiting until the group's runner takes the member
	// (running) or its caller leaves before that (left); whichever comes
	// first wins, so fn never runs for a caller that has gone.
	state atomic.Int32
	done  chan struct{} // closed when the group has committed or failed
	// ran reports that fn ran and its savepoint was released; fnErr is the
	// error fn returned (its work was rolled back); panicked holds what fn
	// panicked with, to go on in the caller's goroutine.
	ran      bool
	fnErr    error
	panicked any
	// result is what Update returns; rerun asks for another group.
	result error
	rerun  bool
	// retry reports that fn failed because PostgreSQL aborted its
	// statements for a deadlock or a serialisation failure: its savepoint
	// was rolled back, and it runs again in a later group.
	retry bool
	// staged holds the write-sets fn staged in a group of write-sets.
	staged *memberWrites
}

const (
	memberWaiting int32 = iota
	memberRunning
	memberLeft
)

// update runs fn as a member of a group, again (in a later group) when the
// group's transaction broke before committing fn's work.
func (gc *groupCommit) update(ctx context.Context, lease bool, fn func(*tx) error) error {
	for attempt := 1; ; attempt++ {
		m, left := gc.join(ctx, lease, fn)
		if left {
			return fmt.Errorf("sqlstore: wait for the writer: %w", ctx.Err())
		}
		if m.panicked != nil {
			panic(m.panicked)
		}
		if !m.rerun || attempt == maxAttempts {
			return m.result
		}
		if gc.policy.aborts() { // the database aborted it: let the other side go on
			if err := backoff(ctx, attempt); err != nil {
				return m.result
			}
		}
	}
}

// join adds a member to the forming group and waits for the group's end.
// One goroutine, the group's runner, runs the members' functions one after
// another, so that no member waits for its own goroutine to be scheduled
// to take its turn. When ctx ends before the runner takes the member, the
// caller leaves (left) and fn does not run; once fn runs, the caller waits
// for the group (fn's statements check ctx, so it ends soon).
func (gc *groupCommit) join(ctx context.Context, lease bool, fn func(*tx) error) (_ *member, left bool) {
	m := &member{ctx: ctx, fn: fn, lease: lease, done: make(chan struct{})}
	if c, ok := fleet.WriteCostOf(ctx); ok {
		m.account, m.points, m.vehicles = c.AccountID, c.Points, c.Vehicles
	}
	bulk := m.points >= bulkPoints && !gc.sh.unfair.Load()
	gc.mu.Lock()
	var g *group
	lead := gc.running < gc.runners && (!bulk || gc.bulkRunning < gc.bulkRunners)
	switch {
	case lead: // the writer is free: m runs at once, alone
		gc.running++
		if bulk {
			gc.bulkRunning++
		}
		gc.bulkTurn = !bulk
		g = &group{members: []*member{m}, bulk: bulk}
	case bulk:
		if gc.lanes == nil {
			gc.lanes = map[string][]*member{}
		}
		if len(gc.lanes[m.account]) == 0 {
			gc.turns = append(gc.turns, m.account)
		}
		gc.lanes[m.account] = append(gc.lanes[m.account], m)
	default:
		if n := len(gc.queue); n > 0 && len(gc.queue[n-1].members) < gc.maxMembers {
			g = gc.queue[n-1]
		} else {
			g = &group{}
			gc.queue = append(gc.queue, g)
		}
		g.members = append(g.members, m)
	}
	gc.mu.Unlock()
	if lead {
		// In its own goroutine, so that the leader too stops waiting at
		// its deadline when the writer cannot begin (a lock held by
		// another process, up to the busy timeout).
		go gc.runGroups(g)
	}
	select {
	case <-m.done:
		return m, false
	case <-ctx.Done():
		if m.state.CompareAndSwap(memberWaiting, memberLeft) {
			return m, true
		}
		<-m.done // fn is running or ran: its result is the group's
		return m, false
	}
}

// runGroups runs group g, then every group that formed meanwhile, until
// none waits for the writer.
func (gc *groupCommit) runGroups(g *group) {
	for g != nil {
		gc.runGroup(g)
		g = gc.next(g)
	}
}

// runGroup runs group g's transaction: begin, each member in its
// savepoint, commit; the group's members are fixed (g is out of the
// queue). When the transaction cannot begin, every member gets the error.
func (gc *groupCommit) runGroup(g *group) {
	// The transaction outlives each member's context, so it has none (on
	// PostgreSQL, the store's timeout bounds it).
	gc.policy.open(gc, g)
	bg := g.ctx
	conn, err := gc.db.Conn(bg)
	if err == nil {
		g.conn = conn
		if g.relaxed {
			// Only leases: in WAL mode the next synced commit syncs this
			// one too, and a crash before that drops it whole.
			_, err = conn.ExecContext(bg, "PRAGMA synchronous=NORMAL")
		}
	}
	if err == nil {
		g.tx, err = g.conn.BeginTx(bg, gc.policy.txOptions())
		gc.trip(tripBegin)
		if err == nil {
			if err = gc.policy.begun(g); err != nil {
				g.tx.Rollback()
			}
		}
	}
	if err != nil {
		g.cache.reset()
		g.broken = fmt.Errorf("sqlstore: begin: %w", err)
		for _, m := range g.members {
			m.result = g.broken
			// A connection that broke: a later group may get a good one
			// (the members ran nothing).
			m.rerun = gc.policy.aborts() && g.conn != nil
		}
		gc.finish(g)
		return
	}
	gc.runMembers(g)
	if g.writeSets && g.broken == nil {
		if err := gc.flush(g); err != nil {
			// Again, at once, one by one: each member in its savepoint,
			// its write-sets replayed.
			gc.fallbacks.Add(1)
			g.tx.Rollback()
			gc.trip(tripRollback)
			g.cache.reset()
			g.writeSets, g.open, g.locked = false, false, nil
			for _, m := range g.members {
				m.ran, m.fnErr, m.panicked, m.retry, m.staged = false, nil, nil, false, nil
			}
			g.tx, err = g.conn.BeginTx(g.ctx, gc.policy.txOptions())
			gc.trip(tripBegin)
			if err != nil {
				g.broken = fmt.Errorf("sqlstore: begin: %w", err)
				for _, m := range g.members {
					m.result, m.rerun = g.broken, true
				}
				gc.finish(g)
				return
			}
			gc.runMembers(g)
		}
	}
	gc.commit(g)
}

// runMembers runs g's members in its transaction, after what the policy
// does before them (PostgreSQL locks their vehicles).
func (gc *groupCommit) runMembers(g *group) {
	gc.policy.beforeMembers(gc, g)
	for _, m := range g.members {
		gc.run(g, m)
	}
}

// run runs member m of g inside its savepoint. A panic of fn rolls its
// savepoint back, lets the group go on, and goes on in m's caller.
func (gc *groupCommit) run(g *group, m *member) {
	if !m.state.CompareAndSwap(memberWaiting, memberRunning) && m.state.Load() != memberRunning {
		return // its caller has left (a member runs again in a group that fell back)
	}
	if g.broken != nil {
		return
	}
	if err := m.ctx.Err(); err != nil {
		m.fnErr = fmt.Errorf("sqlstore: begin: %w", err)
		return
	}
	// Each member's savepoint is released before the next member's is
	// taken, so one name serves them all, and its statements are prepared
	// once.
	// The member's statements are not interrupted by its context: an
	// interrupted write breaks the group's transaction for every member
	// (and SQLite starts a goroutine per statement to watch a context).
	// The context is checked before each statement instead (tx.stop).
	t := &tx{ctx: context.WithoutCancel(m.ctx), stop: m.ctx, d: gc.sh.d, tx: g.tx, claim: &gc.sh.claim, stmts: gc.stmts, cache: g.cache, lockRows: gc.policy.aborts(), locked: g.locked, roundTrips: &gc.sh.trips}
	bg := &tx{ctx: g.ctx, d: gc.sh.d, tx: g.tx, stmts: gc.stmts}
	took := false // its savepoint
	savepoint := func() error {
		begin := "SAVEPOINT member"
		if g.open { // PostgreSQL: the previous member's, released in the same round trip
			begin = "RELEASE member; SAVEPOINT member"
			g.open = false
		}
		gc.trip(tripSavepoint)
		if _, err := bg.exec(begin); err != nil {
			g.broken = err
			return err
		}
		took = true
		return nil
	}
	if g.writeSets && len(m.vehicles) > 0 {
		// Its write-sets are staged, and its savepoint is taken before its
		// first write of its own, if any. (A write that names no vehicles
		// for the group to lock takes its savepoint first, as before.)
		m.staged = &memberWrites{}
		t.stage, t.lazy = m.staged, savepoint
	} else if savepoint() != nil {
		return
	}
	undo := func() {
		g.cache.memberUndone()
		m.staged = nil
		if !took {
			// It wrote nothing; but a statement of it may have failed,
			// which ends a PostgreSQL transaction: ask.
			gc.trip(tripStatement)
			if _, err := bg.exec("SELECT 1"); err != nil {
				g.broken = err
			}
			return
		}
		if err := gc.policy.undo(gc, bg); err != nil {
			g.broken = err
		}
	}
	panicked, err := callMember(m.fn, t)
	switch {
	case panicked != nil:
		m.panicked = panicked
		m.fnErr = errors.New("sqlstore: the transaction's function panicked")
		undo()
	case err != nil:
		m.fnErr = err
		m.retry = gc.policy.aborts() && t.retry
		undo()
	case !took: // wrote nothing of its own: nothing to release
		g.cache.memberKept()
		m.ran = true
	default:
		if err := gc.policy.keep(gc, g, bg); err != nil {
			g.broken = err
		} else {
			g.cache.memberKept()
			m.ran = true
		}
	}
}

// callMember calls fn, returning what it panicked with, if it did.
func callMember(fn func(*tx) error, t *tx) (panicked any, err error) {
	finished := false
	defer func() {
		if !finished {
			panicked = recover()
			if panicked == nil { // panic(nil) or runtime.Goexit
				panicked = errors.New("sqlstore: the transaction's function panicked")
			}
		}
	}()
	err = fn(t)
	finished = true
	return nil, err
}

// commit ends group g after its last member: COMMIT (or the rollback of a
// broken transaction), then each member's result.
func (gc *groupCommit) commit(g *group) {
	var err error
	retry := false
	if g.broken != nil {
		g.tx.Rollback() // SQLite has rolled it back already
		gc.trip(tripRollback)
		g.cache.reset()
	} else if err = g.tx.Commit(); err != nil {
		gc.trip(tripCommit)
		// PostgreSQL aborted the group as a whole (a deadlock or a
		// serialisation failure at commit): its members run again.
		retry = gc.policy.aborts() && classify(err) == errRetry
		err = fmt.Errorf("sqlstore: commit: %w", err)
		g.cache.reset()
	} else {
		gc.trip(tripCommit)
		gc.commits.Add(1)
		gc.members.Add(int64(len(g.members)))
	}
	for _, m := range g.members {
		switch {
		case m.retry:
			m.rerun, m.result = true, m.fnErr
		case m.fnErr != nil:
			m.result = m.fnErr
		case retry:
			m.rerun, m.result = true, err
		case g.broken != nil:
			m.rerun, m.result = true, fmt.Errorf("sqlstore: group transaction: %w", g.broken)
		default:
			m.result = err
		}
	}
	gc.finish(g)
}

// finish releases g's connection and its members.
func (gc *groupCommit) finish(g *group) {
	if g.cancel != nil {
		defer g.cancel()
	}
	gc.policy.close(gc, g)
	if g.conn != nil {
		if g.relaxed {
			if _, err := g.conn.ExecContext(context.Background(), "PRAGMA synchronous=FULL"); err != nil {
				// Never leave the writer without its syncs: the pool drops it.
				g.conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
		g.conn.Close()
	}
	for _, m := range g.members {
		close(m.done)
	}
}

// next takes the next group waiting for the writer, or frees the writer
// and returns nil: a group of bulk writes and a group of the others in
// turn while both kinds wait.
func (gc *groupCommit) next(done *group) *group {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if done.bulk {
		gc.bulkRunning--
	}
	switch {
	case len(gc.turns) > 0 && gc.bulkRunning < gc.bulkRunners && (gc.bulkTurn || len(gc.queue) == 0):
		gc.bulkTurn = false
		gc.bulkRunning++
		return gc.bulkGroup()
	case len(gc.queue) > 0:
		gc.bulkTurn = true
		g := gc.queue[0]
		gc.queue = gc.queue[1:]
		return g
	}
	gc.running--
	return nil
}

// bulkGroup takes waiting bulk writes, one per account in turn, until the
// group holds bulkBudget points or maxGroup members.
func (gc *groupCommit) bulkGroup() *group {
	g := &group{bulk: true}
	points := 0
	for len(gc.turns) > 0 && len(g.members) < gc.maxMembers {
		account := gc.turns[0]
		lane := gc.lanes[account]
		m := lane[0]
		if len(g.members) > 0 && points+m.points > bulkBudget {
			break
		}
		g.members = append(g.members, m)
		points += m.points
		gc.turns = gc.turns[1:]
		if lane = lane[1:]; len(lane) > 0 {
			gc.lanes[account] = lane
			gc.turns = append(gc.turns, account) // to the back of the line
		} else {
			delete(gc.lanes, account)
		}
	}
	return g
}

// waiting returns how many callers wait for the writer (tests).
func (gc *groupCommit) waiting() int {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	n := 0
	for _, g := range gc.queue {
		n += len(g.members)
	}
	for _, lane := range gc.lanes {
		n += len(lane)
	}
	return n
}

// groupPolicy is what differs between the databases whose writes
// groupCommit runs in groups: group.go forms and runs the groups, a
// policy says how one database's group begins, what runs before its
// members, how a member's savepoint is undone or kept, and whether the
// database aborts transactions to run again.
type groupPolicy interface {
	// open prepares g before its transaction begins: its context, its row
	// cache, whether it may commit without a sync (relaxed), its members
	// (a policy may defer some) and whether they stage write-sets.
	open(gc *groupCommit, g *group)
	// txOptions are the options of a group's transaction.
	txOptions() *sql.TxOptions
	// begun runs right after BEGIN; an error fails the group's members.
	begun(g *group) error
	// beforeMembers runs before the members, each time they run; it
	// breaks g (g.broken) when it fails.
	beforeMembers(gc *groupCommit, g *group)
	// undo rolls a member's savepoint back; keep ends the savepoint of a
	// member whose function succeeded.
	undo(gc *groupCommit, bg *tx) error
	keep(gc *groupCommit, g *group, bg *tx) error
	// aborts reports whether the database aborts transactions for
	// deadlocks and serialisation failures, which then run again (after a
	// backoff), and whose members lock what they read to write
	// (tx.lockRows).
	aborts() bool
	// close runs as g ends, committed or not.
	close(gc *groupCommit, g *group)
}

// sqlitePolicy is SQLite's: one writer, the writer's row cache checked
// against the file after BEGIN, a group of leases committed without a
// sync, savepoints released at once.
type sqlitePolicy struct{}

func (sqlitePolicy) open(gc *groupCommit, g *group) {
	g.ctx, g.cancel = context.Background(), func() {}
	g.relaxed = true
	for _, m := range g.members {
		g.relaxed = g.relaxed && m.lease
	}
	g.cache = gc.cache
}

func (sqlitePolicy) txOptions() *sql.TxOptions          { return nil }
func (sqlitePolicy) begun(g *group) error               { return g.cache.check(g.conn, g.tx) }
func (sqlitePolicy) beforeMembers(*groupCommit, *group) {}
func (sqlitePolicy) aborts() bool                       { return false }
func (sqlitePolicy) close(*groupCommit, *group)         {}

func (sqlitePolicy) undo(_ *groupCommit, bg *tx) error {
	if _, err := bg.exec("ROLLBACK TO member"); err != nil {
		return err
	}
	_, err := bg.exec("RELEASE member")
	return err
}

func (sqlitePolicy) keep(_ *groupCommit, _ *group, bg *tx) error {
	_, err := bg.exec("RELEASE member")
	return err
}
