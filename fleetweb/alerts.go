package fleetweb

import (
	"net/http"
	"net/url"
	"strconv"

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
	// Selectable says whether the page lists an open alert, which an
	// admin may select to acknowledge with others.
	Selectable bool
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
	q := r.URL.Query()
	p := page{Title: "Alerts", Nav: "alerts", User: &us}
	switch q.Get("done") {
	case "acknowledged":
		p.Notice = "The alert is acknowledged."
	case "resolved":
		p.Notice = "The alert is resolved."
	case "selected":
		acked, _ := strconv.Atoi(q.Get("acknowledged"))
		unchanged, _ := strconv.Atoi(q.Get("unchanged"))
		p.Notice = acknowledgedNotice(acked, unchanged)
	}
	h.showAlerts(w, r, us, q, http.StatusOK, p)
}

// acknowledgedNotice says what Acknowledge selected did.
func acknowledgedNotice(acked, unchanged int) string {
	s := plural(acked, "alert is", "alerts are") + " acknowledged."
	switch {
	case unchanged == 1:
		s += " 1 was no longer open: someone acknowledged or resolved it first."
	case unchanged > 1:
		s += " " + num(unchanged) + " were no longer open: someone acknowledged or resolved them first."
	}
	return s
}

// showAlerts renders the tab and position q names.
func (h *Handler) showAlerts(w http.ResponseWriter, r *http.Request, us fleet.UserSession, q url.Values, status int, p page) {
	ctx := r.Context()
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
	for _, a := range alerts {
		d.Selectable = d.Selectable || a.Status == fleet.AlertOpen
	}
	d.Paging = pg
	here := url.Values{"status": {d.Status}}
	pos.set(here)
	d.Here = here.Encode()
	p.Data = d
	h.render(w, status, "alerts", p)
}

// back is the tab and position a form of the alerts page came from.
func back(r *http.Request) url.Values {
	to := url.Values{"status": {"all"}}
	if from, err := url.ParseQuery(r.PostFormValue("back")); err == nil && from.Get("status") != "" {
		to.Set("status", tabOf(from.Get("status")))
		readPosition(from, fleet.PrefixAlert).set(to)
	}
	return to
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
		q := back(r)
		q.Set("done", string(to))
		http.Redirect(w, r, "/alerts?"+q.Encode(), http.StatusSeeOther)
	}
}

// acknowledgeSelected acknowledges the alerts ticked on the page, at once
// (AcknowledgeAlerts, one transaction), and leads back to the tab and page
// the form was on, saying how many moved and how many someone else had
// moved first. With none ticked, the page says to tick some.
func (h *Handler) acknowledgeSelected(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	q := back(r)
	ids := r.PostForm["alert_id"]
	if len(ids) == 0 && us.Can(fleet.PermAlertsWrite) {
		p := page{Title: "Alerts", Nav: "alerts", User: &us, Error: "Tick the alerts to acknowledge first."}
		h.showAlerts(w, r, us, q, http.StatusUnprocessableEntity, p)
		return
	}
	out, err := h.svc.AcknowledgeAlerts(r.Context(), us.Principal(), ids)
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeNotFound {
			h.fail(w, r, &us, err)
			return
		}
		p := page{Title: "Alerts", Nav: "alerts", User: &us}
		errorPage(&p, err)
		h.showAlerts(w, r, us, q, statusOf(err), p)
		return
	}
	q.Set("done", "selected")
	q.Set("acknowledged", strconv.Itoa(len(out.Acknowledged)))
	q.Set("unchanged", strconv.Itoa(len(out.Unchanged)))
	http.Redirect(w, r, "/alerts?"+q.Encode(), http.StatusSeeOther)
}
