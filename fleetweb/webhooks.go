package fleetweb

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
)

type webhooksData struct {
	Included  bool
	Endpoints []endpointLog
}

type endpointLog struct {
	Webhook    fleet.Webhook
	Deliveries []fleet.Delivery
	More       bool
}

// maxDeliveriesShown is how many of each endpoint's latest deliveries the
// page shows.
const maxDeliveriesShown = 20

// webhooksPage is the webhook deliveries log: each endpoint of the account
// with its latest delivery attempts, their outcome, response status and
// error. It is read-only; endpoints are managed through the API.
func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	p := us.Principal()
	d := webhooksData{Included: us.Account.Plan.Limits().WebhookEndpoints > 0}
	if d.Included {
		hooks, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Webhook], error) { return h.svc.ListWebhooks(ctx, p, q) })
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		for _, wh := range hooks {
			l, err := h.svc.ListDeliveries(ctx, p, wh.ID, fleet.DeliveryFilter{}, fleet.ListQuery{Limit: maxDeliveriesShown})
			if err != nil {
				h.fail(w, r, &us, err)
				return
			}
			d.Endpoints = append(d.Endpoints, endpointLog{Webhook: wh, Deliveries: l.Items, More: l.HasMore})
		}
	}
	h.render(w, http.StatusOK, "webhooks", page{Title: "Webhooks", Nav: "webhooks", User: &us, Data: d})
}
