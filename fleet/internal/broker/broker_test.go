package broker

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"
)

// item is what the tests publish: an id the broker stamps, and a topic.
type item struct {
	ID    string
	seq   uint64
	Topic string
}

const window = 10 * time.Minute

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func newBroker(now time.Time) *Broker[item] {
	return New(Config[item]{
		Window:    window,
		MaxRecent: 100_000,
		Stamp:     func(it *item, id uint64) { it.ID, it.seq = strconv.FormatUint(id, 10), id },
		Topic:     func(it *item) string { return it.Topic },
	}, now)
}

// publish publishes n items of the topic, in batches of at most 1,000.
func publish(b *Broker[item], account, topic string, n int, now time.Time) {
	for done := 0; done < n; {
		size := min(n-done, 1000)
		items := make([]item, size)
		for i := range items {
			items[i] = item{Topic: topic}
		}
		b.Publish(account, items, now)
		done += size
	}
}

func subscribe(t *testing.T, b *Broker[item], r Request, now time.Time) *Subscription[item] {
	t.Helper()
	if r.Limit == 0 {
		r.Limit = 100
	}
	sub, open := b.Subscribe(r, now)
	if sub == nil {
		t.Fatalf("subscribe: refused with %d open", open)
	}
	return sub
}

// readAll reads what is waiting on sub, in batches of batch.
func readAll(t *testing.T, sub *Subscription[item], batch int) []item {
	t.Helper()
	var out []item
	for {
		items, err := sub.Next(batch)
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		out = append(out, items...)
		if len(items) < batch {
			return out
		}
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An idle subscription costs at most 16 KiB (it allocates no buffer of its
// own), and the memory of closed ones goes back.
func TestIdleSubscriptionsAreSmall(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	const n, perKey = 1000, 50
	slots := make([]Slot, 0, n/perKey)
	for k := range n / perKey {
		slots = append(slots, Slot{Account: "acc", Key: fmt.Sprintf("key_%d", k)})
	}
	publish(b, "acc", "veh", 10, t0) // the replay buffer exists before the measurement
	subs := make([]*Subscription[item], 0, n)
	before := heapInUse()
	for i := range n {
		sub, open := b.Subscribe(Request{Slot: slots[i/perKey], Limit: perKey, KeyHash: [32]byte{byte(i / perKey)}}, t0)
		is.True(sub != nil) // subscribe
		is.Equal(open, 0)
		subs = append(subs, sub)
	}
	open := heapInUse()
	perSub := float64(open-min(open, before)) / n
	t.Logf("%.0f bytes per idle subscription", perSub)
	is.True(perSub <= 16<<10) // an idle subscription costs at most 16 KiB
	is.Equal(b.Clients(), n)
	for _, sub := range subs {
		sub.Close()
	}
	subs = nil
	after := heapInUse()
	t.Logf("after Close: %d bytes above the heap before the subscriptions", int64(after)-int64(before))
	is.True(after < before+16<<10) // the memory of closed subscriptions went back
	is.Equal(b.Open(slots[0]), 0)
	is.Equal(b.Clients(), 0)
}

// A subscriber that does not read for a while catches up from the shared
// replay buffer: nothing is lost and the order holds, well beyond what a
// private buffer held.
func TestSlowSubscriberCatchesUp(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	sub := subscribe(t, b, Request{Slot: Slot{Account: "acc", Key: "key"}}, t0)
	defer sub.Close()
	const n = 6000
	publish(b, "acc", "veh", n/2, t0)
	publish(b, "other", "veh_other", 500, t0) // another account's items are not for this subscriber
	publish(b, "acc", "veh", n/2, t0.Add(time.Minute))
	select {
	case <-sub.Ready():
	default:
		t.Fatal("Ready was not signalled")
	}
	got := readAll(t, sub, 256)
	is.Equal(len(got), n)
	for i := 1; i < len(got); i++ {
		if got[i].seq <= got[i-1].seq || got[i].Topic != "veh" || got[i].ID != strconv.FormatUint(got[i].seq, 10) {
			t.Fatalf("item %d: id %s after %s, topic %s", i, got[i].ID, got[i-1].ID, got[i].Topic)
		}
	}
	items, err := sub.Next(256)
	is.NoErr(err)
	is.Equal(len(items), 0) // nothing more waits
}

// A subscriber whose unread items left the replay buffer (the window)
// ends with ErrBehind; a reconnect gets what the buffer still holds.
func TestSubscriberBehindTheReplayBufferEnds(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	slot := Slot{Account: "acc", Key: "key"}
	sub := subscribe(t, b, Request{Slot: slot}, t0)
	publish(b, "acc", "veh", 1, t0)
	later := t0.Add(window + time.Minute)
	publish(b, "acc", "veh", 1, later) // the first item leaves the buffer unread
	_, err := sub.Next(10)
	is.Equal(err, ErrBehind)
	<-sub.Done()
	is.Equal(sub.Err(), ErrBehind)
	is.Equal(b.Open(slot), 0) // its slot is free

	again := subscribe(t, b, Request{Slot: slot, Resume: true, After: 1}, later)
	defer again.Close()
	is.Equal(len(readAll(t, again, 10)), 1) // the item still held
}

// A slot holds at most Limit subscriptions: one more is refused with the
// count open; closing one frees its place, and another slot counts its
// own.
func TestSubscriptionsPerSlot(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	one, two := Slot{Account: "acc", Key: "one"}, Slot{Account: "acc", Key: "two"}
	first := subscribe(t, b, Request{Slot: one, Limit: 2}, t0)
	subscribe(t, b, Request{Slot: one, Limit: 2}, t0)
	sub, open := b.Subscribe(Request{Slot: one, Limit: 2}, t0)
	is.True(sub == nil)
	is.Equal(open, 2)
	subscribe(t, b, Request{Slot: two, Limit: 2}, t0) // another slot
	first.Close()
	first.Close() // a second Close frees nothing more
	is.Equal(b.Open(one), 1)
	is.Equal(first.Err(), ErrClosed)
	subscribe(t, b, Request{Slot: one, Limit: 2}, t0)
	is.Equal(b.Clients(), 3)
}

// A subscription that names topics gets the items of those topics only,
// of its account only.
func TestSubscriptionTopics(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	sub := subscribe(t, b, Request{Slot: Slot{Account: "acc"}, Topics: []string{"a", "c"}}, t0)
	for _, topic := range []string{"a", "b", "c", "b", "a"} {
		publish(b, "acc", topic, 1, t0)
		publish(b, "other", "a", 1, t0)
	}
	var topics []string
	for _, it := range readAll(t, sub, 10) {
		topics = append(topics, it.Topic)
	}
	is.Equal(topics, []string{"a", "c", "a"})
}

// EndKey ends the subscriptions of one key, with the reason given; EndAll
// ends the rest, ErrClosed.
func TestEndKeyAndEndAll(t *testing.T) {
	is := is.New(t)
	b := newBroker(t0)
	k1, k2 := [32]byte{1}, [32]byte{2}
	a := subscribe(t, b, Request{Slot: Slot{Account: "acc", Key: "1"}, KeyHash: k1}, t0)
	a2 := subscribe(t, b, Request{Slot: Slot{Account: "other", Key: "1"}, KeyHash: k1}, t0)
	c := subscribe(t, b, Request{Slot: Slot{Account: "acc", Key: "2"}, KeyHash: k2}, t0)
	subscribe(t, b, Request{Slot: Slot{Account: "acc", Key: "3"}}, t0) // no key hash
	is.Equal(b.Keys(), map[[32]byte]struct{}{k1: {}, k2: {}})
	revoked := fmt.Errorf("revoked")
	is.Equal(b.EndKey(k1, revoked), 2)
	for _, sub := range []*Subscription[item]{a, a2} {
		<-sub.Done()
		_, err := sub.Next(1)
		is.Equal(err, revoked)
	}
	select {
	case <-c.Done():
		t.Fatal("another key's subscription ended")
	default:
	}
	is.Equal(b.EndAll(), 2)
	is.Equal(c.Err(), ErrClosed)
	is.Equal(b.Clients(), 0)
}
