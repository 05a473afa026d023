package fleetclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/matryer/is"
)

// The client's share link methods against the real handler.
func TestClientShareLinks(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, key := e.account(fleet.PlanPro)
	c := fleetclient.NewClient(e.srv.URL, key, fleetclient.WithHTTPClient(e.srv.Client()), fleetclient.WithPageSize(2))
	ctx := context.Background()
	van, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Van 3"})
	is.NoErr(err)
	truck, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Truck 9"})
	is.NoErr(err)
	now := e.clock.Now()

	nl, err := c.CreateShareLink(ctx, van.ID, now.Add(8*time.Hour))
	is.NoErr(err)
	is.True(strings.HasPrefix(nl.URL, e.srv.URL+"/s/"))
	is.Equal(len(strings.TrimPrefix(nl.URL, e.srv.URL+"/s/")), fleet.ShareTokenLen)
	is.Equal(nl.VehicleID, van.ID)
	is.Equal(nl.Status, "active")
	is.True(nl.ExpiresAt.Equal(now.Add(8 * time.Hour)))
	_, err = c.CreateShareLink(ctx, van.ID, now.Add(8*24*time.Hour))
	is.Equal(fleet.ErrorCode(err), fleet.CodeValidation) // more than 7 days
	_, err = c.CreateShareLink(ctx, "veh_nope", now.Add(time.Hour))
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
	second, err := c.CreateShareLink(ctx, van.ID, now.Add(time.Hour))
	is.NoErr(err)
	third, err := c.CreateShareLink(ctx, truck.ID, now.Add(time.Hour))
	is.NoErr(err)

	var walked []string
	for l, err := range c.ShareLinks(ctx, fleet.ShareLinkFilter{}) {
		is.NoErr(err)
		walked = append(walked, l.ShareLinkID)
	}
	is.Equal(walked, []string{nl.ShareLinkID, second.ShareLinkID, third.ShareLinkID}) // two pages of two
	page, err := c.ListShareLinks(ctx, fleet.ShareLinkFilter{VehicleID: van.ID}, fleet.ListQuery{Limit: 1})
	is.NoErr(err)
	is.Equal(len(page.Items), 1)
	is.True(page.HasMore)

	got, err := c.ShareLink(ctx, second.ShareLinkID)
	is.NoErr(err)
	is.Equal(got, second.ShareLink)
	revoked, err := c.RevokeShareLink(ctx, second.ShareLinkID)
	is.NoErr(err)
	is.Equal(revoked.Status, "revoked")
	is.True(revoked.RevokedAt != nil)
	active, err := c.ListShareLinks(ctx, fleet.ShareLinkFilter{Status: fleet.ShareLinkActive}, fleet.ListQuery{})
	is.NoErr(err)
	is.Equal(len(active.Items), 2)
	_, err = c.ShareLink(ctx, "shr_missing")
	is.Equal(fleet.ErrorCode(err), fleet.CodeNotFound)
}
