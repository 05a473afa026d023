package fleet

import (
	"context"
	"slices"
	"strings"
	"time"
)

// AccountParams are what an operator chooses when creating an account.
type AccountParams struct {
	CompanyName string
	Plan        Plan // "": free
	// RateLimitPerHour is the account's own hourly allowance per key; zero
	// means the plan's. It only ever raises the plan's allowance.
	RateLimitPerHour int
}

// NewKey is a key as created: the stored key and its secret, which is never
// available again.
type NewKey struct {
	Key    Key
	Secret string
}

// Account returns the principal's account as stored now.
func (s *Service) Account(ctx context.Context, p Principal) (Account, error) {
	var a Account
	err := s.view(ctx, func(tx Tx) (err error) {
		a, err = tx.Account(p.Account.ID)
		return err
	})
	return a, err
}

func newKey(accountID string, params KeyParams, now time.Time) NewKey {
	secret := NewSecret()
	env := params.Environment
	if env == "" {
		env = "production"
	}
	var exp *time.Time
	if params.ExpiresAt != nil {
		exp = ptr(Timestamp(*params.ExpiresAt))
	}
	return NewKey{
		Key: Key{
			ID:          NewID(PrefixKey),
			AccountID:   accountID,
			Name:        strings.TrimSpace(params.Name),
			Prefix:      secret[:KeyPrefixLen],
			Hash:        HashSecret(secret),
			Permissions: slices.Clone(params.Permissions),
			Environment: env,
			CreatedAt:   now,
			ExpiresAt:   exp,
		},
		Secret: secret,
	}
}

// CreateKey creates a key in the principal's account. Permissions default to
// the creating key's own; a key can only grant permissions it holds. A key
// cannot outlive the key that creates it: without an expiry it takes the
// creator's, and a later one is a validation_error naming expires_at. An
// account with as many active keys as its plan allows (ActiveKeys) is a
// conflict, counted in the creating transaction.
func (s *Service) CreateKey(ctx context.Context, p Principal, params KeyParams) (NewKey, error) {
	if err := p.allow("CreateKey"); err != nil {
		return NewKey{}, err
	}
	now := s.Now()
	if params.Permissions == nil {
		params.Permissions = slices.Clone(p.Key.Permissions)
	}
	var v Validator
	params.validate(&v, now)
	if limit := p.Key.ExpiresAt; limit != nil {
		switch {
		case params.ExpiresAt == nil:
			params.ExpiresAt = ptr(*limit)
		case Timestamp(*params.ExpiresAt).After(*limit):
			v.Add("expires_at", "must not be later than %s, when the key creating it expires", limit.Format(time.RFC3339Nano))
		}
	}
	if err := v.Err(); err != nil {
		return NewKey{}, err
	}
	if !p.Key.Permissions.Covers(params.Permissions) {
		return NewKey{}, Errorf(CodeInsufficientPermissions, "A key can only grant permissions it holds itself.")
	}
	params.Permissions = normalisePermissions(params.Permissions)
	nk := newKey(p.Account.ID, params, now)
	err := s.update(ctx, func(tx Tx) error {
		if err := checkKeyCap(tx, p.Account, now, ""); err != nil {
			return err
		}
		return tx.CreateKey(nk.Key)
	})
	if err != nil {
		return NewKey{}, err
	}
	return nk, nil
}

// checkKeyCap returns conflict when the account has as many active keys at
// now as its plan allows, so one more may not become active; hint ends the
// message. It runs in the transaction that adds the key (serialisable), so
// concurrent creates cannot pass the cap together.
func checkKeyCap(tx KeyTx, a Account, now time.Time, hint string) error {
	n, err := tx.CountActiveKeys(a.ID, now)
	if err != nil {
		return err
	}
	if limit := a.Plan.Limits().ActiveKeys; n >= limit {
		return Errorf(CodeConflict, "An account may have at most %d active API keys and this account has %d; revoke one first%s.", limit, n, hint)
	}
	return nil
}

