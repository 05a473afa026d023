package fleet_test

import (
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
)

// FuzzCheckSecret: any string is judged without panicking; a secret with
// a valid checksum keeps its shape. Run longer with
// go test -run XXX -fuzz FuzzCheckSecret ./fleet/
func FuzzCheckSecret(f *testing.F) {
	for _, s := range []string{fleet.NewSecret(), "", "fleet_", "fleet_" + strings.Repeat("A", 38), strings.Repeat("\xff", 44)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fleet.CheckSecret(s) {
			if len(s) != fleet.SecretLen || !strings.HasPrefix(s, fleet.SecretPrefix) {
				t.Fatalf("accepted a secret of the wrong shape: %q", s)
			}
		}
		_ = fleet.HashSecret(s)
	})
}

// FuzzDecodeCursor: any cursor decodes or is refused, never panics, and
// a decoded one encodes back to an equivalent cursor.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{fleet.EncodeCursor(fleet.NewID(fleet.PrefixVehicle)), "", "!!!", "YzE6", "bm9wZQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		id, ok := fleet.DecodeCursor(c)
		if !ok {
			return
		}
		again, ok2 := fleet.DecodeCursor(fleet.EncodeCursor(id))
		if !ok2 || again != id {
			t.Fatalf("cursor %q decodes to %q, which does not round-trip", c, id)
		}
	})
}
