package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// shareLinkQuery is the query of a share link list that f selects (its Now
// is the server's).
func shareLinkQuery(f fleet.ShareLinkFilter) url.Values {
	v := url.Values{}
	if f.VehicleID != "" {
		v.Set("vehicle_id", f.VehicleID)
	}
	if f.Status != "" {
		v.Set("status", string(f.Status))
	}
	return v
}

// ShareLinks walks the account's share links that f selects, oldest
// first. A listed link has no URL: its token is shown once, by
// CreateShareLink.
func (c *Client) ShareLinks(ctx context.Context, f fleet.ShareLinkFilter) iter.Seq2[fleetwire.ShareLink, error] {
	return walk[fleetwire.ShareLink](ctx, c, "/share_links", shareLinkQuery(f), fleet.MaxPageLimit)
}

// ListShareLinks returns one page of the account's share links that f
// selects: q.Cursor is the NextCursor of the page before ("" for the
// first), q.Limit its size (0 for the server's default). ShareLinks walks
// every page.
func (c *Client) ListShareLinks(ctx context.Context, f fleet.ShareLinkFilter, q fleet.ListQuery) (fleet.List[fleetwire.ShareLink], error) {
	return page[fleetwire.ShareLink](ctx, c, "/share_links", shareLinkQuery(f), q)
}

// CreateShareLink makes a link that shows the vehicle on a public page
// until expires (at most 7 days ahead). The page's address is in the
// result's URL, this once.
func (c *Client) CreateShareLink(ctx context.Context, vehicleID string, expires time.Time) (fleetwire.NewShareLink, error) {
	var out fleetwire.NewShareLink
	_, err := c.do(ctx, http.MethodPost, "/share_links", nil, fleetwire.ShareLinkInput{VehicleID: vehicleID, ExpiresAt: &expires}, &out)
	return out, err
}

// ShareLink returns one share link, without its URL.
func (c *Client) ShareLink(ctx context.Context, id string) (fleetwire.ShareLink, error) {
	var out fleetwire.ShareLink
	_, err := c.do(ctx, http.MethodGet, "/share_links/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// RevokeShareLink ends a share link now: its page answers 404 and its open
// live streams end. Revoking a revoked or expired link changes nothing.
func (c *Client) RevokeShareLink(ctx context.Context, id string) (fleetwire.ShareLink, error) {
	var out fleetwire.ShareLink
	_, err := c.do(ctx, http.MethodDelete, "/share_links/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}