// mayActOn returns insufficient_permissions, naming what is lacking, unless
// the principal may act on (rotate, revoke) key k: a key may always act on
// itself, and on another key only when it holds every permission that key
// holds, so that no key can take over or remove a stronger one.
func (p Principal) mayActOn(k Key) error {
	if k.ID == p.Key.ID {
		return nil
	}
	var lacks []string
	for _, perm := range k.Permissions {
		if !p.Key.Permissions.Allows(perm) {
			lacks = append(lacks, perm)
		}
	}
	if len(lacks) > 0 {
		return Errorf(CodeInsufficientPermissions, "This API key cannot act on key %s: it lacks %s.", k.ID, strings.Join(lacks, ", "))
	}
	return nil
}

func normalisePermissions(ps []Permission) []Permission {
	out := slices.Clone(ps)
	slices.Sort(out)
	out = slices.Compact(out)
	if slices.Contains(out, PermAll) {
		return []Permission{PermAll}
	}
	return out
}

// ListKeys lists the principal's account's keys in creation order.
func (s *Service) ListKeys(ctx context.Context, p Principal, q ListQuery) (List[Key], error) {
	if err := p.allow("ListKeys"); err != nil {
		return List[Key]{}, err
	}
	page, limit, err := q.page(PrefixKey, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Key]{}, err
	}
	var keys []Key
	err = s.view(ctx, func(tx Tx) (err error) {
		keys, err = tx.Keys(p.Account.ID, page)
		return err
	})
	if err != nil {
		return List[Key]{}, err
	}
	return finish(keys, limit, func(k Key) string { return k.ID }), nil
}

// Key returns one of the principal's account's keys.
func (s *Service) Key(ctx context.Context, p Principal, id string) (Key, error) {
	if err := p.allow("Key"); err != nil {
		return Key{}, err
	}
	var k Key
	err := s.view(ctx, func(tx Tx) (err error) {
		k, err = s.getKey(tx, p, id)
		return err
	})
	return k, err
}

func (s *Service) getKey(tx KeyTx, p Principal, id string) (Key, error) {
	if !ValidID(PrefixKey, id) {
		return Key{}, NotFound("API key", id)
	}
	k, err := tx.Key(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Key{}, NotFound("API key", id)
	}
	return k, err
}

// RevokeKey revokes a key at once: this process refuses it from now on, and
// every process sharing the store within AuthCacheTTL. Revoking a revoked key
// changes nothing and returns it. A key may revoke itself, and another key
// only if it holds every permission of that key (else
// insufficient_permissions).
func (s *Service) RevokeKey(ctx context.Context, p Principal, id string) (Key, error) {
	if err := p.allow("RevokeKey"); err != nil {
		return Key{}, err
	}
	now := s.Now()
	var k Key
	err := s.update(ctx, func(tx Tx) (err error) {
		k, err = s.getKey(tx, p, id)
		if err != nil {
			return err
		}
		if err := p.mayActOn(k); err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		k.RevokedAt = &now
		return tx.UpdateKey(k)
	})
	if err != nil {
		return Key{}, err
	}
	s.auth.Forget(k.Hash)
	return k, nil
}

// DefaultRotationGrace is how long a rotated key keeps working by default.
const DefaultRotationGrace = time.Hour

// MaxRotationGrace bounds the grace period of a rotation.
const MaxRotationGrace = 30 * 24 * time.Hour

