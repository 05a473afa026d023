package fleet

import (
	"context"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/broker"
)

// StreamItem is one live location report on the stream.
type StreamItem struct {
	ID        string // increasing; a client resumes after it with Last-Event-ID
	VehicleID string
	Record    LocationRecord

	// attrs is Record.Attributes in their binary form while the item
	// waits in the replay buffer (Record.Attributes nil meanwhile): up to
	// maxRecent items are kept, and 15 attributes take about 60 bytes
	// without a pointer that way, against about 750 bytes of 30 pointers
	// that the collector scans again and again as Attributes. Next
	// decodes them for the reader.
	attrs string
}

// packLive puts items' attributes in their binary form, all of them in
// one allocation, as the replay buffer keeps them.
func packLive(items []StreamItem) {
	size := 0
	for i := range items {
		size += 1 + 8*len(items[i].Record.Attributes)
	}
	buf := make([]byte, 0, size)
	var spans [][2]int
	for i := range items {
		start := len(buf)
		buf, _ = items[i].Record.Attributes.AppendBinary(buf) // it cannot fail
		spans = append(spans, [2]int{start, len(buf)})
	}
	all := string(buf)
	for i := range items {
		items[i].attrs, items[i].Record.Attributes = all[spans[i][0]:spans[i][1]], nil
	}
}

// unpackLive decodes the attributes of items that packLive packed.
func unpackLive(items []StreamItem) error {
	for i := range items {
		it := &items[i]
		if it.attrs == "" {
			continue
		}
		if err := it.Record.Attributes.UnmarshalBinary([]byte(it.attrs)); err != nil {
			return err
		}
		it.attrs = ""
	}
	return nil
}

// ErrStreamBehind ends a subscription whose reader fell so far behind that
// reports it had not read left the replay buffer. The client reconnects
// with the last id it saw and gets what the buffer still holds.
var ErrStreamBehind = broker.ErrBehind

// ErrStreamClosed is the reason of a subscription ended by Close.
var ErrStreamClosed = broker.ErrClosed

// Subscription follows an account's live location reports. It holds no
// buffer of its own: reports stay in the service's shared replay buffer
// and the subscriber reads them from there by sequence number, so an idle
// subscription costs a few hundred bytes. Ready signals that reports may be
// waiting, Next reads them, and Done is closed when the subscription ends
// (Err says why): Close, the key no longer valid (see CheckStreams), or the
// reader falling behind the replay buffer. One goroutine reads a
// subscription; Close may be called from any.
type Subscription struct {
	sub *broker.Subscription[StreamItem]
	// closed, if set, is called by Close (a share stream leaves its
	// link's list).
	closed func()
}

// Ready is signalled when reports may be waiting for Next.
func (sub *Subscription) Ready() <-chan struct{} { return sub.sub.Ready() }

// Done is closed when the subscription has ended.
func (sub *Subscription) Done() <-chan struct{} { return sub.sub.Done() }

// Err returns why the subscription ended, or nil while it is open.
func (sub *Subscription) Err() error { return sub.sub.Err() }

// Close ends the subscription and frees its key's stream slot.
func (sub *Subscription) Close() {
	sub.sub.Close()
	if sub.closed != nil {
		sub.closed()
	}
}

// Next returns up to max reports that arrived since the last call, oldest
// first (nil when none is waiting). When more are waiting, Ready is
// signalled again. It returns the subscription's Err once it has ended;
// a subscriber that fell behind the replay buffer ends with ErrStreamBehind.
func (sub *Subscription) Next(max int) ([]StreamItem, error) {
	items, err := sub.sub.Next(max)
	if err == nil {
		err = unpackLive(items) // the buffer's own packing: it does not fail
	}
	return items, err
}

// maxRecent bounds the replay buffer: a reconnecting client gets up to
// ten minutes back, or the last maxRecent reports, whichever is less.
const maxRecent = 100_000

// newBroker returns the broker of the service's live streams, in one
// process: subscribers see the reports ingested by the server they are
// connected to (and, once it follows a LiveFeed, those of every server),
// and the per-key stream cap counts this server's streams. Ids start at
// now, so that they keep increasing across restarts.
func newBroker(now time.Time) *broker.Broker[StreamItem] {
	return broker.New(broker.Config[StreamItem]{
		Window:    StreamReplayWindow,
		MaxRecent: maxRecent,
		Stamp:     func(it *StreamItem, id uint64) { it.ID = strconv.FormatUint(id, 10) },
		Topic:     func(it *StreamItem) string { return it.VehicleID },
	}, now)
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
	sub, open := s.stream.Subscribe(broker.Request{
		Slot:    streamSlot(p),
		Limit:   p.Account.Plan.Limits().StreamsPerKey,
		KeyHash: p.Key.Hash,
		Topics:  vehicleIDs,
		Resume:  lastEventID != "",
		After:   after,
	}, s.Now())
	if sub == nil {
		plan := p.Account.Plan
		if !plan.Valid() {
			plan = PlanFree
		}
		return nil, Errorf(CodeRateLimitExceeded,
			"This API key has %d live streams open, the most the %s plan allows; close one first.", open, plan)
	}
	return &Subscription{sub: sub}, nil
}

// streamSlot names whose stream allowance a principal's subscriptions
// take: its key's, within its account.
func streamSlot(p Principal) broker.Slot { return broker.Slot{Account: p.Account.ID, Key: p.Key.ID} }

// OpenStreams returns how many live streams the key has open on this
// service.
func (s *Service) OpenStreams(p Principal) int { return s.stream.Open(streamSlot(p)) }

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
	for h := range s.stream.Keys() {
		_, err := s.principalByHash(ctx, h)
		switch ErrorCode(err) {
		case "":
		case CodeUnauthorized:
			ended += s.stream.EndKey(h, err)
		default:
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return ended, firstErr
}

// EndStreams ends every live stream open on the service, for a server that
// is shutting down: the stream requests then finish instead of holding the
// shutdown until its deadline, and their clients reconnect (to another
// server, or to this one restarted) with Last-Event-ID. It returns how many
// streams it ended.
func (j Jobs) EndStreams() int { return j.s.stream.EndAll() }
