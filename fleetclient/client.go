package fleetclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/google/uuid"
)

// Client is the Go SDK of the Fleet API. Errors from the API come back as
// *fleet.Error, so fleet.ErrorCode reads the same on both sides of the wire.
// It waits and retries when rate limited (honouring Retry-After), and
// retries network failures of requests that are safe to repeat; every POST
// carries an Idempotency-Key, so a retried POST never runs twice.
type Client struct {
	base       string
	key        string
	hc         *http.Client
	waitOn429  bool
	maxRetries int
	pageSize   int
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithHTTPClient sets the *http.Client requests go through.
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.hc = hc } }

// WithoutRateLimitWait makes a 429 come back at once as an error instead of
// being waited out.
func WithoutRateLimitWait() ClientOption { return func(c *Client) { c.waitOn429 = false } }

// WithMaxRetries sets how often a request is retried (default 3).
func WithMaxRetries(n int) ClientOption { return func(c *Client) { c.maxRetries = max(0, n) } }

// WithPageSize sets how many items list methods ask for per page (default:
// the most the API gives, fleet.MaxPageLimit, and fleet.MaxHistoryLimit
// for history; n is capped at those).
func WithPageSize(n int) ClientOption { return func(c *Client) { c.pageSize = n } }

// NewClient returns a client of the API at baseURL (the server's root, e.g.
// "http://127.0.0.1:8080", or its /v1 address) using the API key.
func NewClient(baseURL, apiKey string, opts ...ClientOption) *Client {
	base := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	c := &Client{base: base + "/v1", key: apiKey, hc: http.DefaultClient, waitOn429: true, maxRetries: 3}
	for _, o := range opts {
		o(c)
	}
	return c
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// do sends one request and decodes data into out. It returns the page of a
// list response.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) (*fleetwire.Pagination, error) {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = b
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	idem := ""
	if method == http.MethodPost {
		idem = uuid.NewString()
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idem != "" {
			req.Header.Set("Idempotency-Key", idem)
		}
		res, err := c.hc.Do(req)
		if err == nil {
			var raw []byte
			raw, err = io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil {
				if res.StatusCode == http.StatusTooManyRequests && c.waitOn429 && attempt < c.maxRetries {
					secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
					if err := wait(ctx, time.Duration(max(secs, 1))*time.Second); err != nil {
						return nil, &TransportError{Method: method, URL: u, Err: err}
					}
					continue
				}
				return decodeEnvelope(res, raw, out)
			}
		}
		// No answer: every method the API has is safe to repeat (GET,
		// DELETE and merge PATCH by nature, POST by its Idempotency-Key).
		if ctx.Err() == nil && attempt < c.maxRetries {
			if werr := wait(ctx, time.Duration(100<<attempt)*time.Millisecond); werr != nil {
				return nil, &TransportError{Method: method, URL: u, Err: werr}
			}
			continue
		}
		return nil, &TransportError{Method: method, URL: u, Err: err}
	}
}

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// decodeEnvelope reads an answer of the API: its data into out, or its
// error as an *APIError.
func decodeEnvelope(res *http.Response, raw []byte, out any) (*fleetwire.Pagination, error) {
	status, rid := res.StatusCode, res.Header.Get("X-Request-Id")
	var env fleetwire.Envelope[json.RawMessage]
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, &APIError{StatusCode: status, RequestID: rid, Err: &fleet.Error{Code: codeOfStatus(status),
			Message: fmt.Sprintf("The answer (HTTP %d) is not the API's JSON.", status)}}
	}
	if !env.Success || env.Error != nil || status >= 300 {
		if env.Error == nil {
			return nil, &APIError{StatusCode: status, RequestID: rid, Err: &fleet.Error{Code: codeOfStatus(status),
				Message: fmt.Sprintf("The answer (HTTP %d) carries no error.", status)}}
		}
		if env.Error.RequestID != "" {
			rid = env.Error.RequestID
		}
		e := &fleet.Error{Code: env.Error.Code, Message: env.Error.Message, Details: env.Error.Details}
		if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		return nil, &APIError{StatusCode: status, RequestID: rid, Err: e}
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return nil, fmt.Errorf("fleet: decode the answer of HTTP %d (request %s): %w", status, rid, err)
		}
	}
	return env.Pagination, nil
}

