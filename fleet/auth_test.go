package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

var ctx = context.Background()

func newService(t testing.TB) (*fleet.Service, *testclock.Clock) {
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	return fleet.NewService(memstore.New(), fleet.Options{Now: clock.Now}), clock
}

func TestAuthenticateRefusesMalformedWithoutLookup(t *testing.T) {
	is := is.New(t)
	store := memstore.New()
	svc := fleet.NewService(store, fleet.Options{})
	store.Close() // any store lookup would now fail with unavailable
	_, err := svc.Authenticate(ctx, "fleet_nonsense")
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized) // refused before the store
	_, err = svc.Authenticate(ctx, fleet.NewSecret())
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable) // a well-formed key needs the store
}

func TestSecretIsNotStored(t *testing.T) {
	is := is.New(t)
	svc, _ := newService(t)
	a, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	var stored fleet.Key
	is.NoErr(svc.Store().View(ctx, func(tx fleet.Tx) (err error) { stored, err = tx.Key(a.ID, nk.Key.ID); return err }))
	is.Equal(stored.Hash, fleet.HashSecret(nk.Secret))
	is.Equal(stored.Prefix, nk.Secret[:12])
	is.Equal(len(stored.Prefix), 12) // only the prefix and the hash are kept
}

// BenchmarkAuthenticateAndAdmit measures the per-request hot path: checking
// a key (cached) and taking one request from its allowance.
func BenchmarkAuthenticateAndAdmit(b *testing.B) {
	svc, _ := newService(b)
	_, nk, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanEnterprise, RateLimitPerHour: 100_000_000})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, nk.Secret); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := svc.Authenticate(ctx, nk.Secret)
		if err != nil {
			b.Fatal(err)
		}
		if q, err := svc.Edge().Admit(ctx, p); err != nil || !q.Allowed {
			b.Fatal("refused", err)
		}
	}
}
