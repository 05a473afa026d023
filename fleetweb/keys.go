package fleetweb

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// maxListed bounds how many keys, vehicles or users a page reads.
const maxListed = 5000

// keyRow is a key as the keys page lists it, with the other key of its
// rotation: the key it replaced, or the key that replaces it.
type keyRow struct {
	Key    fleet.Key
	Status fleet.KeyStatus
	// Replaces is the key this one replaced in a rotation, when the
	// account still has it.
	Replaces *keyRow
	// ReplacedBy is the key that replaced this one.
	ReplacedBy *keyRow
}

// Active reports whether the key works.
func (k *keyRow) Active() bool { return k.Status == fleet.KeyActive }

// Rotatable reports whether the page offers to rotate the key: an active
// key, unless an active replacement of it exists already.
func (k *keyRow) Rotatable() bool {
	return k.Active() && (k.ReplacedBy == nil || !k.ReplacedBy.Active())
}

// Partner is the other active key of a rotation whose two keys both work,
// or nil: what "Revoke both" revokes with this one.
func (k *keyRow) Partner() *keyRow {
	if !k.Active() {
		return nil
	}
	if k.Replaces != nil && k.Replaces.Active() {
		return k.Replaces
	}
	if k.ReplacedBy != nil && k.ReplacedBy.Active() {
		return k.ReplacedBy
	}
	return nil
}

type keysData struct {
	Keys []*keyRow
	// Shown is the secret the page shows, once, after the redirect of the
	// form that made it; Gone says the page was that page, viewed again.
	Shown       *shownKey
	Gone        bool
	Permissions []string
	Form        keyForm
	Graces      []grace
	Welcome     bool
	APIBase     string
}

// shownKey is a new key's secret held for the page after its form's
// redirect; Rotated says a rotation made it (Key.Replaces names the old
// key), and Old is that key as the page lists it.
type shownKey struct {
	fleet.NewKey
	Rotated bool
	Old     *keyRow
}

type keyForm struct {
	Name        string
	Environment string
	Permissions map[string]bool
	Expires     string
}

type grace struct {
	Seconds int
	Label   string
}

var graces = []grace{{0, "none: the old key stops at once"}, {3600, "1 hour"}, {86400, "24 hours"}, {7 * 86400, "7 days"}}

func newKeyForm() keyForm {
	return keyForm{Environment: "development", Permissions: map[string]bool{fleet.PermAll: true}}
}

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "API keys", Nav: "keys", User: &us}
	d := keysData{Welcome: r.URL.Query().Get("welcome") != "", Form: newKeyForm()}
	if v, ok, had := h.takeShown(r); ok {
		if nk, ok := v.(shownKey); ok {
			d.Shown = &nk
		}
	} else if had {
		d.Gone = true
	}
	if revoked := r.URL.Query()["revoked"]; len(revoked) > 0 {
		p.Notice = h.revokedNotice(r, us, revoked)
	}
	h.showKeys(w, r, us, http.StatusOK, p, d)
}

// revokedNotice says which keys were revoked, by their names.
func (h *Handler) revokedNotice(r *http.Request, us fleet.UserSession, ids []string) string {
	var keys []fleet.Key
	for _, id := range ids[:min(len(ids), 2)] {
		if k, err := h.svc.Key(r.Context(), us.Principal(), id); err == nil && k.RevokedAt != nil {
			keys = append(keys, k)
		}
	}
	switch {
	case len(keys) == 1:
		return "“" + keys[0].Name + "” (" + keys[0].Prefix + "…) is revoked: requests with it are refused from now on."
	case len(keys) == 2 && keys[0].Name == keys[1].Name:
		return "Both keys named “" + keys[0].Name + "” (" + keys[0].Prefix + "… and " + keys[1].Prefix +
			"…) are revoked: requests with either are refused from now on."
	case len(keys) == 2:
		return "“" + keys[0].Name + "” (" + keys[0].Prefix + "…) and “" + keys[1].Name + "” (" + keys[1].Prefix +
			"…) are revoked: requests with either are refused from now on."
	}
	return ""
}

