package fleet

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// WebhookOptions configure how endpoints are registered.
type WebhookOptions struct {
	// Insecure allows http URLs and loopback or private addresses, for
	// development and tests.
	Insecure bool
	// LookupIP resolves an endpoint's host at registration;
	// net.DefaultResolver when nil.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// SecretKeys seal the endpoints' signing secrets before the store
	// sees them (see SecretKeys). When nil they are stored as they are,
	// which suits a store in memory, unless RequireSecretKeys is set.
	SecretKeys *SecretKeys
	// RequireSecretKeys, with no SecretKeys, refuses to register an
	// endpoint or rotate its secret (unavailable), and makes
	// Operator.SealWebhookSecrets fail if an endpoint exists: for a store
	// kept on disk whose operator has not given the server a key.
	RequireSecretKeys bool
}

// WebhookPatch is a JSON merge patch of an endpoint: fields not Set stay.
// Enabled is a pointer so that a null, which an endpoint cannot be, is
// told from false and refused.
type WebhookPatch struct {
	URL         Optional[string]   `json:"url,omitzero"`
	Events      Optional[[]string] `json:"events,omitzero"`
	Description Optional[string]   `json:"description,omitzero"`
	Enabled     Optional[*bool]    `json:"enabled,omitzero"`
}

func notFoundWebhook(id string) error  { return NotFound("webhook endpoint", id) }
func notFoundDelivery(id string) error { return NotFound("delivery", id) }

// requireWebhooks checks the key's permission, then the plan.
func requireWebhooks(p Principal, useCase string) error {
	if err := p.allow(useCase); err != nil {
		return err
	}
	if p.Account.Plan.Limits().WebhookEndpoints == 0 {
		return Errorf(CodeInsufficientPermissions, "The %s plan does not include webhooks.", p.Account.Plan)
	}
	return nil
}

func (s *Service) getWebhook(tx WebhookTx, p Principal, id string) (Webhook, error) {
	if !ValidID(PrefixWebhook, id) {
		return Webhook{}, notFoundWebhook(id)
	}
	w, err := tx.Webhook(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Webhook{}, notFoundWebhook(id)
	}
	return w, err
}

