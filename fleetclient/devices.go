package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// deviceQuery is the query of a device list that f selects.
func deviceQuery(f fleet.DeviceFilter) url.Values {
	v := url.Values{}
	if f.Identifier != "" {
		v.Set("identifier", f.Identifier)
	}
	if f.VehicleID != "" {
		v.Set("vehicle_id", f.VehicleID)
	}
	return v
}

// Devices walks the account's devices that f selects, oldest first.
func (c *Client) Devices(ctx context.Context, f fleet.DeviceFilter) iter.Seq2[fleet.Device, error] {
	return walk[fleet.Device](ctx, c, "/devices", deviceQuery(f), fleet.MaxPageLimit)
}

// ListDevices returns one page of the account's devices that f selects:
// q.Cursor is the NextCursor of the page before ("" for the first), q.Limit
// its size (0 for the server's default). Devices walks every page.
func (c *Client) ListDevices(ctx context.Context, f fleet.DeviceFilter, q fleet.ListQuery) (fleet.List[fleet.Device], error) {
	return page[fleet.Device](ctx, c, "/devices", deviceQuery(f), q)
}

// CreateDevice registers a device from d's Identifier, VehicleID ("" for
// none) and Name.
func (c *Client) CreateDevice(ctx context.Context, d fleet.Device) (fleet.Device, error) {
	var out fleet.Device
	_, err := c.do(ctx, http.MethodPost, "/devices", nil, fleetwire.DeviceInput{Identifier: d.Identifier, VehicleID: nullIfEmpty(d.VehicleID),
		Name: nullIfEmpty(d.Name)}, &out)
	return out, err
}

// Device returns one device, with what it last sent.
func (c *Client) Device(ctx context.Context, id string) (fleet.Device, error) {
	var out fleet.Device
	_, err := c.do(ctx, http.MethodGet, "/devices/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateDevice sends a merge patch of a device: a Set VehicleID moves it
// ("" detaches it), a Set Name renames it ("" clears it).
func (c *Client) UpdateDevice(ctx context.Context, id string, p fleet.DevicePatch) (fleet.Device, error) {
	var out fleet.Device
	_, err := c.do(ctx, http.MethodPatch, "/devices/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteDevice deletes a device: its identifier is unknown from then on.
func (c *Client) DeleteDevice(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/devices/"+url.PathEscape(id), nil, nil, nil)
	return err
}
