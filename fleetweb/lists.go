package fleetweb

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// Lists that grow without end (alerts, webhook deliveries) show their
// newest items first, a page at a time, with links to older and newer
// pages and how many there are.

// maxCounted bounds how far a list is counted: past it a page says "more
// than 1,000".
const maxCounted = 1000

// position is where a page of a newest-first list starts: the items older
// than Before, the items newer than After, or (neither) the newest.
type position struct {
	Before, After string
}

// readPosition reads before= or after= from a page's query: ids with the
// list's prefix, anything else the newest page.
func readPosition(q url.Values, prefix string) position {
	if id := q.Get("before"); fleet.ValidID(prefix, id) {
		return position{Before: id}
	}
	if id := q.Get("after"); fleet.ValidID(prefix, id) {
		return position{After: id}
	}
	return position{}
}

// set writes the position into q.
func (p position) set(q url.Values) {
	switch {
	case p.Before != "":
		q.Set("before", p.Before)
	case p.After != "":
		q.Set("after", p.After)
	}
}

// paging is where a page's "Older" and "Newer" links lead.
type paging struct {
	Older, Newer       position
	HasOlder, HasNewer bool
}

// newestFirst reads the page of at most n items at pos, newest first,
// through a use case that lists newest first with ListQuery.Newest (the
// newer pages are read forward from an item and turned round).
func newestFirst[T any](pos position, n int, list func(fleet.ListQuery) (fleet.List[T], error), id func(T) string) ([]T, paging, error) {
	var pg paging
	if pos.After != "" {
		l, err := list(fleet.ListQuery{Cursor: fleet.EncodeCursor(pos.After), Limit: n})
		if err != nil {
			return nil, pg, err
		}
		if !l.HasMore || len(l.Items) == 0 { // nothing newer beyond: the newest page
			return newestFirst(position{}, n, list, id)
		}
		items := slices.Clone(l.Items)
		slices.Reverse(items)
		pg.HasNewer, pg.Newer = true, position{After: id(items[0])}
		pg.HasOlder, pg.Older = true, position{Before: id(items[len(items)-1])}
		return items, pg, nil
	}
	q := fleet.ListQuery{Limit: n, Newest: true}
	if pos.Before != "" {
		q.Cursor = fleet.EncodeCursor(pos.Before)
	}
	l, err := list(q)
	if err != nil {
		return nil, pg, err
	}
	if l.HasMore {
		pg.HasOlder, pg.Older = true, position{Before: id(l.Items[len(l.Items)-1])}
	}
	if pos.Before != "" {
		pg.HasNewer = true // at least the item the page started before
		if len(l.Items) > 0 {
			pg.Newer = position{After: id(l.Items[0])}
		}
	}
	return l.Items, pg, nil
}

// countUpTo counts a list's items, up to max: it reports more when there
// are more than max.
func countUpTo[T any](ctx context.Context, max int, list func(fleet.ListQuery) (fleet.List[T], error)) (n int, more bool, err error) {
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := list(q)
		if err != nil {
			return 0, false, err
		}
		n += len(l.Items)
		if n > max {
			return max, true, nil
		}
		if !l.HasMore {
			return n, false, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		q.Cursor = l.NextCursor
	}
}

// count is how many items a list has, as a page says it.
type count struct {
	N    int
	More bool // more than N
}

// alertRow is an alert as a person reads it: what happened in words and
// the vehicle by its name.
type alertRow struct {
	fleet.Alert
	What    string
	Vehicle string
	Known   bool // the vehicle exists: its page can be linked
}

// alertRows words alerts, reading the names of their vehicles in one
// list.
func (h *Handler) alertRows(ctx context.Context, p fleet.Principal, alerts []fleet.Alert) ([]alertRow, error) {
	var ids []string
	for _, a := range alerts {
		if a.VehicleID != "" && !slices.Contains(ids, a.VehicleID) {
			ids = append(ids, a.VehicleID)
		}
	}
	names := map[string]string{}
	if len(ids) > 0 {
		l, err := h.svc.ListVehicles(ctx, p, fleet.VehicleFilter{IDs: ids}, fleet.ListQuery{Limit: fleet.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		for _, v := range l.Items {
			names[v.ID] = v.Name
		}
	}
	rows := make([]alertRow, len(alerts))
	for i, a := range alerts {
		rows[i] = alertRow{Alert: a, What: alertWhat(a)}
		if a.VehicleID != "" {
			rows[i].Vehicle = names[a.VehicleID]
			rows[i].Known = rows[i].Vehicle != ""
			if rows[i].Vehicle == "" {
				rows[i].Vehicle = "a deleted vehicle"
			}
		}
	}
	return rows, nil
}

// alertWhat says in words what an alert is about: "Speeding", "Left
// geofence Depot", "Maintenance overdue: Oil change".
func alertWhat(a fleet.Alert) string {
	var d struct {
		Geofence string `json:"geofence_name"`
		Schedule string `json:"schedule_name"`
		Alarm    string `json:"alarm"`
		Type     string `json:"type"`
		TZ       string `json:"tz"`
	}
	json.Unmarshal(a.Data, &d) // a rule's alert names its geofence or schedule; others have neither
	switch a.Type {
	case fleet.AlertSpeeding:
		return "Speeding"
	case fleet.AlertVehicleOffline:
		return "Not reporting"
	case fleet.AlertGeofenceEnter:
		if d.Geofence != "" {
			return "Entered geofence " + d.Geofence
		}
		return "Entered a geofence"
	case fleet.AlertGeofenceExit:
		if d.Geofence != "" {
			return "Left geofence " + d.Geofence
		}
		return "Left a geofence"
	case fleet.AlertMaintenanceDueSoon:
		return withName("Maintenance due soon", d.Schedule)
	case fleet.AlertMaintenanceOverdue:
		return withName("Maintenance overdue", d.Schedule)
	case fleet.AlertCustom:
		return "Custom"
	case fleet.AlertAlarm:
		return alarmText(d.Alarm)
	case fleet.AlertIgnitionOn:
		if d.TZ != "" {
			return "Ignition on outside working hours"
		}
		return "Ignition on"
	case fleet.AlertIdling:
		return "Idling"
	case fleet.AlertFuelDrop:
		return "Fuel drop"
	case fleet.AlertHarshDriving:
		if d.Type != "" {
			return alarmText(d.Type)
		}
		return "Harsh driving"
	case fleet.AlertPowerCut:
		return "Power cut"
	}
	s := strings.ReplaceAll(string(a.Type), "_", " ")
	if s == "" {
		return "Alert"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func withName(what, name string) string {
	if name == "" {
		return what
	}
	return what + ": " + name
}
