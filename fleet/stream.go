package fleet

import (
	"context"
	"errors"
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

// ErrStreamBehind ends a subscription whose reader fell so far behind that
// reports it had not read left the replay buffer. The client reconnects
// with the last id it saw and gets what the buffer still holds.
var ErrStreamBehind = errors.New("fleet: the subscriber fell behind the live stream")

// ErrStreamClosed is the reason of a subscription ended by Close.
var ErrStreamClosed = errors.New("fleet: the subscription is closed")

// Subscription follows an account's live location reports. It holds no
// buffer of its own: reports stay in the service's shared replay buffer
// and the subscriber reads them from there by sequence number, so an idle
// subscription costs a few hundred bytes. Ready signals that reports may be
// waiting, Next reads them, and Done is closed when the subscription ends
// (Err says why): Close, the key no longer valid (see CheckStreams), or the
// reader falling behind the replay buffer. One goroutine reads a
// subscription; Close may be called from any.
type Subscription struct {
	b         *broker
	accountID string
	slot      streamSlot
	keyHash   [32]byte
	vehicles  map[string]bool
	ready     chan struct{} // capacity 1: reports may be waiting
	done      chan struct{} // closed when the subscription ends

	// Guarded by b.mu.
	after uint64 // the Last-Event-ID it resumed after: older reports are not its
	err   error
	from  uint64 // the next sequence number to look at; 0: nothing waiting
	watch uint64 // the first matching report published since the last read; 0: none
}

// Ready is signalled when reports may be waiting for Next.
func (sub *Subscription) Ready() <-chan struct{} { return sub.ready }

// Done is closed when the subscription has ended.
func (sub *Subscription) Done() <-chan struct{} { return sub.done }

// Err returns why the subscription ended, or nil while it is open.
func (sub *Subscription) Err() error {
	sub.b.mu.Lock()
	defer sub.b.mu.Unlock()
	return sub.err
}

// Close ends the subscription and frees its key's stream slot.
func (sub *Subscription) Close() {
	sub.b.mu.Lock()
	defer sub.b.mu.Unlock()
	sub.b.end(sub, ErrStreamClosed)
}

// Next returns up to max reports that arrived since the last call, oldest
// first (nil when none is waiting). When more are waiting, Ready is
// signalled again. It returns the subscription's Err once it has ended;
// a subscriber that fell behind the replay buffer ends with ErrStreamBehind.
func (sub *Subscription) Next(max int) ([]StreamItem, error) {
	b := sub.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if sub.err != nil {
		return nil, sub.err
	}
	oldest := b.oldest()
	if sub.watch != 0 && sub.watch < oldest {
		b.end(sub, ErrStreamBehind)
		return nil, ErrStreamBehind
	}
	if sub.from == 0 {
		return nil, nil
	}
	var out []StreamItem
	i := b.search(max64(sub.from, oldest))
	for ; i < b.n && len(out) < max; i++ {
		it := b.at(i)
		if sub.matches(it) && it.seq > sub.after {
			out = append(out, *it)
		}
	}
	if i < b.n { // max reached: the rest waits for the next call
		s := b.at(i).seq
		sub.from, sub.watch = s, s
		select {
		case sub.ready <- struct{}{}:
		default:
		}
	} else {
		sub.from, sub.watch = 0, 0
	}
	return out, nil
}

func (sub *Subscription) matches(it *StreamItem) bool {
	return it.accountID == sub.accountID && (sub.vehicles == nil || sub.vehicles[it.VehicleID])
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// streamSlot names whose stream allowance a subscription takes: the key's,
// within its account.
type streamSlot struct{ accountID, keyID string }

// broker fans live reports out to subscribers and keeps the last
// StreamReplayWindow of them (at most maxRecent) in one ring shared by every
// subscriber, for readers that are behind and clients that reconnect. It
// lives in one process: subscribers see the reports ingested by the server
// they are connected to, and the per-key stream cap counts this server's
// streams.
type broker struct {
	mu     sync.Mutex
	seq    uint64                                // of the newest report
	subs   map[string]map[*Subscription]struct{} // by account
	perKey map[streamSlot]int                    // open subscriptions
	ring   []StreamItem                          // recent items in seq order, oldest at head
	head   int
	n      int
	// following is set while the service follows its store's shared feed
	// (see LiveFeed); fed once it has, for good: seq then is the feed's id
	// of the newest report, and reports go to the feed even while it is
	// not followed (a lost connection): the next follower reads them back.
	following, fed bool
}

func (b *broker) isFollowing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.following
}

func (b *broker) isFed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fed
}

