package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

func openGroupTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newAccount(name string) fleet.Account {
	return fleet.Account{ID: fleet.NewID(fleet.PrefixAccount), CompanyName: name, Plan: fleet.PlanFree, CreatedAt: time.Unix(1700000000, 0).UTC()}
}

// holdWriter starts an Update that keeps the writer until release is
// closed, and returns once it holds it.
func holdWriter(t *testing.T, s *Store, release chan struct{}) <-chan error {
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Update(context.Background(), func(tx fleet.Tx) error {
			close(held)
			<-release
			return tx.CreateAccount(newAccount("holder"))
		})
	}()
	<-held
	return done
}

// waitForWaiting polls until n callers wait for the writer.
func waitForWaiting(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.sqlite().group.waiting() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d callers waiting, want %d", s.sqlite().group.waiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func accountExists(s *Store, id string) bool {
	err := s.View(context.Background(), func(tx fleet.Tx) error { _, err := tx.Account(id); return err })
	return err == nil
}

// TestGroupCommitSharesOneTransaction: writers that arrive while the writer
// is busy commit together, once; the one whose function fails gets its own
// error and only its work is rolled back.
func TestGroupCommitSharesOneTransaction(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	commits0, members0 := s.sqlite().group.commits.Load(), s.sqlite().group.members.Load()

	const n = 40
	accounts := make([]fleet.Account, n)
	errs := make([]error, n)
	boom := errors.New("member 7 fails")
	var wg sync.WaitGroup
	for i := range n {
		accounts[i] = newAccount("member")
		wg.Go(func() {
			errs[i] = s.Update(context.Background(), func(tx fleet.Tx) error {
				if err := tx.CreateAccount(accounts[i]); err != nil {
					return err
				}
				if i == 7 {
					return boom
				}
				return nil
			})
		})
	}
	waitForWaiting(t, s, n)
	close(release)
	wg.Wait()
	is.NoErr(<-holder)

	for i := range n {
		if i == 7 {
			is.Equal(errs[i], boom)                    // its own error
			is.True(!accountExists(s, accounts[i].ID)) // and its write undone
			continue
		}
		is.NoErr(errs[i])
		is.True(accountExists(s, accounts[i].ID))
	}
	is.Equal(s.sqlite().group.commits.Load()-commits0, int64(2))   // the holder's, then one for all the others
	is.Equal(s.sqlite().group.members.Load()-members0, int64(n+1)) // every member counted once
}

// TestGroupCommitBounded: no group holds more than maxGroup members.
func TestGroupCommitBounded(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	commits0 := s.sqlite().group.commits.Load()
	const n = maxGroup + 10
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			errs <- s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(newAccount("b")) })
		})
	}
	waitForWaiting(t, s, n)
	s.sqlite().group.mu.Lock()
	groups := len(s.sqlite().group.queue)
	s.sqlite().group.mu.Unlock()
	is.Equal(groups, 2) // 256 and 10
	close(release)
	wg.Wait()
	is.NoErr(<-holder)
	close(errs)
	for err := range errs {
		is.NoErr(err)
	}
	is.Equal(s.sqlite().group.commits.Load()-commits0, int64(3))
}

// TestGroupCommitPanicStaysWithItsCaller: a panicking member's panic goes on
// in its own goroutine; the rest of its group commits.
func TestGroupCommitPanicStaysWithItsCaller(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	a, b, c := newAccount("a"), newAccount("b"), newAccount("c")
	var wg sync.WaitGroup
	var errA, errC error
	panicked := make(chan any, 1)
	wg.Go(func() {
		errA = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(a) })
	})
	waitForWaiting(t, s, 1)
	wg.Go(func() {
		defer func() { panicked <- recover() }()
		s.Update(context.Background(), func(tx fleet.Tx) error {
			tx.CreateAccount(b)
			panic("boom")
		})
	})
	waitForWaiting(t, s, 2)
	wg.Go(func() {
		errC = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(c) })
	})
	waitForWaiting(t, s, 3)
	close(release)
	wg.Wait()
	is.NoErr(<-holder)
	is.Equal(<-panicked, "boom")
	is.NoErr(errA)
	is.NoErr(errC)
	is.True(accountExists(s, a.ID))
	is.True(!accountExists(s, b.ID)) // rolled back
	is.True(accountExists(s, c.ID))
}

