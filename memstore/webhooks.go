package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

func cloneWebhook(w fleet.Webhook) fleet.Webhook {
	w.Events = slices.Clone(w.Events)
	w.PreviousSecretUntil = clonePtr(w.PreviousSecretUntil)
	w.FailingSince = clonePtr(w.FailingSince)
	return w
}

func cloneDelivery(d fleet.Delivery) fleet.Delivery {
	d.ResponseStatus = clonePtr(d.ResponseStatus)
	d.Error = clonePtr(d.Error)
	d.DurationMs = clonePtr(d.DurationMs)
	d.NextAttemptAt = clonePtr(d.NextAttemptAt)
	return d
}

func (t *tx) CreateWebhook(w fleet.Webhook) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.accounts.get("", w.AccountID); err != nil {
		return err
	}
	return t.s.webhooks.insert(t.txn, w)
}

func (t *tx) Webhook(accountID, id string) (fleet.Webhook, error) {
	return t.s.webhooks.get(accountID, id)
}

func (t *tx) Webhooks(accountID string, p fleet.Page) ([]fleet.Webhook, error) {
	return t.s.webhooks.list(accountID, p, nil), nil
}

func (t *tx) CountWebhooks(accountID string) (int, error) {
	return len(t.s.webhooks.order[accountID]), nil
}

func (t *tx) EnabledWebhooks(accountID string) ([]fleet.Webhook, error) {
	ids := t.s.webhooks.order[accountID]
	if len(ids) == 0 {
		return nil, nil
	}
	return t.s.webhooks.list(accountID, fleet.Page{Limit: len(ids)}, func(w fleet.Webhook) bool { return w.Enabled }), nil
}

func (t *tx) UpdateWebhook(w fleet.Webhook) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.webhooks.get(w.AccountID, w.ID)
	if err != nil {
		return err
	}
	w.CreatedAt = old.CreatedAt
	return t.s.webhooks.put(t.txn, w)
}

func (t *tx) DeleteWebhook(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	if err := t.s.webhooks.delete(t.txn, accountID, id); err != nil {
		return err
	}
	for _, did := range slices.Clone(t.s.deliveries.order[accountID]) {
		if d := t.s.deliveries.byID[did]; d.WebhookID == id {
			if err := t.s.deliveries.delete(t.txn, accountID, did); err != nil {
				return err
			}
			t.setPending(did, false)
		}
	}
	return nil
}

// setPending records whether a delivery is pending, undoably.
func (t *tx) setPending(id string, on bool) {
	_, was := t.s.pending[id]
	if was == on {
		return
	}
	if on {
		t.s.pending[id] = struct{}{}
		t.undo(func() { delete(t.s.pending, id) })
	} else {
		delete(t.s.pending, id)
		t.undo(func() { t.s.pending[id] = struct{}{} })
	}
}

func (t *tx) CreateDelivery(d fleet.Delivery) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.webhooks.get(d.AccountID, d.WebhookID); err != nil {
		return err
	}
	if err := t.s.deliveries.insert(t.txn, d); err != nil {
		return err
	}
	t.setPending(d.ID, d.Status == fleet.DeliveryPending)
	return nil
}

func (t *tx) Delivery(accountID, id string) (fleet.Delivery, error) {
	return t.s.deliveries.get(accountID, id)
}

func (t *tx) Deliveries(accountID, webhookID string, f fleet.DeliveryFilter, p fleet.Page) ([]fleet.Delivery, error) {
	return t.s.deliveries.list(accountID, p, func(d fleet.Delivery) bool { return d.WebhookID == webhookID && f.Match(&d) }), nil
}

