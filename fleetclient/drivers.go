package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// driverQuery is the query of a driver list that f selects.
func driverQuery(f fleet.DriverFilter) url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Query, "identifier": f.Identifier, "vehicle_id": f.VehicleID} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// Drivers walks the account's drivers that f selects, oldest first, each
// with the vehicle they drive now.
func (c *Client) Drivers(ctx context.Context, f fleet.DriverFilter) iter.Seq2[fleet.Driver, error] {
	return walk[fleet.Driver](ctx, c, "/drivers", driverQuery(f), fleet.MaxPageLimit)
}

// ListDrivers returns one page of the account's drivers that f selects:
// q.Cursor is the NextCursor of the page before ("" for the first), q.Limit
// its size (0 for the server's default). Drivers walks every page.
func (c *Client) ListDrivers(ctx context.Context, f fleet.DriverFilter, q fleet.ListQuery) (fleet.List[fleet.Driver], error) {
	return page[fleet.Driver](ctx, c, "/drivers", driverQuery(f), q)
}

// CreateDriver adds a driver from d's Name, Identifier, Phone, Email,
// LicenseNumber, LicenseExpiresOn, Notes and ExternalID ("" for none).
func (c *Client) CreateDriver(ctx context.Context, d fleet.Driver) (fleet.Driver, error) {
	var out fleet.Driver
	_, err := c.do(ctx, http.MethodPost, "/drivers", nil, fleetwire.DriverInput{Name: d.Name, Identifier: nullIfEmpty(d.Identifier),
		Phone: nullIfEmpty(d.Phone), Email: nullIfEmpty(d.Email), LicenseNumber: nullIfEmpty(d.LicenseNumber),
		LicenseExpiresOn: nullIfEmpty(d.LicenseExpiresOn), Notes: nullIfEmpty(d.Notes), ExternalID: nullIfEmpty(d.ExternalID)}, &out)
	return out, err
}

// Driver returns one driver, with the vehicle they drive now.
func (c *Client) Driver(ctx context.Context, id string) (fleet.Driver, error) {
	var out fleet.Driver
	_, err := c.do(ctx, http.MethodGet, "/drivers/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateDriver sends a merge patch of a driver: a Set field changes ("" or
// a zero value clears an optional one), the others stay.
func (c *Client) UpdateDriver(ctx context.Context, id string, p fleet.DriverPatch) (fleet.Driver, error) {
	var out fleet.Driver
	_, err := c.do(ctx, http.MethodPatch, "/drivers/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteDriver deletes a driver; their vehicle has no driver from then on,
// and trips keep their id.
func (c *Client) DeleteDriver(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/drivers/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// AssignDriver makes the driver driverID drive the vehicle from now on
// ("" leaves it without a driver), moving them from the vehicle they drove.
func (c *Client) AssignDriver(ctx context.Context, vehicleID, driverID string) (fleet.VehicleDriver, error) {
	var out fleet.VehicleDriver
	_, err := c.do(ctx, http.MethodPut, "/vehicles/"+url.PathEscape(vehicleID)+"/driver", nil, fleet.AssignTo(driverID), &out)
	return out, err
}

// DriverSummary walks the summary report by driver and day
// (group_by=driver): q's times, VehicleID and TZ as Summary's; GroupBy is
// ignored. Rows come by driver id, those of no driver (DriverID nil) last,
// then by day.
func (c *Client) DriverSummary(ctx context.Context, q SummaryQuery) iter.Seq2[fleet.DriverSummaryRow, error] {
	v := timeRange(q.From, q.To)
	v.Set("group_by", fleet.GroupByDriver)
	for k, s := range map[string]string{"vehicle_id": q.VehicleID, "tz": q.TZ} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return walk[fleet.DriverSummaryRow](ctx, c, "/reports/summary", v, fleet.MaxSummaryLimit)
}