// RotateKey creates a new key with the same name, permissions, environment
// and expiry, which names the old one in Replaces, and makes the old one
// expire after grace (sooner if it was to
// expire sooner anyway). A revoked or expired key cannot be rotated
// (conflict). A key may rotate itself; another key only if it holds every
// permission of that key and the new key would not outlive it (else
// insufficient_permissions). With a grace period both keys are active until
// it ends, so the rotation counts against the plan's ActiveKeys (conflict at
// the cap); with grace 0 the new key replaces the old one at once and is
// always allowed.
func (s *Service) RotateKey(ctx context.Context, p Principal, id string, grace time.Duration) (NewKey, error) {
	if err := p.allow("RotateKey"); err != nil {
		return NewKey{}, err
	}
	if grace < 0 || grace > MaxRotationGrace {
		var v Validator
		v.Add("grace_period_seconds", "must be between 0 and %d", int(MaxRotationGrace/time.Second))
		return NewKey{}, v.Err()
	}
	now := s.Now()
	var nk NewKey
	var old Key
	err := s.update(ctx, func(tx Tx) (err error) {
		old, err = s.getKey(tx, p, id)
		if err != nil {
			return err
		}
		if err := p.mayActOn(old); err != nil {
			return err
		}
		if err := p.mayOutlive(old); err != nil {
			return err
		}
		if st := old.Status(now); st != KeyActive {
			return Errorf(CodeConflict, "The API key is %s and cannot be rotated.", st)
		}
		if grace > 0 {
			if err := checkKeyCap(tx, p.Account, now, ", or rotate with grace_period_seconds 0 to replace the key at once"); err != nil {
				return err
			}
		}
		nk = newKey(p.Account.ID, KeyParams{
			Name: old.Name, Permissions: old.Permissions, Environment: old.Environment,
			ExpiresAt: old.ExpiresAt,
		}, now)
		nk.Key.Replaces = old.ID
		end := now.Add(grace)
		if old.ExpiresAt == nil || end.Before(*old.ExpiresAt) {
			old.ExpiresAt = &end
		}
		if err := tx.UpdateKey(old); err != nil {
			return err
		}
		return tx.CreateKey(nk.Key)
	})
	if err != nil {
		return NewKey{}, err
	}
	s.auth.Forget(old.Hash)
	return nk, nil
}

// mayOutlive returns insufficient_permissions unless the principal's key
// expires no sooner than k: a rotation hands its caller a secret with k's
// expiry, which must not outlive the caller (as no key it creates may).
func (p Principal) mayOutlive(k Key) error {
	limit := p.Key.ExpiresAt
	if k.ID == p.Key.ID || limit == nil || (k.ExpiresAt != nil && !k.ExpiresAt.After(*limit)) {
		return nil
	}
	return Errorf(CodeInsufficientPermissions, "This API key cannot rotate key %s: the new key would outlive this one, which expires at %s.",
		k.ID, limit.Format(time.RFC3339Nano))
}

// KeyUsage is a key's request counts over the last hours.
type KeyUsage struct {
	KeyID    string
	Hours    []Usage // one per hour, newest first, zero hours included
	Requests int
	Rejected int
}

// MaxUsageHours is how far back usage can be read.
const MaxUsageHours = 168

// KeyUsage returns the key's hourly request counts for the last hours (1 to
// 168, the current hour included), newest first.
func (s *Service) KeyUsage(ctx context.Context, p Principal, id string, hours int) (KeyUsage, error) {
	if err := p.allow("KeyUsage"); err != nil {
		return KeyUsage{}, err
	}
	if hours < 1 || hours > MaxUsageHours {
		return KeyUsage{}, Errorf(CodeInvalidRequest, "hours must be between 1 and %d.", MaxUsageHours)
	}
	if _, err := s.Key(ctx, p, id); err != nil {
		return KeyUsage{}, err
	}
	current := s.Now().Truncate(time.Hour)
	from := current.Add(-time.Duration(hours-1) * time.Hour)
	stored, err := s.store.Usage(ctx, id, from)
	if err != nil {
		return KeyUsage{}, err
	}
	byHour := make(map[int64]*Usage, hours)
	r := KeyUsage{KeyID: id, Hours: make([]Usage, hours)}
	for i := range r.Hours {
		h := current.Add(-time.Duration(i) * time.Hour)
		r.Hours[i] = Usage{KeyID: id, Hour: h}
		byHour[h.Unix()] = &r.Hours[i]
	}
	for _, u := range append(stored, s.usage.pending(id)...) {
		if h := byHour[u.Hour.Unix()]; h != nil {
			h.Requests += u.Requests
			h.Rejected += u.Rejected
		}
	}
	for _, h := range r.Hours {
		r.Requests += h.Requests
		r.Rejected += h.Rejected
	}
	return r, nil
}