func normaliseWebhook(w *Webhook) {
	w.URL = strings.TrimSpace(w.URL)
	w.Description = strings.TrimSpace(w.Description)
	if w.Events == nil {
		w.Events = []string{"*"}
	}
	out := []string{}
	for _, t := range w.Events {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	w.Events = out
}

// checkWebhook validates an endpoint's fields.
func (s *Service) checkWebhook(w *Webhook) error {
	var val Validator
	w.validate(&val, s.opts.Webhooks.Insecure)
	return val.Err()
}

// resolveWebhookURL resolves the host of a valid endpoint URL, unless
// webhooks are insecure: every address it resolves to must be allowed. It
// runs outside transactions (a lookup may take seconds).
func (s *Service) resolveWebhookURL(ctx context.Context, raw string) error {
	if s.opts.Webhooks.Insecure {
		return nil
	}
	u, err := CheckWebhookURL(raw, false)
	if err != nil {
		return nil // reported by checkWebhook
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // a literal, checked already
	}
	lookup := s.opts.Webhooks.LookupIP
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := lookup(lctx, host)
	usable := err == nil && len(addrs) > 0
	for _, a := range addrs {
		usable = usable && !ForbiddenAddr(a)
	}
	if !usable { // one answer, whichever the reason
		var val Validator
		val.Add("url", "%s", errUnusableWebhookHost)
		return val.Err()
	}
	return nil
}

// CreateWebhook registers an endpoint from the fields a client sets in in
// (url, events, description, enabled). Its secret is returned this once.
// A plan without webhooks is insufficient_permissions; an account at its
// plan's cap is conflict.
func (s *Service) CreateWebhook(ctx context.Context, p Principal, in Webhook) (WebhookWithSecret, error) {
	if err := requireWebhooks(p, "CreateWebhook"); err != nil {
		return WebhookWithSecret{}, err
	}
	now := s.Now()
	secret := NewWebhookSecret()
	w := Webhook{
		ID: NewID(PrefixWebhook), AccountID: p.Account.ID, URL: in.URL, Events: in.Events, Description: in.Description,
		Enabled: in.Enabled, CreatedAt: now,
	}
	normaliseWebhook(&w)
	if err := s.checkWebhook(&w); err != nil {
		return WebhookWithSecret{}, err
	}
	sealed, err := s.sealWebhookSecret(w.ID, secret)
	if err != nil {
		return WebhookWithSecret{}, err
	}
	if err := s.resolveWebhookURL(ctx, w.URL); err != nil {
		return WebhookWithSecret{}, err
	}
	w.Secret = sealed
	err = s.update(ctx, func(tx Tx) error {
		n, err := tx.CountWebhooks(w.AccountID)
		if err != nil {
			return err
		}
		if limit := p.Account.Plan.Limits().WebhookEndpoints; n >= limit {
			return Errorf(CodeConflict, "The %s plan allows %d webhook endpoints and this account has %d; delete one first.", p.Account.Plan, limit, n)
		}
		return tx.CreateWebhook(w)
	})
	if err != nil {
		return WebhookWithSecret{}, err
	}
	return WebhookWithSecret{Webhook: withoutSecrets(w), Secret: secret}, nil
}

// Webhook returns one of the account's endpoints.
func (s *Service) Webhook(ctx context.Context, p Principal, id string) (Webhook, error) {
	if err := requireWebhooks(p, "Webhook"); err != nil {
		return Webhook{}, err
	}
	var w Webhook
	err := s.view(ctx, func(tx Tx) (err error) { w, err = s.getWebhook(tx, p, id); return err })
	return withoutSecrets(w), err
}

// ListWebhooks lists the account's endpoints in creation order.
func (s *Service) ListWebhooks(ctx context.Context, p Principal, q ListQuery) (List[Webhook], error) {
	if err := requireWebhooks(p, "ListWebhooks"); err != nil {
		return List[Webhook]{}, err
	}
	page, limit, err := q.page(PrefixWebhook, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Webhook]{}, err
	}
	var ws []Webhook
	err = s.view(ctx, func(tx Tx) (err error) { ws, err = tx.Webhooks(p.Account.ID, page); return err })
	if err != nil {
		return List[Webhook]{}, err
	}
	for i := range ws {
		ws[i] = withoutSecrets(ws[i])
	}
	return finish(ws, limit, func(w Webhook) string { return w.ID }), nil
}

// UpdateWebhook applies a merge patch to an endpoint; the result is
// validated whole, and nothing changes if it is invalid (a null url, events
// or enabled included). Enabling an endpoint forgets its failures.
func (s *Service) UpdateWebhook(ctx context.Context, p Principal, id string, patch WebhookPatch) (Webhook, error) {
	if err := requireWebhooks(p, "UpdateWebhook"); err != nil {
		return Webhook{}, err
	}
	if patch.URL.Set { // resolved first, outside the transaction
		if _, err := s.Webhook(ctx, p, id); err != nil {
			return Webhook{}, err
		}
		u := Webhook{URL: strings.TrimSpace(patch.URL.Value), Events: []string{"*"}}
		if err := s.checkWebhook(&u); err == nil {
			if err := s.resolveWebhookURL(ctx, u.URL); err != nil {
				return Webhook{}, err
			}
		}
	}
	var w Webhook
	err := s.update(ctx, func(tx Tx) (err error) {
		w, err = s.getWebhook(tx, p, id)
		if err != nil {
			return err
		}
		wasEnabled := w.Enabled
		var val Validator
		set(&w.URL, patch.URL)
		set(&w.Events, patch.Events)
		set(&w.Description, patch.Description)
		if patch.Enabled.Set {
			if patch.Enabled.Value == nil {
				val.Add("enabled", "must be true or false")
			} else {
				w.Enabled = *patch.Enabled.Value
			}
		}
		if patch.Events.Set && w.Events == nil {
			w.Events = []string{}
		}
		normaliseWebhook(&w)
		if patch.URL.Set || patch.Events.Set || patch.Description.Set {
			w.validate(&val, s.opts.Webhooks.Insecure)
		}
		if err := val.Err(); err != nil {
			return err
		}
		if w.Enabled && !wasEnabled {
			w.FailingSince = nil
		}
		return tx.UpdateWebhook(w)
	})
	if err != nil {
		return Webhook{}, err
	}
	return withoutSecrets(w), nil
}