// page reads one page of a list: query's filters with q's cursor and
// limit (0: the server's default).
func page[T any](ctx context.Context, c *Client, path string, query url.Values, q fleet.ListQuery) (fleet.List[T], error) {
	if q.Cursor != "" {
		query.Set("cursor", q.Cursor)
	}
	if q.Limit != 0 {
		query.Set("limit", strconv.Itoa(q.Limit))
	}
	var items []T
	pg, err := c.do(ctx, http.MethodGet, path, query, nil, &items)
	if err != nil {
		return fleet.List[T]{}, err
	}
	l := fleet.List[T]{Items: items}
	if l.Items == nil {
		l.Items = []T{}
	}
	if pg != nil && pg.HasMore && pg.NextCursor != nil {
		l.HasMore, l.NextCursor = true, *pg.NextCursor
	}
	return l, nil
}

// walk yields every item of a list endpoint, page by page, asking for pages
// of the client's page size up to maxLimit, the endpoint's largest.
func walk[T any](ctx context.Context, c *Client, path string, query url.Values, maxLimit int) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		limit := maxLimit
		if c.pageSize > 0 {
			limit = min(c.pageSize, maxLimit)
		}
		q.Set("limit", strconv.Itoa(limit))
		for {
			var items []T
			pg, err := c.do(ctx, http.MethodGet, path, q, nil, &items)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if pg == nil || !pg.HasMore || pg.NextCursor == nil {
				return
			}
			q.Set("cursor", *pg.NextCursor)
		}
	}
}

// Account returns the key's account; it is how a client checks a key.
func (c *Client) Account(ctx context.Context) (fleetwire.Account, error) {
	var a fleetwire.Account
	_, err := c.do(ctx, http.MethodGet, "/account", nil, nil, &a)
	return a, err
}

// Keys walks the account's keys.
func (c *Client) Keys(ctx context.Context) iter.Seq2[fleetwire.APIKey, error] {
	return walk[fleetwire.APIKey](ctx, c, "/api_keys", nil, fleet.MaxPageLimit)
}

// CreateKey creates a key; its secret is in the result's Key, once.
func (c *Client) CreateKey(ctx context.Context, params fleet.KeyParams) (fleetwire.NewAPIKey, error) {
	var k fleetwire.NewAPIKey
	_, err := c.do(ctx, http.MethodPost, "/api_keys", nil, fleetwire.CreateKeyRequest{
		Name: params.Name, Permissions: params.Permissions, Environment: params.Environment, ExpiresAt: params.ExpiresAt,
	}, &k)
	return k, err
}

// Key returns one key.
func (c *Client) Key(ctx context.Context, id string) (fleetwire.APIKey, error) {
	var k fleetwire.APIKey
	_, err := c.do(ctx, http.MethodGet, "/api_keys/"+url.PathEscape(id), nil, nil, &k)
	return k, err
}

// RevokeKey revokes a key.
func (c *Client) RevokeKey(ctx context.Context, id string) (fleetwire.APIKey, error) {
	var k fleetwire.APIKey
	_, err := c.do(ctx, http.MethodDelete, "/api_keys/"+url.PathEscape(id), nil, nil, &k)
	return k, err
}

// RotateKey replaces a key; the old one keeps working for grace. The new
// key has a new id: use it from now on (the old id names the old key).
func (c *Client) RotateKey(ctx context.Context, id string, grace time.Duration) (fleetwire.NewAPIKey, error) {
	var k fleetwire.NewAPIKey
	secs := int64(grace / time.Second)
	_, err := c.do(ctx, http.MethodPost, "/api_keys/"+url.PathEscape(id)+"/rotate", nil, fleetwire.RotateKeyRequest{GracePeriodSeconds: &secs}, &k)
	return k, err
}

// KeyUsage returns a key's hourly usage over the last hours (1 to 168).
func (c *Client) KeyUsage(ctx context.Context, id string, hours int) (fleetwire.KeyUsage, error) {
	var u fleetwire.KeyUsage
	_, err := c.do(ctx, http.MethodGet, "/api_keys/"+url.PathEscape(id)+"/usage", url.Values{"hours": {strconv.Itoa(hours)}}, nil, &u)
	return u, err
}

// VehicleQuery filters a vehicle list or the location snapshot.
type VehicleQuery struct {
	Status fleet.VehicleStatus
	Tag    string
	Query  string   // vehicles only: name, plate or VIN contains
	IDs    []string // snapshot only
}

func (q VehicleQuery) values() url.Values {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", string(q.Status))
	}
	if q.Tag != "" {
		v.Set("tag", q.Tag)
	}
	if q.Query != "" {
		v.Set("q", q.Query)
	}
	for _, id := range q.IDs {
		v.Add("vehicle_id", id)
	}
	return v
}