// publishFeed takes batches from the shared feed, in id order; reports
// with ids it has already taken are skipped.
func (b *broker) publishFeed(bs []LiveBatch, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fed {
		// The feed's ids replace this server's own: the reports published
		// before it followed the feed leave the ring (their subscribers
		// that are behind reconnect), and the feed's recent reports, which
		// it delivers first, fill it.
		for b.n > 0 {
			b.ring[b.head] = StreamItem{}
			b.head = (b.head + 1) % len(b.ring)
			b.n--
		}
		b.seq = 0
		b.fed = true
		for _, subs := range b.subs {
			for sub := range subs {
				sub.from, sub.watch = 0, 0
			}
		}
	}
	b.following = true
	for _, batch := range bs {
		for i, it := range batch.Items {
			seq := batch.FirstID + uint64(i)
			if seq <= b.seq {
				continue
			}
			b.seq = seq
			b.add(batch.AccountID, it, batch.At)
		}
	}
	b.trim(now)
}

const (
	// maxRecent bounds the replay buffer: a reconnecting client gets up to
	// ten minutes back, or the last maxRecent reports, whichever is less.
	maxRecent = 100_000
)

func (b *broker) init(now time.Time) {
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
		b.add(accountID, it, now)
	}
	b.trim(now)
}

// add appends it to the ring as the report of id b.seq and signals the
// subscribers it concerns; b.mu is held.
func (b *broker) add(accountID string, it StreamItem, at time.Time) {
	it.seq, it.ID, it.accountID, it.at = b.seq, strconv.FormatUint(b.seq, 10), accountID, at
	b.push(it)
	for sub := range b.subs[accountID] {
		if sub.vehicles != nil && !sub.vehicles[it.VehicleID] {
			continue
		}
		if sub.from == 0 {
			sub.from = it.seq
		}
		if sub.watch == 0 {
			sub.watch = it.seq
		}
		select {
		case sub.ready <- struct{}{}:
		default:
		}
	}
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

// oldest returns the id of the oldest report in the ring (the next one's
// when it is empty).
func (b *broker) oldest() uint64 {
	if b.n == 0 {
		return b.seq + 1
	}
	return b.at(0).seq
}

// search returns the index of the oldest item in the ring whose id is at
// least seq (b.n when none is). Ids increase along the ring, with gaps
// where the shared feed (LiveFeed) skips some.
func (b *broker) search(seq uint64) int {
	lo, hi := 0, b.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.at(m).seq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
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

// end removes a subscription, frees its slot and closes Done; b.mu is held.
func (b *broker) end(sub *Subscription, why error) {
	if sub.err != nil {
		return
	}
	sub.err = why
	close(sub.done)
	if subs := b.subs[sub.accountID]; subs != nil {
		delete(subs, sub)
		if len(subs) == 0 {
			delete(b.subs, sub.accountID)
		}
	}
	if b.perKey[sub.slot]--; b.perKey[sub.slot] <= 0 {
		delete(b.perKey, sub.slot)
	}
	// Maps keep their size after deletes: start afresh when empty, so
	// that the memory of a burst of streams goes back.
	if len(b.subs) == 0 {
		b.subs = nil
	}
	if len(b.perKey) == 0 {
		b.perKey = nil
	}
}

// keys returns the hashes of the keys that have subscriptions open.
func (b *broker) keys() map[[32]byte]struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[[32]byte]struct{}{}
	for _, subs := range b.subs {
		for sub := range subs {
			if sub.keyHash != ([32]byte{}) {
				out[sub.keyHash] = struct{}{}
			}
		}
	}
	return out
}

// endKey ends every subscription of the key whose secret hashes to h.
func (b *broker) endKey(h [32]byte, why error) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, subs := range b.subs {
		for sub := range subs {
			if sub.keyHash == h {
				b.end(sub, why)
				n++
			}
		}
	}
	return n
}