// TestGroupCommitRerunsAfterBrokenTransaction: when the group's transaction
// is rolled back under it, the members that had succeeded run again and
// commit; the member that broke it gets its error.
func TestGroupCommitRerunsAfterBrokenTransaction(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	a, c := newAccount("a"), newAccount("c")
	var runsA int
	var errA, errB, errC error
	var wg sync.WaitGroup
	wg.Go(func() {
		errA = s.Update(context.Background(), func(tx fleet.Tx) error { runsA++; return tx.CreateAccount(a) })
	})
	waitForWaiting(t, s, 1)
	wg.Go(func() {
		errB = s.Update(context.Background(), func(ftx fleet.Tx) error {
			// What SQLite does on its own on a full disk or an interrupt.
			_, err := ftx.(*tx).tx.ExecContext(context.Background(), "ROLLBACK")
			if err != nil {
				return err
			}
			return sql.ErrTxDone
		})
	})
	waitForWaiting(t, s, 2)
	wg.Go(func() {
		errC = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(c) })
	})
	waitForWaiting(t, s, 3)
	close(release)
	wg.Wait()
	is.NoErr(<-holder)
	is.Equal(errB, sql.ErrTxDone)
	is.NoErr(errA)
	is.NoErr(errC)
	is.Equal(runsA, 2) // ran again in a later group
	is.True(accountExists(s, a.ID))
	is.True(accountExists(s, c.ID))
}

// TestLoneWriterNotDelayed: with nobody else waiting, an Update starts at
// once and commits alone.
func TestLoneWriterNotDelayed(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	c0, m0 := s.sqlite().group.commits.Load(), s.sqlite().group.members.Load()
	for range 5 {
		is.NoErr(s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(newAccount("l")) }))
	}
	is.Equal(s.sqlite().group.commits.Load()-c0, int64(5))
	is.Equal(s.sqlite().group.members.Load()-m0, int64(5))
}

// TestGroupMemberCancelledMidwayStopsAlone: a member whose context ends
// while its function runs fails at its next statement, with the context's
// error, and its work is undone; the group's other members, before and
// after it, commit with one transaction as usual (no statement was
// interrupted, so the group's transaction never broke).
func TestGroupMemberCancelledMidwayStopsAlone(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)
	commits0 := s.sqlite().group.commits.Load()

	before, after, first, second := newAccount("before"), newAccount("after"), newAccount("first"), newAccount("second")
	ctx, cancel := context.WithCancel(context.Background())
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() {
		errs[0] = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(before) })
	})
	waitForWaiting(t, s, 1)
	wg.Go(func() {
		errs[1] = s.Update(ctx, func(tx fleet.Tx) error {
			if err := tx.CreateAccount(first); err != nil {
				return err
			}
			cancel() // the client goes away between two statements
			return tx.CreateAccount(second)
		})
	})
	waitForWaiting(t, s, 2)
	wg.Go(func() {
		errs[2] = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(after) })
	})
	waitForWaiting(t, s, 3)
	close(release)
	wg.Wait()
	is.NoErr(<-holder)

	is.NoErr(errs[0])
	is.True(errors.Is(errs[1], context.Canceled)) // the member's own error
	is.NoErr(errs[2])
	is.True(accountExists(s, before.ID))
	is.True(accountExists(s, after.ID))
	is.True(!accountExists(s, first.ID))                         // undone with its savepoint
	is.True(!accountExists(s, second.ID))                        // never written
	is.Equal(s.sqlite().group.commits.Load()-commits0, int64(2)) // the holder's, then the group's: no rerun
}

// TestGroupMemberThatLeftNeverRuns: a caller whose context ends while it
// waits for the writer leaves with the context's error, and its function
// never runs, not even later in its group; the members around it commit.
func TestGroupMemberThatLeftNeverRuns(t *testing.T) {
	is := is.New(t)
	s := openGroupTestStore(t)
	release := make(chan struct{})
	holder := holdWriter(t, s, release)

	before, after := newAccount("before"), newAccount("after")
	ctx, cancel := context.WithCancel(context.Background())
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() {
		errs[0] = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(before) })
	})
	waitForWaiting(t, s, 1)
	leaving := make(chan struct{})
	wg.Go(func() {
		defer close(leaving)
		errs[1] = s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateAccount(newAccount("left")) })
	})
	waitForWaiting(t, s, 2)
	wg.Go(func() {
		errs[2] = s.Update(context.Background(), func(tx fleet.Tx) error { return tx.CreateAccount(after) })
	})
	waitForWaiting(t, s, 3)
	cancel()
	<-leaving // it left while the writer was still held
	close(release)
	is.NoErr(<-holder)
	wg.Wait()

	is.True(errors.Is(errs[1], context.Canceled))
	is.NoErr(errs[0])
	is.NoErr(errs[2])
	is.True(accountExists(s, before.ID))
	is.True(accountExists(s, after.ID))
	var n int
	is.NoErr(s.View(context.Background(), func(ftx fleet.Tx) error {
		return ftx.(*tx).tx.QueryRowContext(context.Background(), "SELECT count(*) FROM accounts WHERE company_name = 'left'").Scan(&n)
	}))
	is.Equal(n, 0) // its function never ran
}