// Vehicles walks the account's vehicles.
func (c *Client) Vehicles(ctx context.Context, q VehicleQuery) iter.Seq2[fleet.Vehicle, error] {
	return walk[fleet.Vehicle](ctx, c, "/vehicles", q.values(), fleet.MaxPageLimit)
}

// CreateVehicle creates a vehicle from the fields a client sets.
func (c *Client) CreateVehicle(ctx context.Context, v fleet.Vehicle) (fleet.Vehicle, error) {
	var out fleet.Vehicle
	_, err := c.do(ctx, http.MethodPost, "/vehicles", nil, fleetwire.VehicleInput{
		Name: v.Name, VIN: nullIfEmpty(v.VIN), Make: nullIfEmpty(v.Make), Model: nullIfEmpty(v.Model), Year: v.Year,
		LicensePlate: nullIfEmpty(v.LicensePlate), ExternalID: nullIfEmpty(v.ExternalID), Tags: v.Tags, OdometerKm: v.OdometerKm,
	}, &out)
	return out, err
}

// Vehicle returns one vehicle.
func (c *Client) Vehicle(ctx context.Context, id string) (fleet.Vehicle, error) {
	var out fleet.Vehicle
	_, err := c.do(ctx, http.MethodGet, "/vehicles/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateVehicle sends a merge patch: fields Set in p change, a Set zero
// value clears.
func (c *Client) UpdateVehicle(ctx context.Context, id string, p fleet.VehiclePatch) (fleet.Vehicle, error) {
	var out fleet.Vehicle
	_, err := c.do(ctx, http.MethodPatch, "/vehicles/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteVehicle deletes a vehicle and its location history.
func (c *Client) DeleteVehicle(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/vehicles/"+url.PathEscape(id), nil, nil, nil)
	return err
}

func toWire(pts []fleet.Point, withVehicle bool) fleetwire.LocationBatch {
	req := fleetwire.LocationBatch{Locations: make([]fleetwire.LocationInput, len(pts))}
	for i := range pts {
		p := &pts[i]
		w := fleetwire.LocationInput{Latitude: &p.Latitude, Longitude: &p.Longitude, Timestamp: &p.Timestamp, Speed: p.Speed, Heading: p.Heading, OdometerKm: p.OdometerKm}
		if withVehicle {
			w.VehicleID = &p.VehicleID
		}
		req.Locations[i] = w
	}
	return req
}

// IngestLocations posts up to 1,000 points of one vehicle.
func (c *Client) IngestLocations(ctx context.Context, vehicleID string, pts []fleet.Point) (fleet.IngestResult, error) {
	var r fleet.IngestResult
	_, err := c.do(ctx, http.MethodPost, "/vehicles/"+url.PathEscape(vehicleID)+"/locations", nil, toWire(pts, false), &r)
	return r, err
}

// IngestBulk posts up to 10,000 points, each naming its vehicle.
func (c *Client) IngestBulk(ctx context.Context, pts []fleet.Point) (fleet.IngestResult, error) {
	var r fleet.IngestResult
	_, err := c.do(ctx, http.MethodPost, "/vehicles/locations", nil, toWire(pts, true), &r)
	return r, err
}

// Locations walks the latest location of every vehicle that has reported.
func (c *Client) Locations(ctx context.Context, q VehicleQuery) iter.Seq2[fleet.LocationRecord, error] {
	return walk[fleet.LocationRecord](ctx, c, "/vehicles/locations", q.values(), fleet.MaxPageLimit)
}

// History walks a vehicle's points in ascending time between from and to
// (zero: the server's defaults, the last 24 hours).
func (c *Client) History(ctx context.Context, vehicleID string, from, to time.Time) iter.Seq2[fleet.Point, error] {
	q := url.Values{}
	if !from.IsZero() {
		q.Set("from", from.UTC().Format(time.RFC3339Nano))
	}
	if !to.IsZero() {
		q.Set("to", to.UTC().Format(time.RFC3339Nano))
	}
	return walk[fleet.Point](ctx, c, "/vehicles/"+url.PathEscape(vehicleID)+"/locations", q, fleet.MaxHistoryLimit)
}

// Events walks the account's events of a type ("" for all) from a time
// (zero for all).
func (c *Client) Events(ctx context.Context, typ string, from time.Time) iter.Seq2[fleet.Event, error] {
	q := url.Values{}
	if typ != "" {
		q.Set("type", typ)
	}
	if !from.IsZero() {
		q.Set("from", from.UTC().Format(time.RFC3339Nano))
	}
	return walk[fleet.Event](ctx, c, "/events", q, fleet.MaxPageLimit)
}

// Event returns one event.
func (c *Client) Event(ctx context.Context, id string) (fleet.Event, error) {
	var e fleet.Event
	_, err := c.do(ctx, http.MethodGet, "/events/"+url.PathEscape(id), nil, nil, &e)
	return e, err
}

// WorkOrders walks the account's work orders that f selects.
func (c *Client) WorkOrders(ctx context.Context, f fleet.WorkOrderFilter) iter.Seq2[fleet.WorkOrder, error] {
	q := url.Values{}
	for k, v := range map[string]string{"vehicle_id": f.VehicleID, "status": string(f.Status), "priority": string(f.Priority)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return walk[fleet.WorkOrder](ctx, c, "/maintenance/work_orders", q, fleet.MaxPageLimit)
}

// CreateWorkOrder opens a work order from the fields a client sets.
func (c *Client) CreateWorkOrder(ctx context.Context, w fleet.WorkOrder) (fleet.WorkOrder, error) {
	var out fleet.WorkOrder
	_, err := c.do(ctx, http.MethodPost, "/maintenance/work_orders", nil, fleetwire.WorkOrderInput{
		VehicleID: w.VehicleID, Title: w.Title, Description: nullIfEmpty(w.Description), Priority: nullIfEmpty(string(w.Priority)),
		DueDate: nullIfEmpty(w.DueDate), AssignedTo: nullIfEmpty(w.AssignedTo), OdometerKm: w.OdometerKm, CostCents: w.CostCents,
		Currency: nullIfEmpty(w.Currency), ScheduleID: nullIfEmpty(w.ScheduleID),
	}, &out)
	return out, err
}

// WorkOrder returns one work order.
func (c *Client) WorkOrder(ctx context.Context, id string) (fleet.WorkOrder, error) {
	var out fleet.WorkOrder
	_, err := c.do(ctx, http.MethodGet, "/maintenance/work_orders/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateWorkOrder sends a merge patch; a status change is a move of the
// work-order state machine (409 invalid_state_transition if forbidden).
func (c *Client) UpdateWorkOrder(ctx context.Context, id string, p fleet.WorkOrderPatch) (fleet.WorkOrder, error) {
	var out fleet.WorkOrder
	_, err := c.do(ctx, http.MethodPatch, "/maintenance/work_orders/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// Schedules walks the account's schedules that f selects.
func (c *Client) Schedules(ctx context.Context, f fleet.ScheduleFilter) iter.Seq2[fleet.Schedule, error] {
	q := url.Values{}
	if f.VehicleID != "" {
		q.Set("vehicle_id", f.VehicleID)
	}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	return walk[fleet.Schedule](ctx, c, "/maintenance/schedules", q, fleet.MaxPageLimit)
}

// CreateSchedule creates a recurring service schedule.
func (c *Client) CreateSchedule(ctx context.Context, s fleet.Schedule) (fleet.Schedule, error) {
	auto := s.AutoCreateWorkOrder
	var out fleet.Schedule
	_, err := c.do(ctx, http.MethodPost, "/maintenance/schedules", nil, fleetwire.ScheduleInput{
		VehicleID: s.VehicleID, Name: s.Name, IntervalDays: s.IntervalDays, IntervalKm: s.IntervalKm,
		LastServiceDate: nullIfEmpty(s.LastServiceDate), LastServiceOdometerKm: s.LastServiceOdometerKm, AutoCreateWorkOrder: &auto,
		IntervalEngineHours: s.IntervalEngineHours, LastServiceEngineHours: s.LastServiceEngineHours,
	}, &out)
	return out, err
}

// Schedule returns one schedule.
func (c *Client) Schedule(ctx context.Context, id string) (fleet.Schedule, error) {
	var out fleet.Schedule
	_, err := c.do(ctx, http.MethodGet, "/maintenance/schedules/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateSchedule sends a merge patch of a schedule.
func (c *Client) UpdateSchedule(ctx context.Context, id string, p fleet.SchedulePatch) (fleet.Schedule, error) {
	var out fleet.Schedule
	_, err := c.do(ctx, http.MethodPatch, "/maintenance/schedules/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteSchedule deletes a schedule; its work orders stay.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/maintenance/schedules/"+url.PathEscape(id), nil, nil, nil)
	return err
}
