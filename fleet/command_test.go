package fleet_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
	"github.com/matryer/is"
)

// teltonikaCommands is what the tests' services are told the teltonika
// protocol carries.
var teltonikaCommands = fleet.ProtocolCommands{
	Types:   []string{fleet.CommandEngineStop, fleet.CommandEngineResume, fleet.CommandPositionRequest, fleet.CommandOutput, fleet.CommandCustom},
	MaxText: 20,
}

// newCommandEnv is a deviceEnv whose service knows teltonika's commands,
// its device having reported once (over teltonika) at speed km/h.
func newCommandEnv(t *testing.T, store fleet.Store, speed float64) *deviceEnv {
	t.Helper()
	clock := testclock.New(deviceT0)
	svc := fleet.NewService(store, fleet.Options{Now: clock.Now, Protocols: map[string]fleet.ProtocolCommands{"teltonika": teltonikaCommands}})
	a, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	e := &deviceEnv{t: t, svc: svc, clock: clock, p: fleet.SystemPrincipal(a)}
	e.v = e.vehicle("Truck 7")
	e.d, err = svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "356307042441013", VehicleID: e.v.ID, Name: "FMB920"})
	if err != nil {
		t.Fatal(err)
	}
	e.at(speed)
	return e
}

// at reports a position now at speed km/h.
func (e *deviceEnv) at(speed float64) {
	e.t.Helper()
	e.clock.Advance(time.Second)
	p := pos(e.clock.Now(), 52.52, 13.40)
	p.Speed = &speed
	e.mustReport(p)
}

func (e *deviceEnv) send(in fleet.CommandInput) fleet.Command {
	e.t.Helper()
	c, err := e.svc.CreateCommand(ctx, e.p, e.d.ID, in)
	if err != nil {
		e.t.Fatalf("create command: %v", err)
	}
	return c
}

func (e *deviceEnv) command(id string) fleet.Command {
	e.t.Helper()
	c, err := e.svc.Command(ctx, e.p, id)
	if err != nil {
		e.t.Fatalf("read command: %v", err)
	}
	return c
}

func (e *deviceEnv) claim() fleet.Claim {
	e.t.Helper()
	cl, err := e.svc.DeviceEdge().ClaimCommands(ctx, e.d.Identifier)
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	return cl
}

