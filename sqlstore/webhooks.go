package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

const webhookColumns = `w.id, w.account_id, w.url, w.events, w.description, w.enabled, w.secret, w.previous_secret,
	w.previous_secret_until, w.failing_since, w.created_at`

func scanWebhook(s scanner) (fleet.Webhook, error) {
	var w fleet.Webhook
	var events string
	var until, failing sql.NullInt64
	var created int64
	if err := s.Scan(&w.ID, &w.AccountID, &w.URL, &events, &w.Description, &w.Enabled, &w.Secret, &w.PreviousSecret,
		&until, &failing, &created); err != nil {
		return fleet.Webhook{}, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return fleet.Webhook{}, err
	}
	w.PreviousSecretUntil, w.FailingSince, w.CreatedAt = fromNullDB(until), fromNullDB(failing), fromDB(created)
	return w, nil
}

func encodeEvents(events []string) (string, error) {
	if events == nil {
		events = []string{}
	}
	b, err := json.Marshal(events)
	return string(b), err
}

// CreateWebhook implements fleet.Tx.
func (t *tx) CreateWebhook(w fleet.Webhook) error {
	events, err := encodeEvents(w.Events)
	if err != nil {
		return err
	}
	err = t.insert(`INSERT INTO webhooks (id, account_id, url, events, description, enabled, secret, previous_secret,
			previous_secret_until, failing_since, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.AccountID, w.URL, events, w.Description, w.Enabled, w.Secret, w.PreviousSecret,
		toNullDB(w.PreviousSecretUntil), toNullDB(w.FailingSince), toDB(w.CreatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A webhook endpoint with id %q exists.", w.ID)
	case errForeignKey:
		return notFound(err, "account", w.AccountID)
	}
	return wrap(err, "create webhook")
}

// Webhook implements fleet.Tx.
func (t *tx) Webhook(accountID, id string) (fleet.Webhook, error) {
	w, err := scanWebhook(t.queryRow(`SELECT `+webhookColumns+` FROM webhooks w WHERE w.id = ? AND w.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Webhook{}, fleet.NotFound("webhook endpoint", id)
	}
	return w, wrap(t.failed(err), "read webhook")
}

