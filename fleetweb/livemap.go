package fleetweb

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// mapVehicle is a vehicle as the map page and its event stream carry it.
type mapVehicle struct {
	ID        string              `json:"vehicle_id"`
	Name      string              `json:"name"`
	Status    fleet.VehicleStatus `json:"status"`
	Latitude  *float64            `json:"latitude"`
	Longitude *float64            `json:"longitude"`
	Speed     *float64            `json:"speed"`
	Timestamp *time.Time          `json:"timestamp"`
	// AgeSeconds is how old the report was when the page was made (the
	// server's clock), so that the page's script marks it stale at
	// StaleAfter; a live event's report is new (absent).
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
	// Attributes are the latest report's, in words (attributeLines), for
	// the marker's popup; absent when it had none.
	Attributes []string `json:"attributes,omitempty"`
}

type mapData struct {
	Vehicles    []mapVehicle
	More        bool
	Tiles       string
	Attribution string
	Statuses    []fleet.VehicleStatus // the legend's
	StaleAfter  int                   // seconds: StaleAfter
}

// mapPage shows the account's vehicles on a map, coloured by status with a
// legend, and in a list with their status; the page's script moves them as
// reports arrive on /map/events. Without tiles (none configured, or the
// tile server unreachable, which the page then says) the list still shows
// every vehicle and still updates.
func (h *Handler) mapPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	vehicles, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, us.Principal(), fleet.VehicleFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d := mapData{More: more, Tiles: h.opts.MapTiles, Attribution: h.opts.MapAttribution, Vehicles: []mapVehicle{},
		Statuses: fleet.VehicleStatuses(), StaleAfter: int(StaleAfter / time.Second)}
	now := h.svc.Now()
	for _, v := range vehicles {
		mv := mapVehicle{ID: v.ID, Name: v.Name, Status: v.Status, Speed: v.Speed}
		if rec, ok := v.Record(); ok {
			mv.Latitude, mv.Longitude = &rec.Location.Latitude, &rec.Location.Longitude
			t := rec.Location.Timestamp
			mv.Timestamp = &t
			age := int64(now.Sub(t) / time.Second)
			mv.AgeSeconds = &age
			mv.Attributes = attributeLines(rec.Attributes)
		}
		d.Vehicles = append(d.Vehicles, mv)
	}
	h.render(w, http.StatusOK, "map", page{Title: "Live map", Nav: "map", User: &us, Data: d})
}

// How often the map's event stream sends a keep-alive comment, and checks
// that its session still holds.
const (
	mapHeartbeat    = 15 * time.Second
	mapSessionCheck = 30 * time.Second
)

// mapEvents is the live map's Server-Sent Events stream, authenticated by
// the session cookie (an EventSource of the page's own origin sends it):
// the account's location reports as "location" events, resumable with
// Last-Event-ID. It ends when the session does (checked every 30 s) and
// counts against the plan's streams per key, the person counting as one key.
//
// A stream refused (signed out, or over the plan's streams) is answered, to
// an EventSource, as a "refused" event whose message the page shows: an
// EventSource reads no body of an error status, and would only try again.
func (h *Handler) mapEvents(w http.ResponseWriter, r *http.Request) {
	secret := h.sessionSecret(r)
	us, err := h.session(r)
	if err != nil {
		h.refuseStream(w, r, err, fleet.ErrorMessage(err))
		return
	}
	sub, err := h.svc.Subscribe(r.Context(), us.Principal(), nil, r.Header.Get("Last-Event-ID"))
	if err != nil {
		msg := fleet.ErrorMessage(err)
		if fleet.ErrorCode(err) == fleet.CodeRateLimitExceeded { // the service speaks of keys; a person has maps
			plan := us.Account.Plan
			if !plan.Valid() {
				plan = fleet.PlanFree
			}
			open := max(h.svc.OpenStreams(us.Principal()), plan.Limits().StreamsPerKey)
			msg = fmt.Sprintf("You have %s open, the most the %s plan allows; close one first.", plural(open, "live map", "live maps"), plan)
		}
		h.refuseStream(w, r, err, msg)
		return
	}
	defer sub.Close()
	rc, ok := startEvents(w)
	if !ok {
		return
	}
	beat := time.NewTicker(mapHeartbeat)
	defer beat.Stop()
	check := time.NewTicker(mapSessionCheck)
	defer check.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done():
			return
		case <-check.C:
			if _, err := h.svc.Session(r.Context(), secret); err != nil {
				fmt.Fprint(w, "event: signed-out\ndata: {}\n\n")
				rc.Flush()
				return
			}
		case <-beat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-sub.Ready():
			items, err := sub.Next(256)
			if err != nil {
				return
			}
			for _, it := range items {
				rec := it.Record
				t := rec.Location.Timestamp
				b, _ := json.Marshal(mapVehicle{ID: it.VehicleID, Name: rec.Name, Status: rec.Status,
					Latitude: &rec.Location.Latitude, Longitude: &rec.Location.Longitude, Speed: rec.Speed, Timestamp: &t,
					Attributes: attributeLines(rec.Attributes)})
				fmt.Fprintf(w, "id: %s\nevent: location\ndata: %s\n\n", it.ID, b)
			}
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// startEvents answers with an event stream: its headers and the client's
// reconnection delay, flushed. It returns what flushes the events that
// follow, and false when the client is gone.
func startEvents(w http.ResponseWriter) (*http.ResponseController, bool) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // a stream outlives any write timeout
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 3000\n\n")
	return rc, rc.Flush() == nil
}

// refuseStream answers a live map's stream that cannot open: to an
// EventSource (Accept: text/event-stream), a "refused" event with msg, the
// status and code in its data; to anything else, err's status with msg.
func (h *Handler) refuseStream(w http.ResponseWriter, r *http.Request, err error, msg string) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		setRetryAfter(w, err)
		http.Error(w, msg, statusOf(err))
		return
	}
	b, _ := json.Marshal(struct {
		Status  int    `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}{statusOf(err), fleet.ErrorCode(err), msg})
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 60000\nevent: refused\ndata: %s\n\n", b)
}
