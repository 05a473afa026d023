package memstore_test

import (
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleet/storetest"
	"github.com/fleetkit/fleetapi/memstore"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) fleet.Store { return memstore.New() })
}
