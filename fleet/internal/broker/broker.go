// Package broker is the fan-out behind Fleet's live streams: it gives each
// item published an id, keeps the recent ones in one replay buffer shared
// by every subscriber, and tells the subscribers an item concerns that it
// is waiting. A subscription holds no buffer of its own: it reads from the
// shared one by id, so an idle subscription costs a few hundred bytes; a
// reader that falls so far behind that what it had not read left the
// buffer ends, and reconnects with the last id it saw.
//
// It knows nothing of what the items are, nor of who may subscribe: package
// fleet says which account and key a subscription belongs to, how many a
// key may hold, and what an item is (a location report, its vehicle the
// topic subscriptions filter on).
package broker

import (
	"errors"
	"sync"
	"time"
)

// ErrBehind ends a subscription whose reader fell so far behind that items
// it had not read left the replay buffer.
var ErrBehind = errors.New("fleet: the subscriber fell behind the live stream")

// ErrClosed is the reason of a subscription ended by Close.
var ErrClosed = errors.New("fleet: the subscription is closed")

// Config is what a Broker needs to know of its items, and how much it
// keeps.
type Config[T any] struct {
	// Window is how long an item stays in the replay buffer, and MaxRecent
	// how many items it holds at most.
	Window    time.Duration
	MaxRecent int
	// Stamp gives an item its id, once, as it is published.
	Stamp func(item *T, id uint64)
	// Topic returns the topic of an item, which subscriptions that name
	// topics filter on.
	Topic func(item *T) string
}

// Slot names whose allowance a subscription takes: a key's, within its
// account.
type Slot struct{ Account, Key string }

// Broker fans items out to subscribers, by account, and keeps the last
// Window of them (at most MaxRecent) in one ring shared by every
// subscriber, for readers that are behind and clients that reconnect. It
// lives in one process; a shared feed (PublishFeed) carries the items of
// several.
type Broker[T any] struct {
	cfg    Config[T]
	mu     sync.Mutex
	seq    uint64                                   // of the newest item
	subs   map[string]map[*Subscription[T]]struct{} // by account
	perKey map[Slot]int                             // open subscriptions
	ring   []entry[T]                               // recent items in seq order, oldest at head
	head   int
	n      int
	// following is set while the broker takes its items from a shared
	// feed (PublishFeed); fed once it has, for good: seq then is the feed's
	// id of the newest item, and items go to the feed even while it is not
	// followed (a lost connection): the next follower reads them back.
	following, fed bool
}

// entry is an item in the ring, with what the broker knows of it.
type entry[T any] struct {
	seq     uint64
	account string
	at      time.Time
	item    T
}

// New returns a broker whose ids start at the time now, so that they keep
// increasing across restarts.
func New[T any](cfg Config[T], now time.Time) *Broker[T] {
	return &Broker[T]{cfg: cfg, seq: uint64(now.UnixMicro()) * 1000}
}

// Subscription follows one account's items, of some topics or of all.
// Ready signals that items may be waiting, Next reads them, and Done is
// closed when the subscription ends (Err says why). One goroutine reads a
// subscription; Close may be called from any.
type Subscription[T any] struct {
	b       *Broker[T]
	slot    Slot
	keyHash [32]byte
	topics  map[string]bool
	ready   chan struct{} // capacity 1: items may be waiting
	done    chan struct{} // closed when the subscription ends

	// Guarded by b.mu.
	after uint64 // the id it resumed after: older items are not its
	err   error
	from  uint64 // the next id to look at; 0: nothing waiting
	watch uint64 // the first matching item published since the last read; 0: none
}

// Ready is signalled when items may be waiting for Next.
func (sub *Subscription[T]) Ready() <-chan struct{} { return sub.ready }

// Done is closed when the subscription has ended.
func (sub *Subscription[T]) Done() <-chan struct{} { return sub.done }

// Err returns why the subscription ended, or nil while it is open.
func (sub *Subscription[T]) Err() error {
	sub.b.mu.Lock()
	defer sub.b.mu.Unlock()
	return sub.err
}

// Close ends the subscription (ErrClosed) and frees its slot.
func (sub *Subscription[T]) Close() {
	sub.b.mu.Lock()
	defer sub.b.mu.Unlock()
	sub.b.end(sub, ErrClosed)
}

