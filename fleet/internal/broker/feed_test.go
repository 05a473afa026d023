package broker

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func feedBatch(first uint64, account string, topics ...string) Batch[item] {
	b := Batch[item]{FirstID: first, Account: account, At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	for _, t := range topics {
		b.Items = append(b.Items, item{Topic: t})
	}
	return b
}

func feedSub(b *Broker[item], account string, after uint64) *Subscription[item] {
	sub, _ := b.Subscribe(Request{Slot: Slot{Account: account}, Limit: 100, Resume: after != 0, After: after}, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return sub
}

func ids(items []item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestBrokerFollowsTheFeed: once the broker takes items from the shared
// feed, their ids are the feed's (with gaps), items it already took are
// skipped, a subscriber open before it followed gets the feed's items,
// and one that resumed after an id the feed has not yet delivered here
// gets only the items after it.
func TestBrokerFollowsTheFeed(t *testing.T) {
	is := is.New(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := newBroker(now)
	early := feedSub(b, "acc", 0)
	b.Publish("acc", []item{{Topic: "veh_local"}}, now)
	is.True(!b.Following())
	is.True(!b.Fed())

	b.PublishFeed([]Batch[item]{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(105, "other", "veh_x")}, now)
	is.True(b.Following())
	b.PublishFeed([]Batch[item]{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(107, "acc", "veh_c")}, now) // 100, 101 again
	got, err := early.Next(10)
	is.NoErr(err)
	is.Equal(ids(got), []string{"100", "101", "107"}) // the local item is gone, the repeats skipped

	// A client resumes here after 110, seen on a server ahead of this one.
	resumed := feedSub(b, "acc", 110)
	b.PublishFeed([]Batch[item]{feedBatch(109, "acc", "veh_d", "veh_e", "veh_f")}, now)
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
	b.StopFollowing()
	is.True(!b.Following())
	is.True(b.Fed()) // items still go to the feed meanwhile
	b.PublishFeed([]Batch[item]{feedBatch(100, "acc", "veh_a", "veh_b"), feedBatch(109, "acc", "veh_d", "veh_e", "veh_f"), feedBatch(120, "acc", "veh_g")}, now)
	got, err = early.Next(10)
	is.NoErr(err)
	is.Equal(ids(got), []string{"120"})
}
