package fleet

import (
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"net/netip"
	"sync"
	"time"
)

// The sign-in throttle. Decision: an attempt counts before its password is
// checked, so that attempts made at once cannot all slip under the
// allowance; an attempt that turns out right is taken back. The count is
// kept per server process, in memory (several servers sharing a store each
// allow these numbers); it brakes guessing, it does not lock accounts: a
// person's right password is never refused because of failures made from
// another address.
const (
	// LoginFailures is how many sign-ins for one e-mail address from one
	// client address may fail within LoginWindow; further attempts of that
	// pair are refused (rate_limit_exceeded) until the window has room.
	LoginFailures = 10
	// AddressLoginFailures is how many sign-ins from one client address,
	// whatever the e-mail addresses, may fail within LoginWindow. It is
	// larger than LoginFailures so that people who share an address (an
	// office behind one NAT) are not refused for one colleague's typing;
	// it still bounds what one address can try across many people.
	AddressLoginFailures = 30
	// LoginWindow is the sliding window of the sign-in throttle.
	LoginWindow = 15 * time.Minute
	// MaxLoginDelay bounds the per-e-mail brake: after LoginFailures
	// failures for an e-mail address within LoginWindow, from any
	// addresses, each attempt for it waits 1 s, doubling with each further
	// failure, at most this long — and is then judged like any other. A
	// right password is slowed, never refused.
	MaxLoginDelay = 10 * time.Second
	// MaxLoginSubjects bounds the throttle's memory: how many addresses,
	// pairs and e-mail addresses it follows at once (the least recently
	// seen are forgotten first). Each takes a few hundred bytes.
	MaxLoginSubjects = 100_000
	// PasswordHashWait is how long an attempt waits for one of the
	// Options.MaxPasswordHashes slots (or less, if its request ends first)
	// before it is answered unavailable, with Retry-After.
	PasswordHashWait = 5 * time.Second
	// passwordBusyRetry is the Retry-After of that answer.
	passwordBusyRetry = 2 * time.Second
)

// throttleKey names what a count is kept for: a kind and its parts, hashed
// to a fixed size so that an attacker's long e-mail addresses cost the
// throttle no more memory than short ones.
type throttleKey [16]byte

func keyOf(kind string, parts ...string) throttleKey {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	var k throttleKey
	copy(k[:], h.Sum(nil))
	return k
}

// throttleAddr is the form a client address is counted in: an IPv6
// address by its /64, the block one subscriber is given (else each of
// its 2^64 addresses would have an allowance of its own); anything else
// as it is.
func throttleAddr(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.WithZone("").Prefix(64)
		return p.String()
	}
	return a.String()
}

// A limit is an allowance of attempts within LoginWindow for one key.
type limit struct {
	key       throttleKey
	allowance int
}

// maxTimes is the most attempt times kept for one key: the largest
// allowance, which is also more failures than the per-e-mail brake
// needs to reach MaxLoginDelay.
const maxTimes = AddressLoginFailures

type throttleEntry struct {
	key   throttleKey
	times []int64 // Unix nanoseconds, in the order recorded
}

// loginThrottle counts attempts per key over a sliding window, in memory,
// for at most max keys (least recently used forgotten first).
type loginThrottle struct {
	mu      sync.Mutex
	max     int
	entries map[throttleKey]*list.Element
	lru     list.List // of *throttleEntry, most recently used first
}

func (l *loginThrottle) init(max int) {
	l.max = max
	l.entries = map[throttleKey]*list.Element{}
	l.lru.Init()
}

// get returns the entry of k with its times pruned to the window at now,
// or nil; it counts as a use.
func (l *loginThrottle) get(k throttleKey, now int64) *throttleEntry {
	el := l.entries[k]
	if el == nil {
		return nil
	}
	e := el.Value.(*throttleEntry)
	keep := e.times[:0]
	for _, t := range e.times {
		if now < t+int64(LoginWindow) {
			keep = append(keep, t)
		}
	}
	e.times = keep
	if len(e.times) == 0 {
		l.lru.Remove(el)
		delete(l.entries, k)
		return nil
	}
	l.lru.MoveToFront(el)
	return e
}

// add records an attempt at now for k.
func (l *loginThrottle) add(k throttleKey, now int64) {
	e := l.get(k, now)
	if e == nil {
		for len(l.entries) >= l.max {
			last := l.lru.Back()
			delete(l.entries, last.Value.(*throttleEntry).key)
			l.lru.Remove(last)
		}
		e = &throttleEntry{key: k}
		l.entries[k] = l.lru.PushFront(e)
	}
	if len(e.times) >= maxTimes {
		e.times = append(e.times[:0], e.times[1:]...)
	}
	e.times = append(e.times, now)
}

