package fleet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// A stream token stands for the key that made it, once, within its minute;
// two services sharing a store cannot both spend it.
func TestStreamTokenIsTheKeysOnce(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	one := fleet.NewService(store, fleet.Options{Now: clock.Now})
	two := fleet.NewService(store, fleet.Options{Now: clock.Now})
	_, nk, err := one.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	owner, err := one.Authenticate(ctx, nk.Secret)
	is.NoErr(err)
	reader, err := one.CreateKey(ctx, owner, fleet.KeyParams{Name: "map", Permissions: []fleet.Permission{fleet.PermLocationsRead}})
	is.NoErr(err)
	p, err := one.Authenticate(ctx, reader.Secret)
	is.NoErr(err)

	tok, err := one.CreateStreamToken(ctx, p)
	is.NoErr(err)
	is.True(strings.HasPrefix(tok.Token, fleet.StreamTokenPrefix))
	is.Equal(len(tok.Token), fleet.StreamTokenLen)
	is.True(tok.ExpiresAt.Equal(clock.Now().Add(fleet.StreamTokenTTL)))

	got, err := two.Edge().RedeemStreamToken(ctx, tok.Token) // on the other service
	is.NoErr(err)
	is.Equal(got.Key.ID, reader.Key.ID) // the key that made it
	is.Equal(got.Key.Hash, fleet.HashSecret(reader.Secret))
	is.Equal(got.Account.ID, p.Account.ID)
	_, err = one.Edge().RedeemStreamToken(ctx, tok.Token)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // spent

	late, err := one.CreateStreamToken(ctx, p)
	is.NoErr(err)
	clock.Advance(fleet.StreamTokenTTL)
	_, err = one.Edge().RedeemStreamToken(ctx, late.Token)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // expired after its minute
	is.True(strings.Contains(fleet.ErrorMessage(err), "stream token"))

	for _, bad := range []string{"", "fst_short", fleet.NewSecret(), "fst_" + strings.Repeat("!", fleet.StreamTokenLen-4)} {
		_, err = one.Edge().RedeemStreamToken(ctx, bad)
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // malformed
	}

	// A token of a key revoked since is refused, with the key's reason.
	revoked, err := one.CreateStreamToken(ctx, p)
	is.NoErr(err)
	_, err = one.RevokeKey(ctx, owner, reader.Key.ID)
	is.NoErr(err)
	_, err = one.Edge().RedeemStreamToken(ctx, revoked.Token)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	is.True(strings.Contains(fleet.ErrorMessage(err), "revoked"))

	// Without locations:read, no token.
	writer, err := one.CreateKey(ctx, owner, fleet.KeyParams{Name: "w", Permissions: []fleet.Permission{fleet.PermVehiclesWrite}})
	is.NoErr(err)
	wp, err := one.Authenticate(ctx, writer.Secret)
	is.NoErr(err)
	_, err = one.CreateStreamToken(ctx, wp)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
}

// Maintain forgets tokens that expired unused.
func TestMaintainPurgesExpiredStreamTokens(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now})
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	p, err := svc.Authenticate(ctx, nk.Secret)
	is.NoErr(err)
	_, err = svc.CreateStreamToken(ctx, p)
	is.NoErr(err)
	clock.Advance(fleet.StreamTokenTTL + time.Second)
	is.NoErr(svc.Jobs().Maintain(ctx))
	n, err := store.PurgeStreamTokens(ctx, clock.Now().Add(time.Hour))
	is.NoErr(err)
	is.Equal(n, 0) // Maintain had purged it already
}

// EndStreams ends every open stream and frees every slot.
func TestEndStreams(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	var subs []*fleet.Subscription
	var principals []fleet.Principal
	for range 2 {
		_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
		is.NoErr(err)
		p, err := svc.Authenticate(ctx, nk.Secret)
		is.NoErr(err)
		principals = append(principals, p)
		for range 2 {
			sub, err := svc.Subscribe(ctx, p, nil, "")
			is.NoErr(err)
			subs = append(subs, sub)
		}
	}
	is.Equal(svc.Jobs().EndStreams(), 4)
	for _, sub := range subs {
		select {
		case <-sub.Done():
		default:
			t.Fatal("a stream is still open")
		}
	}
	for _, p := range principals {
		is.Equal(svc.OpenStreams(p), 0) // slots freed
	}
	is.Equal(svc.Jobs().EndStreams(), 0)
}
