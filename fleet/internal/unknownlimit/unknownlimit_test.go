package unknownlimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// An address gets perMinute records a minute, then none until its minute
// is over; another address has its own minute.
func TestPerAddressMinute(t *testing.T) {
	is := is.New(t)
	var l Limit
	l.Init(1000, 3, 10)
	for i := range 3 {
		is.True(l.Allow("a", t0.Add(time.Duration(i)*time.Second)))
	}
	is.True(!l.Allow("a", t0.Add(59*time.Second)))
	is.True(l.Allow("b", t0.Add(59*time.Second)))
	is.True(l.Allow("a", t0.Add(time.Minute))) // a new minute
}

// All addresses together get perSecond records, refilled as time passes,
// never more than a second's worth at once.
func TestServerSecond(t *testing.T) {
	is := is.New(t)
	var l Limit
	l.Init(5, 100, 100)
	n := 0
	for i := range 20 {
		if l.Allow(fmt.Sprint("h", i), t0) {
			n++
		}
	}
	is.Equal(n, 5) // a second's bucket
	is.True(!l.Allow("h0", t0.Add(100*time.Millisecond)))
	is.True(l.Allow("h0", t0.Add(200*time.Millisecond))) // one token back
	n = 0
	for i := range 20 {
		if l.Allow(fmt.Sprint("x", i), t0.Add(time.Hour)) {
			n++
		}
	}
	is.Equal(n, 5) // an hour later, still a second's worth at most
}

// Past maxAddresses, a new address is not recorded until a minute of
// another is over, which then makes room.
func TestAddressesBounded(t *testing.T) {
	is := is.New(t)
	var l Limit
	l.Init(1000, 10, 2)
	is.True(l.Allow("a", t0))
	is.True(l.Allow("b", t0))
	is.True(!l.Allow("c", t0.Add(time.Second)))
	is.True(l.Allow("a", t0.Add(time.Second))) // a known address still is
	is.True(l.Allow("c", t0.Add(time.Minute))) // a and b's minutes are over
}