func (t *tx) webhooks(doing, where string, args ...any) ([]fleet.Webhook, error) {
	rows, err := t.query(t.d.q(`SELECT `+webhookColumns+` FROM webhooks w WHERE `+where), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	out := []fleet.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, w)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// Webhooks implements fleet.Tx.
func (t *tx) Webhooks(accountID string, p fleet.Page) ([]fleet.Webhook, error) {
	if p.Limit <= 0 {
		return []fleet.Webhook{}, nil
	}
	return t.webhooks("list webhooks", `w.account_id = ? AND w.id > ? ORDER BY w.id LIMIT ?`, accountID, p.After, int64(p.Limit))
}

// EnabledWebhooks implements fleet.Tx.
func (t *tx) EnabledWebhooks(accountID string) ([]fleet.Webhook, error) {
	return t.webhooks("read enabled webhooks", `w.account_id = ? AND w.enabled ORDER BY w.id`, accountID)
}

// CountWebhooks implements fleet.Tx.
func (t *tx) CountWebhooks(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM webhooks WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count webhooks")
}

// UpdateWebhook implements fleet.Tx.
func (t *tx) UpdateWebhook(w fleet.Webhook) error {
	events, err := encodeEvents(w.Events)
	if err != nil {
		return err
	}
	n, err := t.update(`UPDATE webhooks SET url = ?, events = ?, description = ?, enabled = ?, secret = ?, previous_secret = ?,
			previous_secret_until = ?, failing_since = ?
		WHERE id = ? AND account_id = ?`,
		w.URL, events, w.Description, w.Enabled, w.Secret, w.PreviousSecret, toNullDB(w.PreviousSecretUntil),
		toNullDB(w.FailingSince), w.ID, w.AccountID)
	if err != nil {
		return wrap(err, "update webhook")
	}
	if n == 0 {
		return fleet.NotFound("webhook endpoint", w.ID)
	}
	return nil
}

// DeleteWebhook implements fleet.Tx. Its deliveries go with it (ON DELETE
// CASCADE).
func (t *tx) DeleteWebhook(accountID, id string) error {
	if _, err := t.update(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND account_id = ?`, id, accountID); err != nil {
		return wrap(err, "delete webhook")
	}
	n, err := t.update(`DELETE FROM webhooks WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete webhook")
	}
	if n == 0 {
		return fleet.NotFound("webhook endpoint", id)
	}
	return nil
}

const deliveryColumns = `d.id, d.account_id, d.webhook_id, d.event_id, d.attempt, d.status, d.response_status, d.error,
	d.duration_ms, d.next_attempt_at, d.created_at`

func scanDelivery(s scanner) (fleet.Delivery, error) {
	var d fleet.Delivery
	var status string
	var resp, dur, next sql.NullInt64
	var msg sql.NullString
	var created int64
	if err := s.Scan(&d.ID, &d.AccountID, &d.WebhookID, &d.EventID, &d.Attempt, &status, &resp, &msg,
		&dur, &next, &created); err != nil {
		return fleet.Delivery{}, err
	}
	d.Status = fleet.DeliveryStatus(status)
	if resp.Valid {
		v := int(resp.Int64)
		d.ResponseStatus = &v
	}
	if msg.Valid {
		d.Error = &msg.String
	}
	if dur.Valid {
		d.DurationMs = &dur.Int64
	}
	d.NextAttemptAt, d.CreatedAt = fromNullDB(next), fromDB(created)
	return d, nil
}

func nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// CreateDelivery implements fleet.Tx.
func (t *tx) CreateDelivery(d fleet.Delivery) error {
	if _, err := t.Webhook(d.AccountID, d.WebhookID); err != nil {
		return err
	}
	err := t.insert(`INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, attempt, status, response_status,
			error, duration_ms, next_attempt_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.AccountID, d.WebhookID, d.EventID, d.Attempt, string(d.Status), nullable(d.ResponseStatus),
		nullable(d.Error), nullable(d.DurationMs), toNullDB(d.NextAttemptAt), toDB(d.CreatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A delivery with id %q exists.", d.ID)
	case errForeignKey:
		return notFound(err, "webhook endpoint", d.WebhookID)
	}
	return wrap(err, "create delivery")
}

// Delivery implements fleet.Tx.
func (t *tx) Delivery(accountID, id string) (fleet.Delivery, error) {
	d, err := scanDelivery(t.queryRow(`SELECT `+deliveryColumns+` FROM webhook_deliveries d WHERE d.id = ? AND d.account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Delivery{}, fleet.NotFound("delivery", id)
	}
	return d, wrap(t.failed(err), "read delivery")
}

func (t *tx) deliveries(doing, query string, args ...any) ([]fleet.Delivery, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	out := []fleet.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, d)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// Deliveries implements fleet.Tx.
func (t *tx) Deliveries(accountID, webhookID string, f fleet.DeliveryFilter, p fleet.Page) ([]fleet.Delivery, error) {
	if p.Limit <= 0 {
		return []fleet.Delivery{}, nil
	}
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d WHERE d.webhook_id = ? AND d.account_id = ?`
	args, after, order := []any{webhookID, accountID}, ` AND d.id > ?`, ` ORDER BY d.id LIMIT ?`
	if p.Newest {
		after, order = ` AND d.id < ?`, ` ORDER BY d.id DESC LIMIT ?`
	}
	if !p.Newest || p.After != "" {
		q, args = q+after, append(args, p.After)
	}
	if f.Status != "" {
		q, args = q+` AND d.status = ?`, append(args, string(f.Status))
	}
	if f.EventID != "" {
		q, args = q+` AND d.event_id = ?`, append(args, f.EventID)
	}
	return t.deliveries("list deliveries", q+order, append(args, int64(p.Limit))...)
}

// UpdateDelivery implements fleet.Tx.
func (t *tx) UpdateDelivery(d fleet.Delivery) error {
	n, err := t.update(`UPDATE webhook_deliveries SET status = ?, response_status = ?, error = ?, duration_ms = ?, next_attempt_at = ?
		WHERE id = ? AND account_id = ?`,
		string(d.Status), nullable(d.ResponseStatus), nullable(d.Error), nullable(d.DurationMs), toNullDB(d.NextAttemptAt),
		d.ID, d.AccountID)
	if err != nil {
		return wrap(err, "update delivery")
	}
	if n == 0 {
		return fleet.NotFound("delivery", d.ID)
	}
	return nil
}

// claimScan is how many due deliveries, in due order, a claim of limit
// reads first. Fewer than that is all of them, and the claim chooses among
// them; as many means a backlog, and the claim reads instead the first few
// of each endpoint, so that an account whose endpoints hold the head of
// the queue does not hide the others' deliveries behind it.
func claimScan(limit int) int { return max(32, 4*limit) }

// claimStmts are a claim's three statements, prepared once on the writer:
// the first due deliveries, the first few of each endpoint's (see
// claimScan), and the UPDATE ... RETURNING that takes the chosen ones
// still due.
type claimStmts struct {
	due, dueByEndpoint, take preparedStmt
	// The reads of a claimed batch's endpoints and events, prepared on
	// the readers (r) and on the writer (w).
	webhooksR, webhooksW, eventsR, eventsW preparedStmt
}

const (
	webhooksByIDQuery = `SELECT ` + webhookColumns + ` FROM webhooks w WHERE w.`
	eventsByIDQuery   = `SELECT id, account_id, type, created_at, data FROM events WHERE `
)

func (c *claimStmts) prepare(ctx context.Context, rdb, db *sql.DB, d *dialect) error {
	for _, p := range []struct {
		st    *preparedStmt
		query string
	}{
		{&c.webhooksW, webhooksByIDQuery + d.idsIn},
		{&c.eventsW, eventsByIDQuery + d.idsIn},
		{&c.due, `SELECT id, account_id, webhook_id, next_attempt_at FROM webhook_deliveries
			WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`},
		{&c.dueByEndpoint, d.dueByEndpoint},
		{&c.take, `UPDATE webhook_deliveries SET next_attempt_at = ?
			WHERE id IN (SELECT id FROM webhook_deliveries WHERE ` + d.idsIn + `
				AND status = 'pending' AND next_attempt_at <= ?` + d.skipLocked + `)
			RETURNING ` + strings.ReplaceAll(deliveryColumns, "d.", "")},
	} {
		if err := p.st.prepare(ctx, db, d.q(p.query)); err != nil {
			return err
		}
	}
	c.webhooksR, c.eventsR = c.webhooksW, c.eventsW
	if rdb != db {
		if err := c.webhooksR.prepare(ctx, rdb, d.q(webhooksByIDQuery+d.idsIn)); err != nil {
			return err
		}
		if err := c.eventsR.prepare(ctx, rdb, d.q(eventsByIDQuery+d.idsIn)); err != nil {
			return err
		}
	}
	return nil
}

// byID returns the statement of a read by ids for t: the readers' in a
// read-only transaction, the writer's otherwise.
func (c *claimStmts) byID(t *tx, r, w preparedStmt) *sql.Stmt {
	if t.readOnly {
		return t.prepared(r)
	}
	return t.prepared(w)
}

func (c *claimStmts) close() error {
	var err error
	seen := map[*sql.Stmt]bool{}
	for _, p := range []preparedStmt{c.due, c.dueByEndpoint, c.take, c.webhooksR, c.webhooksW, c.eventsR, c.eventsW} {
		st := p.Stmt
		if st != nil && !seen[st] {
			seen[st] = true
			err = errors.Join(err, st.Close())
		}
	}
	return err
}

// ClaimDeliveries implements fleet.Store, in one write transaction at the
// database's default isolation that does not wait for the disk (see
// writeLease): it reads the candidates (see claimScan), c.Pick chooses,
// and one UPDATE ... RETURNING takes those still due. On PostgreSQL that
// UPDATE locks the rows it takes and skips rows a concurrent claim locked;
// its condition, evaluated again on the latest version of each row, drops
// those another claim took since they were read.
func (s *Store) ClaimDeliveries(ctx context.Context, c fleet.DeliveryClaim) ([]fleet.Delivery, bool, error) {
	var out []fleet.Delivery
	var left bool
	order := map[string]int{} // id -> place in the chosen order: earliest due first
	err := s.eng.writeLease(ctx, func(t *tx) error {
		clear(order)
		scan := claimScan(c.Limit)
		due, err := t.dueDeliveries(t.claim.due, toDB(c.Now), int64(scan))
		if err != nil {
			return err
		}
		backlog := len(due) >= scan
		if backlog {
			if due, err = t.dueDeliveries(t.claim.dueByEndpoint, toDB(c.Now), int64(c.Candidates())); err != nil {
				return err
			}
		}
		picked, over := c.Pick(due)
		left = over || backlog
		if len(picked) == 0 {
			out = nil
			return nil
		}
		ids := make([]string, len(picked))
		for i, d := range picked {
			order[d.ID], ids[i] = i, d.ID
		}
		rows, err := t.prepared(t.claim.take).QueryContext(t.ctx, toDB(c.Until), t.d.idsArg(ids), toDB(c.Now))
		if err != nil {
			return wrap(t.failed(err), "claim deliveries")
		}
		defer rows.Close()
		out = out[:0]
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return wrap(err, "claim deliveries")
			}
			out = append(out, d)
		}
		return wrap(t.failed(rows.Err()), "claim deliveries")
	})
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(out, func(a, b fleet.Delivery) int { return cmp.Compare(order[a.ID], order[b.ID]) })
	return out, left, nil
}

// dueDeliveries reads the (id, account_id, webhook_id, next_attempt_at) of
// due deliveries: what a claim chooses among.
func (t *tx) dueDeliveries(st preparedStmt, args ...any) ([]fleet.Delivery, error) {
	rows, err := t.prepared(st).QueryContext(t.ctx, args...)
	if err != nil {
		return nil, wrap(t.failed(err), "claim deliveries")
	}
	defer rows.Close()
	var out []fleet.Delivery
	for rows.Next() {
		var d fleet.Delivery
		var at int64
		if err := rows.Scan(&d.ID, &d.AccountID, &d.WebhookID, &at); err != nil {
			return nil, wrap(err, "claim deliveries")
		}
		due := fromDB(at)
		d.NextAttemptAt = &due
		out = append(out, d)
	}
	return out, wrap(rows.Err(), "claim deliveries")
}

// RecordDeliveries implements fleet.Store: a write transaction at the
// database's default isolation in which a conditional update of each
// delivery's row is its lease check.
func (s *Store) RecordDeliveries(ctx context.Context, recs []fleet.DeliveryRecord, changes []fleet.EndpointChange) ([]bool, error) {
	held := make([]bool, len(recs))
	err := s.eng.write(ctx, func(t *tx) error {
		clear(held)
		stored := map[string]bool{}
		for i, r := range recs {
			d := r.Delivery
			n, err := t.update(`UPDATE webhook_deliveries SET status = ?, response_status = ?, error = ?, duration_ms = ?, next_attempt_at = ?
				WHERE id = ? AND account_id = ? AND status = 'pending' AND next_attempt_at = ?`,
				string(d.Status), nullable(d.ResponseStatus), nullable(d.Error), nullable(d.DurationMs), toNullDB(d.NextAttemptAt),
				d.ID, d.AccountID, toDB(r.Lease))
			if err != nil {
				return wrap(err, "record delivery")
			}
			if n == 0 {
				continue
			}
			held[i], stored[d.WebhookID] = true, true
			if r.Next != nil {
				if err := t.CreateDelivery(*r.Next); err != nil {
					return err
				}
			}
		}
		for _, c := range changes {
			if stored[c.WebhookID] {
				if err := t.changeEndpoint(c); err != nil {
					return wrap(err, "record delivery")
				}
			}
		}
		return nil
	})
	if err != nil {
		return make([]bool, len(recs)), err
	}
	return held, nil
}

// changeEndpoint applies a fleet.EndpointChange: each part a conditional
// update, so that it changes the row as it is now, not as the sender read
// it.
func (t *tx) changeEndpoint(c fleet.EndpointChange) error {
	if c.Disable {
		q, args := `UPDATE webhooks SET enabled = ? WHERE id = ? AND account_id = ? AND enabled`, []any{false, c.WebhookID, c.AccountID}
		if c.DisableIfFailingSince != nil {
			q, args = q+` AND failing_since = ?`, append(args, toDB(*c.DisableIfFailingSince))
		}
		if _, err := t.update(q, args...); err != nil {
			return err
		}
	}
	var err error
	switch {
	case c.ClearFailing && c.StartFailing != nil: // cleared, then failing again
		_, err = t.update(`UPDATE webhooks SET failing_since = ? WHERE id = ? AND account_id = ?`,
			toDB(*c.StartFailing), c.WebhookID, c.AccountID)
	case c.ClearFailing:
		_, err = t.update(`UPDATE webhooks SET failing_since = NULL WHERE id = ? AND account_id = ? AND failing_since IS NOT NULL`,
			c.WebhookID, c.AccountID)
	case c.StartFailing != nil:
		_, err = t.update(`UPDATE webhooks SET failing_since = ? WHERE id = ? AND account_id = ? AND failing_since IS NULL`,
			toDB(*c.StartFailing), c.WebhookID, c.AccountID)
	}
	return err
}

// PurgeDeliveries implements fleet.Store.
func (s *Store) PurgeDeliveries(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM webhook_deliveries WHERE created_at < ?`, before, "purge deliveries")
}

