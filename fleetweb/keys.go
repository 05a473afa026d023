package fleetweb

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// maxListed bounds how many keys, vehicles or users a page reads.
const maxListed = 5000

type keyRow struct {
	Key    fleet.Key
	Status fleet.KeyStatus
}

type keysData struct {
	Keys        []keyRow
	NewKey      *fleet.NewKey
	NewKeyTitle string
	Permissions []string
	Form        keyForm
	Graces      []grace
	Welcome     bool
	APIBase     string
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

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "API keys", Nav: "keys", User: &us}
	if id := r.URL.Query().Get("revoked"); fleet.ValidID(fleet.PrefixKey, id) {
		p.Notice = "The key " + id + " is revoked: requests with it are refused from now on."
	}
	h.showKeys(w, r, us, http.StatusOK, p, keysData{Welcome: r.URL.Query().Get("welcome") != "",
		Form: keyForm{Environment: "development", Permissions: map[string]bool{fleet.PermAll: true}}})
}

// showKeys renders the keys page with the account's keys listed afresh.
func (h *Handler) showKeys(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d keysData) {
	keys, _, err := walk(r.Context(), maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Key], error) {
		return h.svc.ListKeys(r.Context(), us.Principal(), q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	now := h.svc.Now()
	slices.Reverse(keys) // newest first
	for _, k := range keys {
		d.Keys = append(d.Keys, keyRow{Key: k, Status: k.Status(now)})
	}
	d.Permissions = append([]string{fleet.PermAll}, fleet.AllPermissions()...)
	d.Graces = graces
	d.APIBase = h.baseURL(r) + "/v1"
	p.Data = d
	h.render(w, status, "keys", p)
}

// createKey generates a key with the CreateKey use case; its secret is in
// this response only (no-store), never again.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	r.ParseForm()
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
	h.showKeys(w, r, us, http.StatusCreated, p, keysData{NewKey: &nk, NewKeyTitle: "Your new API key",
		Form: keyForm{Environment: "development", Permissions: map[string]bool{fleet.PermAll: true}}})
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "API keys", Nav: "keys", User: &us}
	form := keyForm{Environment: "development", Permissions: map[string]bool{fleet.PermAll: true}}
	secs, err := strconv.Atoi(r.PostFormValue("grace_seconds"))
	if err != nil {
		secs = -1 // refused by the use case, naming the field
	}
	nk, err := h.svc.RotateKey(r.Context(), us.Principal(), r.PathValue("key_id"), time.Duration(secs)*time.Second)
	if err != nil {
		errorPage(&p, err)
		h.showKeys(w, r, us, statusOf(err), p, keysData{Form: form})
		return
	}
	h.showKeys(w, r, us, http.StatusCreated, p, keysData{NewKey: &nk, NewKeyTitle: "The rotated key's replacement", Form: form})
}

func (h *Handler) revokePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	k, err := h.svc.Key(r.Context(), us.Principal(), r.PathValue("key_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "revoke", page{Title: "Revoke " + k.Name, Nav: "keys", User: &us, Data: k})
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	k, err := h.svc.RevokeKey(r.Context(), us.Principal(), r.PathValue("key_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/settings/api-keys?revoked="+k.ID, http.StatusSeeOther)
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
	for _, x := range u.Hours { // newest first: the hours of a day are together
		day := x.Hour.UTC().Format("2006-01-02")
		if len(d.Days) == 0 || d.Days[len(d.Days)-1].Day != day {
			d.Days = append(d.Days, dayTotal{Day: day})
		}
		t := &d.Days[len(d.Days)-1]
		t.Requests += x.Requests
		t.Rejected += x.Rejected
	}
	d.Day = drawChart("Requests per hour, last 24 hours", d.Hours, 6)
	d.Week = drawChart("Requests per hour, last 7 days", u.Hours, 24)
	h.render(w, http.StatusOK, "usage", page{Title: "Usage of " + k.Name, Nav: "keys", User: &us, Data: d})
}
