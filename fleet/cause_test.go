package fleet_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

// brokenStore is a store whose per-request calls fail with err: a bug of
// the store (a plain error) or a fault (unavailable, with its cause).
type brokenStore struct {
	fleet.Store
	err error
}

func (b brokenStore) KeyByHash(context.Context, [32]byte) (fleet.Key, fleet.Account, error) {
	return fleet.Key{}, fleet.Account{}, b.err
}

func (b brokenStore) TakeQuota(context.Context, string, int, time.Time) (fleet.Quota, error) {
	return fleet.Quota{}, b.err
}

func (b brokenStore) CreateStreamToken(context.Context, fleet.StreamToken) error { return b.err }

func (b brokenStore) TakeStreamToken(context.Context, [32]byte, time.Time) (fleet.StreamToken, error) {
	return fleet.StreamToken{}, b.err
}

func (b brokenStore) Ping(context.Context) error { return b.err }

// A store's failure keeps its cause: a bug (an error that is not a code)
// is an internal error, never "the store is unreachable", and a fault is
// unavailable; both carry the store's error in the chain for the log.
func TestStoreFailuresKeepTheirCause(t *testing.T) {
	bug := errors.New("sqlstore: scan key: converting NULL to string is unsupported")
	fault := &fleet.Error{Code: fleet.CodeUnavailable, Message: "The store is unavailable; retry later.", Err: errors.New("dial tcp: connection refused")}
	for _, c := range []struct {
		name  string
		err   error
		code  string
		cause error
	}{
		{"bug", bug, fleet.CodeInternal, bug},
		{"fault", fault, fleet.CodeUnavailable, fault.Err},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			mem := memstore.New()
			svc := fleet.NewService(mem, fleet.Options{})
			a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
			is.NoErr(err)
			p := fleet.SystemPrincipal(a)
			broken := fleet.NewService(brokenStore{Store: mem, err: c.err}, fleet.Options{})

			_, err = broken.Authenticate(ctx, fleet.NewSecret())
			is.Equal(fleet.ErrorCode(err), c.code) // Authenticate
			is.True(errors.Is(err, c.cause))       // Authenticate keeps the cause
			_, err = broken.Edge().Admit(ctx, p)
			is.Equal(fleet.ErrorCode(err), c.code) // Admit
			is.True(errors.Is(err, c.cause))       // Admit keeps the cause
			_, err = broken.Edge().AdmitAddress(ctx, "192.0.2.1")
			is.Equal(fleet.ErrorCode(err), c.code) // AdmitAddress
			is.True(errors.Is(err, c.cause))       // AdmitAddress keeps the cause
			_, err = broken.CreateStreamToken(ctx, p)
			is.Equal(fleet.ErrorCode(err), c.code) // CreateStreamToken
			is.True(errors.Is(err, c.cause))       // CreateStreamToken keeps the cause
			token := fleet.StreamTokenPrefix + strings.Repeat("a", fleet.StreamTokenLen-len(fleet.StreamTokenPrefix))
			_, err = broken.Edge().RedeemStreamToken(ctx, token)
			is.Equal(fleet.ErrorCode(err), c.code) // RedeemStreamToken
			is.True(errors.Is(err, c.cause))       // RedeemStreamToken keeps the cause

			// The store's error is in the text a log line shows, never in
			// the message a client reads.
			is.True(strings.Contains(err.Error(), c.cause.Error()))
			is.True(!strings.Contains(fleet.ErrorMessage(err), "NULL"))
		})
	}
}

// Ready is unavailable when the store's ping fails, with the ping's error
// as its cause.
func TestReadyKeepsThePingsCause(t *testing.T) {
	is := is.New(t)
	cause := errors.New("dial unix /run/postgresql: no such file")
	svc := fleet.NewService(brokenStore{Store: memstore.New(), err: cause}, fleet.Options{})
	err := svc.Ready(ctx)
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(errors.Is(err, cause))
	is.True(strings.Contains(err.Error(), cause.Error())) // in the log line
	is.Equal(fleet.ErrorMessage(err), "The store is unreachable.")
}