// keyRows lists the account's keys newest first, each rotation's two keys
// linked.
func (h *Handler) keyRows(r *http.Request, us fleet.UserSession) ([]*keyRow, error) {
	keys, _, err := walk(r.Context(), maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Key], error) {
		return h.svc.ListKeys(r.Context(), us.Principal(), q)
	})
	if err != nil {
		return nil, err
	}
	now := h.svc.Now()
	slices.Reverse(keys) // newest first
	rows := make([]*keyRow, len(keys))
	byID := make(map[string]*keyRow, len(keys))
	for i, k := range keys {
		rows[i] = &keyRow{Key: k, Status: k.Status(now)}
		byID[k.ID] = rows[i]
	}
	for _, k := range rows {
		if old := byID[k.Key.Replaces]; old != nil {
			k.Replaces, old.ReplacedBy = old, k
		}
	}
	return rows, nil
}

// showKeys renders the keys page with the account's keys listed afresh.
func (h *Handler) showKeys(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d keysData) {
	rows, err := h.keyRows(r, us)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Keys = rows
	if d.Shown != nil && d.Shown.Rotated {
		for _, k := range rows {
			if k.Key.ID == d.Shown.Key.Replaces {
				d.Shown.Old = k
			}
		}
	}
	d.Permissions = append([]string{fleet.PermAll}, fleet.AllPermissions()...)
	d.Graces = graces
	d.APIBase = h.baseURL(r) + "/v1"
	p.Data = d
	h.render(w, status, "keys", p)
}

// createKey generates a key with the CreateKey use case and redirects to
// the page that shows its secret, once.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := keyForm{Name: r.PostFormValue("name"), Environment: r.PostFormValue("environment"),
		Permissions: map[string]bool{}, Expires: r.PostFormValue("expires")}
	perms := []fleet.Permission{}
	for _, perm := range r.PostForm["permissions"] {
		f.Permissions[perm] = true
		perms = append(perms, perm)
	}
	p := page{Title: "API keys", Nav: "keys", User: &us}
	params := fleet.KeyParams{Name: f.Name, Environment: f.Environment, Permissions: perms}
	if f.Environment != "development" && f.Environment != "production" {
		err := &fleet.Error{Code: fleet.CodeValidation, Message: "The request has an invalid field.",
			Details: []fleet.FieldError{{Field: "environment", Message: "must be development or production"}}}
		errorPage(&p, err)
		h.showKeys(w, r, us, statusOf(err), p, keysData{Form: f})
		return
	}
	if f.Expires != "" {
		t, err := time.Parse("2006-01-02", f.Expires)
		if err != nil {
			err := &fleet.Error{Code: fleet.CodeValidation, Message: "The request has an invalid field.",
				Details: []fleet.FieldError{{Field: "expires", Message: "must be a date, YYYY-MM-DD"}}}
			errorPage(&p, err)
			h.showKeys(w, r, us, statusOf(err), p, keysData{Form: f})
			return
		}
		params.ExpiresAt = &t
	}
	nk, err := h.svc.CreateKey(r.Context(), us.Principal(), params)
	if err != nil {
		errorPage(&p, err)
		h.showKeys(w, r, us, statusOf(err), p, keysData{Form: f})
		return
	}
	http.Redirect(w, r, "/settings/api-keys?shown="+h.shownOnce(r, shownKey{NewKey: nk}), http.StatusSeeOther)
}

// rotateKey rotates a key with the RotateKey use case and redirects to the
// page that shows the new secret, once.
func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "API keys", Nav: "keys", User: &us}
	secs, err := strconv.Atoi(r.PostFormValue("grace_seconds"))
	if err != nil {
		secs = -1 // refused by the use case, naming the field
	}
	nk, err := h.svc.RotateKey(r.Context(), us.Principal(), r.PathValue("key_id"), time.Duration(secs)*time.Second)
	if err != nil {
		errorPage(&p, err)
		h.showKeys(w, r, us, statusOf(err), p, keysData{Form: newKeyForm()})
		return
	}
	http.Redirect(w, r, "/settings/api-keys?shown="+h.shownOnce(r, shownKey{NewKey: nk, Rotated: true}), http.StatusSeeOther)
}