// eventTypes lists the account's events' types of the command id, oldest
// first.
func (e *deviceEnv) commandEvents(id string) []string {
	e.t.Helper()
	l, err := e.svc.ListEvents(ctx, e.p, fleet.EventFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ev := range l.Items {
		if strings.HasPrefix(ev.Type, "command.") && strings.Contains(string(ev.Data), id) {
			out = append(out, ev.Type)
		}
	}
	return out
}

func claimedIDs(cl fleet.Claim) []string {
	out := make([]string, len(cl.Commands))
	for i, c := range cl.Commands {
		out[i] = c.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestCommandInputRules(t *testing.T) {
	e := newCommandEnv(t, memstore.New(), 0)
	cases := []struct {
		name   string
		in     fleet.CommandInput
		code   string
		fields []string
	}{
		{"unknown type", fleet.CommandInput{Type: "selfdestruct"}, fleet.CodeValidation, []string{"type"}},
		{"set_interval without seconds", fleet.CommandInput{Type: fleet.CommandSetInterval}, fleet.CodeValidation, []string{"seconds"}},
		{"seconds out of range", fleet.CommandInput{Type: fleet.CommandSetInterval, Seconds: ptr(0)}, fleet.CodeValidation, []string{"seconds"}},
		{"output without index and on", fleet.CommandInput{Type: fleet.CommandOutput}, fleet.CodeValidation, []string{"index", "on"}},
		{"output index 9", fleet.CommandInput{Type: fleet.CommandOutput, Index: ptr(9), On: ptr(true)}, fleet.CodeValidation, []string{"index"}},
		{"seconds on a reboot", fleet.CommandInput{Type: fleet.CommandReboot, Seconds: ptr(10)}, fleet.CodeValidation, []string{"seconds"}},
		{"force on a resume", fleet.CommandInput{Type: fleet.CommandEngineResume, Force: true}, fleet.CodeValidation, []string{"force"}},
		{"custom without text or hex", fleet.CommandInput{Type: fleet.CommandCustom}, fleet.CodeValidation, []string{"text"}},
		{"custom with both", fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("a"), Hex: ptr("00")}, fleet.CodeValidation, []string{"text"}},
		{"control bytes", fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getver\r\nsetdigout 1")}, fleet.CodeValidation, []string{"text"}},
		{"over the protocol's length", fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr(strings.Repeat("a", 21))}, fleet.CodeValidation, []string{"text"}},
		{"hex not hex", fleet.CommandInput{Type: fleet.CommandCustom, Hex: ptr("0g")}, fleet.CodeValidation, []string{"hex"}},
		{"expiry in the past", fleet.CommandInput{Type: fleet.CommandEngineResume, ExpiresAt: ptr(deviceT0)}, fleet.CodeValidation, []string{"expires_at"}},
		{"a type teltonika cannot carry", fleet.CommandInput{Type: fleet.CommandReboot}, fleet.CodeConflict, []string{"type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.svc.CreateCommand(ctx, e.p, e.d.ID, tc.in)
			is.Equal(fleet.ErrorCode(err), tc.code)
			var fe *fleet.Error
			is.True(errors.As(err, &fe))
			var fields []string
			for _, d := range fe.Details {
				fields = append(fields, d.Field)
			}
			is.Equal(fields, tc.fields)
		})
	}
	is := is.New(t)
	_, err := e.svc.CreateCommand(ctx, e.p, e.d.ID, fleet.CommandInput{Type: fleet.CommandReboot})
	// The 409 names the types the protocol can carry.
	is.True(strings.Contains(fleet.ErrorMessage(err), "engine_stop, engine_resume, position_request, output, custom"))
	l, err := e.svc.ListCommands(ctx, e.p, e.d.ID, fleet.CommandFilter{}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 0) // nothing was queued

	// Good ones: defaults, the creator, the event.
	c := e.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getver")})
	is.Equal(c.Status, fleet.CommandQueued)
	is.Equal(c.CreatedBy, e.p.Key.ID)
	is.Equal(c.ExpiresAt, e.clock.Now().Add(fleet.DefaultCommandTTL))
	is.Equal(c.Text, "getver")
	is.Equal(e.commandEvents(c.ID), []string{fleet.EventCommandQueued})
	h := e.send(fleet.CommandInput{Type: fleet.CommandCustom, Hex: ptr("0A0b")})
	is.Equal(h.Hex, "0a0b")
	o := e.send(fleet.CommandInput{Type: fleet.CommandOutput, Index: ptr(1), On: ptr(false)})
	is.Equal(*o.Index, 1)
	is.Equal(*o.On, false)
	// Another account's device is not found.
	b, _, err := e.svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Other", Plan: fleet.PlanPro})
	is.NoErr(err)
	_, err = e.svc.CreateCommand(ctx, fleet.SystemPrincipal(b), e.d.ID, fleet.CommandInput{Type: fleet.CommandEngineResume})
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	_, err = e.svc.Command(ctx, fleet.SystemPrincipal(b), c.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestCommandPermissionStandsApart(t *testing.T) {
	is := is.New(t)
	e := newCommandEnv(t, memstore.New(), 0)
	as := func(perms ...fleet.Permission) fleet.Principal {
		p := e.p
		p.Key = fleet.Key{ID: "key_someone", AccountID: p.Account.ID, Permissions: perms}
		return p
	}
	in := fleet.CommandInput{Type: fleet.CommandEngineResume}
	_, err := e.svc.CreateCommand(ctx, as(fleet.PermDevicesWrite), e.d.ID, in)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions) // devices:write does not imply it
	is.True(strings.Contains(fleet.ErrorMessage(err), "devices:command"))
	c, err := e.svc.CreateCommand(ctx, as(fleet.PermDevicesCommand), e.d.ID, in)
	is.NoErr(err)
	is.Equal(c.CreatedBy, "key_someone")
	_, err = e.svc.CreateCommand(ctx, as(fleet.PermAll), e.d.ID, in)
	is.NoErr(err)
	_, err = e.svc.Command(ctx, as(fleet.PermDevicesRead), c.ID)
	is.NoErr(err)
	_, err = e.svc.CancelCommand(ctx, as(fleet.PermDevicesWrite), c.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInsufficientPermissions)
}

func TestEngineStopWaitsForTheVehicleToSlow(t *testing.T) {
	is := is.New(t)
	e := newCommandEnv(t, memstore.New(), 54)
	stop := e.send(fleet.CommandInput{Type: fleet.CommandEngineStop})
	is.Equal(stop.Status, fleet.CommandQueued)
	is.True(strings.Contains(stop.Error, "54 km/h")) // the reason is shown
	ping := e.send(fleet.CommandInput{Type: fleet.CommandPositionRequest})

	cl := e.claim()
	is.Equal(claimedIDs(cl), []string{ping.ID}) // the stop waits; others go
	is.True(cl.Held)
	is.Equal(e.command(stop.ID).Status, fleet.CommandQueued)
	is.True(e.svc.DeviceEdge().CommandsPending(ctx, e.d.Identifier)) // claim again after reports

	e.at(12)
	cl = e.claim()
	is.Equal(len(cl.Commands), 0)
	is.True(strings.Contains(e.command(stop.ID).Error, "12 km/h"))

	e.at(4)
	cl = e.claim()
	is.Equal(claimedIDs(cl), []string{stop.ID})
	is.True(!cl.Held)
	got := e.command(stop.ID)
	is.Equal(got.Status, fleet.CommandSent)
	is.Equal(got.Error, "")
	is.Equal(e.commandEvents(stop.ID), []string{fleet.EventCommandQueued, fleet.EventCommandSent})
	is.True(!e.svc.DeviceEdge().CommandsPending(ctx, e.d.Identifier))

	// Forced: sent at speed, and recorded.
	e.at(80)
	forced := e.send(fleet.CommandInput{Type: fleet.CommandEngineStop, Force: true})
	is.True(forced.Force)
	is.Equal(forced.Error, "")
	is.Equal(claimedIDs(e.claim()), []string{forced.ID})
}

func TestEngineStopAndResumeLaterWins(t *testing.T) {
	is := is.New(t)
	e := newCommandEnv(t, memstore.New(), 0)
	stop := e.send(fleet.CommandInput{Type: fleet.CommandEngineStop})
	other := e.send(fleet.CommandInput{Type: fleet.CommandPositionRequest})
	resume := e.send(fleet.CommandInput{Type: fleet.CommandEngineResume})
	got := e.command(stop.ID)
	is.Equal(got.Status, fleet.CommandCancelled)
	is.True(strings.Contains(got.Error, resume.ID))
	is.Equal(e.command(other.ID).Status, fleet.CommandQueued)
	stop2 := e.send(fleet.CommandInput{Type: fleet.CommandEngineStop})
	is.Equal(e.command(resume.ID).Status, fleet.CommandCancelled)
	is.Equal(claimedIDs(e.claim()), []string{other.ID, stop2.ID})
}

func TestCommandDeliveryLifecycle(t *testing.T) {
	is := is.New(t)
	e := newCommandEnv(t, memstore.New(), 0)
	edge := e.svc.DeviceEdge()
	wake, stopWatch, err := edge.WatchCommands(ctx, e.d.Identifier)
	is.NoErr(err)
	defer stopWatch()
	is.Equal(e.svc.Jobs().CommandWatchers(), 1)

	a := e.send(fleet.CommandInput{Type: fleet.CommandPositionRequest})
	select {
	case <-wake:
	default:
		t.Fatal("the watcher was not woken by a new command")
	}
	b := e.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getinfo")})
	c := e.send(fleet.CommandInput{Type: fleet.CommandOutput, Index: ptr(2), On: ptr(true)})
	cl := e.claim()
	is.Equal(claimedIDs(cl), []string{a.ID, b.ID, c.ID}) // queue order
	is.Equal(cl.Commands[1].Text, "getinfo")
	is.Equal(cl.Commands[2].Index, 2)
	is.True(cl.Commands[2].On)
	is.Equal(len(e.claim().Commands), 0) // claimed once

	// The answer without a command id settles the oldest sent.
	e.clock.Advance(time.Second)
	got, err := edge.CommandAnswered(ctx, e.d.Identifier, "", "GPS:1 Sat:9 Lat:52.52\x00")
	is.NoErr(err)
	is.Equal(got.ID, a.ID)
	got = e.command(a.ID)
	is.Equal(got.Status, fleet.CommandDelivered)
	is.Equal(got.Result, "GPS:1 Sat:9 Lat:52.52?") // what a device sends is made printable
	is.Equal(*got.DeliveredAt, e.clock.Now())
	is.Equal(e.commandEvents(a.ID), []string{fleet.EventCommandQueued, fleet.EventCommandSent, fleet.EventCommandDelivered})

	_, err = edge.CommandFailed(ctx, e.d.Identifier, b.ID, "the device answered with bytes of no frame; connection closed")
	is.NoErr(err)
	is.Equal(e.command(b.ID).Status, fleet.CommandFailed)
	is.Equal(e.commandEvents(b.ID)[2], fleet.EventCommandFailed)

	// A connection that closed before the write queues it again.
	_, err = edge.CommandUnsent(ctx, e.d.Identifier, c.ID)
	is.NoErr(err)
	is.Equal(e.command(c.ID).Status, fleet.CommandQueued)
	is.Equal(claimedIDs(e.claim()), []string{c.ID})

	// Answers nobody waits for, and another device's commands, are not found.
	_, err = edge.CommandAnswered(ctx, e.d.Identifier, a.ID, "again")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	d2, err := e.svc.CreateDevice(ctx, e.p, fleet.Device{Identifier: "other-device"})
	is.NoErr(err)
	_, err = edge.CommandAnswered(ctx, d2.Identifier, c.ID, "mine?")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)

	// Cancel: only while queued.
	q := e.send(fleet.CommandInput{Type: fleet.CommandEngineResume})
	cancelled, err := e.svc.CancelCommand(ctx, e.p, q.ID)
	is.NoErr(err)
	is.Equal(cancelled.Status, fleet.CommandCancelled)
	_, err = e.svc.CancelCommand(ctx, e.p, q.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	_, err = e.svc.CancelCommand(ctx, e.p, a.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	is.True(strings.Contains(fleet.ErrorMessage(err), "delivered"))

	// The list: newest first, filtered by status.
	l, err := e.svc.ListCommands(ctx, e.p, e.d.ID, fleet.CommandFilter{}, fleet.ListQuery{Limit: 2})
	is.NoErr(err)
	is.Equal([]string{l.Items[0].ID, l.Items[1].ID}, []string{q.ID, c.ID})
	is.True(l.HasMore)
	l, err = e.svc.ListCommands(ctx, e.p, e.d.ID, fleet.CommandFilter{}, fleet.ListQuery{Cursor: l.NextCursor})
	is.NoErr(err)
	is.Equal([]string{l.Items[0].ID, l.Items[1].ID}, []string{b.ID, a.ID})
	l, err = e.svc.ListCommands(ctx, e.p, e.d.ID, fleet.CommandFilter{Status: fleet.CommandFailed}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	_, err = e.svc.ListCommands(ctx, e.p, e.d.ID, fleet.CommandFilter{Status: "lost"}, fleet.ListQuery{})
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidRequest)

	// Deleting the device deletes its commands.
	_, err = e.svc.DeleteDevice(ctx, e.p, e.d.ID)
	is.NoErr(err)
	_, err = e.svc.Command(ctx, e.p, a.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}

func TestCommandsExpire(t *testing.T) {
	is := is.New(t)
	e := newCommandEnv(t, memstore.New(), 30)
	held := e.send(fleet.CommandInput{Type: fleet.CommandEngineStop})
	soon := e.send(fleet.CommandInput{Type: fleet.CommandPositionRequest, ExpiresAt: ptr(e.clock.Now().Add(time.Hour))})
	later := e.send(fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getver")})
	e.clock.Advance(2 * time.Hour)
	n, err := e.svc.Jobs().ExpireCommands(ctx)
	is.NoErr(err)
	is.Equal(n, 1)
	got := e.command(soon.ID)
	is.Equal(got.Status, fleet.CommandExpired)
	is.Equal(e.commandEvents(soon.ID), []string{fleet.EventCommandQueued, fleet.EventCommandExpired})
	e.clock.Advance(fleet.DefaultCommandTTL)
	// A claim expires what it finds past its time too.
	is.Equal(len(e.claim().Commands), 0)
	got = e.command(held.ID)
	is.Equal(got.Status, fleet.CommandExpired)
	is.True(strings.Contains(got.Error, "held")) // says why it never went
	is.Equal(e.command(later.ID).Status, fleet.CommandExpired)
}

// Two servers sharing a store claim a device's commands at once: each
// command is taken once.
func TestCommandClaimedOnceByRacingServers(t *testing.T) {
	store, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "fleet.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	is := is.New(t)
	e := newCommandEnv(t, store, 0)
	other := fleet.NewService(store, fleet.Options{Now: e.clock.Now})
	const n = 20
	for range n {
		e.send(fleet.CommandInput{Type: fleet.CommandPositionRequest})
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := range 6 {
		svc := e.svc
		if i%2 == 1 {
			svc = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				cl, err := svc.DeviceEdge().ClaimCommands(ctx, e.d.Identifier)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range cl.Commands {
					seen[c.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	is.Equal(len(seen), n)
	for id, k := range seen {
		if k != 1 {
			t.Errorf("command %s claimed %d times", id, k)
		}
	}
}