func (t *tx) UpdateDelivery(d fleet.Delivery) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.deliveries.get(d.AccountID, d.ID)
	if err != nil {
		return err
	}
	old.Status, old.ResponseStatus, old.Error, old.DurationMs, old.NextAttemptAt = d.Status, d.ResponseStatus, d.Error, d.DurationMs, d.NextAttemptAt
	if err := t.s.deliveries.put(t.txn, old); err != nil {
		return err
	}
	t.setPending(d.ID, d.Status == fleet.DeliveryPending)
	return nil
}

// ClaimDeliveries implements fleet.Store: every due delivery is a
// candidate.
func (s *Store) ClaimDeliveries(ctx context.Context, c fleet.DeliveryClaim) ([]fleet.Delivery, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, errClosed()
	}
	var due []fleet.Delivery
	for id := range s.pending {
		d := s.deliveries.byID[id]
		if d.NextAttemptAt != nil && !d.NextAttemptAt.After(c.Now) {
			due = append(due, d)
		}
	}
	out, left := c.Pick(due)
	for i := range out {
		u := c.Until
		out[i].NextAttemptAt = &u
		s.deliveries.byID[out[i].ID] = cloneDelivery(out[i])
		out[i] = cloneDelivery(out[i])
	}
	return out, left, nil
}

// RecordDeliveries implements fleet.Store.
func (s *Store) RecordDeliveries(ctx context.Context, recs []fleet.DeliveryRecord, changes []fleet.EndpointChange) ([]bool, error) {
	held := make([]bool, len(recs))
	err := s.Update(ctx, func(ftx fleet.Tx) error {
		t := ftx.(*tx)
		stored := map[string]bool{}
		for i, r := range recs {
			d := r.Delivery
			old, err := t.Delivery(d.AccountID, d.ID)
			if fleet.ErrorCode(err) == fleet.CodeNotFound {
				continue
			}
			if err != nil {
				return err
			}
			if old.Status != fleet.DeliveryPending || old.NextAttemptAt == nil || !old.NextAttemptAt.Equal(r.Lease) {
				continue
			}
			held[i], stored[d.WebhookID] = true, true
			if err := t.UpdateDelivery(d); err != nil {
				return err
			}
			if r.Next != nil {
				if err := t.CreateDelivery(*r.Next); err != nil {
					return err
				}
			}
		}
		for _, c := range changes {
			if !stored[c.WebhookID] {
				continue
			}
			w, err := t.Webhook(c.AccountID, c.WebhookID)
			if fleet.ErrorCode(err) == fleet.CodeNotFound {
				continue
			}
			if err != nil {
				return err
			}
			if c.Disable && (c.DisableIfFailingSince == nil || w.FailingSince != nil && w.FailingSince.Equal(*c.DisableIfFailingSince)) {
				w.Enabled = false
			}
			if c.ClearFailing {
				w.FailingSince = nil
			}
			if c.StartFailing != nil && w.FailingSince == nil {
				w.FailingSince = clonePtr(c.StartFailing)
			}
			if err := t.UpdateWebhook(w); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return make([]bool, len(recs)), err
	}
	return held, nil
}

// PurgeDeliveries implements fleet.Store.
func (s *Store) PurgeDeliveries(ctx context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []fleet.Delivery
	for _, d := range s.deliveries.byID {
		if d.CreatedAt.Before(before) {
			old = append(old, d)
		}
	}
	for _, d := range old {
		s.deliveries.remove(d.AccountID, d.ID)
		delete(s.pending, d.ID)
	}
	return len(old), nil
}

func (t *tx) WebhooksByID(ids []string) ([]fleet.Webhook, error) {
	out := make([]fleet.Webhook, 0, len(ids))
	for _, id := range ids {
		if w, err := t.s.webhooks.get("", id); err == nil {
			out = append(out, w)
		}
	}
	return out, nil
}

func (t *tx) EventsByID(ids []string) ([]fleet.Event, error) {
	out := make([]fleet.Event, 0, len(ids))
	for _, id := range ids {
		if e, err := t.s.events.get("", id); err == nil {
			out = append(out, e)
		}
	}
	return out, nil
}
