package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/broker"
)

// LiveFeed is implemented by a store that several servers share (sqlstore
// on PostgreSQL): it carries the live location reports of every server to
// every other, so that a stream on any server carries the reports ingested
// by all of them, with ids that every server gives alike, so that a client
// resumes with Last-Event-ID on any server.
//
// A service whose store is a LiveFeed, once it has followed it (Run does,
// see Jobs.FollowLive), appends the reports it ingests to the feed instead
// of its own broker, and its broker takes every report, its own included,
// from the feed in id order. A service that never followed the feed
// publishes to its own streams only, as with any other store.
type LiveFeed interface {
	// AppendLive appends one ingest's reports, of one account, to the feed:
	// they get the feed's next ids, in the order of the feed.
	AppendLive(ctx context.Context, accountID string, items []StreamItem, at time.Time) error
	// FollowLive calls deliver, from one goroutine, with the batches that
	// every server appends, in id order, until ctx ends: first once with
	// those appended since `since` that the feed still holds (none, maybe)
	// as soon as it follows the feed. It returns ctx's error, or why it
	// could not go on. When ctx carries LiveListeners, the feed may read
	// less often while they say that no stream listens.
	FollowLive(ctx context.Context, since time.Time, deliver func([]LiveBatch)) error
	// PurgeLive forgets the batches appended before before.
	PurgeLive(ctx context.Context, before time.Time) (int, error)
}

// liveListenersKey is the context key of WithLiveListeners.
type liveListenersKey struct{}

// WithLiveListeners returns ctx carrying n, which says how many live
// streams a LiveFeed's follower delivers to now: Jobs.FollowLive passes its
// service's. A feed that its follower reads every few milliseconds while
// reports arrive may read a few times a second while none listens: the
// batches still come in order, those read later together, and a stream
// that opens meanwhile gets them within that wait.
func WithLiveListeners(ctx context.Context, n func() int) context.Context {
	return context.WithValue(ctx, liveListenersKey{}, n)
}

// LiveListeners returns what WithLiveListeners put in ctx, or nil.
func LiveListeners(ctx context.Context) func() int {
	n, _ := ctx.Value(liveListenersKey{}).(func() int)
	return n
}

// IngestLiveFeed is a LiveFeed that can append a location batch's live
// reports with the batch's write-set (IngestWrites.Live, applied by
// LocationTx.ApplyIngest), in its transaction: the reports take their ids
// as the batch commits, and the service appends nothing after the commit.
// sqlstore on PostgreSQL is one.
type IngestLiveFeed interface {
	LiveFeed
	// AppendsLiveWithIngest reports whether ApplyIngest appends
	// IngestWrites.Live to the feed.
	AppendsLiveWithIngest() bool
}

// liveWithIngest reports whether a batch's live reports go to the shared
// feed with its write-set (IngestLiveFeed), rather than after its commit
// (publishLive).
func (s *Service) liveWithIngest() bool {
	feed, ok := s.store.(IngestLiveFeed)
	return ok && feed.AppendsLiveWithIngest() && s.stream.Fed()
}

// ErrNoLiveFeed is what a store that could be a LiveFeed but is not one
// (sqlstore on SQLite, whose file one process owns) returns from its
// methods.
var ErrNoLiveFeed = errors.New("fleet: the store shares no live feed")

// LiveBatch is one ingest's reports as the feed delivers them: ids
// FirstID, FirstID+1, ... in the order of Items.
type LiveBatch struct {
	FirstID   uint64
	AccountID string
	At        time.Time
	Items     []StreamItem // VehicleID and Record
}

// FollowLive makes the service's live streams follow the store's shared
// feed until ctx ends (Run calls it when the store is a LiveFeed): from
// then on, the reports this service ingests go to the feed, and its streams
// carry those of every server following the same feed. When the feed
// fails, the reports ingested meanwhile still go to it, and it follows
// again after a second, reading back what it missed (up to the replay
// window) without repeating what its streams already had. It returns at once when the store is not a LiveFeed.
func (j Jobs) FollowLive(ctx context.Context) {
	s := j.s
	feed, ok := s.store.(LiveFeed)
	if !ok {
		return
	}
	s.followFeed(ctx, "follow the shared live feed", func() error {
		return feed.FollowLive(WithLiveListeners(ctx, s.stream.Clients), s.Now().Add(-StreamReplayWindow), func(bs []LiveBatch) {
			for i := range bs {
				packLive(bs[i].Items)
			}
			s.stream.PublishFeed(feedBatches(bs), s.Now())
		})
	}, s.stream.StopFollowing)
}

// followFeed runs follow, which follows one of the store's shared feeds
// until it fails or ctx ends, again a second after each failure (logged
// as what), until ctx ends or the store says it has no feed
// (ErrNoLiveFeed). stopped, if set, runs each time follow returns.
func (s *Service) followFeed(ctx context.Context, what string, follow func() error, stopped func()) {
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-retry.C:
		}
		err := follow()
		if stopped != nil {
			stopped()
		}
		if ctx.Err() != nil || errors.Is(err, ErrNoLiveFeed) {
			return
		}
		s.log.Error(what, "err", err)
		retry.Reset(time.Second)
	}
}

// publishLive puts one ingest's live reports on the streams: on the shared
// feed when the service follows one, on this service's broker otherwise.
func (s *Service) publishLive(ctx context.Context, accountID string, items []StreamItem, now time.Time) {
	if len(items) == 0 {
		return
	}
	if feed, ok := s.store.(LiveFeed); ok && s.stream.Fed() {
		if err := feed.AppendLive(context.WithoutCancel(ctx), accountID, items, now); err != nil && !errors.Is(err, ErrNoLiveFeed) {
			// The reports are stored; only the live streams miss them.
			s.log.Error("append to the shared live feed", "err", err)
		}
		return
	}
	packLive(items)
	s.stream.Publish(accountID, items, now)
}

// feedBatches are the feed's batches as the broker takes them.
func feedBatches(bs []LiveBatch) []broker.Batch[StreamItem] {
	out := make([]broker.Batch[StreamItem], len(bs))
	for i, b := range bs {
		out[i] = broker.Batch[StreamItem]{FirstID: b.FirstID, Account: b.AccountID, At: b.At, Items: b.Items}
	}
	return out
}

// FollowingLive reports whether the service's live streams follow the
// store's shared feed (see FollowLive).
func (j Jobs) FollowingLive() bool { return j.s.stream.Following() }
