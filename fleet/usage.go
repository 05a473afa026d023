package fleet

import (
	"context"
	"sync"
	"time"
)

// usageRecorder counts requests per key and hour in memory; Flush adds the
// counts to the store. Counting never waits on the store.
type usageRecorder struct {
	mu     sync.Mutex
	counts map[usageSlot]*Usage
}

type usageSlot struct {
	keyID string
	hour  int64 // Unix seconds of the hour's start
}

func (u *usageRecorder) init() { u.counts = make(map[usageSlot]*Usage) }

func (u *usageRecorder) add(keyID string, now time.Time, rejected bool) {
	hour := now.UTC().Truncate(time.Hour)
	slot := usageSlot{keyID, hour.Unix()}
	u.mu.Lock()
	c := u.counts[slot]
	if c == nil {
		c = &Usage{KeyID: keyID, Hour: hour}
		u.counts[slot] = c
	}
	c.Requests++
	if rejected {
		c.Rejected++
	}
	if now.After(c.LastUsedAt) {
		c.LastUsedAt = now
	}
	u.mu.Unlock()
}

// take empties the recorder and returns what it held.
func (u *usageRecorder) take() []Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.counts) == 0 {
		return nil
	}
	out := make([]Usage, 0, len(u.counts))
	for _, c := range u.counts {
		c.LastUsedAt = Timestamp(c.LastUsedAt)
		out = append(out, *c)
	}
	clear(u.counts)
	return out
}

// pending returns the unflushed counts of one key.
func (u *usageRecorder) pending(keyID string) []Usage {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Usage
	for s, c := range u.counts {
		if s.keyID == keyID {
			out = append(out, *c)
		}
	}
	return out
}

// giveBack returns counts that could not be written, so that they are
// written by the next flush.
func (u *usageRecorder) giveBack(us []Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, x := range us {
		slot := usageSlot{x.KeyID, x.Hour.Unix()}
		c := u.counts[slot]
		if c == nil {
			c = &Usage{KeyID: x.KeyID, Hour: x.Hour}
			u.counts[slot] = c
		}
		c.Requests += x.Requests
		c.Rejected += x.Rejected
		if x.LastUsedAt.After(c.LastUsedAt) {
			c.LastUsedAt = x.LastUsedAt
		}
	}
}

// Flush writes the request counts gathered since the last flush to the
// store (they also move each key's last_used_at).
func (j Jobs) Flush(ctx context.Context) error {
	s := j.s
	s.flushM.Lock()
	defer s.flushM.Unlock()
	us := s.usage.take()
	if len(us) == 0 {
		return nil
	}
	if err := s.store.RecordUsage(ctx, us); err != nil {
		s.usage.giveBack(us)
		return err
	}
	return nil
}
