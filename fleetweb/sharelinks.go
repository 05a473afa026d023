package fleetweb

import (
	"net/http"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// A vehicle's share links, on /vehicles/{vehicle_id}/share ("Share live
// location…" on the vehicle's page): how long a new link works, the link
// shown once with a copy button after the form's redirect, and the
// vehicle's active links, each with Revoke. An admin makes and revokes
// them; a viewer sees the list.

// shareDuration is a choice of how long a new link works.
type shareDuration struct {
	Value, Label string
	d            time.Duration
}

var shareDurations = []shareDuration{
	{"1h", "1 hour", time.Hour},
	{"8h", "8 hours", 8 * time.Hour},
	{"24h", "24 hours", 24 * time.Hour},
	{"7d", "7 days", fleet.MaxShareLinkTTL},
}

const defaultShareDuration = "8h"

type shareLinkRow struct {
	ID               string
	Created, Expires string
	Left             string // "in 7 h"
}

type shownShare struct {
	URL, Expires string
}

type shareLinksData struct {
	Vehicle   fleet.Vehicle
	Admin     bool
	Links     []shareLinkRow
	Shown     *shownShare
	Gone      bool // the page was the one that showed a link, viewed again
	Durations []shareDuration
	Duration  string // the one chosen
	Zone      string
}

// shareLinksPage shows a vehicle's active share links and the form that
// makes one.
func (h *Handler) shareLinksPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Nav: "vehicles", User: &us}
	d := shareLinksData{Duration: defaultShareDuration}
	v, gone := h.takeOnce(r, &p)
	if s, ok := v.(shownShare); ok {
		d.Shown = &s
	}
	d.Gone = gone
	h.showShareLinks(w, r, us, http.StatusOK, p, d)
}

func (h *Handler) showShareLinks(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d shareLinksData) {
	ctx := r.Context()
	pr := us.Principal()
	v, err := h.svc.Vehicle(ctx, pr, r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	l, err := h.svc.ListShareLinks(ctx, pr, fleet.ShareLinkFilter{VehicleID: v.ID, Status: fleet.ShareLinkActive},
		fleet.ListQuery{Limit: fleet.MaxActiveShareLinks})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	loc, _, _ := zoneOf(r)
	now := h.svc.Now()
	d.Vehicle, d.Admin, d.Durations, d.Zone = v, us.Can(fleet.PermVehiclesWrite), shareDurations, loc.String()
	for i := len(l.Items) - 1; i >= 0; i-- { // newest first
		sl := l.Items[i]
		d.Links = append(d.Links, shareLinkRow{ID: sl.ID, Created: localTime(sl.CreatedAt, loc), Expires: localTime(sl.ExpiresAt, loc),
			Left: "in " + duration(sl.ExpiresAt.Sub(now))})
	}
	p.Title = "Share " + v.Name + "'s live location"
	p.Data = d
	h.render(w, status, "sharelinks", p)
}

// refusedShareLinks shows the vehicle's links again with the error a use
// case refused a form with (nothing changed), the form keeping the
// duration chosen; a vehicle or link that is not the account's is a page
// of its own.
func (h *Handler) refusedShareLinks(w http.ResponseWriter, r *http.Request, us fleet.UserSession, err error, duration string) {
	if fleet.ErrorCode(err) == fleet.CodeNotFound {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Nav: "vehicles", User: &us}
	errorPage(&p, err)
	h.showShareLinks(w, r, us, statusOf(err), p, shareLinksData{Duration: duration})
}

// createShareLink makes a link with the CreateShareLink use case and
// redirects to the page that shows it, once.
func (h *Handler) createShareLink(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	id := r.PathValue("vehicle_id")
	choice := r.PostFormValue("duration")
	var ttl time.Duration
	for _, sd := range shareDurations {
		if sd.Value == choice {
			ttl = sd.d
		}
	}
	var err error
	var nl fleet.NewShareLink
	if ttl == 0 {
		var v fleet.Validator
		v.Add("duration", "must be 1 hour, 8 hours, 24 hours or 7 days")
		err = v.Err()
	} else {
		expires := h.svc.Now().Add(ttl)
		nl, err = h.svc.CreateShareLink(r.Context(), us.Principal(), fleet.ShareLinkInput{VehicleID: id, ExpiresAt: &expires})
	}
	if err != nil {
		if ttl == 0 {
			choice = defaultShareDuration
		}
		h.refusedShareLinks(w, r, us, err, choice)
		return
	}
	loc, _, _ := zoneOf(r)
	shown := shownShare{URL: fleet.ShareLinkURL(h.baseURL(r), nl.Token), Expires: localTime(nl.Link.ExpiresAt, loc)}
	http.Redirect(w, r, "/vehicles/"+id+"/share?shown="+h.shownOnce(r, shown)+"#new-link-title", http.StatusSeeOther)
}

// revokeShareLink revokes one of the vehicle's links with the
// RevokeShareLink use case.
func (h *Handler) revokeShareLink(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	pr := us.Principal()
	vehicleID, id := r.PathValue("vehicle_id"), r.PathValue("share_link_id")
	sl, err := h.svc.ShareLink(ctx, pr, id)
	if err == nil && sl.VehicleID != vehicleID {
		err = fleet.NotFound("share link", id) // another vehicle's
	}
	if err == nil {
		sl, err = h.svc.RevokeShareLink(ctx, pr, id)
	}
	if err != nil {
		h.refusedShareLinks(w, r, us, err, defaultShareDuration)
		return
	}
	loc, _, _ := zoneOf(r)
	notice := "The link made " + localTime(sl.CreatedAt, loc) + " is revoked: it no longer opens, and pages open on it say so within seconds."
	http.Redirect(w, r, "/vehicles/"+vehicleID+"/share?notice="+h.noticeOnce(r, notice), http.StatusSeeOther)
}
