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
	mu   sync.Mutex
	seq  uint64
	subs map[*Subscription]struct{}
	ring []StreamItem // recent items in seq order, oldest at head
	head int
	n    int
}

const (
	subscriberBuffer = 4096
	// maxRecent bounds the replay buffer: a reconnecting client gets up to
	// ten minutes back, or the last maxRecent reports, whichever is less.
	maxRecent = 100_000
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
		b.push(it)
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

// push appends to the ring, growing it up to maxRecent and then
// overwriting the oldest item.
func (b *broker) push(it StreamItem) {
	if b.n == len(b.ring) {
		if len(b.ring) >= maxRecent {
			b.ring[b.head] = it
			b.head = (b.head + 1) % len(b.ring)
			return
		}
		grown := make([]StreamItem, min(maxRecent, max(1024, 2*len(b.ring))))
		for i := 0; i < b.n; i++ {
			grown[i] = b.ring[(b.head+i)%len(b.ring)]
		}
		b.ring, b.head = grown, 0
	}
	b.ring[(b.head+b.n)%len(b.ring)] = it
	b.n++
}

// at returns the i-th oldest item.
func (b *broker) at(i int) *StreamItem { return &b.ring[(b.head+i)%len(b.ring)] }

// trim drops items older than the replay window.
func (b *broker) trim(now time.Time) {
	for b.n > 0 && now.Sub(b.ring[b.head].at) > StreamReplayWindow {
		b.ring[b.head] = StreamItem{}
		b.head = (b.head + 1) % len(b.ring)
		b.n--
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
		for i := 0; i < b.n; i++ {
			it := *b.at(i)
			if it.seq > after && it.accountID == sub.accountID && (sub.vehicles == nil || sub.vehicles[it.VehicleID]) {
				backlog = append(backlog, it)
			}
		}
	}
	b.subs[sub] = struct{}{}
	return sub, backlog, nil
}
