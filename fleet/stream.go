package fleet

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// StreamItem is one live location report on the stream.
type StreamItem struct {
	ID        string // increasing; a client resumes after it with Last-Event-ID
	VehicleID string
	Record    LocationRecord

	seq       uint64
	accountID string
	at        time.Time
}

// Subscription receives an account's live location reports. Its channel is
// closed when the subscription ends, or when the subscriber falls too far
// behind (it should then reconnect with the last id it saw).
type Subscription struct {
	C         <-chan StreamItem
	c         chan StreamItem
	accountID string
	vehicles  map[string]bool
	b         *broker
}

// Close ends the subscription.
func (sub *Subscription) Close() { sub.b.remove(sub) }

// broker fans live reports out to subscribers and keeps the last
// StreamReplayWindow of them for clients that reconnect. It lives in one
// process: subscribers see the reports ingested by the server they are
// connected to.
type broker struct {
	mu     sync.Mutex
	seq    uint64
	subs   map[*Subscription]struct{}
	recent []StreamItem // in seq order
}

const (
	subscriberBuffer = 4096
	maxRecent        = 200_000
)

func (b *broker) init(now time.Time) {
	b.subs = map[*Subscription]struct{}{}
	// Ids keep increasing across restarts: they start at the start time.
	b.seq = uint64(now.UnixMicro()) * 1000
}

func (b *broker) publish(accountID string, items []StreamItem, now time.Time) {
	if len(items) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, it := range items {
		b.seq++
		it.seq, it.ID, it.accountID, it.at = b.seq, strconv.FormatUint(b.seq, 10), accountID, now
		b.recent = append(b.recent, it)
		for sub := range b.subs {
			if sub.accountID != accountID || (len(sub.vehicles) > 0 && !sub.vehicles[it.VehicleID]) {
				continue
			}
			select {
			case sub.c <- it:
			default: // too far behind: it reconnects and replays
				delete(b.subs, sub)
				close(sub.c)
			}
		}
	}
	b.trim(now)
}

func (b *broker) trim(now time.Time) {
	cut := 0
	for cut < len(b.recent) && (len(b.recent)-cut > maxRecent || now.Sub(b.recent[cut].at) > StreamReplayWindow) {
		cut++
	}
	if cut > 0 {
		b.recent = append(b.recent[:0], b.recent[cut:]...)
	}
}

func (b *broker) remove(sub *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[sub]; ok {
		delete(b.subs, sub)
		close(sub.c)
	}
}

// Subscribe follows the account's live location reports, of the given
// vehicles only when any are named. With lastEventID (a Last-Event-ID), the
// reports after it from the last ten minutes come first, as backlog.
func (s *Service) Subscribe(ctx context.Context, p Principal, vehicleIDs []string, lastEventID string) (*Subscription, []StreamItem, error) {
	if err := p.Require(PermLocationsRead); err != nil {
		return nil, nil, err
	}
	var after uint64
	if lastEventID != "" {
		n, err := strconv.ParseUint(lastEventID, 10, 64)
		if err != nil {
			return nil, nil, Errorf(CodeInvalidRequest, "Last-Event-ID is not an id of this stream.")
		}
		after = n
	}
	sub := &Subscription{accountID: p.Account.ID, b: &s.stream}
	sub.c = make(chan StreamItem, subscriberBuffer)
	sub.C = sub.c
	if len(vehicleIDs) > 0 {
		sub.vehicles = map[string]bool{}
		for _, id := range vehicleIDs {
			sub.vehicles[id] = true
		}
	}
	b := &s.stream
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trim(s.Now())
	var backlog []StreamItem
	if lastEventID != "" {
		for _, it := range b.recent {
			if it.seq > after && it.accountID == sub.accountID && (sub.vehicles == nil || sub.vehicles[it.VehicleID]) {
				backlog = append(backlog, it)
			}
		}
	}
	b.subs[sub] = struct{}{}
	return sub, backlog, nil
}
