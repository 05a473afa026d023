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
