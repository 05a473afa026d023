package fleethttp

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Endpoints go out as fleet.Webhook (no secret) or, from create and
// rotate_secret, fleet.WebhookWithSecret; deliveries as fleet.Delivery.

func (h *Handler) createWebhook(c *call) error {
	req, err := decode[fleetwire.WebhookInput](c.body, false)
	if err != nil {
		return err
	}
	w, err := h.svc.CreateWebhook(c.r.Context(), c.p, fleet.Webhook{
		URL: req.URL, Events: req.Events, Description: deref(req.Description), Enabled: req.Enabled == nil || *req.Enabled,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, w)
}

func (h *Handler) getWebhook(c *call) error {
	w, err := h.svc.Webhook(c.r.Context(), c.p, c.r.PathValue("webhook_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, w)
}

func (h *Handler) listWebhooks(c *call) error {
	_, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListWebhooks(c.r.Context(), c.p, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchWebhook(c *call) error {
	p, err := decode[fleet.WebhookPatch](c.body, false)
	if err != nil {
		return err
	}
	w, err := h.svc.UpdateWebhook(c.r.Context(), c.p, c.r.PathValue("webhook_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, w)
}

func (h *Handler) deleteWebhook(c *call) error {
	d, err := h.svc.DeleteWebhook(c.r.Context(), c.p, c.r.PathValue("webhook_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) rotateWebhookSecret(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	w, err := h.svc.RotateWebhookSecret(c.r.Context(), c.p, c.r.PathValue("webhook_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, w)
}

func (h *Handler) testWebhook(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	t, err := h.svc.TestWebhook(c.r.Context(), c.p, c.r.PathValue("webhook_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusAccepted, t)
}

func (h *Handler) listDeliveries(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.DeliveryFilter{Status: fleet.DeliveryStatus(q.Get("status")), EventID: q.Get("event_id")}
	l, err := h.svc.ListDeliveries(c.r.Context(), c.p, c.r.PathValue("webhook_id"), f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) retryDelivery(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	d, err := h.svc.RetryDelivery(c.r.Context(), c.p, c.r.PathValue("webhook_id"), c.r.PathValue("delivery_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusAccepted, d)
}