// End ends the subscription with why (unless it has ended already) and
// frees its slot: for the owner of a subscription that stopped being
// allowed for a reason of its own (a share link revoked, say).
func (sub *Subscription[T]) End(why error) {
	sub.b.mu.Lock()
	defer sub.b.mu.Unlock()
	sub.b.end(sub, why)
}

// Next returns up to max items that arrived since the last call, oldest
// first (nil when none is waiting). When more are waiting, Ready is
// signalled again. It returns the subscription's Err once it has ended;
// a subscriber that fell behind the replay buffer ends with ErrBehind.
func (sub *Subscription[T]) Next(max int) ([]T, error) {
	b := sub.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if sub.err != nil {
		return nil, sub.err
	}
	oldest := b.oldest()
	if sub.watch != 0 && sub.watch < oldest {
		b.end(sub, ErrBehind)
		return nil, ErrBehind
	}
	if sub.from == 0 {
		return nil, nil
	}
	var out []T
	i := b.search(max64(sub.from, oldest))
	for ; i < b.n && len(out) < max; i++ {
		e := b.at(i)
		if sub.matches(e) && e.seq > sub.after {
			out = append(out, e.item)
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

func (sub *Subscription[T]) matches(e *entry[T]) bool {
	return e.account == sub.slot.Account && (sub.topics == nil || sub.topics[sub.b.cfg.Topic(&e.item)])
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// Request is a subscription asked for.
type Request struct {
	// Slot is the account whose items it follows and the key whose
	// allowance it takes: at most Limit subscriptions of a slot are open
	// at once.
	Slot  Slot
	Limit int
	// KeyHash names the key for Keys and EndKey; zero: none.
	KeyHash [32]byte
	// Topics are the topics it follows; none: every topic of the account.
	Topics []string
	// Resume: the client saw the items up to After (a Last-Event-ID);
	// those after it still in the replay buffer come first.
	Resume bool
	After  uint64
}

// Subscribe opens a subscription, or, when its slot has r.Limit open
// already, returns nil and how many are open.
func (b *Broker[T]) Subscribe(r Request, now time.Time) (*Subscription[T], int) {
	sub := &Subscription[T]{
		b:       b,
		slot:    r.Slot,
		keyHash: r.KeyHash,
		ready:   make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if len(r.Topics) > 0 {
		sub.topics = make(map[string]bool, len(r.Topics))
		for _, t := range r.Topics {
			sub.topics[t] = true
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if open := b.perKey[sub.slot]; open >= r.Limit {
		return nil, open
	}
	b.trim(now)
	if r.Resume && r.After < b.seq {
		sub.from = r.After + 1
		sub.ready <- struct{}{}
	}
	// Resuming on a server of the shared feed that has not yet taken
	// every item the client saw elsewhere: those items are skipped when
	// they arrive.
	if b.fed {
		sub.after = r.After
	}
	if b.subs == nil {
		b.subs = map[string]map[*Subscription[T]]struct{}{}
	}
	if b.perKey == nil {
		b.perKey = map[Slot]int{}
	}
	subs := b.subs[sub.slot.Account]
	if subs == nil {
		subs = map[*Subscription[T]]struct{}{}
		b.subs[sub.slot.Account] = subs
	}
	subs[sub] = struct{}{}
	b.perKey[sub.slot]++
	return sub, 0
}

// Open returns how many subscriptions of the slot are open.
func (b *Broker[T]) Open(slot Slot) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.perKey[slot]
}

// Clients counts the open subscriptions.
func (b *Broker[T]) Clients() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, subs := range b.subs {
		n += len(subs)
	}
	return n
}

// Following reports whether the broker takes its items from a shared feed
// now (see PublishFeed).
func (b *Broker[T]) Following() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.following
}

// Fed reports whether the broker has ever taken its items from a shared
// feed: from then on, items go to the feed, never to Publish.
func (b *Broker[T]) Fed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fed
}

// StopFollowing records that the shared feed is no longer followed (its
// connection was lost); Fed stays true.
func (b *Broker[T]) StopFollowing() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.following = false
}

// Batch is one account's items as a shared feed delivers them: ids
// FirstID, FirstID+1, ... in the order of Items.
type Batch[T any] struct {
	FirstID uint64
	Account string
	At      time.Time
	Items   []T
}

// PublishFeed takes batches from the shared feed, in id order; items with
// ids it has already taken are skipped.
func (b *Broker[T]) PublishFeed(bs []Batch[T], now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fed {
		// The feed's ids replace this broker's own: the items published
		// before it followed the feed leave the ring (their subscribers
		// that are behind reconnect), and the feed's recent items, which
		// it delivers first, fill it.
		for b.n > 0 {
			b.ring[b.head] = entry[T]{}
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
			b.add(batch.Account, it, batch.At)
		}
	}
	b.trim(now)
}

// Publish gives the account's items the next ids and tells their
// subscribers.
func (b *Broker[T]) Publish(account string, items []T, now time.Time) {
	if len(items) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, it := range items {
		b.seq++
		b.add(account, it, now)
	}
	b.trim(now)
}

// add appends it to the ring as the item of id b.seq and signals the
// subscribers it concerns; b.mu is held.
func (b *Broker[T]) add(account string, it T, at time.Time) {
	e := entry[T]{seq: b.seq, account: account, at: at, item: it}
	b.cfg.Stamp(&e.item, e.seq)
	b.push(e)
	subs := b.subs[account]
	if len(subs) == 0 {
		return
	}
	topic := b.cfg.Topic(&e.item)
	for sub := range subs {
		if sub.topics != nil && !sub.topics[topic] {
			continue
		}
		if sub.from == 0 {
			sub.from = e.seq
		}
		if sub.watch == 0 {
			sub.watch = e.seq
		}
		select {
		case sub.ready <- struct{}{}:
		default:
		}
	}
}

// push appends to the ring, growing it up to MaxRecent and then
// overwriting the oldest item.
func (b *Broker[T]) push(e entry[T]) {
	if b.n == len(b.ring) {
		if len(b.ring) >= b.cfg.MaxRecent {
			b.ring[b.head] = e
			b.head = (b.head + 1) % len(b.ring)
			return
		}
		grown := make([]entry[T], min(b.cfg.MaxRecent, max(1024, 2*len(b.ring))))
		for i := 0; i < b.n; i++ {
			grown[i] = b.ring[(b.head+i)%len(b.ring)]
		}
		b.ring, b.head = grown, 0
	}
	b.ring[(b.head+b.n)%len(b.ring)] = e
	b.n++
}

// oldest returns the id of the oldest item in the ring (the next one's
// when it is empty).
func (b *Broker[T]) oldest() uint64 {
	if b.n == 0 {
		return b.seq + 1
	}
	return b.at(0).seq
}

// search returns the index of the oldest item in the ring whose id is at
// least seq (b.n when none is). Ids increase along the ring, with gaps
// where the shared feed skips some.
func (b *Broker[T]) search(seq uint64) int {
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
func (b *Broker[T]) at(i int) *entry[T] { return &b.ring[(b.head+i)%len(b.ring)] }

// trim drops items older than the replay window.
func (b *Broker[T]) trim(now time.Time) {
	for b.n > 0 && now.Sub(b.ring[b.head].at) > b.cfg.Window {
		b.ring[b.head] = entry[T]{}
		b.head = (b.head + 1) % len(b.ring)
		b.n--
	}
}

// end removes a subscription, frees its slot and closes Done; b.mu is held.
func (b *Broker[T]) end(sub *Subscription[T], why error) {
	if sub.err != nil {
		return
	}
	sub.err = why
	close(sub.done)
	if subs := b.subs[sub.slot.Account]; subs != nil {
		delete(subs, sub)
		if len(subs) == 0 {
			delete(b.subs, sub.slot.Account)
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

// Keys returns the hashes of the keys that have subscriptions open.
func (b *Broker[T]) Keys() map[[32]byte]struct{} {
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

// EndKey ends every subscription of the key whose hash is h, with why; it
// returns how many it ended.
func (b *Broker[T]) EndKey(h [32]byte, why error) int {
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

// EndAll ends every subscription with ErrClosed, for a server that is
// shutting down; it returns how many it ended.
func (b *Broker[T]) EndAll() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, subs := range b.subs {
		for sub := range subs {
			b.end(sub, ErrClosed)
			n++
		}
	}
	return n
}
