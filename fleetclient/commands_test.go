package fleetclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/matryer/is"
)

// The client's command methods against the real handler.
func TestClientCommands(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()
	d, err := c.CreateDevice(ctx, fleet.Device{Identifier: "356307042441013"})
	is.NoErr(err)

	sec := 30
	first, err := c.SendCommand(ctx, d.ID, fleetwire.CommandInput{Type: fleet.CommandSetInterval, Seconds: &sec})
	is.NoErr(err)
	is.Equal(first.Status, fleet.CommandQueued)
	is.Equal(*first.Seconds, 30)
	is.True(strings.HasPrefix(first.CreatedBy, "key_"))
	text := "getver"
	second, err := c.SendCommand(ctx, d.ID, fleetwire.CommandInput{Type: fleet.CommandCustom, Text: &text})
	is.NoErr(err)
	third, err := c.SendCommand(ctx, d.ID, fleetwire.CommandInput{Type: fleet.CommandEngineStop, Force: true})
	is.NoErr(err)
	is.True(third.Force)
	_, err = c.SendCommand(ctx, d.ID, fleetwire.CommandInput{Type: fleet.CommandSetInterval})
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // seconds required

	var walked []string
	for cmd, err := range c.Commands(ctx, d.ID, fleet.CommandFilter{}) {
		is.NoErr(err)
		walked = append(walked, cmd.ID)
	}
	is.Equal(walked, []string{third.ID, second.ID, first.ID}) // newest first, two pages
	got, err := c.Command(ctx, second.ID)
	is.NoErr(err)
	is.Equal(got, second)
	cancelled, err := c.CancelCommand(ctx, second.ID)
	is.NoErr(err)
	is.Equal(cancelled.Status, fleet.CommandCancelled)
	_, err = c.CancelCommand(ctx, second.ID)
	is.Equal(fleet.ErrorCode(err), fleet.CodeInvalidStateTransition)
	l, err := c.ListCommands(ctx, d.ID, fleet.CommandFilter{Status: fleet.CommandCancelled}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(l.Items), 1)
	is.Equal(l.Items[0].ID, second.ID)
}