// WebhookDeleted is the answer to a deletion.
type WebhookDeleted struct {
	WebhookID string `json:"webhook_id"`
	Deleted   bool   `json:"deleted"`
}

// DeleteWebhook deletes an endpoint with its deliveries.
func (s *Service) DeleteWebhook(ctx context.Context, p Principal, id string) (WebhookDeleted, error) {
	if err := requireWebhooks(p, "DeleteWebhook"); err != nil {
		return WebhookDeleted{}, err
	}
	err := s.update(ctx, func(tx Tx) error {
		w, err := s.getWebhook(tx, p, id)
		if err != nil {
			return err
		}
		return tx.DeleteWebhook(w.AccountID, w.ID)
	})
	if err != nil {
		return WebhookDeleted{}, err
	}
	return WebhookDeleted{WebhookID: id, Deleted: true}, nil
}

// RotateWebhookSecret gives an endpoint a new secret, returned this once;
// the old one keeps signing too for SecretOverlap.
func (s *Service) RotateWebhookSecret(ctx context.Context, p Principal, id string) (WebhookWithSecret, error) {
	if err := requireWebhooks(p, "RotateWebhookSecret"); err != nil {
		return WebhookWithSecret{}, err
	}
	if s.opts.Webhooks.SecretKeys == nil && s.opts.Webhooks.RequireSecretKeys {
		return WebhookWithSecret{}, errNoSecretKeys()
	}
	now := s.Now()
	secret := NewWebhookSecret()
	var w Webhook
	err := s.update(ctx, func(tx Tx) (err error) {
		w, err = s.getWebhook(tx, p, id)
		if err != nil {
			return err
		}
		// The current secret signs on for SecretOverlap, kept as the
		// service keeps secrets now.
		previous, _, err := s.reseal(w.ID, w.Secret)
		if err != nil {
			return err
		}
		sealed, err := s.sealWebhookSecret(w.ID, secret)
		if err != nil {
			return err
		}
		until := now.Add(SecretOverlap)
		w.PreviousSecret, w.PreviousSecretUntil, w.Secret = previous, &until, sealed
		return tx.UpdateWebhook(w)
	})
	if err != nil {
		return WebhookWithSecret{}, err
	}
	return WebhookWithSecret{Webhook: withoutSecrets(w), Secret: secret}, nil
}

// WebhookTestSent is the answer to a test: the event emitted and its
// pending delivery to the endpoint.
type WebhookTestSent struct {
	Event    Event    `json:"event"`
	Delivery Delivery `json:"delivery"`
}

// WebhookTestData is the data of a webhook.test event.
type WebhookTestData struct {
	WebhookID string `json:"webhook_id"`
}

// TestWebhook emits a webhook.test event delivered to that endpoint only.
// A disabled endpoint is conflict.
func (s *Service) TestWebhook(ctx context.Context, p Principal, id string) (WebhookTestSent, error) {
	if err := requireWebhooks(p, "TestWebhook"); err != nil {
		return WebhookTestSent{}, err
	}
	now := s.Now()
	var out WebhookTestSent
	err := s.update(ctx, func(tx Tx) error {
		w, err := s.getWebhook(tx, p, id)
		if err != nil {
			return err
		}
		if !w.Enabled {
			return Errorf(CodeConflict, "The webhook endpoint %s is disabled; enable it first.", w.ID)
		}
		e, err := newEvent(w.AccountID, EventWebhookTest, now, WebhookTestData{WebhookID: w.ID})
		if err != nil {
			return err
		}
		if err := tx.AppendEvent(e); err != nil {
			return err
		}
		out.Event = e
		out.Delivery = newDelivery(w, e.ID, 1, now)
		return tx.CreateDelivery(out.Delivery)
	})
	if err != nil {
		return WebhookTestSent{}, err
	}
	return out, nil
}

