package fleetweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The public page of a share link (fleet.ShareLinkPath): no session, no
// dashboard around it. It shows the company's name, the vehicle's name,
// when the link expires, the vehicle's position and its route since the
// later of the link's creation and the start of the viewer's day, and
// nothing else: no id, no other vehicle, no link into the dashboard. The
// day and the times are the viewer's, as on the vehicle pages: the browser's
// time zone from the fleet_tz cookie (the page's script sets it, and loads
// the page again once when it did not match), or ?tz=; UTC without either.
// The position moves as reports arrive on /s/{token}/events, a stream of
// that vehicle's reports only, which ends when the link does.
//
// A token that shows nothing — unknown, malformed, expired, revoked, or
// its vehicle deleted — gets one 404, the same for each, so that tokens
// cannot be probed; each such request takes one from its address's hourly
// allowance of requests without valid credentials, the API's brake on key
// guessing (fleet.Options.AddressLimit), and past it the answer is 429.
// The page is never cached and sends no Referer (its address is the
// secret), not even to the map's tile server.

type sharePoint struct {
	Lat  float64   `json:"lat"`
	Lon  float64   `json:"lon"`
	Time time.Time `json:"time"`
}

type shareTrack struct {
	Route    [][2]float64 `json:"route"`
	Position *sharePoint  `json:"position"`
}

type shareData struct {
	// Gone is the 404 of a token that shows nothing; TooMany, the seconds
	// to wait, the brake's 429; Unavailable, the store's 503.
	Gone        bool
	TooMany     int
	Unavailable bool

	Company, Vehicle    string
	Expires, ExpiresISO string
	Zone                string
	Since               string // when the route starts: "00:00", "14:05" or "23 Nov 14:05"
	LastReport, Ago     string // "" before the first report
	Position            string
	Cut                 bool
	Track               shareTrack
	Events              string // the stream's address
	Tiles, Attribution  string
}

// setShareHeaders sets what a share link's answers carry beyond the
// dashboard's: no Referer (the address is the secret) and no indexing.
func setShareHeaders(w http.ResponseWriter) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Robots-Tag", "noindex, nofollow")
}

// sharePage is the public page of a share link.
func (h *Handler) sharePage(w http.ResponseWriter, r *http.Request) {
	setShareHeaders(w)
	token := r.PathValue("token")
	loc, _, _ := zoneOf(r) // a ?tz= that names no zone: as if it were not there
	sv, err := h.svc.Edge().SharedVehicle(r.Context(), token, loc)
	if err != nil {
		h.shareRefused(w, r, err, false)
		return
	}
	now := h.svc.Now()
	d := shareData{Company: sv.CompanyName, Vehicle: sv.VehicleName, Zone: loc.String(),
		Expires: localTime(sv.ExpiresAt, loc), ExpiresISO: sv.ExpiresAt.Format(time.RFC3339),
		Since: dayClock(sv.RouteFrom, now.In(loc), loc), Cut: sv.RouteCut,
		Track:  shareTrack{Route: make([][2]float64, 0, len(sv.Route))},
		Events: fleet.ShareLinkPath(token) + "/events", Tiles: h.opts.MapTiles, Attribution: h.opts.MapAttribution}
	for _, pt := range sv.Route {
		d.Track.Route = append(d.Track.Route, [2]float64{pt.Latitude, pt.Longitude})
	}
	if p := sv.Position; p != nil {
		l := p.Location
		d.Track.Position = &sharePoint{Lat: l.Latitude, Lon: l.Longitude, Time: l.Timestamp}
		d.LastReport, d.Ago, d.Position = localTime(l.Timestamp, loc), ago(l.Timestamp, now), coords(l.Latitude, l.Longitude)
	}
	h.render(w, http.StatusOK, "share", page{Title: sv.VehicleName + " · " + sv.CompanyName, Data: d})
}

// shareRefused answers a share link's page or stream that cannot be shown:
// the one 404 of every token that shows nothing (after the brake), 429
// for too many streams of the link, 503 when the store cannot be asked.
// It never logs the address, whose token is the secret.
func (h *Handler) shareRefused(w http.ResponseWriter, r *http.Request, err error, stream bool) {
	status := statusOf(err)
	d := shareData{}
	msg := fleet.ErrorMessage(err)
	switch {
	case fleet.ErrorCode(err) == fleet.CodeNotFound:
		d.Gone, status = true, http.StatusNotFound
		msg = "This link does not exist, or it has expired or been revoked."
		if n, limited := h.shareBrake(w, r); limited {
			d.Gone, d.TooMany, status = false, n, http.StatusTooManyRequests
			msg = fmt.Sprintf("Too many requests for links that do not exist from this address; retry after %d seconds.", n)
		}
	case status >= 500:
		h.log.Error("dashboard: share link", "path", "/s/…", "err", err)
		d.Unavailable = true
		msg = "The page cannot be shown right now; try again in a moment."
		setRetryAfter(w, err)
	}
	if stream {
		if status == http.StatusNotFound || status == http.StatusTooManyRequests {
			http.Error(w, msg, status) // an EventSource reads no body: it stops
			return
		}
		h.refuseStream(w, r, err, msg)
		return
	}
	title := "Link not found"
	switch status {
	case http.StatusTooManyRequests:
		title = "Too many requests"
	case http.StatusNotFound:
	default:
		title = http.StatusText(status)
	}
	h.render(w, status, "share", page{Title: title, Error: msg, Data: d})
}

// shareBrake takes a request for a token that shows nothing from its
// address's allowance (Edge.AdmitAddress, the API's brake); past it, it
// sets Retry-After and returns the seconds to wait and true.
func (h *Handler) shareBrake(w http.ResponseWriter, r *http.Request) (int, bool) {
	edge := h.svc.Edge()
	if edge.AddressLimit() == 0 {
		return 0, false
	}
	q, err := edge.AdmitAddress(r.Context(), h.opts.ClientAddr(r))
	if err != nil || q.Allowed {
		return 0, false // a store that cannot count brakes nothing: the lookup failed all the same
	}
	n := q.RetryAfter(h.svc.Now())
	w.Header().Set("Retry-After", strconv.Itoa(n))
	return n, true
}

// sharePosition is a report as the share stream carries it: where and when,
// nothing else.
type sharePosition struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
}

// shareEvents is a share link's Server-Sent Events stream: its vehicle's
// reports as "position" events. When the link ends (revoked, expired, its
// vehicle deleted) an "ended" event says so and the stream closes; a token
// that shows nothing is the page's 404. Events carry no id: a client that
// reconnects gets the reports from then on.
func (h *Handler) shareEvents(w http.ResponseWriter, r *http.Request) {
	setShareHeaders(w)
	sub, err := h.svc.Edge().SubscribeShared(r.Context(), r.PathValue("token"))
	if err != nil {
		h.shareRefused(w, r, err, true)
		return
	}
	defer sub.Close()
	rc, ok := startEvents(w)
	if !ok {
		return
	}
	beat := time.NewTicker(mapHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done():
			if errors.Is(sub.Err(), fleet.ErrShareLinkEnded) {
				fmt.Fprint(w, "event: ended\ndata: {}\n\n")
				rc.Flush()
			}
			return
		case <-beat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-sub.Ready():
			items, err := sub.Next(256)
			if err != nil {
				continue // ended: Done says how
			}
			for _, it := range items {
				l := it.Record.Location
				b, _ := json.Marshal(sharePosition{Latitude: l.Latitude, Longitude: l.Longitude, Timestamp: l.Timestamp})
				fmt.Fprintf(w, "event: position\ndata: %s\n\n", b)
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