// admit counts an attempt against every limit, or refuses it: it returns
// how long until each limit would have room (0 if all have) and records
// the attempt only if all have. Checking and recording are one step, so
// attempts made at once get exactly the allowance.
func (l *loginThrottle) admit(now time.Time, limits ...limit) (ticket, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := now.UnixNano()
	var wait time.Duration
	for _, lim := range limits {
		if e := l.get(lim.key, t); e != nil && len(e.times) >= lim.allowance {
			first := e.times[len(e.times)-lim.allowance]
			wait = max(wait, time.Duration(first+int64(LoginWindow)-t))
		}
	}
	if wait > 0 {
		return ticket{}, wait
	}
	tk := ticket{at: t}
	for _, lim := range limits {
		l.add(lim.key, t)
		tk.keys = append(tk.keys, lim.key)
	}
	return tk, 0
}

// A ticket is an attempt admit counted: take it back with cancel when the
// attempt was not a failure.
type ticket struct {
	keys []throttleKey
	at   int64
}

// cancel takes back what admit recorded for tk.
func (l *loginThrottle) cancel(tk ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range tk.keys {
		el := l.entries[k]
		if el == nil {
			continue
		}
		e := el.Value.(*throttleEntry)
		for i := len(e.times) - 1; i >= 0; i-- {
			if e.times[i] == tk.at {
				e.times = append(e.times[:i], e.times[i+1:]...)
				break
			}
		}
		if len(e.times) == 0 {
			l.lru.Remove(el)
			delete(l.entries, k)
		}
	}
}

// fail records a failure at now for k (the per-e-mail brake's count).
func (l *loginThrottle) fail(now time.Time, k throttleKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(k, now.UnixNano())
}

// count returns how many attempts k has within the window at now.
func (l *loginThrottle) count(now time.Time, k throttleKey) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.get(k, now.UnixNano()); e != nil {
		return len(e.times)
	}
	return 0
}

// forget drops what is counted for k.
func (l *loginThrottle) forget(k throttleKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el := l.entries[k]; el != nil {
		l.lru.Remove(el)
		delete(l.entries, k)
	}
}

// size returns how many keys the throttle follows.
func (l *loginThrottle) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// loginDelay is the per-e-mail brake after failures failures within the
// window: none below LoginFailures, then 1 s doubling, at most
// MaxLoginDelay.
func loginDelay(failures int) time.Duration {
	if failures < LoginFailures {
		return 0
	}
	return min(time.Second<<min(failures-LoginFailures, 8), MaxLoginDelay)
}

// rateLimited is the refusal of an attempt over an allowance.
func rateLimited(format string, wait time.Duration) error {
	mins := int((wait + time.Minute - 1) / time.Minute)
	return WithRetryAfter(Errorf(CodeRateLimitExceeded, format, mins), wait)
}

func errPasswordBusy() *Error {
	return &Error{Code: CodeUnavailable, Message: "The server is busy checking passwords. Try again in a few seconds."}
}

// inSlot runs fn in one of the service's password hash slots, or answers
// unavailable, with Retry-After, when none comes free within
// PasswordHashWait (or before ctx ends).
func (s *Service) inSlot(ctx context.Context, fn func()) error {
	if !s.hashes.Do(ctx, fn) {
		return WithRetryAfter(errPasswordBusy(), passwordBusyRetry)
	}
	return nil
}

// verifyPassword is Options.Passwords' Verify in one of the service's hash
// slots.
func (s *Service) verifyPassword(ctx context.Context, hash, plain string) (ok bool, err error) {
	err = s.inSlot(ctx, func() { ok = s.opts.Passwords.Verify(hash, plain) })
	return ok, err
}

// hashPassword is Options.Passwords' Hash in one of the service's hash
// slots.
func (s *Service) hashPassword(ctx context.Context, plain string) (hash string, err error) {
	err = s.inSlot(ctx, func() { hash = s.opts.Passwords.Hash(plain) })
	return hash, err
}

// sleepCtx waits d, or until ctx ends (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfterError is an *Error that says when to try again.
type retryAfterError struct {
	err   *Error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// WithRetryAfter returns e saying that the request may be tried again
// after d (an adapter's Retry-After); ErrorCode and ErrorMessage see e.
func WithRetryAfter(e *Error, d time.Duration) error { return &retryAfterError{err: e, after: d} }

// RetryAfter returns how long err says to wait before trying again, and
// whether it says.
func RetryAfter(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}