// turnsRecorder queues labelled writes behind a held writer, one at a
// time (each waits before the next is sent), and records in which group
// each ran.
type turnsRecorder struct {
	t       *testing.T
	s       *Store
	release chan struct{}
	holder  <-chan error
	wg      sync.WaitGroup
	mu      sync.Mutex
	ran     []string
	sent    int
}

// queueBehindWriter holds the writer of a new store, with the turns
// between accounts off when unfair, for writes to queue behind it.
func queueBehindWriter(t *testing.T, unfair bool) *turnsRecorder {
	s := openGroupTestStore(t)
	s.unfair.Store(unfair)
	r := &turnsRecorder{t: t, s: s, release: make(chan struct{})}
	r.holder = holdWriter(t, s, r.release)
	return r
}

// write sends a write of account storing points (no fleet.WriteCost when
// account is "").
func (r *turnsRecorder) write(label, account string, points int) {
	ctx := context.Background()
	if account != "" {
		ctx = fleet.WithWriteCost(ctx, fleet.WriteCost{AccountID: account, Points: points})
	}
	r.sent++
	r.wg.Go(func() {
		err := r.s.Update(ctx, func(tx fleet.Tx) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.ran = append(r.ran, fmt.Sprintf("%s@%d", label, r.s.sqlite().group.commits.Load()))
			return nil
		})
		if err != nil {
			r.t.Error(err)
		}
	})
	waitForWaiting(r.t, r.s, r.sent)
}

// groups lets the writer go and returns the labels by group, in the order
// they ran: "A1 | o1 o2" is A1 in one group, then o1 and o2 in the next.
func (r *turnsRecorder) groups() string {
	close(r.release)
	if err := <-r.holder; err != nil {
		r.t.Fatal(err)
	}
	r.wg.Wait()
	var out []string
	last := ""
	for _, l := range r.ran {
		label, group, _ := strings.Cut(l, "@")
		if group != last && len(out) > 0 {
			out = append(out, "|")
		}
		last = group
		out = append(out, label)
	}
	return strings.Join(out, " ")
}

// TestBulkWritesTakeTurns: bulk writes wait for their account's turn, one
// account after the other, in groups of their own, and the writer
// alternates between them and the group of other writes: a write that is
// not bulk waits for one bulk group at most, whatever is queued.
func TestBulkWritesTakeTurns(t *testing.T) {
	r := queueBehindWriter(t, false)
	r.write("A1", "acc_a", 10_000)
	r.write("A2", "acc_a", 10_000)
	r.write("A3", "acc_a", 10_000)
	r.write("B1", "acc_b", 10_000)
	r.write("o1", "", 0)
	r.write("c1", "acc_c", 1) // a one-point report is no bulk write
	r.write("o2", "", 0)
	is.New(t).Equal(r.groups(), "A1 | o1 c1 o2 | B1 | A2 | A3")
}

// TestBulkGroupsFillInTurn: a group of bulk writes takes one of each
// account in turn until it holds a whole bulk batch's points.
func TestBulkGroupsFillInTurn(t *testing.T) {
	r := queueBehindWriter(t, false)
	r.write("A1", "acc_a", 4_000)
	r.write("A2", "acc_a", 4_000)
	r.write("A3", "acc_a", 4_000)
	r.write("B1", "acc_b", 4_000)
	r.write("C1", "acc_c", bulkPoints)
	r.write("A4", "acc_a", bulkPoints)
	is.New(t).Equal(r.groups(), "A1 B1 C1 | A2 A3 A4")
}

// TestUnfairWritesJoinInArrival: with the turns off (the benchmarks'
// baseline), every write joins the forming group, as before they existed.
func TestUnfairWritesJoinInArrival(t *testing.T) {
	r := queueBehindWriter(t, true)
	r.write("A1", "acc_a", 10_000)
	r.write("A2", "acc_a", 10_000)
	r.write("o1", "", 0)
	is.New(t).Equal(r.groups(), "A1 A2 o1")
}
