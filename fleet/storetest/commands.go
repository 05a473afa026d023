package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunCommands checks the commands area (fleet.CommandTx and
// fleet.CommandStore): commands scoped by account, every field
// round-tripped and copied; a device's list newest first with its status
// filter and cursor; a device's queue in order by status; updates of the
// mutable fields only; a claim (read queued, update to sent) taken once by
// racing transactions; a device's commands deleted; rollback; the
// expiring queue; the purge.
func RunCommands(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"CommandRoundTrip", testCommandRoundTrip},
		{"CommandsScopedByAccount", testCommandsScoped},
		{"CommandsListAndQueue", testCommandsList},
		{"CommandClaimOnce", testCommandClaimOnce},
		{"DeleteCommands", testDeleteCommands},
		{"CommandsRollback", testCommandsRollback},
		{"CommandsExpiringAndPurge", testCommandsExpiring},
	})
}

// NewCommand returns a queued command of the account's device, made at T0
// and expiring a day later, that is not stored yet.
func NewCommand(accountID, deviceID, typ string) fleet.Command {
	return fleet.Command{ID: fleet.NewID(fleet.PrefixCommand), AccountID: accountID, DeviceID: deviceID, Type: typ,
		Status: fleet.CommandQueued, CreatedBy: "key_test", CreatedAt: T0, ExpiresAt: T0.Add(24 * time.Hour)}
}

// MustCommand stores c and returns it.
func MustCommand(tb testing.TB, s fleet.Store, c fleet.Command) fleet.Command {
	tb.Helper()
	if err := s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateCommand(c) }); err != nil {
		tb.Fatalf("create command: %v", err)
	}
	return c
}

func getCommand(s fleet.Store, accountID, id string) (fleet.Command, error) {
	var c fleet.Command
	err := s.View(ctx, func(tx fleet.Tx) (err error) { c, err = tx.Command(accountID, id); return err })
	return c, err
}

func commandIDs(cs []fleet.Command) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func testCommandRoundTrip(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d := MustDevice(t, s, a.ID, "cmd-rt", "")
	sec, idx, on := 30, 2, true
	sent, done := T0.Add(time.Second), T0.Add(2*time.Second)
	out := NewCommand(a.ID, d.ID, fleet.CommandOutput)
	out.Index, out.On, out.Seconds = &idx, &on, &sec
	custom := NewCommand(a.ID, d.ID, fleet.CommandCustom)
	custom.Hex, custom.Force, custom.Result, custom.Error = "0a0b", true, "OK\r\nDOUT1:1", "held: 40 km/h"
	custom.SentAt, custom.DeliveredAt, custom.FinishedAt = &sent, &done, &done
	text := NewCommand(a.ID, d.ID, fleet.CommandCustom)
	text.Text = "getver"
	off := false
	text.On = &off
	for _, c := range []fleet.Command{out, custom, text} {
		MustCommand(t, s, c)
		got, err := getCommand(s, a.ID, c.ID)
		is.NoErr(err)
		is.Equal(got, c) // every field round-trips
	}
	// What the store returns shares no memory with it.
	got, err := getCommand(s, a.ID, out.ID)
	is.NoErr(err)
	*got.Index = 7
	again, _ := getCommand(s, a.ID, out.ID)
	is.Equal(*again.Index, 2)
	is.Equal(fleet.ErrorCode(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateCommand(out) })), fleet.CodeConflict)
	_, err = getCommand(s, a.ID, fleet.NewID(fleet.PrefixCommand))
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)

	// UpdateCommand stores the mutable fields only.
	changed := out
	changed.Type, changed.CreatedBy, changed.DeviceID = fleet.CommandReboot, "someone", "dev_other"
	changed.Status, changed.Result, changed.Error, changed.SentAt, changed.DeliveredAt = fleet.CommandDelivered, "done", "", &sent, &done
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateCommand(changed) }))
	got, _ = getCommand(s, a.ID, out.ID)
	want := out
	want.Status, want.Result, want.SentAt, want.DeliveredAt = fleet.CommandDelivered, "done", &sent, &done
	is.Equal(got, want)
}

