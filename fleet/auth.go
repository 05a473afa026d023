package fleet

import (
	"context"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/cache"
)

// authCache keeps keys looked up by hash for a short time
// (Options.AuthCacheTTL), so that the hot path of every request reads no
// store; past maxAuthEntries it starts again empty (entries are cheap to
// fetch again).
type authCache = cache.Bounded[[32]byte, authEntry]

const maxAuthEntries = 100_000

type authEntry struct {
	p       Principal
	fetched time.Time
}

// errInvalidKey is the refusal of an unknown or malformed key: a new value
// each time, so that no caller changes another's.
func errInvalidKey() *Error {
	return &Error{Code: CodeUnauthorized, Message: "The API key is invalid."}
}

// Authenticate returns the principal of a key secret, or unauthorized when
// the secret is malformed, unknown, revoked or expired. A malformed secret is
// refused without a store lookup. On its hot path (a key seen within
// AuthCacheTTL) it reads no store and does not allocate.
func (s *Service) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !CheckSecret(secret) {
		return Principal{}, errInvalidKey()
	}
	return s.principalByHash(ctx, HashSecret(secret))
}

// principalByHash is Authenticate after the secret is hashed: the principal
// of the key whose secret hashes to h, through the key cache.
func (s *Service) principalByHash(ctx context.Context, h [32]byte) (Principal, error) {
	now := s.now()
	e, ok := s.auth.Get(h)
	if !ok || now.Sub(e.fetched) >= s.opts.AuthCacheTTL || now.Before(e.fetched) {
		k, a, err := s.store.KeyByHash(ctx, h)
		if err != nil {
			if ErrorCode(err) == CodeNotFound {
				return Principal{}, errInvalidKey()
			}
			return Principal{}, err // a fault is unavailable, anything else a bug
		}
		k.Hash = h
		e = authEntry{p: Principal{Key: k, Account: a}, fetched: now}
		s.auth.Put(h, e)
	}
	switch e.p.Key.Status(now) {
	case KeyRevoked:
		return Principal{}, &Error{Code: CodeUnauthorized, Message: "The API key is invalid: it has been revoked."}
	case KeyExpired:
		return Principal{}, &Error{Code: CodeUnauthorized, Message: "The API key is invalid: it has expired."}
	}
	return e.p, nil
}

// Admit takes one request from the key's hourly allowance and records it in
// the key's usage. The returned Quota says whether the request may proceed;
// a refused request is not counted against the allowance.
func (e Edge) Admit(ctx context.Context, p Principal) (Quota, error) {
	s := e.s
	now := s.Now() // at the stores' precision, so every store answers alike
	q, err := s.store.TakeQuota(ctx, p.Key.ID, p.Account.RateLimitPerHour(), now)
	if err != nil {
		return Quota{}, err
	}
	s.usage.add(p.Key.ID, now, !q.Allowed)
	if !q.Allowed {
		s.stats.rejectedKey.Add(1)
	}
	return q, nil
}

// AddressLimit returns the hourly allowance per client address of requests
// that cannot be tied to a valid key, or 0 when that brake is off.
func (e Edge) AddressLimit() int { return max(0, e.s.opts.AddressLimit) }

// AdmitAddress takes one request from the allowance of a client address whose
// request could not be tied to a valid key (a brake on key guessing). With
// the brake off (AddressLimit 0) it takes nothing and allows the request,
// with a Quota of Limit 0.
func (e Edge) AdmitAddress(ctx context.Context, addr string) (Quota, error) {
	s := e.s
	if s.Edge().AddressLimit() == 0 {
		return Quota{Allowed: true}, nil
	}
	q, err := s.store.TakeQuota(ctx, "addr:"+addr, s.opts.AddressLimit, s.Now())
	if err != nil {
		return Quota{}, err
	}
	if !q.Allowed {
		s.stats.rejectedAddress.Add(1)
	}
	return q, nil
}