type revokeData struct {
	Key *keyRow
	// Partner is the other key of its rotation while both work: the old
	// key that still works until its grace ends, or the key replacing it.
	Partner *keyRow
}

// keyAndPartner finds a key of the account and the other active key of its
// rotation.
func (h *Handler) keyAndPartner(r *http.Request, us fleet.UserSession, id string) (revokeData, error) {
	k, err := h.svc.Key(r.Context(), us.Principal(), id) // not_found for another account's, or none
	if err != nil {
		return revokeData{}, err
	}
	rows, err := h.keyRows(r, us)
	if err != nil {
		return revokeData{}, err
	}
	for _, row := range rows {
		if row.Key.ID == k.ID {
			return revokeData{Key: row, Partner: row.Partner()}, nil
		}
	}
	return revokeData{Key: &keyRow{Key: k, Status: k.Status(h.svc.Now())}}, nil
}

func (h *Handler) revokePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	d, err := h.keyAndPartner(r, us, r.PathValue("key_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "revoke", page{Title: "Revoke " + d.Key.Key.Name, Nav: "keys", User: &us, Data: d})
}

// revokeKey revokes a key with the RevokeKey use case, and with both=1 the
// other key of its rotation too, then redirects to the keys page, which
// names them.
func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ids := []string{r.PathValue("key_id")}
	if r.PostFormValue("both") != "" {
		d, err := h.keyAndPartner(r, us, ids[0])
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		if d.Partner != nil {
			ids = append(ids, d.Partner.Key.ID)
		}
	}
	q := make([]string, 0, len(ids))
	for _, id := range ids {
		k, err := h.svc.RevokeKey(r.Context(), us.Principal(), id)
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		q = append(q, "revoked="+k.ID)
	}
	http.Redirect(w, r, "/settings/api-keys?"+strings.Join(q, "&"), http.StatusSeeOther)
}

type usageData struct {
	Key       fleet.Key
	Status    fleet.KeyStatus
	Limit     int
	Day, Week chart
	Hours     []fleet.Usage // the last 24, newest first
	Days      []dayTotal
	DayTotal  [2]int
	WeekTotal [2]int
	ThisHour  int
	Generated time.Time
}

type dayTotal struct {
	Day                string
	Requests, Rejected int
}

// usagePage shows a key's hourly requests and 429s over 24 hours and 7
// days, as server-drawn SVG charts with the numbers in tables.
func (h *Handler) usagePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	k, err := h.svc.Key(ctx, us.Principal(), r.PathValue("key_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	u, err := h.svc.KeyUsage(ctx, us.Principal(), k.ID, fleet.MaxUsageHours)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d := usageData{Key: k, Status: k.Status(h.svc.Now()), Limit: us.Account.RateLimitPerHour(), Generated: h.svc.Now()}
	d.Hours = u.Hours[:24]
	for _, x := range d.Hours {
		d.DayTotal[0] += x.Requests
		d.DayTotal[1] += x.Rejected
	}
	d.WeekTotal = [2]int{u.Requests, u.Rejected}
	d.ThisHour = u.Hours[0].Requests
	// Seven rows of 24 hours each, newest first, as the chart's seven
	// days: the last 168 hours span eight calendar dates, so a row is the
	// 24 hours that end with the hour its chart label marks.
	for i, x := range u.Hours {
		if i%24 == 0 {
			end := x.Hour.Add(time.Hour).UTC()
			d.Days = append(d.Days, dayTotal{Day: end.Add(-24*time.Hour).Format("Jan 2 15:00") + " – " + end.Format("Jan 2 15:00")})
		}
		t := &d.Days[len(d.Days)-1]
		t.Requests += x.Requests
		t.Rejected += x.Rejected
	}
	d.Day = drawChart("Requests per hour, last 24 hours", d.Hours, 6)
	d.Week = drawChart("Requests per hour, last 7 days", u.Hours, 24)
	h.render(w, http.StatusOK, "usage", page{Title: "Usage of " + k.Name, Nav: "keys", User: &us, Data: d})
}
