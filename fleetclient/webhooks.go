package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// WebhookParams describe a new webhook endpoint.
type WebhookParams struct {
	URL         string
	Events      []string // event types, or ["*"]; nil for every type
	Description string
	Disabled    bool // register it disabled
}

// Webhooks walks the account's webhook endpoints (without secrets).
func (c *Client) Webhooks(ctx context.Context) iter.Seq2[fleet.Webhook, error] {
	return walk[fleet.Webhook](ctx, c, "/webhooks", nil, fleet.MaxPageLimit)
}

// CreateWebhook registers an endpoint. The secret that signs its
// deliveries is in the answer, and only there.
func (c *Client) CreateWebhook(ctx context.Context, p WebhookParams) (fleet.WebhookWithSecret, error) {
	enabled := !p.Disabled
	var out fleet.WebhookWithSecret
	_, err := c.do(ctx, http.MethodPost, "/webhooks", nil, fleetwire.WebhookInput{
		URL: p.URL, Events: p.Events, Description: nullIfEmpty(p.Description), Enabled: &enabled,
	}, &out)
	return out, err
}

// Webhook returns one endpoint.
func (c *Client) Webhook(ctx context.Context, id string) (fleet.Webhook, error) {
	var out fleet.Webhook
	_, err := c.do(ctx, http.MethodGet, "/webhooks/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateWebhook sends a merge patch of an endpoint.
func (c *Client) UpdateWebhook(ctx context.Context, id string, p fleet.WebhookPatch) (fleet.Webhook, error) {
	var out fleet.Webhook
	_, err := c.do(ctx, http.MethodPatch, "/webhooks/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteWebhook deletes an endpoint and its delivery log.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/webhooks/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// RotateWebhookSecret gives an endpoint a new secret (in the answer, and
// only there); the old one keeps signing too for 24 hours.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (fleet.WebhookWithSecret, error) {
	var out fleet.WebhookWithSecret
	_, err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/rotate_secret", nil, struct{}{}, &out)
	return out, err
}

// TestWebhook sends a webhook.test event to the endpoint.
func (c *Client) TestWebhook(ctx context.Context, id string) (fleet.WebhookTestSent, error) {
	var out fleet.WebhookTestSent
	_, err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(id)+"/test", nil, struct{}{}, &out)
	return out, err
}

// Deliveries walks an endpoint's delivery attempts that f selects, oldest
// first.
func (c *Client) Deliveries(ctx context.Context, webhookID string, f fleet.DeliveryFilter) iter.Seq2[fleet.Delivery, error] {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.EventID != "" {
		q.Set("event_id", f.EventID)
	}
	return walk[fleet.Delivery](ctx, c, "/webhooks/"+url.PathEscape(webhookID)+"/deliveries", q, fleet.MaxPageLimit)
}

// RetryDelivery sends a delivery's event to its endpoint again now and
// returns the new pending attempt.
func (c *Client) RetryDelivery(ctx context.Context, webhookID, deliveryID string) (fleet.Delivery, error) {
	var out fleet.Delivery
	_, err := c.do(ctx, http.MethodPost, "/webhooks/"+url.PathEscape(webhookID)+"/deliveries/"+url.PathEscape(deliveryID)+"/retry", nil, struct{}{}, &out)
	return out, err
}
