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

// `fleetserver devices command` sends a command to a device by its
// identifier, as the operator, and lists and cancels its commands.
func TestDevicesCommand(t *testing.T) {
	is := is.New(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "fleet.db")
	env := map[string]string{"FLEET_DB": db}
	ctx := context.Background()
	store, err := fleetstore.Open(ctx, db)
	is.NoErr(err)
	svc := fleet.NewService(store, fleet.Options{})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	is.NoErr(err)
	_, err = svc.CreateDevice(ctx, fleet.SystemPrincipal(a), fleet.Device{Identifier: "356307042441013"})
	is.NoErr(err)
	is.NoErr(store.Close())

	out, err := cmdRun(env, "devices", "command", "--json", "356307042441013", "set_interval", "--seconds", "30")
	is.NoErr(err)
	var sent map[string]any
	is.NoErr(json.Unmarshal([]byte(out), &sent))
	is.Equal(sent["type"], "set_interval")
	is.Equal(sent["seconds"], 30.0)
	is.Equal(sent["status"], "queued")
	is.Equal(sent["created_by"], fleet.OperatorKeyID)
	_, err = cmdRun(env, "devices", "command", "356307042441013", "output", "--index", "1", "--state", "on")
	is.NoErr(err)

	_, err = cmdRun(env, "devices", "command", "356307042441013", "set_interval")
	is.True(err != nil && strings.Contains(err.Error(), "--seconds")) // the flag at fault
	_, err = cmdRun(env, "devices", "command", "000000000000000", "reboot")
	is.True(err != nil && strings.Contains(err.Error(), "No device"))
	_, err = cmdRun(env, "devices", "command", "356307042441013", "output", "--index", "1", "--state", "maybe")
	is.True(err != nil)

	out, err = cmdRun(env, "devices", "command", "--list", "356307042441013")
	is.NoErr(err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	is.Equal(len(lines), 3) // the header and two commands, newest first
	is.True(strings.Contains(lines[1], "output"))
	is.True(strings.Contains(lines[2], "set_interval"))

	id := sent["command_id"].(string)
	out, err = cmdRun(env, "devices", "command", "--cancel", id, "356307042441013")
	is.NoErr(err)
	is.True(strings.Contains(out, "cancelled"))
	_, err = cmdRun(env, "devices", "command", "--cancel", id, "356307042441013")
	is.True(err != nil && strings.Contains(err.Error(), "cancelled")) // only while queued
}