// Subscribe follows the account's live location reports, of the given
// vehicles only when any are named. With lastEventID (a Last-Event-ID), the
// reports after it still in the replay buffer (up to ten minutes back) come
// first. A key may have its plan's StreamsPerKey subscriptions open at
// once on this service; one more is rate_limit_exceeded, naming the limit.
func (s *Service) Subscribe(ctx context.Context, p Principal, vehicleIDs []string, lastEventID string) (*Subscription, error) {
	if err := p.allow("Subscribe"); err != nil {
		return nil, err
	}
	var after uint64
	if lastEventID != "" {
		n, err := strconv.ParseUint(lastEventID, 10, 64)
		if err != nil {
			return nil, Errorf(CodeInvalidRequest, "Last-Event-ID is not an id of this stream.")
		}
		after = n
	}
	sub := &Subscription{
		b:         &s.stream,
		accountID: p.Account.ID,
		slot:      streamSlot{p.Account.ID, p.Key.ID},
		keyHash:   p.Key.Hash,
		ready:     make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	if len(vehicleIDs) > 0 {
		sub.vehicles = make(map[string]bool, len(vehicleIDs))
		for _, id := range vehicleIDs {
			sub.vehicles[id] = true
		}
	}
	limit := p.Account.Plan.Limits().StreamsPerKey
	b := &s.stream
	b.mu.Lock()
	defer b.mu.Unlock()
	if open := b.perKey[sub.slot]; open >= limit {
		plan := p.Account.Plan
		if !plan.Valid() {
			plan = PlanFree
		}
		return nil, Errorf(CodeRateLimitExceeded,
			"This API key has %d live streams open, the most the %s plan allows; close one first.", open, plan)
	}
	b.trim(s.Now())
	if lastEventID != "" && after < b.seq {
		sub.from = after + 1
		sub.ready <- struct{}{}
	}
	// Resuming on a server of the shared feed that has not yet taken
	// every report the client saw elsewhere: those reports are skipped
	// when they arrive.
	if b.fed {
		sub.after = after
	}
	if b.subs == nil {
		b.subs = map[string]map[*Subscription]struct{}{}
	}
	if b.perKey == nil {
		b.perKey = map[streamSlot]int{}
	}
	subs := b.subs[sub.accountID]
	if subs == nil {
		subs = map[*Subscription]struct{}{}
		b.subs[sub.accountID] = subs
	}
	subs[sub] = struct{}{}
	b.perKey[sub.slot]++
	return sub, nil
}

// OpenStreams returns how many live streams the key has open on this
// service.
func (s *Service) OpenStreams(p Principal) int {
	s.stream.mu.Lock()
	defer s.stream.mu.Unlock()
	return s.stream.perKey[streamSlot{p.Account.ID, p.Key.ID}]
}

// CheckStreams ends the live streams whose key is no longer valid: revoked,
// expired, or past the grace period of its rotation — by this service or by
// any other sharing the store. It reads each streaming key through the key
// cache, so a change made elsewhere is seen within AuthCacheTTL of it; Run
// calls it every second, so a stream ends within AuthCacheTTL plus a second
// (at most 5 s with the default 2 s cache). Streams of a key the store
// cannot be asked about stay open. It returns how many streams it ended.
func (j Jobs) CheckStreams(ctx context.Context) (int, error) {
	s := j.s
	ended := 0
	var firstErr error
	for h := range s.stream.keys() {
		_, err := s.principalByHash(ctx, h)
		switch ErrorCode(err) {
		case "":
		case CodeUnauthorized:
			ended += s.stream.endKey(h, err)
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return ended, firstErr
}
