package memstore

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// commandTables hold the commands to devices, with each device's command
// ids in id order (queue order).
type commandTables struct {
	cmds     *table[fleet.Command]
	byDevice map[string][]string
}

func newCommandTables() *commandTables {
	return &commandTables{
		cmds: newTable("command", func(c fleet.Command) string { return c.ID },
			func(c fleet.Command) string { return c.AccountID }, fleet.Command.Clone),
		byDevice: map[string][]string{},
	}
}

func (ct *commandTables) index(deviceID, id string) {
	ids := ct.byDevice[deviceID]
	i, _ := slices.BinarySearch(ids, id)
	ct.byDevice[deviceID] = slices.Insert(ids, i, id)
}

func (ct *commandTables) unindex(deviceID, id string) {
	ids := ct.byDevice[deviceID]
	if i, ok := slices.BinarySearch(ids, id); ok {
		ids = slices.Delete(ids, i, i+1)
	}
	if len(ids) == 0 {
		delete(ct.byDevice, deviceID)
		return
	}
	ct.byDevice[deviceID] = ids
}

func (t *tx) CreateCommand(c fleet.Command) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.accounts.get("", c.AccountID); err != nil {
		return err
	}
	ct := t.s.cm
	if err := ct.cmds.insert(t.txn, c); err != nil {
		return err
	}
	ct.index(c.DeviceID, c.ID)
	t.undo(func() { ct.unindex(c.DeviceID, c.ID) })
	return nil
}

func (t *tx) Command(accountID, id string) (fleet.Command, error) {
	return t.s.cm.cmds.get(accountID, id)
}

func (t *tx) Commands(accountID, deviceID string, f fleet.CommandFilter, p fleet.Page) ([]fleet.Command, error) {
	ct := t.s.cm
	ids := ct.byDevice[deviceID]
	i := sort.SearchStrings(ids, p.After) - 1
	if p.After == "" {
		i = len(ids) - 1
	}
	out := []fleet.Command{}
	for ; i >= 0 && len(out) < p.Limit; i-- {
		c := ct.cmds.byID[ids[i]]
		if c.AccountID == accountID && f.Match(&c) {
			out = append(out, c.Clone())
		}
	}
	return out, nil
}

func (t *tx) DeviceCommands(accountID, deviceID string, st fleet.CommandStatus, limit int) ([]fleet.Command, error) {
	ct := t.s.cm
	out := []fleet.Command{}
	for _, id := range ct.byDevice[deviceID] {
		if len(out) >= limit {
			break
		}
		if c := ct.cmds.byID[id]; c.AccountID == accountID && c.Status == st {
			out = append(out, c.Clone())
		}
	}
	return out, nil
}

func (t *tx) UpdateCommand(c fleet.Command) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.cm.cmds.get(c.AccountID, c.ID)
	if err != nil {
		return err
	}
	old.Status, old.Result, old.Error = c.Status, c.Result, c.Error
	old.SentAt, old.DeliveredAt, old.FinishedAt = clonePtr(c.SentAt), clonePtr(c.DeliveredAt), clonePtr(c.FinishedAt)
	return t.s.cm.cmds.put(t.txn, old)
}

func (t *tx) DeleteCommands(accountID, deviceID string) (int, error) {
	if err := t.writable(); err != nil {
		return 0, err
	}
	ct := t.s.cm
	ids := slices.Clone(ct.byDevice[deviceID])
	n := 0
	for _, id := range ids {
		if ct.cmds.owner[id] != accountID {
			continue
		}
		if err := ct.cmds.delete(t.txn, accountID, id); err != nil {
			return 0, err
		}
		ct.unindex(deviceID, id)
		t.undo(func() { ct.index(deviceID, id) })
		n++
	}
	return n, nil
}

// ExpiringCommands implements fleet.Store.
func (s *Store) ExpiringCommands(ctx context.Context, at time.Time, limit int) ([]fleet.Command, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed()
	}
	out := []fleet.Command{}
	for _, c := range s.cm.cmds.byID {
		if c.Status == fleet.CommandQueued && !c.ExpiresAt.After(at) {
			out = append(out, c.Clone())
		}
	}
	slices.SortFunc(out, func(a, b fleet.Command) int { return strings.Compare(a.ID, b.ID) })
	return out[:min(len(out), limit)], nil
}

// PurgeCommands implements fleet.Store.
func (s *Store) PurgeCommands(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed()
	}
	var old []fleet.Command
	for _, c := range s.cm.cmds.byID {
		if c.CreatedAt.Before(before) {
			old = append(old, c)
		}
	}
	for _, c := range old {
		s.cm.cmds.remove(c.AccountID, c.ID)
		s.cm.unindex(c.DeviceID, c.ID)
	}
	return len(old), nil
}
