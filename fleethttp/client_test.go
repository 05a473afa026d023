//lint:file-ignore SA1019 the deprecated names of the client's old home are what this file checks.

package fleethttp_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/fleetwire"
	"github.com/matryer/is"
)

// countingTransport counts the requests that go through it.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// The client moved to fleetclient and its wire types to fleetwire; for a
// minor version a program written against fleethttp's names compiles
// unchanged (they are the same types) and behaves the same (the options
// reach the client).
func TestDeprecatedClientNamesStillWork(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	ct := &countingTransport{next: e.srv.Client().Transport}
	var c *fleetclient.Client = fleethttp.NewClient(e.srv.URL, key, fleethttp.WithHTTPClient(&http.Client{Transport: ct}),
		fleethttp.WithPageSize(1), fleethttp.WithMaxRetries(0), fleethttp.WithoutRateLimitWait())
	var old *fleethttp.Client = c
	var acc fleethttp.Account
	acc, err := old.Account(ctx)
	is.NoErr(err)
	is.Equal(acc.CompanyName, "Acme Haulage")
	for _, name := range []string{"Truck 1", "Truck 2", "Truck 3"} {
		_, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: name, Tags: []string{"north"}})
		is.NoErr(err)
	}
	ct.n.Store(0)
	var q fleethttp.VehicleQuery = fleetclient.VehicleQuery{Tag: "north"}
	n := 0
	for _, err := range c.Vehicles(ctx, q) {
		is.NoErr(err)
		n++
	}
	is.Equal(n, 3)
	is.Equal(ct.n.Load(), int32(3)) // WithPageSize(1) reached the client: a page each

	_, err = c.Vehicle(ctx, "veh_nope")
	var apiErr *fleethttp.APIError
	is.True(errors.As(err, &apiErr))
	is.Equal(apiErr.StatusCode, http.StatusNotFound)

	var (
		_ fleethttp.ClientOption    = fleetclient.WithPageSize(1)
		_ fleethttp.SummaryQuery    = fleetclient.SummaryQuery{}
		_ fleethttp.WebhookParams   = fleetclient.WebhookParams{}
		_ fleethttp.LiveLocation    = fleetclient.LiveLocation{}
		_ *fleethttp.TransportError = &fleetclient.TransportError{}
		_ fleethttp.APIKey          = fleetwire.APIKey{}
		_ fleethttp.NewAPIKey       = fleetwire.NewAPIKey{}
		_ fleethttp.KeyUsage        = fleetwire.KeyUsage{}
		_ fleethttp.UsageHour       = fleetwire.UsageHour{}
		_ fleethttp.StreamToken     = fleetwire.StreamToken{}
	)
}
