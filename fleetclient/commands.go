package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

func commandQuery(f fleet.CommandFilter) url.Values {
	v := url.Values{}
	if f.Status != "" {
		v.Set("status", string(f.Status))
	}
	return v
}

func deviceCommandsPath(deviceID string) string {
	return "/devices/" + url.PathEscape(deviceID) + "/commands"
}

// Commands walks the commands of a device that f selects, newest first.
func (c *Client) Commands(ctx context.Context, deviceID string, f fleet.CommandFilter) iter.Seq2[fleet.Command, error] {
	return walk[fleet.Command](ctx, c, deviceCommandsPath(deviceID), commandQuery(f), fleet.MaxPageLimit)
}

// ListCommands returns one page of a device's commands that f selects,
// newest first: q.Cursor is the NextCursor of the page before ("" for the
// first), q.Limit its size (0 for the server's default). Commands walks
// every page.
func (c *Client) ListCommands(ctx context.Context, deviceID string, f fleet.CommandFilter, q fleet.ListQuery) (fleet.List[fleet.Command], error) {
	return page[fleet.Command](ctx, c, deviceCommandsPath(deviceID), commandQuery(f), q)
}

// SendCommand queues a command to a device (the key needs devices:command).
// The command goes to the device at once if it is connected, else when it
// next connects; Command follows it. A type the device's protocol cannot
// carry is a conflict naming those it can.
func (c *Client) SendCommand(ctx context.Context, deviceID string, in fleetwire.CommandInput) (fleet.Command, error) {
	var out fleet.Command
	_, err := c.do(ctx, http.MethodPost, deviceCommandsPath(deviceID), nil, in, &out)
	return out, err
}

// Command returns one command, where it stands.
func (c *Client) Command(ctx context.Context, id string) (fleet.Command, error) {
	var out fleet.Command
	_, err := c.do(ctx, http.MethodGet, "/commands/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// CancelCommand cancels a queued command; one in any other status is
// invalid_state_transition.
func (c *Client) CancelCommand(ctx context.Context, id string) (fleet.Command, error) {
	var out fleet.Command
	_, err := c.do(ctx, http.MethodPost, "/commands/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &out)
	return out, err
}
