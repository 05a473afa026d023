package fleet_test

import (
	"errors"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// The operator sees every account and each account's keys, and can revoke
// a key by its id alone: the key then stops working at once.
func TestOperatorAccountsAndKeys(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	op := svc.Operator()
	a, first, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	b, _, err := op.CreateAccount(ctx, fleet.AccountParams{CompanyName: "Beta"})
	is.NoErr(err)
	is.Equal(b.Plan, fleet.PlanFree) // the default plan

	l, err := op.Accounts(ctx, fleet.ListQuery{Limit: 1})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	is.Equal(l.Items[0].ID, a.ID) // oldest first
	is.True(l.HasMore)
	l, err = op.Accounts(ctx, fleet.ListQuery{Cursor: l.NextCursor})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	is.Equal(l.Items[0].ID, b.ID)
	is.True(!l.HasMore)

	gw, err := op.CreateKey(ctx, a.ID, fleet.KeyParams{Name: "Gateway", Permissions: []string{fleet.PermLocationsWrite}})
	is.NoErr(err)
	keys, err := op.Keys(ctx, a.ID, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(keys.Items), 2) // the first key and the gateway's
	is.Equal(keys.Items[0].ID, first.Key.ID)
	is.Equal(keys.Items[1].Permissions, fleet.Permissions{fleet.PermLocationsWrite})

	_, err = svc.Authenticate(ctx, gw.Secret)
	is.NoErr(err)
	k, err := op.RevokeKey(ctx, gw.Key.ID)
	is.NoErr(err)
	is.True(k.RevokedAt != nil)
	_, err = svc.Authenticate(ctx, gw.Secret)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // refused at once

	_, err = op.RevokeKey(ctx, "key_nope")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, err = op.Keys(ctx, "acc_nope", fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

// An account's own rate limit only raises the plan's: a lower one is
// refused, not silently ignored.
func TestAccountRateLimitOnlyRaises(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	_, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", RateLimitPerHour: 10})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation)
	var fe *fleet.Error
	is.True(errors.As(err, &fe))
	is.Equal(fe.Details[0].Field, "rate_limit_per_hour")
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", RateLimitPerHour: 5000})
	is.NoErr(err)
	is.Equal(a.RateLimitPerHour(), 5000) // above the free plan's 1,000
	l, err := svc.Operator().Accounts(ctx, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1) // the refused one was not made
}
