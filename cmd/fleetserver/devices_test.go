package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetstore"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

// `fleetserver devices unknown` lists what the device edge recorded of
// unknown identifiers, in the store a server shares with it.
func TestDevicesUnknown(t *testing.T) {
	is := is.New(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	env := map[string]string{"FLEET_DB": db}
	_, err := cmdRun(env, "devices", "unknown")
	is.True(err != nil && strings.Contains(err.Error(), "no store at")) // no file, no empty store made

	// A server's device edge meets three unknown identifiers.
	ctx := context.Background()
	store, err := fleetstore.Open(ctx, db)
	is.NoErr(err)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	edge := fleet.NewService(store, fleet.Options{Now: clock.Now}).DeviceEdge()
	for _, a := range []struct{ ident, proto, addr string }{
		{"356307042441013", "teltonika", "192.0.2.7:40312"},
		{"356307042441013", "teltonika", "192.0.2.7:40313"}, // again, from another port
		{"4106040008", "h02", "[2001:db8::5]:5013"},
		{"traccar-7", "osmand", "198.51.100.20:61000"},
	} {
		known, err := edge.Known(ctx, a.ident, a.proto, a.addr)
		is.NoErr(err)
		is.True(!known)
		clock.Advance(time.Minute)
	}
	is.NoErr(store.Close())

	out, err := cmdRun(env, "devices", "unknown", "--json")
	is.NoErr(err)
	var got []map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &got))
	is.Equal(len(got), 3)
	is.Equal(got[0]["identifier"], "traccar-7") // the last seen first
	is.Equal(got[1]["identifier"], "4106040008")
	is.Equal(got[1]["address"], "2001:db8::5")
	is.Equal(got[2]["identifier"], "356307042441013")
	is.Equal(got[2]["protocol"], "teltonika")
	is.Equal(got[2]["address"], "192.0.2.7")
	is.Equal(got[2]["count"], 2.0)
	is.Equal(got[2]["first_seen_at"], "2026-11-22T10:00:00Z")
	is.Equal(got[2]["last_seen_at"], "2026-11-22T10:01:00Z")

	out, err = cmdRun(env, "devices", "unknown", "--limit", "1")
	is.NoErr(err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(len(lines), 2) // the header and one record
	for _, h := range []string{"IDENTIFIER", "PROTOCOL", "ADDRESS", "FIRST SEEN", "LAST SEEN", "COUNT"} {
		is.True(strings.Contains(lines[0], h))
	}
	is.True(strings.Contains(lines[1], "traccar-7") && strings.Contains(lines[1], "osmand") && strings.Contains(lines[1], "198.51.100.20"))
	is.True(strings.Contains(lines[1], "2026-11-22T10:03:00Z"))

	for _, bad := range [][]string{{"devices", "unknown", "--limit", "0"}, {"devices", "unknown", "extra"}, {"devices"}, {"devices", "forget"}} {
		_, err = cmdRun(env, bad...)
		var ue *usageError
		is.True(errors.As(err, &ue)) // a usage error (exit 2)
	}
	out, err = cmdRun(env, "devices", "unknown", "--help")
	is.NoErr(err)
	for _, w := range []string{"fleetserver devices unknown", "--limit", "--json", "--db", "Example:"} {
		is.True(strings.Contains(out, w))
	}
	out, err = cmdRun(env, "devices", "--help")
	is.NoErr(err)
	is.True(strings.Contains(out, "devices unknown"))
}
