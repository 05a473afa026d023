package fleetweb

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

type webhooksData struct {
	Included  bool
	Endpoints []endpointLog
	Limit     int // endpoints the plan allows
	// Shown is an endpoint's signing secret, shown once on the page the
	// form that made it (adding the endpoint, rotating its secret) leads
	// to; Gone says the page was that page, viewed again.
	Shown  *shownSecret
	Gone   bool
	Form   webhookForm
	Events []string // the event types an endpoint may take
	// MaxAttempts is how many attempts a delivery gets.
	MaxAttempts int
}

type shownSecret struct {
	fleet.WebhookWithSecret
	Rotated bool
}

type webhookForm struct {
	URL, Description string
	Events           map[string]bool
}

type endpointLog struct {
	Webhook    fleet.Webhook
	Deliveries []deliveryRow
	Count      count
	Paging     paging
}

// deliveryRow is a delivery attempt as the log shows it: its event's type,
// and whether a failed attempt is final or will be retried.
type deliveryRow struct {
	fleet.Delivery
	EventType string // "" when the event is no longer kept
	State     string // pending, succeeded, retrying, failed
}

// URL is the address of the endpoint's deliveries at a position.
func (e endpointLog) URL(pos position) string {
	q := url.Values{"endpoint": {e.Webhook.ID}}
	pos.set(q)
	return "/webhooks?" + q.Encode() + "#webhook-" + e.Webhook.ID
}

// deliveriesPerPage is how many of an endpoint's deliveries a page shows.
const deliveriesPerPage = 20

// webhooksPage shows the account's webhook endpoints, each with its
// delivery attempts newest first a page at a time (?endpoint= with before=
// or after= moves one endpoint's page), how many there are, their event's
// type, outcome, response and error, and when a failed one is retried. An
// admin adds, tests, disables, enables and deletes endpoints and rotates
// their secrets here, through the webhook use cases.
func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Webhooks", Nav: "webhooks", User: &us}
	d := webhooksData{Form: webhookForm{Events: map[string]bool{"*": true}}}
	v, gone := h.takeOnce(r, &p)
	if s, ok := v.(shownSecret); ok {
		d.Shown = &s
	}
	d.Gone = gone
	h.showWebhooks(w, r, us, http.StatusOK, p, d)
}

func (h *Handler) showWebhooks(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d webhooksData) {
	ctx := r.Context()
	pr := us.Principal()
	q := r.URL.Query()
	limits := us.Account.Plan.Limits()
	d.Included, d.Limit, d.MaxAttempts = limits.WebhookEndpoints > 0, limits.WebhookEndpoints, fleet.MaxAttempts
	d.Events = slices.DeleteFunc(fleet.EventTypes(), func(t string) bool { return t == fleet.EventWebhookTest })
	if d.Included {
		hooks, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Webhook], error) { return h.svc.ListWebhooks(ctx, pr, q) })
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		types := map[string]string{} // event id -> type, read once a page
		for _, wh := range hooks {
			var pos position
			if q.Get("endpoint") == wh.ID {
				pos = readPosition(q, fleet.PrefixDelivery)
			}
			list := func(lq fleet.ListQuery) (fleet.List[fleet.Delivery], error) {
				return h.svc.ListDeliveries(ctx, pr, wh.ID, fleet.DeliveryFilter{}, lq)
			}
			e := endpointLog{Webhook: wh}
			ds, pg, err := newestFirst(pos, deliveriesPerPage, list, func(d fleet.Delivery) string { return d.ID })
			if err == nil {
				e.Paging = pg
				e.Count.N, e.Count.More, err = countUpTo(ctx, maxCounted, list)
			}
			if err == nil {
				e.Deliveries, err = h.deliveryRows(ctx, pr, ds, types)
			}
			if err != nil {
				h.fail(w, r, &us, err)
				return
			}
			d.Endpoints = append(d.Endpoints, e)
		}
	}
	p.Data = d
	h.render(w, status, "webhooks", p)
}

// deliveryRows reads the type of each delivery's event (types caches them
// by event id) and tells a final failure from one that will be retried.
func (h *Handler) deliveryRows(ctx context.Context, p fleet.Principal, ds []fleet.Delivery, types map[string]string) ([]deliveryRow, error) {
	rows := make([]deliveryRow, len(ds))
	for i, d := range ds {
		typ, ok := types[d.EventID]
		if !ok {
			e, err := h.svc.Event(ctx, p, d.EventID)
			switch {
			case err == nil:
				typ = e.Type
			case fleet.ErrorCode(err) != fleet.CodeNotFound: // not found: no longer kept
				return nil, err
			}
			types[d.EventID] = typ
		}
		rows[i] = deliveryRow{Delivery: d, EventType: typ, State: string(d.Status)}
		if d.Status == fleet.DeliveryFailed && d.NextAttemptAt != nil {
			rows[i].State = "retrying"
		}
	}
	return rows, nil
}

