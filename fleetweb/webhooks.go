package fleetweb

import (
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
)

type webhooksData struct {
	Included  bool
	Endpoints []endpointLog
}

type endpointLog struct {
	Webhook    fleet.Webhook
	Deliveries []fleet.Delivery
	Count      count
	Paging     paging
}

// URL is the address of the endpoint's deliveries at a position.
func (e endpointLog) URL(pos position) string {
	q := url.Values{"endpoint": {e.Webhook.ID}}
	pos.set(q)
	return "/webhooks?" + q.Encode() + "#webhook-" + e.Webhook.ID
}

// deliveriesPerPage is how many of an endpoint's deliveries a page shows.
const deliveriesPerPage = 20

// webhooksPage is the webhook deliveries log: each endpoint of the account
// with its delivery attempts, newest first a page at a time (?endpoint=
// with before= or after= moves one endpoint's page), how many there are,
// their outcome, response status and error. It is read-only; endpoints
// are managed through the API.
func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	p := us.Principal()
	q := r.URL.Query()
	d := webhooksData{Included: us.Account.Plan.Limits().WebhookEndpoints > 0}
	if d.Included {
		hooks, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Webhook], error) { return h.svc.ListWebhooks(ctx, p, q) })
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		for _, wh := range hooks {
			var pos position
			if q.Get("endpoint") == wh.ID {
				pos = readPosition(q, fleet.PrefixDelivery)
			}
			list := func(lq fleet.ListQuery) (fleet.List[fleet.Delivery], error) {
				return h.svc.ListDeliveries(ctx, p, wh.ID, fleet.DeliveryFilter{}, lq)
			}
			e := endpointLog{Webhook: wh}
			e.Deliveries, e.Paging, err = newestFirst(pos, deliveriesPerPage, list, func(d fleet.Delivery) string { return d.ID })
			if err == nil {
				e.Count.N, e.Count.More, err = countUpTo(ctx, maxCounted, list)
			}
			if err != nil {
				h.fail(w, r, &us, err)
				return
			}
			d.Endpoints = append(d.Endpoints, e)
		}
	}
	h.render(w, http.StatusOK, "webhooks", page{Title: "Webhooks", Nav: "webhooks", User: &us, Data: d})
}
