// Package unknownlimit bounds how often package fleet records the
// attempts of identifiers no device has: per address (host), a number a
// minute, and for the whole server a number a second (a token bucket as
// deep as a second's). What an attempt is, what is recorded and the
// figures are fleet's (UnknownRecordsPerMinute, UnknownRecordsPerSecond).
package unknownlimit

import (
	"sync"
	"time"
)

// Limit counts, per address, the attempts recorded in the current minute,
// and bounds the records of all addresses together to perSecond. It is
// safe for concurrent use.
type Limit struct {
	mu sync.Mutex
	m  map[string]minute
	// tokens is the server's bucket at last: it fills at perSecond a
	// second, up to that many.
	tokens float64
	last   time.Time

	perSecond    float64
	perMinute    int
	maxAddresses int
}

type minute struct {
	start time.Time
	n     int
}

// Init makes the limit new: perSecond records a second for the server,
// perMinute a minute for an address, and the minutes of maxAddresses
// addresses kept at most (past it, an attempt from a new address is not
// recorded).
func (l *Limit) Init(perSecond, perMinute, maxAddresses int) {
	l.m = map[string]minute{}
	l.perSecond, l.perMinute, l.maxAddresses = float64(perSecond), perMinute, maxAddresses
	l.tokens = l.perSecond
}

// take takes a token of the server's bucket at now, if it has one.
func (l *Limit) take(now time.Time) bool {
	if now.After(l.last) {
		if !l.last.IsZero() {
			l.tokens = min(l.perSecond, l.tokens+now.Sub(l.last).Seconds()*l.perSecond)
		}
		l.last = now
	}
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// Allow reports whether one more attempt from host may be recorded at now:
// within its address's minute, and within the server's second.
func (l *Limit) Allow(host string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := l.m[host]
	if !ok || now.Sub(w.start) >= time.Minute || now.Before(w.start) {
		if !ok && len(l.m) >= l.maxAddresses {
			for h, old := range l.m {
				if now.Sub(old.start) >= time.Minute || now.Before(old.start) {
					delete(l.m, h)
				}
			}
			if len(l.m) >= l.maxAddresses {
				return false
			}
		}
		w = minute{start: now}
	}
	if w.n >= l.perMinute || !l.take(now) {
		return false
	}
	w.n++
	l.m[host] = w
	return true
}