// refusedWebhooks shows the webhooks page again with the error a use case
// refused a form with (nothing changed); an endpoint that is not the
// account's is a page of its own.
func (h *Handler) refusedWebhooks(w http.ResponseWriter, r *http.Request, us fleet.UserSession, err error, form webhookForm) {
	if fleet.ErrorCode(err) == fleet.CodeNotFound {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: "Webhooks", Nav: "webhooks", User: &us}
	errorPage(&p, err)
	if form.Events == nil {
		form.Events = map[string]bool{"*": true}
	}
	h.showWebhooks(w, r, us, statusOf(err), p, webhooksData{Form: form})
}

// addWebhook registers an endpoint with the CreateWebhook use case and
// redirects to the page that shows its signing secret, once.
func (h *Handler) addWebhook(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := webhookForm{URL: strings.TrimSpace(r.PostFormValue("url")), Description: r.PostFormValue("description"), Events: map[string]bool{}}
	events := []string{}
	for _, e := range r.PostForm["events"] {
		f.Events[e] = true
		events = append(events, e)
	}
	if f.Events["*"] {
		events = []string{"*"} // "every event" wins over the ones also ticked
	}
	ws, err := h.svc.CreateWebhook(r.Context(), us.Principal(), fleet.Webhook{URL: f.URL, Description: f.Description, Events: events, Enabled: true})
	if err != nil {
		h.refusedWebhooks(w, r, us, err, f)
		return
	}
	http.Redirect(w, r, "/webhooks?shown="+h.shownOnce(r, shownSecret{WebhookWithSecret: ws})+"#webhook-"+ws.ID, http.StatusSeeOther)
}

// testWebhook sends the endpoint a webhook.test event; its delivery shows
// in the log.
func (h *Handler) testWebhook(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	sent, err := h.svc.TestWebhook(r.Context(), us.Principal(), r.PathValue("webhook_id"))
	if err != nil {
		h.refusedWebhooks(w, r, us, err, webhookForm{})
		return
	}
	wh, err := h.svc.Webhook(r.Context(), us.Principal(), sent.Delivery.WebhookID)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.webhookDone(w, r, wh.ID, "A test event is on its way to "+wh.URL+": its delivery shows in the log below.")
}

// enableWebhook enables (on true) or disables an endpoint with the
// UpdateWebhook use case.
func (h *Handler) enableWebhook(on bool) userFunc {
	return func(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
		wh, err := h.svc.UpdateWebhook(r.Context(), us.Principal(), r.PathValue("webhook_id"), fleet.WebhookPatch{Enabled: fleet.Some(&on)})
		if err != nil {
			h.refusedWebhooks(w, r, us, err, webhookForm{})
			return
		}
		msg := wh.URL + " is disabled: it receives no events until it is enabled again."
		if on {
			msg = wh.URL + " is enabled: it receives the events it takes from now on."
		}
		h.webhookDone(w, r, wh.ID, msg)
	}
}

// rotateWebhookSecret gives an endpoint a new signing secret and redirects
// to the page that shows it, once.
func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ws, err := h.svc.RotateWebhookSecret(r.Context(), us.Principal(), r.PathValue("webhook_id"))
	if err != nil {
		h.refusedWebhooks(w, r, us, err, webhookForm{})
		return
	}
	http.Redirect(w, r, "/webhooks?shown="+h.shownOnce(r, shownSecret{WebhookWithSecret: ws, Rotated: true})+"#webhook-"+ws.ID, http.StatusSeeOther)
}

// deleteWebhookPage asks an admin to confirm an endpoint's deletion.
func (h *Handler) deleteWebhookPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !us.IsAdmin() {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Only an admin of the account can delete webhook endpoints."))
		return
	}
	wh, err := h.svc.Webhook(r.Context(), us.Principal(), r.PathValue("webhook_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deletewebhook", page{Title: "Delete a webhook endpoint", Nav: "webhooks", User: &us, Data: wh})
}

// deleteWebhook deletes an endpoint with its deliveries log.
func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	id := r.PathValue("webhook_id")
	wh, err := h.svc.Webhook(r.Context(), us.Principal(), id)
	if err == nil {
		_, err = h.svc.DeleteWebhook(r.Context(), us.Principal(), id)
	}
	if err != nil {
		h.refusedWebhooks(w, r, us, err, webhookForm{})
		return
	}
	h.webhookDone(w, r, "", wh.URL+" is deleted, with its deliveries log.")
}

// webhookDone leads back to the webhooks page (at the endpoint, when it
// still exists) with a notice shown once to the person signed in (noticeOnce).
func (h *Handler) webhookDone(w http.ResponseWriter, r *http.Request, id, notice string) {
	to := "/webhooks?notice=" + h.noticeOnce(r, notice)
	if id != "" {
		to += "#webhook-" + id
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}
