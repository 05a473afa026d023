package memstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/matryer/is"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) fleet.Store { return memstore.New() })
}

// A call whose context ended is unavailable, as on sqlstore, with the
// context's error in the chain: never an internal error.
func TestEndedContextIsUnavailable(t *testing.T) {
	is := is.New(t)
	s := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Update(ctx, func(fleet.Tx) error { return nil })
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(errors.Is(err, context.Canceled))
	err = s.View(ctx, func(fleet.Tx) error { return nil })
	is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
	is.True(errors.Is(err, context.Canceled))
}

// A write in a read-only transaction is refused with an error of its own:
// a caller that changes it changes no later refusal.
func TestReadOnlyRefusalsAreNotShared(t *testing.T) {
	is := is.New(t)
	s := memstore.New()
	err := s.View(context.Background(), func(tx fleet.Tx) error {
		first := tx.CreateAccount(fleet.Account{ID: fleet.NewID(fleet.PrefixAccount)})
		var e *fleet.Error
		is.True(errors.As(first, &e))
		is.Equal(e.Code, fleet.CodeInternal)
		text := first.Error()
		e.Code, e.Message, e.Err = fleet.CodeNotFound, "changed by a caller", errors.New("a cause a caller added")

		next := tx.CreateAccount(fleet.Account{ID: fleet.NewID(fleet.PrefixAccount)})
		var n *fleet.Error
		is.True(errors.As(next, &n))
		is.True(n != e)
		is.Equal(n.Code, fleet.CodeInternal)
		is.Equal(next.Error(), text)
		return nil
	})
	is.NoErr(err)
}
