package fleet

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func feedBatch(first uint64, account string, vehicles ...string) LiveBatch {
	b := LiveBatch{FirstID: first, AccountID: account, At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	for _, v := range vehicles {
		b.Items = append(b.Items, StreamItem{VehicleID: v, Record: LocationRecord{VehicleID: v}})
	}
	return b
}

func feedSub(b *broker, account string) *Subscription {
	sub := &Subscription{b: b, accountID: account, ready: make(chan struct{}, 1), done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[string]map[*Subscription]struct{}{}
		b.perKey = map[streamSlot]int{}
	}
	if b.subs[account] == nil {
		b.subs[account] = map[*Subscription]struct{}{}
	}
	b.subs[account][sub] = struct{}{}
	b.perKey[sub.slot]++
	return sub
}

func ids(items []StreamItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestBrokerFollowsTheFeed: once the broker takes reports from the shared
// feed, their ids are the feed's (with gaps), reports it already took are
// skipped, a subscriber open before it followed gets the feed's reports,
// and one that resumed after an id the feed has not yet delivered here
// gets only the reports after it.
func TestBrokerFollowsTheFeed(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var b broker
	b.init(now)
	early := feedSub(&b, "acc")
	b.publish("acc", []StreamItem{{VehicleID: "veh_local"}}, now)
	is.True(!b.isFollowing())

	b.publishFeed([]LiveBatch{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(105, "other", "veh_x")}, now)
	is.True(b.isFollowing())
	b.publishFeed([]LiveBatch{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(107, "acc", "veh_c")}, now) // 100, 101 again
	got, err := early.Next(10)
	is.NoErr(err)
	is.Equal(ids(got), []string{"100", "101", "107"}) // the local report is gone, the repeats skipped

	// A client resumes here after 110, seen on a server ahead of this one.
	b.mu.Lock()
	resumed := &Subscription{b: &b, accountID: "acc", ready: make(chan struct{}, 1), done: make(chan struct{}), after: 110}
	b.subs["acc"][resumed] = struct{}{}
	b.mu.Unlock()
	b.publishFeed([]LiveBatch{feedBatch(109, "acc", "veh_d", "veh_e", "veh_f")}, now)
	got, err = resumed.Next(10)
	is.NoErr(err)
	is.Equal(ids(got), []string{"111"})
	got, err = early.Next(2) // a reader reads in parts across the gaps
	is.NoErr(err)
	is.Equal(ids(got), []string{"109", "110"})
	got, err = early.Next(2)
	is.NoErr(err)
	is.Equal(ids(got), []string{"111"})
	is.Equal(b.search(108), b.search(109)) // search finds the next id over a gap

	// The follower lost its connection and follows again: it reads the
	// window back; what the streams had is not repeated.
	b.mu.Lock()
	b.following = false
	b.mu.Unlock()
	is.True(b.isFed()) // reports still go to the feed meanwhile
	b.publishFeed([]LiveBatch{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(109, "acc", "veh_d", "veh_e", "veh_f"), feedBatch(120, "acc", "veh_g")}, now)
	got, err = early.Next(10)
	is.NoErr(err)
	is.Equal(ids(got), []string{"120"})
}