// WebhooksByID implements fleet.Tx: one prepared query.
func (t *tx) WebhooksByID(ids []string) ([]fleet.Webhook, error) {
	if len(ids) == 0 {
		return []fleet.Webhook{}, nil
	}
	rows, err := t.claim.byID(t, t.claim.webhooksR, t.claim.webhooksW).QueryContext(t.ctx, t.d.idsArg(ids))
	if err != nil {
		return nil, wrap(t.failed(err), "read webhooks")
	}
	defer rows.Close()
	out := []fleet.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, wrap(err, "read webhooks")
		}
		out = append(out, w)
	}
	return out, wrap(t.failed(rows.Err()), "read webhooks")
}

// EventsByID implements fleet.Tx: one prepared query.
func (t *tx) EventsByID(ids []string) ([]fleet.Event, error) {
	if len(ids) == 0 {
		return []fleet.Event{}, nil
	}
	rows, err := t.claim.byID(t, t.claim.eventsR, t.claim.eventsW).QueryContext(t.ctx, t.d.idsArg(ids))
	if err != nil {
		return nil, wrap(t.failed(err), "read events")
	}
	defer rows.Close()
	out := make([]fleet.Event, 0, len(ids))
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, wrap(err, "read events")
		}
		out = append(out, e)
	}
	return out, wrap(t.failed(rows.Err()), "read events")
}
