package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// memQuota holds the rate-limit windows of a SQLite store in memory, as
// memstore does: the file belongs to one process, so its memory is the truth
// and no request waits on a disk write. The windows are loaded from the
// quotas table at Open and those that changed are saved back at Close.
type memQuota struct {
	mu     sync.Mutex
	closed bool
	states map[string]*quotaEntry
}

type quotaEntry struct {
	state fleet.QuotaState
	dirty bool // changed since loaded
}

var errClosed = errors.New("sqlstore: store is closed")

func newMemQuota() *memQuota { return &memQuota{states: map[string]*quotaEntry{}} }

func (m *memQuota) take(subject string, limit int, now time.Time) (fleet.Quota, error) {
	return m.takeN(subject, 1, limit, now)
}

// takeN applies fleet.TakeQuotaN: n units at once, all or none.
func (m *memQuota) takeN(subject string, n, limit int, now time.Time) (fleet.Quota, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fleet.Quota{}, errClosed
	}
	e := m.states[subject]
	if e == nil {
		e = &quotaEntry{}
		m.states[subject] = e
	}
	var q fleet.Quota
	e.state, q = fleet.TakeQuotaN(e.state, n, limit, now)
	e.dirty = true
	return q, nil
}

// refund applies fleet.RefundQuota.
func (m *memQuota) refund(subject string, n int, reset time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	if e := m.states[subject]; e != nil {
		e.state = fleet.RefundQuota(e.state, n, reset)
		e.dirty = true
	}
	return nil
}

// load reads the windows saved by the last Close.
func (m *memQuota) load(ctx context.Context, rdb *sql.DB) error {
	rows, err := rdb.QueryContext(ctx, `SELECT subject, window_start, used FROM quotas`)
	if err != nil {
		return wrap(err, "load quotas")
	}
	defer rows.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	for rows.Next() {
		var subject string
		var start, used int64
		if err := rows.Scan(&subject, &start, &used); err != nil {
			return wrap(err, "load quotas")
		}
		m.states[subject] = &quotaEntry{state: fleet.QuotaState{WindowStart: fromDB(start), Count: int(used)}}
	}
	return wrap(rows.Err(), "load quotas")
}

// save refuses further takes and writes the windows that changed since
// they were loaded, in one transaction that write runs. Only those: another
// short-lived process on the same file (a command-line tool creating a key)
// that took no quota then overwrites nothing.
func (m *memQuota) save(ctx context.Context, write func(context.Context, func(*tx) error) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	err := write(ctx, func(t *tx) error {
		stmt, err := t.prepare(t.d.q(`INSERT INTO quotas (subject, window_start, used) VALUES (?, ?, ?)
			ON CONFLICT (subject) DO UPDATE SET window_start = excluded.window_start, used = excluded.used`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for subject, e := range m.states {
			if !e.dirty {
				continue
			}
			if _, err := stmt.ExecContext(t.ctx, subject, toDB(e.state.WindowStart), int64(e.state.Count)); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap(err, "save quotas")
}

// purge forgets windows that ended before before; they are deleted from
// the quotas table too, so a restart does not load them again.
func (m *memQuota) purge(before time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for subject, e := range m.states {
		if e.state.WindowStart.Add(fleet.QuotaWindow).Before(before) {
			delete(m.states, subject)
			n++
		}
	}
	return n
}