func testCommandsScoped(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	d := MustDevice(t, s, a.ID, "cmd-scope", "")
	c := MustCommand(t, s, NewCommand(a.ID, d.ID, fleet.CommandReboot))
	_, err := getCommand(s, b.ID, c.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound) // another account's
	other := c
	other.AccountID, other.Status = b.ID, fleet.CommandCancelled
	is.Equal(fleet.ErrorCode(s.Update(ctx, func(tx fleet.Tx) error { return tx.UpdateCommand(other) })), fleet.CodeNotFound)
	err = s.View(ctx, func(tx fleet.Tx) error {
		cs, err := tx.Commands(b.ID, d.ID, fleet.CommandFilter{}, fleet.Page{Limit: 10})
		is.NoErr(err)
		is.Equal(len(cs), 0)
		cs, err = tx.DeviceCommands(b.ID, d.ID, fleet.CommandQueued, 10)
		is.NoErr(err)
		is.Equal(len(cs), 0)
		return nil
	})
	is.NoErr(err)
	n := 0
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { n, err = tx.DeleteCommands(b.ID, d.ID); return err }))
	is.Equal(n, 0)
	_, err = getCommand(s, a.ID, c.ID)
	is.NoErr(err)
	missing := NewCommand(fleet.NewID(fleet.PrefixAccount), d.ID, fleet.CommandReboot)
	is.Equal(fleet.ErrorCode(s.Update(ctx, func(tx fleet.Tx) error { return tx.CreateCommand(missing) })), fleet.CodeNotFound)
}

func testCommandsList(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d, e := MustDevice(t, s, a.ID, "cmd-list-1", ""), MustDevice(t, s, a.ID, "cmd-list-2", "")
	var all []fleet.Command
	for i := range 7 {
		c := NewCommand(a.ID, d.ID, fleet.CommandPositionRequest)
		if i%2 == 1 {
			c.Status = fleet.CommandSent
		}
		all = append(all, MustCommand(t, s, c))
		MustCommand(t, s, NewCommand(a.ID, e.ID, fleet.CommandReboot)) // another device's
	}
	err := s.View(ctx, func(tx fleet.Tx) error {
		// Newest first, by cursor, without skipping or repeating.
		var walked []string
		after := ""
		for {
			cs, err := tx.Commands(a.ID, d.ID, fleet.CommandFilter{}, fleet.Page{After: after, Limit: 3, Newest: true})
			is.NoErr(err)
			walked = append(walked, commandIDs(cs)...)
			if len(cs) < 3 {
				break
			}
			after = cs[len(cs)-1].ID
		}
		is.Equal(len(walked), 7)
		for i := range walked {
			is.Equal(walked[i], all[6-i].ID)
		}
		sent, err := tx.Commands(a.ID, d.ID, fleet.CommandFilter{Status: fleet.CommandSent}, fleet.Page{Limit: 10, Newest: true})
		is.NoErr(err)
		is.Equal(commandIDs(sent), []string{all[5].ID, all[3].ID, all[1].ID})
		// The queue: in order, by status, bounded.
		q, err := tx.DeviceCommands(a.ID, d.ID, fleet.CommandQueued, 3)
		is.NoErr(err)
		is.Equal(commandIDs(q), []string{all[0].ID, all[2].ID, all[4].ID})
		q, err = tx.DeviceCommands(a.ID, d.ID, fleet.CommandSent, 10)
		is.NoErr(err)
		is.Equal(commandIDs(q), []string{all[1].ID, all[3].ID, all[5].ID})
		return nil
	})
	is.NoErr(err)
}

