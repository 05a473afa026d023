package fleetweb

import (
	"net/http"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The vehicle pages speak of days and times in the person's own time zone:
// the browser's, which app.js keeps in the fleet_tz cookie (an IANA name
// such as Europe/Berlin, from Intl.DateTimeFormat). A page's ?tz= wins over
// the cookie, so that an address handed to a colleague shows the same day;
// without either, or with a zone this server does not know, UTC.

// zoneCookie is the cookie app.js keeps the browser's time zone in.
const zoneCookie = "fleet_tz"

// zoneOf returns the time zone a page speaks in, and the ?tz= that chose
// it ("" when the cookie, or nothing, did), for the page's links to keep.
// A ?tz= that names no time zone is refused (the page then speaks as if
// it were not there).
func zoneOf(r *http.Request) (*time.Location, string, error) {
	var err error
	if name := r.URL.Query().Get("tz"); name != "" {
		if name == "UTC" {
			return time.UTC, name, nil
		}
		if loc := loadZone(name); loc != nil {
			return loc, name, nil
		}
		var v fleet.Validator
		v.Add("tz", "must be a time zone such as Europe/Berlin")
		err = badAddress(v.Err())
	}
	if c, cerr := r.Cookie(zoneCookie); cerr == nil {
		if loc := loadZone(c.Value); loc != nil {
			return loc, "", err
		}
	}
	return time.UTC, "", err
}

// loadZone loads an IANA time zone by name; nil for "", UTC, or a name
// that is not one (only letters, digits and _+-/ are looked up).
func loadZone(name string) *time.Location {
	if name == "" || name == "UTC" || len(name) > 64 {
		return nil
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-' || c == '/') {
			return nil
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	return loc
}

// localTime writes t in loc with the zone's abbreviation: "2026-11-23
// 14:05 CET"; "—" for the zero time.
func localTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// dayClock writes t as the page of a day (its start in loc) speaks of
// it: the time of day ("14:05") when it is that day, with its date ("22
// Nov 23:40") when it is another.
func dayClock(t, day time.Time, loc *time.Location) string {
	t = t.In(loc)
	if y, m, d := t.Date(); y == day.Year() && m == day.Month() && d == day.Day() {
		return t.Format("15:04")
	}
	return t.Format("2 Jan 15:04")
}

// StaleAfter is how old a vehicle's last report may be before the
// dashboard marks it stale: the status and speed shown are what that
// report said, and may no longer be true.
const StaleAfter = 5 * time.Minute

// stale reports whether a report at t is older than StaleAfter at now.
func stale(t, now time.Time) bool { return now.Sub(t) > StaleAfter }

// ago says how long before now t was, roughly: "just now", "5 min ago",
// "3 h ago", "2 days ago".
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return num(int(d/time.Minute)) + " min ago"
	case d < 48*time.Hour:
		return num(int(d/time.Hour)) + " h ago"
	}
	return num(int(d/(24*time.Hour))) + " days ago"
}

// duration writes a length of time as a person reads it: "45 s", "12 min",
// "1 h 05 min".
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return num(int(d/time.Second)) + " s"
	case d < time.Hour:
		return num(int(d/time.Minute)) + " min"
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	return num(h) + " h " + twoDigits(m) + " min"
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + num(n)
	}
	return num(n)
}
