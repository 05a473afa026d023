package fleetweb

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
)

type overviewData struct {
	Account      fleet.Account
	Limits       fleet.PlanLimits
	Allowance    int
	Keys         []keyHour
	MoreKeys     bool
	Statuses     []statusCount
	Vehicles     int
	MoreVehicles bool
	Alerts       []alertRow
	OpenAlerts   count
}

type keyHour struct {
	Key      fleet.Key
	Requests int
	Rejected int
}

type statusCount struct {
	Status fleet.VehicleStatus
	Count  int
}

// maxOverviewKeys bounds how many keys' usage the overview reads.
const maxOverviewKeys = 50

// overviewAlerts is how many of the newest open alerts the overview shows.
const overviewAlerts = 20

// overview shows the account, its plan, this hour's requests of each active
// key against the allowance, vehicles by status, and the newest open alerts
// with how many are open.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	p := us.Principal()
	d := overviewData{Account: us.Account, Limits: us.Account.Plan.Limits(), Allowance: us.Account.RateLimitPerHour()}
	keys, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Key], error) { return h.svc.ListKeys(ctx, p, q) })
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	now := h.svc.Now()
	for _, k := range keys {
		if k.Status(now) != fleet.KeyActive {
			continue
		}
		if len(d.Keys) == maxOverviewKeys {
			d.MoreKeys = true
			break
		}
		u, err := h.svc.KeyUsage(ctx, p, k.ID, 1)
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		d.Keys = append(d.Keys, keyHour{Key: k, Requests: u.Requests, Rejected: u.Rejected})
	}
	vehicles, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Vehicles, d.MoreVehicles = len(vehicles), more
	counts := map[fleet.VehicleStatus]int{}
	for _, v := range vehicles {
		counts[v.Status]++
	}
	for _, st := range fleet.VehicleStatuses() {
		d.Statuses = append(d.Statuses, statusCount{st, counts[st]})
	}
	open := func(q fleet.ListQuery) (fleet.List[fleet.Alert], error) {
		return h.svc.ListAlerts(ctx, p, fleet.AlertFilter{Status: fleet.AlertOpen}, q)
	}
	alerts, err := open(fleet.ListQuery{Limit: overviewAlerts, Newest: true})
	if err == nil {
		d.OpenAlerts.N, d.OpenAlerts.More, err = countUpTo(ctx, maxCounted, open)
	}
	if err == nil {
		d.Alerts, err = h.alertRows(ctx, p, alerts.Items)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "overview", page{Title: "Overview", Nav: "overview", User: &us, Data: d})
}