func newDelivery(w Webhook, eventID string, attempt int, due time.Time) Delivery {
	due = Timestamp(due) // jitter has nanoseconds; times go out at one precision
	return Delivery{
		ID: NewID(PrefixDelivery), AccountID: w.AccountID, WebhookID: w.ID, EventID: eventID, Attempt: attempt,
		Status: DeliveryPending, NextAttemptAt: &due, CreatedAt: due,
	}
}

// enqueueDeliveries adds a pending delivery of e to each of the account's
// enabled endpoints that takes its type (to only, when given).
func (s *Service) enqueueDeliveries(tx WebhookTx, e Event, only *Webhook) error {
	ws, err := tx.EnabledWebhooks(e.AccountID)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if w.Accepts(e.Type) {
			if err := tx.CreateDelivery(newDelivery(w, e.ID, 1, e.CreatedAt)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListDeliveries lists an endpoint's delivery attempts in creation order, or
// newest first with q.Newest.
func (s *Service) ListDeliveries(ctx context.Context, p Principal, webhookID string, f DeliveryFilter, q ListQuery) (List[Delivery], error) {
	if err := requireWebhooks(p, "ListDeliveries"); err != nil {
		return List[Delivery]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[Delivery]{}, Errorf(CodeInvalidRequest, "status must be one of pending, succeeded, failed.")
	}
	if f.EventID != "" && !ValidID(PrefixEvent, f.EventID) {
		return List[Delivery]{}, Errorf(CodeInvalidRequest, "event_id must be an event id (evt_...).")
	}
	page, limit, err := q.pageEitherOrder(PrefixDelivery, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Delivery]{}, err
	}
	var ds []Delivery
	err = s.view(ctx, func(tx Tx) error {
		w, err := s.getWebhook(tx, p, webhookID)
		if err != nil {
			return err
		}
		ds, err = tx.Deliveries(w.AccountID, w.ID, f, page)
		return err
	})
	if err != nil {
		return List[Delivery]{}, err
	}
	return finish(ds, limit, func(d Delivery) string { return d.ID }), nil
}

// RetryDelivery sends the event of a delivery to its endpoint again now: a
// new pending delivery, the first attempt of a new series. A disabled
// endpoint is conflict.
func (s *Service) RetryDelivery(ctx context.Context, p Principal, webhookID, deliveryID string) (Delivery, error) {
	if err := requireWebhooks(p, "RetryDelivery"); err != nil {
		return Delivery{}, err
	}
	now := s.Now()
	var d Delivery
	err := s.update(ctx, func(tx Tx) error {
		w, err := s.getWebhook(tx, p, webhookID)
		if err != nil {
			return err
		}
		if !ValidID(PrefixDelivery, deliveryID) {
			return notFoundDelivery(deliveryID)
		}
		old, err := tx.Delivery(w.AccountID, deliveryID)
		if ErrorCode(err) == CodeNotFound || (err == nil && old.WebhookID != w.ID) {
			return notFoundDelivery(deliveryID)
		}
		if err != nil {
			return err
		}
		if !w.Enabled {
			return Errorf(CodeConflict, "The webhook endpoint %s is disabled; enable it first.", w.ID)
		}
		d = newDelivery(w, old.EventID, 1, now)
		return tx.CreateDelivery(d)
	})
	if err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// ClaimDeliveries claims for a sender, until now + lease, what c.Pick
// chooses among the deliveries due at the clock's time (c.Now and c.Until
// are set here): no other claim takes them meanwhile. A due delivery that
// cannot be made (its endpoint disabled, its event purged) fails at once
// and is not returned. It also reports whether more may be due: deliveries
// left over a cap or the limit, or some that failed at once.
func (j Jobs) ClaimDeliveries(ctx context.Context, lease time.Duration, c DeliveryClaim) ([]DeliveryJob, bool, error) {
	s := j.s
	ds, more, err := s.Jobs().LeaseDeliveries(ctx, lease, c)
	if err != nil || len(ds) == 0 {
		return nil, more, err
	}
	jobs, failed, err := s.Jobs().PrepareDeliveries(ctx, ds)
	return jobs, more || failed, err
}

// LeaseDeliveries is the first half of ClaimDeliveries: it leases what
// c.Pick chooses, until now + lease, and returns the deliveries (their
// NextAttemptAt is the lease) and whether it left some due.
func (j Jobs) LeaseDeliveries(ctx context.Context, lease time.Duration, c DeliveryClaim) ([]Delivery, bool, error) {
	s := j.s
	c.Now = s.Now()
	c.Until = c.Now.Add(lease)
	return s.store.ClaimDeliveries(ctx, c)
}

// PrepareDeliveries is the second half of ClaimDeliveries: it reads, for
// leased deliveries, what a sender needs to make them. A delivery that
// cannot be made (its endpoint disabled, its event purged) fails at once
// and is not returned, nor is one whose endpoint is deleted; failed
// reports whether any failed.
func (j Jobs) PrepareDeliveries(ctx context.Context, ds []Delivery) (jobs []DeliveryJob, failed bool, err error) {
	s := j.s
	now := s.Now()
	var dead []DeliveryJob
	err = s.view(ctx, func(tx Tx) error {
		jobs, dead = jobs[:0], dead[:0]
		hooks, err := webhooksOf(tx, ds)
		if err != nil {
			return err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.EventID
		}
		evs, err := tx.EventsByID(ids)
		if err != nil {
			return err
		}
		events := make(map[string]Event, len(evs))
		for _, e := range evs {
			events[e.ID] = e
		}
		for _, d := range ds {
			job := DeliveryJob{Delivery: d, Lease: *d.NextAttemptAt}
			w, ok := hooks[d.WebhookID]
			if !ok {
				continue // deleted with its deliveries since
			}
			e, ok := events[d.EventID]
			switch {
			case !ok || e.AccountID != d.AccountID:
				job.URL = "The event is no longer kept."
				dead = append(dead, job)
				continue
			case !w.Enabled:
				job.URL = "The webhook endpoint is disabled."
				dead = append(dead, job)
				continue
			}
			secrets, err := s.signingSecrets(w, now)
			if err != nil {
				// The server lacks the key it was sealed with: its
				// operator must give it. The delivery stays leased, and is
				// tried again when the lease ends; no attempt counts.
				s.log.Error("webhook delivery: the endpoint's signing secret does not open", "webhook_id", w.ID, "err", err)
				continue
			}
			if job.Body, err = eventBody(e); err != nil {
				return err
			}
			job.URL, job.Secrets = w.URL, secrets
			jobs = append(jobs, job)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if len(dead) > 0 {
		recs := make([]DeliveryRecord, len(dead))
		for i, j := range dead {
			d, why := j.Delivery, j.URL
			d.Status, d.Error, d.NextAttemptAt = DeliveryFailed, &why, nil
			recs[i] = DeliveryRecord{Delivery: d, Lease: j.Lease}
		}
		if _, err := s.store.RecordDeliveries(ctx, recs, nil); err != nil {
			return nil, true, err
		}
	}
	return jobs, len(dead) > 0, nil
}

// webhooksOf reads, in one read, the endpoints of deliveries: by id, each
// only if it is of its delivery's account.
func webhooksOf(tx WebhookTx, ds []Delivery) (map[string]Webhook, error) {
	owner := make(map[string]string, len(ds))
	ids := make([]string, 0, len(ds))
	for _, d := range ds {
		if _, ok := owner[d.WebhookID]; !ok {
			owner[d.WebhookID] = d.AccountID
			ids = append(ids, d.WebhookID)
		}
	}
	ws, err := tx.WebhooksByID(ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Webhook, len(ws))
	for _, w := range ws {
		if owner[w.ID] == w.AccountID {
			out[w.ID] = w
		}
	}
	return out, nil
}

// DeferDelivery hands a claimed delivery back, due again at until, without
// counting an attempt (the sender paces the endpoint). It reports false if
// the claim had lapsed.
func (j Jobs) DeferDelivery(ctx context.Context, job DeliveryJob, until time.Time) (bool, error) {
	s := j.s
	d := job.Delivery
	until = Timestamp(until)
	d.NextAttemptAt = &until
	held, err := s.store.RecordDeliveries(ctx, []DeliveryRecord{{Delivery: d, Lease: job.Lease}}, nil)
	return err == nil && held[0], err
}

// FinishDelivery records the outcome of one claimed delivery's attempt;
// see FinishDeliveries. It reports false if the claim had lapsed.
func (j Jobs) FinishDelivery(ctx context.Context, job DeliveryJob, out Outcome) (bool, error) {
	s := j.s
	n, err := s.Jobs().FinishDeliveries(ctx, []DeliveryJob{job}, []Outcome{out})
	return n == 1, err
}

// FinishDeliveries records the outcomes of claimed deliveries' attempts,
// outs[i] of jobs[i], in one transaction, and schedules each next attempt
// on the retry schedule: a 410 disables the endpoint at once; a
// Retry-After is honoured; an endpoint whose deliveries have all failed for
// WebhookDisableAfter is disabled. A job whose claim has lapsed records
// nothing. It returns how many outcomes were recorded.
func (j Jobs) FinishDeliveries(ctx context.Context, jobs []DeliveryJob, outs []Outcome) (int, error) {
	s := j.s
	now := s.Now()
	hooks := map[string]*Webhook{} // nil: deleted, with its deliveries
	err := s.view(ctx, func(tx Tx) error {
		ds := make([]Delivery, len(jobs))
		for i, j := range jobs {
			ds[i] = j.Delivery
		}
		found, err := webhooksOf(tx, ds)
		for id, w := range found {
			hooks[id] = &w
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	changes := map[string]*EndpointChange{}
	change := func(w *Webhook) *EndpointChange {
		c := changes[w.ID]
		if c == nil {
			c = &EndpointChange{AccountID: w.AccountID, WebhookID: w.ID}
			changes[w.ID] = c
		}
		return c
	}
	recs := make([]DeliveryRecord, 0, len(jobs))
	for i, j := range jobs {
		w := hooks[j.Delivery.WebhookID]
		if w == nil {
			continue
		}
		out := outs[i]
		d := j.Delivery
		ms := out.Duration.Milliseconds()
		d.DurationMs, d.NextAttemptAt = &ms, nil
		if out.Status != 0 {
			st := out.Status
			d.ResponseStatus = &st
		}
		rec := DeliveryRecord{Lease: j.Lease}
		// w.FailingSince follows the batch's outcomes in order; the change
		// says how they move the endpoint's state, whatever it is by then.
		if out.Succeeded() {
			d.Status = DeliverySucceeded
			if w.FailingSince != nil {
				c := change(w)
				w.FailingSince, c.ClearFailing, c.StartFailing = nil, true, nil
			}
		} else {
			d.Status = DeliveryFailed
			msg := out.Err
			if msg == "" {
				msg = "The endpoint answered " + itoa(out.Status) + "."
			}
			d.Error = &msg
			if w.FailingSince == nil {
				at := now
				w.FailingSince, change(w).StartFailing = &at, &at
			}
			switch {
			case out.Status == 410: // the receiver says so now: whatever the endpoint's state
				c := change(w)
				c.Disable, c.DisableIfFailingSince = true, nil
			case now.Sub(*w.FailingSince) >= WebhookDisableAfter:
				// Failing since the time read: only if nobody forgot those
				// failures meanwhile.
				if c := change(w); !c.Disable {
					c.Disable, c.DisableIfFailingSince = true, w.FailingSince
				}
			default:
				if delay, ok := RetryDelay(d.Attempt, out.Jitter); ok {
					if out.RetryAfter > 0 && HonoursRetryAfter(out.Status) {
						delay = max(delay, min(out.RetryAfter, MaxRetryAfter))
					}
					n := newDelivery(*w, d.EventID, d.Attempt+1, now.Add(delay))
					n.CreatedAt = now
					d.NextAttemptAt, rec.Next = n.NextAttemptAt, &n
				}
			}
		}
		rec.Delivery = d
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	var list []EndpointChange
	for _, c := range changes {
		if c.Disable || c.ClearFailing || c.StartFailing != nil {
			list = append(list, *c)
		}
	}
	held, err := s.store.RecordDeliveries(ctx, recs, list)
	n := 0
	for _, h := range held {
		if h {
			n++
		}
	}
	return n, err
}
