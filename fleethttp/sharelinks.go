package fleethttp

import (
	"fmt"
	"net/http"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// WithPublicURL sets the dashboard's address as people reach it
// ("https://fleet.example.com", no trailing slash), of which a share
// link's url is made. Without it, the url is made from the request's Host
// and X-Forwarded-Proto.
func WithPublicURL(base string) Option { return func(h *Handler) { h.publicURL = base } }

// baseURL is the dashboard's address: WithPublicURL's, or as the client
// reached the API.
func (h *Handler) baseURL(r *http.Request) string {
	if h.publicURL != "" {
		return h.publicURL
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func toShareLink(l fleet.ShareLink, now time.Time) fleetwire.ShareLink {
	return fleetwire.ShareLink{ShareLinkID: l.ID, VehicleID: l.VehicleID, Status: string(l.Status(now)),
		ExpiresAt: l.ExpiresAt, CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt}
}

func (h *Handler) createShareLink(c *call) error {
	req, err := decode[fleetwire.ShareLinkInput](c.body, false)
	if err != nil {
		return err
	}
	nl, err := h.svc.CreateShareLink(c.r.Context(), c.p, fleet.ShareLinkInput{VehicleID: req.VehicleID, ExpiresAt: req.ExpiresAt})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, fleetwire.NewShareLink{ShareLink: toShareLink(nl.Link, h.svc.Now()),
		URL: fleet.ShareLinkURL(h.baseURL(c.r), nl.Token)})
}

func (h *Handler) listShareLinks(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.ShareLinkFilter{VehicleID: q.Get("vehicle_id"), Status: fleet.ShareLinkStatus(q.Get("status"))}
	l, err := h.svc.ListShareLinks(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	out := make([]fleetwire.ShareLink, len(l.Items))
	for i, sl := range l.Items {
		out[i] = toShareLink(sl, now)
	}
	return c.list(out, l.NextCursor, l.HasMore)
}

func (h *Handler) getShareLink(c *call) error {
	l, err := h.svc.ShareLink(c.r.Context(), c.p, c.r.PathValue("share_link_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, toShareLink(l, h.svc.Now()))
}

func (h *Handler) revokeShareLink(c *call) error {
	l, err := h.svc.RevokeShareLink(c.r.Context(), c.p, c.r.PathValue("share_link_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, toShareLink(l, h.svc.Now()))
}

// The document's words on share links.

func descShareLinks() string {
	return "A share link shows one vehicle to someone outside the account — a customer waiting for a delivery — on a public page of the dashboard, " +
		"without signing in: the company's name, the vehicle's name, when the link expires, the vehicle's live position (updated as reports arrive) " +
		"and its route since the later of the link's creation and the start of the viewer's day (in the viewer's time zone). Nothing else: " +
		"no other vehicle, no earlier history, no id, nothing else of the account. " +
		"The page is at `" + fleet.ShareLinkPath("{token}") + "` under the dashboard's address (`fleetserver serve --public-url`), where the token is " +
		fmt.Sprint(fleet.ShareTokenBytes) + " random bytes in base64url; only its SHA-256 is stored, so the `url` is shown once, when the link is created, and never listed. " +
		"An expired or revoked link's page answers 404, as an unknown token's does, and its open live streams end within 5 seconds on every server. " +
		"Creating or revoking a link emits no event."
}

func registerShareLinkComponents(g *generator) {
	whole[fleet.ShareLinkStatus](g, "ShareLinkStatus", func() *obj {
		return enum(fleet.ShareLinkStatuses(), "revoked once revoked; else expired from `expires_at` on; else active.")
	})
	fields := func(s *shape) *shape {
		return s.replace("share_link_id", id(fleet.PrefixShareLink)).
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("status", ref("ShareLinkStatus")).
			with("expires_at", "description", "When the link stops working: at most 7 days after it was created.").
			with("revoked_at", "description", "When it was revoked; null while it is not.")
	}
	comp[fleetwire.ShareLink](g, "ShareLink", output, func(s *shape) {
		fields(s).describe(descShareLinks() + " The object never carries the token: lists and reads have no `url`.")
	})
	comp[fleetwire.NewShareLink](g, "NewShareLink", output, func(s *shape) {
		fields(s).describe("A share link as created, with its `url`: shown this once only.").
			replace("url", o("type", "string", "format", "uri",
				"description", "The public page: the dashboard's address and `"+fleet.ShareLinkPath("{token}")+"`. Hand it to whoever should see the vehicle; it cannot be read again."))
	})
	comp[fleetwire.ShareLinkInput](g, "ShareLinkInput", input, func(s *shape) {
		s.describe("`vehicle_id` must name a vehicle of the account (404 not_found otherwise, as for any resource of another account). "+
			"`expires_at` is required: after now and at most 7 days ahead, else 422 validation_error naming it. "+
			fmt.Sprintf("A vehicle has at most %d active links; one more is 409 conflict.", fleet.MaxActiveShareLinks)).
			require("vehicle_id expires_at").
			nonNull("expires_at").
			with("expires_at", "description", "When the link stops working: in the future, at most 7 days ahead.")
	})
}
