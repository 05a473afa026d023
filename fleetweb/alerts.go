package fleetweb

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
)

type alertsData struct {
	Alerts   []fleet.Alert
	More     bool
	Status   string
	Statuses []fleet.AlertStatus
}

// alertsPage lists the account's alerts, open ones by default, newest
// first as the use case returns them, with acknowledge and resolve for
// admins.
func (h *Handler) alertsPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	status := r.URL.Query().Get("status")
	if status == "" {
		status = string(fleet.AlertOpen)
	}
	f := fleet.AlertFilter{}
	if status != "all" {
		f.Status = fleet.AlertStatus(status)
	}
	l, err := h.svc.ListAlerts(r.Context(), us.Principal(), f, fleet.ListQuery{Limit: 100})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: "Alerts", Nav: "alerts", User: &us, Data: alertsData{Alerts: l.Items, More: l.HasMore, Status: status,
		Statuses: []fleet.AlertStatus{fleet.AlertOpen, fleet.AlertAcknowledged, fleet.AlertResolved}}}
	switch r.URL.Query().Get("done") {
	case "acknowledged":
		p.Notice = "The alert is acknowledged."
	case "resolved":
		p.Notice = "The alert is resolved."
	}
	h.render(w, http.StatusOK, "alerts", p)
}

// moveAlert acknowledges or resolves an alert through the use case, which
// refuses a viewer and a move the alert state machine does not allow.
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
		http.Redirect(w, r, "/alerts?status=all&done="+string(to), http.StatusSeeOther)
	}
}
