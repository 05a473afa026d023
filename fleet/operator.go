package fleet

import (
	"context"
	"strings"
)

// Operator holds the operator's use cases: what the command line, or an
// admin tool of the embedding program, does on any account by its id, with
// no principal — creating accounts, giving them keys, and seeing or
// stopping the keys of an account whose owner lost them. The HTTP API
// exposes none of them. Get it with Service.Operator.
type Operator struct{ s *Service }

// Operator returns the operator's use cases over the service's store.
func (s *Service) Operator() Operator { return Operator{s} }

// CreateAccount creates an account and its first key, which holds every
// permission.
func (o Operator) CreateAccount(ctx context.Context, params AccountParams) (Account, NewKey, error) {
	s := o.s
	if params.Plan == "" {
		params.Plan = PlanFree
	}
	now := s.Now()
	a := Account{
		ID:                NewID(PrefixAccount),
		CompanyName:       strings.TrimSpace(params.CompanyName),
		Plan:              params.Plan,
		RateLimitOverride: params.RateLimitPerHour,
		CreatedAt:         now,
	}
	if err := a.Validate(); err != nil {
		return Account{}, NewKey{}, err
	}
	nk := newKey(a.ID, KeyParams{Name: "Default key", Permissions: []Permission{PermAll}}, now)
	err := s.update(ctx, func(tx Tx) error {
		if err := tx.CreateAccount(a); err != nil {
			return err
		}
		if err := checkKeyCap(tx, a, now, ""); err != nil {
			return err
		}
		return tx.CreateKey(nk.Key)
	})
	if err != nil {
		return Account{}, NewKey{}, err
	}
	return a, nk, nil
}

// Account returns an account by its id; not_found if there is none.
func (o Operator) Account(ctx context.Context, id string) (Account, error) {
	var a Account
	err := o.s.view(ctx, func(tx Tx) (err error) {
		a, err = tx.Account(id)
		return err
	})
	if ErrorCode(err) == CodeNotFound {
		return Account{}, NotFound("account", id)
	}
	return a, err
}

// Accounts lists every account, oldest first.
func (o Operator) Accounts(ctx context.Context, q ListQuery) (List[Account], error) {
	page, limit, err := q.page(PrefixAccount, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Account]{}, err
	}
	var as []Account
	err = o.s.view(ctx, func(tx Tx) (err error) {
		as, err = tx.Accounts(page)
		return err
	})
	if err != nil {
		return List[Account]{}, err
	}
	return finish(as, limit, func(a Account) string { return a.ID }), nil
}

// CreateKey creates a key for an account by its id, with every permission
// unless params names some. The account's cap on active keys applies.
func (o Operator) CreateKey(ctx context.Context, accountID string, params KeyParams) (NewKey, error) {
	a, err := o.Account(ctx, accountID)
	if err != nil {
		return NewKey{}, err
	}
	if params.Permissions == nil {
		params.Permissions = []Permission{PermAll}
	}
	return o.s.CreateKey(ctx, SystemPrincipal(a), params)
}

// Keys lists an account's keys, oldest first.
func (o Operator) Keys(ctx context.Context, accountID string, q ListQuery) (List[Key], error) {
	a, err := o.Account(ctx, accountID)
	if err != nil {
		return List[Key]{}, err
	}
	return o.s.ListKeys(ctx, SystemPrincipal(a), q)
}

// RevokeKey revokes a key of any account by its id, as RevokeKey does for
// a principal: at once here, within AuthCacheTTL on every server sharing
// the store. Revoking a revoked key changes nothing and returns it.
func (o Operator) RevokeKey(ctx context.Context, keyID string) (Key, error) {
	var owner string
	err := o.s.view(ctx, func(tx Tx) error {
		if !ValidID(PrefixKey, keyID) {
			return NotFound("API key", keyID)
		}
		k, err := tx.KeyByID(keyID)
		owner = k.AccountID
		return err
	})
	if ErrorCode(err) == CodeNotFound {
		return Key{}, NotFound("API key", keyID)
	}
	if err != nil {
		return Key{}, err
	}
	a, err := o.Account(ctx, owner)
	if err != nil {
		return Key{}, err
	}
	return o.s.RevokeKey(ctx, SystemPrincipal(a), keyID)
}
