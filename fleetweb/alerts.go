package fleetweb

import (
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
)

// alertsPerPage is how many alerts a page of /alerts shows.
const alertsPerPage = 50

type alertsData struct {
	Rows   []alertRow
	Count  count
	One    string // what one alert of the tab is called: "open alert"
	Many   string
	Status string
	Tabs   []alertTab
	Paging paging
	// Here is the tab and the position as a query, which the forms send
	// back so that the page after an action is the same.
	Here string
}

type alertTab struct {
	Status, Label string
}

var alertTabs = []alertTab{{"open", "Open"}, {"acknowledged", "Acknowledged"}, {"resolved", "Resolved"}, {"all", "All"}}

// alertTab returns the tab named status (open when none or unknown).
func tabOf(status string) string {
	for _, t := range alertTabs {
		if t.Status == status {
			return status
		}
	}
	return string(fleet.AlertOpen)
}

// URL is the address of the tab at a position.
func (d alertsData) URL(pos position) string {
	q := url.Values{"status": {d.Status}}
	pos.set(q)
	return "/alerts?" + q.Encode()
}

// alertsPage lists the account's alerts of a tab (open ones by default),
// newest first a page at a time, with how many there are, and acknowledge
// and resolve for admins.
func (h *Handler) alertsPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	q := r.URL.Query()
	d := alertsData{Status: tabOf(q.Get("status")), Tabs: alertTabs, One: "alert", Many: "alerts"}
	f := fleet.AlertFilter{}
	if d.Status != "all" {
		f.Status = fleet.AlertStatus(d.Status)
		d.One, d.Many = d.Status+" alert", d.Status+" alerts"
	}
	pos := readPosition(q, fleet.PrefixAlert)
	list := func(lq fleet.ListQuery) (fleet.List[fleet.Alert], error) {
		return h.svc.ListAlerts(ctx, us.Principal(), f, lq)
	}
	alerts, pg, err := newestFirst(pos, alertsPerPage, list, func(a fleet.Alert) string { return a.ID })
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	if d.Count.N, d.Count.More, err = countUpTo(ctx, maxCounted, list); err != nil {
		h.fail(w, r, &us, err)
		return
	}
	if d.Rows, err = h.alertRows(ctx, us.Principal(), alerts); err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Paging = pg
	here := url.Values{"status": {d.Status}}
	pos.set(here)
	d.Here = here.Encode()
	p := page{Title: "Alerts", Nav: "alerts", User: &us, Data: d}
	switch q.Get("done") {
	case "acknowledged":
		p.Notice = "The alert is acknowledged."
	case "resolved":
		p.Notice = "The alert is resolved."
	}
	h.render(w, http.StatusOK, "alerts", p)
}

// moveAlert acknowledges or resolves an alert through the use case, which
// refuses a viewer and a move the alert state machine does not allow, and
// leads back to the tab and page the form was on.
func (h *Handler) moveAlert(to fleet.AlertStatus) userFunc {
	return func(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
		var err error
		if to == fleet.AlertAcknowledged {
			_, err = h.svc.AcknowledgeAlert(r.Context(), us.Principal(), r.PathValue("alert_id"))
		} else {
			_, err = h.svc.ResolveAlert(r.Context(), us.Principal(), r.PathValue("alert_id"))
		}
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		back := url.Values{"status": {"all"}}
		if from, err := url.ParseQuery(r.PostFormValue("back")); err == nil && from.Get("status") != "" {
			back.Set("status", tabOf(from.Get("status")))
			readPosition(from, fleet.PrefixAlert).set(back)
		}
		back.Set("done", string(to))
		http.Redirect(w, r, "/alerts?"+back.Encode(), http.StatusSeeOther)
	}
}
