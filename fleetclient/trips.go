package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

func timeRange(from, to time.Time) url.Values {
	q := url.Values{}
	if !from.IsZero() {
		q.Set("from", from.UTC().Format(time.RFC3339Nano))
	}
	if !to.IsZero() {
		q.Set("to", to.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// Trips walks a vehicle's trips that meet [from, to] in start order (zero
// times: the server's defaults, the last 24 hours).
func (c *Client) Trips(ctx context.Context, vehicleID string, from, to time.Time) iter.Seq2[fleet.Trip, error] {
	return walk[fleet.Trip](ctx, c, "/vehicles/"+url.PathEscape(vehicleID)+"/trips", timeRange(from, to), fleet.MaxPageLimit)
}

// Stops walks a vehicle's stops that meet [from, to] in start order.
func (c *Client) Stops(ctx context.Context, vehicleID string, from, to time.Time) iter.Seq2[fleet.Stop, error] {
	return walk[fleet.Stop](ctx, c, "/vehicles/"+url.PathEscape(vehicleID)+"/stops", timeRange(from, to), fleet.MaxPageLimit)
}

// Trip returns a trip; with points, the first page of its reports too (in
// Locations, at most fleet.MaxHistoryLimit), and in PointsPagination
// whether more follow. TripPoints walks them all.
func (c *Client) Trip(ctx context.Context, id string, points bool) (fleet.TripDetail, error) {
	var q url.Values
	if points {
		q = url.Values{"include": {"points"}}
	}
	var out fleet.TripDetail
	_, err := c.do(ctx, http.MethodGet, "/trips/"+url.PathEscape(id), q, nil, &out)
	return out, err
}

// TripPoints walks every stored report of a trip, from its start to its
// end in time order, a page at a time (of WithPageSize reports, at most
// fleet.MaxHistoryLimit).
func (c *Client) TripPoints(ctx context.Context, id string) iter.Seq2[fleet.Point, error] {
	return func(yield func(fleet.Point, error) bool) {
		limit := fleet.MaxHistoryLimit
		if c.pageSize > 0 {
			limit = min(c.pageSize, limit)
		}
		q := url.Values{"include": {"points"}, "points_limit": {strconv.Itoa(limit)}}
		for {
			var d fleet.TripDetail
			if _, err := c.do(ctx, http.MethodGet, "/trips/"+url.PathEscape(id), q, nil, &d); err != nil {
				yield(fleet.Point{}, err)
				return
			}
			for _, p := range d.Locations {
				if !yield(p, nil) {
					return
				}
			}
			pg := d.PointsPagination
			if pg == nil || !pg.HasMore || pg.NextCursor == nil {
				return
			}
			q.Set("points_cursor", *pg.NextCursor)
		}
	}
}

// SummaryQuery selects the rows of Summary: zero times take the server's
// defaults (the last 24 hours), an empty GroupBy is day, an empty TZ UTC.
type SummaryQuery struct {
	From, To  time.Time
	VehicleID string
	GroupBy   string // fleet.GroupByDay or fleet.GroupByVehicle; by driver is DriverSummary
	TZ        string // IANA zone, such as Europe/Berlin
}

// Summary walks the summary report's rows, by vehicle then day.
func (c *Client) Summary(ctx context.Context, q SummaryQuery) iter.Seq2[fleet.SummaryRow, error] {
	v := timeRange(q.From, q.To)
	for k, s := range map[string]string{"vehicle_id": q.VehicleID, "group_by": q.GroupBy, "tz": q.TZ} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return walk[fleet.SummaryRow](ctx, c, "/reports/summary", v, fleet.MaxSummaryLimit)
}