func testCommandClaimOnce(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d := MustDevice(t, s, a.ID, "cmd-claim", "")
	const n = 5
	for range n {
		MustCommand(t, s, NewCommand(a.ID, d.ID, fleet.CommandPositionRequest))
	}
	// Racing claims: each reads the queue and moves what it read to sent.
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var took []string
			err := s.Update(ctx, func(tx fleet.Tx) error {
				took = took[:0]
				q, err := tx.DeviceCommands(a.ID, d.ID, fleet.CommandQueued, n)
				if err != nil {
					return err
				}
				for _, c := range q {
					c.Status = fleet.CommandSent
					if err := tx.UpdateCommand(c); err != nil {
						return err
					}
					took = append(took, c.ID)
				}
				return nil
			})
			if err != nil && fleet.ErrorCode(err) != fleet.CodeUnavailable {
				errs <- err
				return
			}
			if err == nil {
				mu.Lock()
				for _, id := range took {
					claimed[id]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		is.NoErr(err)
	}
	is.Equal(len(claimed), n) // every command claimed
	for id, k := range claimed {
		if k != 1 {
			t.Errorf("command %s claimed %d times", id, k)
		}
	}
}

func testDeleteCommands(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d, e := MustDevice(t, s, a.ID, "cmd-del-1", ""), MustDevice(t, s, a.ID, "cmd-del-2", "")
	c1 := MustCommand(t, s, NewCommand(a.ID, d.ID, fleet.CommandReboot))
	MustCommand(t, s, NewCommand(a.ID, d.ID, fleet.CommandReboot))
	kept := MustCommand(t, s, NewCommand(a.ID, e.ID, fleet.CommandReboot))
	n := 0
	is.NoErr(s.Update(ctx, func(tx fleet.Tx) (err error) { n, err = tx.DeleteCommands(a.ID, d.ID); return err }))
	is.Equal(n, 2)
	_, err := getCommand(s, a.ID, c1.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, err = getCommand(s, a.ID, kept.ID)
	is.NoErr(err)
}

func testCommandsRollback(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a := MustAccount(t, s)
	d := MustDevice(t, s, a.ID, "cmd-rb", "")
	old := MustCommand(t, s, NewCommand(a.ID, d.ID, fleet.CommandReboot))
	c := NewCommand(a.ID, d.ID, fleet.CommandReboot)
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx fleet.Tx) error {
		if err := tx.CreateCommand(c); err != nil {
			return err
		}
		moved := old
		moved.Status = fleet.CommandCancelled
		if err := tx.UpdateCommand(moved); err != nil {
			return err
		}
		if _, err := tx.DeleteCommands(a.ID, "dev_none"); err != nil {
			return err
		}
		return boom
	})
	is.True(errors.Is(err, boom))
	_, err = getCommand(s, a.ID, c.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	got, err := getCommand(s, a.ID, old.ID)
	is.NoErr(err)
	is.Equal(got.Status, fleet.CommandQueued)
	err = s.View(ctx, func(tx fleet.Tx) error {
		q, err := tx.DeviceCommands(a.ID, d.ID, fleet.CommandQueued, 10)
		is.Equal(commandIDs(q), []string{old.ID})
		return err
	})
	is.NoErr(err)
}

func testCommandsExpiring(t *testing.T, s fleet.Store) {
	is := is.New(t)
	a, b := MustAccount(t, s), MustAccount(t, s)
	d, e := MustDevice(t, s, a.ID, "cmd-exp-1", ""), MustDevice(t, s, b.ID, "cmd-exp-2", "")
	soon := NewCommand(a.ID, d.ID, fleet.CommandReboot)
	soon.ExpiresAt = T0.Add(time.Minute)
	other := NewCommand(b.ID, e.ID, fleet.CommandReboot)
	other.ExpiresAt = T0.Add(2 * time.Minute)
	late := NewCommand(a.ID, d.ID, fleet.CommandReboot)
	late.ExpiresAt = T0.Add(time.Hour)
	sent := NewCommand(a.ID, d.ID, fleet.CommandReboot)
	sent.ExpiresAt, sent.Status = T0.Add(time.Minute), fleet.CommandSent
	for _, c := range []fleet.Command{soon, other, late, sent} {
		MustCommand(t, s, c)
	}
	got, err := s.ExpiringCommands(ctx, T0.Add(2*time.Minute), 10)
	is.NoErr(err)
	is.Equal(commandIDs(got), []string{soon.ID, other.ID}) // queued ones, every account's, at or before
	got, err = s.ExpiringCommands(ctx, T0.Add(2*time.Minute), 1)
	is.NoErr(err)
	is.Equal(len(got), 1)
	// The purge deletes by creation time, whatever the status.
	young := NewCommand(a.ID, d.ID, fleet.CommandReboot)
	young.CreatedAt = T0.Add(time.Hour)
	MustCommand(t, s, young)
	n, err := s.PurgeCommands(ctx, T0.Add(time.Minute))
	is.NoErr(err)
	is.Equal(n, 4)
	_, err = getCommand(s, a.ID, young.ID)
	is.NoErr(err)
	_, err = getCommand(s, a.ID, sent.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}
