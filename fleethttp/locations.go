package fleethttp

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// bulkRequest is how the document tells the bulk batch from a vehicle's
// own: the same wire type, whose points each name their vehicle.
type bulkRequest fleetwire.LocationBatch

// toPoints turns a decoded batch into the service's points. It judges
// nothing: an absent coordinate goes in as fleet.NoCoordinate and an absent
// timestamp as the zero time, which the service refuses ("is required"),
// as it refuses a vehicle_id where the batch takes none.
func toPoints(rps []rawPoint) []fleet.Point {
	pts := make([]fleet.Point, len(rps))
	// The optional values of all points share one allocation.
	opt := make([]float64, 0, 3*len(rps))
	ref := func(f float64) *float64 {
		opt = append(opt, f)
		return &opt[len(opt)-1]
	}
	for i := range rps {
		rp := &rps[i]
		pts[i] = rp.p
		if !rp.hasLat {
			pts[i].Latitude = fleet.NoCoordinate
		}
		if !rp.hasLon {
			pts[i].Longitude = fleet.NoCoordinate
		}
		if rp.hasSpeed {
			pts[i].Speed = ref(rp.speed)
		}
		if rp.hasHeading {
			pts[i].Heading = ref(rp.heading)
		}
		if rp.hasOd {
			pts[i].OdometerKm = ref(rp.odo)
		}
	}
	return pts
}

func (h *Handler) ingestVehicle(c *call) error {
	rps, err := decodeBatch(c.body)
	if err != nil {
		return err
	}
	res, err := h.svc.IngestLocations(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), toPoints(rps))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, res)
}

func (h *Handler) ingestBulk(c *call) error {
	rps, err := decodeBatch(c.body)
	if err != nil {
		return err
	}
	res, err := h.svc.IngestBulk(c.r.Context(), c.p, toPoints(rps))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, res)
}

func (h *Handler) snapshot(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.VehicleFilter{Status: fleet.VehicleStatus(q.Get("status")), Tag: q.Get("tag"), IDs: q["vehicle_id"]}
	l, err := h.svc.ListLocations(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) history(c *call) error {
	q, err := c.query()
	if err != nil {
		return err
	}
	hq := fleet.HistoryQuery{Cursor: q.Get("cursor")}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"from", &hq.From}, {"to", &hq.To}} {
		if s := q.Get(p.name); s != "" {
			t, err := parseTime(p.name, s)
			if err != nil {
				return err
			}
			*p.dst = &t
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fleet.Errorf(fleet.CodeInvalidRequest, "limit must be a whole number from 1 to %d.", fleet.MaxHistoryLimit)
		}
		hq.Limit = n
	}
	l, err := h.svc.HistoryJSON(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), hq, nil)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, historyPage(l))
	return nil
}

// historyPage is a page of history as the list envelope holds it: its
// points written by the service (fleet.Service.HistoryJSON, point by
// point, attributes from their stored form) rather than by reflection.
type historyPage fleet.HistoryJSON

func (l historyPage) appendJSON(b []byte) []byte {
	b = append(b, `{"success":true,"data":`...)
	b = append(b, l.Data...)
	b = append(b, `,"pagination":{"next_cursor":`...)
	if l.NextCursor == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, l.NextCursor) // a cursor is URL-safe text
	}
	b = strconv.AppendBool(append(b, `,"has_more":`...), l.HasMore)
	return append(b, "}}"...)
}

// heartbeatEvery is how often the stream sends a comment to keep proxies
// and clients from timing out.
const heartbeatEvery = 15 * time.Second

// streamBatch is how many reports the stream reads from the replay buffer
// at a time before it writes them out.
const streamBatch = 256

// streamRetryAfter is the Retry-After of a stream refused because its key
// has as many streams open as its plan allows: a client reconnecting after
// a dropped connection may find its old stream not yet closed.
const streamRetryAfter = "5"

// stream serves live location reports as Server-Sent Events. It ends when
// the client goes, when the key stops being valid (revoked, expired, past
// its rotation grace), or when the client falls behind the replay buffer;
// a client reconnects with Last-Event-ID.
// setStreamHeaders sets the headers of an event stream.
func setStreamHeaders(hd http.Header) {
	hd["Content-Type"] = []string{"text/event-stream"}
	hd["Cache-Control"] = []string{"no-cache"}
	hd["X-Accel-Buffering"] = []string{"no"}
}

func (h *Handler) stream(c *call) error {
	q, err := c.query()
	if err != nil {
		return err
	}
	if _, ok := q[tokenParam]; ok && c.r.Header.Get("Authorization") != "" {
		return fleet.Errorf(fleet.CodeInvalidRequest, "Send the API key in Authorization or a stream token in ?token=, not both.")
	}
	if c.r.Method == http.MethodHead {
		// The stream's headers, and no stream: a HEAD would otherwise
		// hold one of the key's streams, and its connection, until the
		// client went away.
		setStreamHeaders(c.w.Header())
		c.w.WriteHeader(http.StatusOK)
		return nil
	}
	last := c.r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	sub, err := h.svc.Subscribe(c.r.Context(), c.p, q["vehicle_id"], last)
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeRateLimitExceeded {
			c.w.Header()["Retry-After"] = []string{streamRetryAfter}
		}
		return err
	}
	defer sub.Close()
	rc := http.NewResponseController(c.w)
	rc.SetWriteDeadline(time.Time{}) // a stream outlives any write timeout
	setStreamHeaders(c.w.Header())
	c.w.WriteHeader(http.StatusOK)
	fmt.Fprint(c.w, "retry: 2000\n\n")
	if err := rc.Flush(); err != nil {
		return nil
	}
	beat := time.NewTicker(heartbeatEvery)
	defer beat.Stop()
	for {
		select {
		case <-c.r.Context().Done():
			return nil
		case <-sub.Done():
			return nil // the key is no longer valid, or the client fell behind
		case <-sub.Ready():
			// Send what is waiting, in one flush.
			for {
				items, err := sub.Next(streamBatch)
				if err != nil {
					return nil
				}
				for _, it := range items {
					if err := writeEvent(c.w, it); err != nil {
						return nil
					}
				}
				if len(items) < streamBatch {
					break
				}
			}
		case <-beat.C:
			if _, err := fmt.Fprint(c.w, ": heartbeat\n\n"); err != nil {
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
	}
}

func writeEvent(w http.ResponseWriter, it fleet.StreamItem) error {
	b, err := jsonMarshal(it.Record)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %s\nevent: location\ndata: %s\n\n", it.ID, b)
	return err
}
