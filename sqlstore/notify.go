package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

const ntfColumns = `id, account_id, user_id, events, alert_types, vehicle_ids, tags, channel, quiet_hours, digest_minutes,
	enabled, created_at`

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func scanNtf(s scanner) (fleet.NotificationRule, error) {
	var r fleet.NotificationRule
	var events, types, vehicles, tags string
	var quiet sql.NullString
	var created int64
	if err := s.Scan(&r.ID, &r.AccountID, &r.UserID, &events, &types, &vehicles, &tags, &r.Channel, &quiet,
		&r.DigestMinutes, &r.Enabled, &created); err != nil {
		return r, err
	}
	for _, f := range []struct {
		s   string
		dst any
	}{{events, &r.Events}, {types, &r.AlertTypes}, {vehicles, &r.VehicleIDs}, {tags, &r.Tags}} {
		if err := json.Unmarshal([]byte(f.s), f.dst); err != nil {
			return r, err
		}
	}
	if quiet.Valid {
		r.QuietHours = &fleet.QuietHours{}
		if err := json.Unmarshal([]byte(quiet.String), r.QuietHours); err != nil {
			return r, err
		}
	}
	r.CreatedAt = fromDB(created)
	return r, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func quietArg(q *fleet.QuietHours) any {
	if q == nil {
		return nil
	}
	return jsonText(q)
}

// CreateNotificationRule implements fleet.Tx.
func (t *tx) CreateNotificationRule(r fleet.NotificationRule) error {
	err := t.insert(`INSERT INTO notification_rules (`+ntfColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AccountID, r.UserID, jsonText(nonNil(r.Events)), jsonText(nonNil(r.AlertTypes)), jsonText(nonNil(r.VehicleIDs)),
		jsonText(nonNil(r.Tags)), r.Channel, quietArg(r.QuietHours), r.DigestMinutes, r.Enabled, toDB(r.CreatedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A notification rule with id %q exists.", r.ID)
	case errForeignKey:
		return notFound(err, "account or user", r.AccountID)
	}
	return wrap(err, "create notification rule")
}

func (t *tx) ntfRules(doing, where string, args ...any) ([]fleet.NotificationRule, error) {
	return queryAll(t, doing, scanNtf, `SELECT `+ntfColumns+` FROM notification_rules WHERE `+where, args...)
}

// NotificationRule implements fleet.Tx.
func (t *tx) NotificationRule(accountID, id string) (fleet.NotificationRule, error) {
	r, err := scanNtf(t.queryRow(`SELECT `+ntfColumns+` FROM notification_rules WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fleet.NotFound("notification rule", id)
	}
	return r, wrap(t.failed(err), "read notification rule")
}

// NotificationRules implements fleet.Tx.
func (t *tx) NotificationRules(accountID, userID string, p fleet.Page) ([]fleet.NotificationRule, error) {
	if p.Limit <= 0 {
		return []fleet.NotificationRule{}, nil
	}
	return t.ntfRules("list notification rules", `account_id = ? AND (? = '' OR user_id = ?) AND id > ? ORDER BY id LIMIT ?`,
		accountID, userID, userID, p.After, int64(p.Limit))
}

// EnabledNotificationRules implements fleet.Tx.
func (t *tx) EnabledNotificationRules(accountID string) ([]fleet.NotificationRule, error) {
	return t.ntfRules("read enabled notification rules", `account_id = ? AND enabled ORDER BY id`, accountID)
}

// CountNotificationRules implements fleet.Tx.
func (t *tx) CountNotificationRules(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM notification_rules WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count notification rules")
}

// UpdateNotificationRule implements fleet.Tx.
func (t *tx) UpdateNotificationRule(r fleet.NotificationRule) error {
	n, err := t.update(`UPDATE notification_rules SET events = ?, alert_types = ?, vehicle_ids = ?, tags = ?, channel = ?,
			quiet_hours = ?, digest_minutes = ?, enabled = ?
		WHERE id = ? AND account_id = ?`,
		jsonText(nonNil(r.Events)), jsonText(nonNil(r.AlertTypes)), jsonText(nonNil(r.VehicleIDs)), jsonText(nonNil(r.Tags)),
		r.Channel, quietArg(r.QuietHours), r.DigestMinutes, r.Enabled, r.ID, r.AccountID)
	if err != nil {
		return wrap(err, "update notification rule")
	}
	if n == 0 {
		return fleet.NotFound("notification rule", r.ID)
	}
	return nil
}

// DeleteNotificationRule implements fleet.Tx.
func (t *tx) DeleteNotificationRule(accountID, id string) error {
	n, err := t.update(`DELETE FROM notification_rules WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete notification rule")
	}
	if n == 0 {
		return fleet.NotFound("notification rule", id)
	}
	return nil
}

// NotificationRulesByID implements fleet.Tx.
func (t *tx) NotificationRulesByID(ids []string) ([]fleet.NotificationRule, error) {
	if len(ids) == 0 {
		return []fleet.NotificationRule{}, nil
	}
	return t.ntfRules("read notification rules", t.d.idsIn, t.d.idsArg(ids))
}

const mailColumns = `id, account_id, kind, rule_id, user_id, is_open, phase, status, noticed, window_end, events_count, items,
	period, attempts, next_attempt_at, first_attempt_at, error, created_at, sent_at`

func scanMail(s scanner) (fleet.Mail, error) {
	var m fleet.Mail
	var kind, phase, status, items string
	var windowEnd, created int64
	var next, first, sent sql.NullInt64
	if err := s.Scan(&m.ID, &m.AccountID, &kind, &m.RuleID, &m.UserID, &m.Open, &phase, &status, &m.Noticed, &windowEnd,
		&m.Count, &items, &m.Period, &m.Attempts, &next, &first, &m.Error, &created, &sent); err != nil {
		return m, err
	}
	m.Kind, m.Phase, m.Status = fleet.MailKind(kind), fleet.MailPhase(phase), fleet.MailStatus(status)
	var err error
	if m.Items, err = fleet.DecodeMailItems(items); err != nil {
		return m, err
	}
	m.WindowEnd, m.CreatedAt = fromDB(windowEnd), fromDB(created)
	m.NextAttemptAt, m.FirstAttemptAt, m.SentAt = fromNullDB(next), fromNullDB(first), fromNullDB(sent)
	return m, nil
}

func (t *tx) mails(doing, where string, args ...any) ([]fleet.Mail, error) {
	return queryAll(t, doing, scanMail, `SELECT `+mailColumns+` FROM mail_outbox WHERE `+where, args...)
}

// queueMail is the outbox's upsert: the rule's open pending row, if any,
// counts the event and keeps its item while it holds fewer than
// fleet.MailItemsKept; otherwise the new row is stored.
const queueMail = `INSERT INTO mail_outbox (` + mailColumns + `, item_count)
	VALUES (?, ?, 'notification', ?, ?, TRUE, ?, 'pending', FALSE, ?, ?, ?, '', 0, ?, NULL, '', ?, NULL, ?)
	ON CONFLICT (rule_id) WHERE is_open AND status = 'pending' DO UPDATE SET
		events_count = mail_outbox.events_count + excluded.events_count,
		items = CASE WHEN mail_outbox.item_count < ? THEN mail_outbox.items || excluded.items ELSE mail_outbox.items END,
		item_count = CASE WHEN mail_outbox.item_count < ? THEN mail_outbox.item_count + excluded.item_count ELSE mail_outbox.item_count END`

// QueueMail implements fleet.Tx: one statement. The items of the q that
// crosses fleet.MailItemsKept are appended whole, so that a row holds
// fewer than twice that many (DecodeMailItems reads the first).
func (t *tx) QueueMail(q fleet.MailQueued) error {
	m := q.NewMail()
	var items strings.Builder
	for _, it := range m.Items {
		items.WriteString(fleet.EncodeMailItem(it))
	}
	_, err := t.update(queueMail, m.ID, m.AccountID, m.RuleID, m.UserID, string(m.Phase), toDB(m.WindowEnd), int64(m.Count),
		items.String(), toNullDB(m.NextAttemptAt), toDB(m.CreatedAt), int64(len(m.Items)), fleet.MailItemsKept, fleet.MailItemsKept)
	return wrap(err, "queue mail")
}

// Mail implements fleet.Tx.
func (t *tx) Mail(accountID, id string) (fleet.Mail, error) {
	m, err := scanMail(t.queryRow(`SELECT `+mailColumns+` FROM mail_outbox WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return m, fleet.NotFound("mail", id)
	}
	return m, wrap(t.failed(err), "read mail")
}

// MailByUnsubscribe implements fleet.Tx.
func (t *tx) MailByUnsubscribe(hash [32]byte) (fleet.Mail, error) {
	m, err := scanMail(t.queryRow(`SELECT `+mailColumns+` FROM mail_outbox
		WHERE id = (SELECT mail_id FROM mail_unsubscribe WHERE hash = ?)`, hash[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return m, fleet.NotFound("mail", "")
	}
	return m, wrap(t.failed(err), "read mail")
}

// AddMailUnsubscribe implements fleet.Tx.
func (t *tx) AddMailUnsubscribe(accountID, id string, hash [32]byte, at time.Time) error {
	n, err := t.update(`INSERT INTO mail_unsubscribe (hash, mail_id, added_at)
		SELECT ?, id, ? FROM mail_outbox WHERE id = ? AND account_id = ?`, hash[:], toDB(at), id, accountID)
	if classify(err) == errUnique {
		return conflict(err, "This unsubscribe token exists.")
	}
	if err != nil {
		return wrap(err, "add unsubscribe token")
	}
	if n == 0 {
		return fleet.NotFound("mail", id)
	}
	return nil
}

// Mails implements fleet.Tx.
func (t *tx) Mails(accountID, ruleID string, p fleet.Page) ([]fleet.Mail, error) {
	if p.Limit <= 0 {
		return []fleet.Mail{}, nil
	}
	return t.mails("list mail", `account_id = ? AND (? = '' OR rule_id = ?) AND id > ? ORDER BY id LIMIT ?`,
		accountID, ruleID, ruleID, p.After, int64(p.Limit))
}

const rptColumns = `id, account_id, user_id, frequency, weekday, hour, tz, report, group_by, vehicle_ids, tags, enabled,
	created_at, next_run_at`

func scanReportSchedule(s scanner) (fleet.ReportSchedule, error) {
	var r fleet.ReportSchedule
	var vehicles, tags string
	var created, next int64
	if err := s.Scan(&r.ID, &r.AccountID, &r.UserID, &r.Frequency, &r.Weekday, &r.Hour, &r.TZ, &r.Report, &r.GroupBy,
		&vehicles, &tags, &r.Enabled, &created, &next); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(vehicles), &r.VehicleIDs); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(tags), &r.Tags); err != nil {
		return r, err
	}
	r.CreatedAt, r.NextRunAt = fromDB(created), fromDB(next)
	return r, nil
}

func (t *tx) rptSchedules(doing, where string, args ...any) ([]fleet.ReportSchedule, error) {
	return queryAll(t, doing, scanReportSchedule, `SELECT `+rptColumns+` FROM report_schedules WHERE `+where, args...)
}

// CreateReportSchedule implements fleet.Tx.
func (t *tx) CreateReportSchedule(r fleet.ReportSchedule) error {
	err := t.insert(`INSERT INTO report_schedules (`+rptColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AccountID, r.UserID, r.Frequency, r.Weekday, r.Hour, r.TZ, r.Report, r.GroupBy,
		jsonText(nonNil(r.VehicleIDs)), jsonText(nonNil(r.Tags)), r.Enabled, toDB(r.CreatedAt), toDB(r.NextRunAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A report schedule with id %q exists.", r.ID)
	case errForeignKey:
		return notFound(err, "account or user", r.AccountID)
	}
	return wrap(err, "create report schedule")
}

// ReportSchedule implements fleet.Tx.
func (t *tx) ReportSchedule(accountID, id string) (fleet.ReportSchedule, error) {
	r, err := scanReportSchedule(t.queryRow(`SELECT `+rptColumns+` FROM report_schedules WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fleet.NotFound("report schedule", id)
	}
	return r, wrap(t.failed(err), "read report schedule")
}

// ReportSchedules implements fleet.Tx.
func (t *tx) ReportSchedules(accountID, userID string, p fleet.Page) ([]fleet.ReportSchedule, error) {
	if p.Limit <= 0 {
		return []fleet.ReportSchedule{}, nil
	}
	return t.rptSchedules("list report schedules", `account_id = ? AND (? = '' OR user_id = ?) AND id > ? ORDER BY id LIMIT ?`,
		accountID, userID, userID, p.After, int64(p.Limit))
}

// CountReportSchedules implements fleet.Tx.
func (t *tx) CountReportSchedules(accountID string) (int, error) {
	var n int
	err := t.queryRow(`SELECT COUNT(*) FROM report_schedules WHERE account_id = ?`, accountID).Scan(&n)
	return n, wrap(t.failed(err), "count report schedules")
}

// UpdateReportSchedule implements fleet.Tx.
func (t *tx) UpdateReportSchedule(r fleet.ReportSchedule) error {
	n, err := t.update(`UPDATE report_schedules SET frequency = ?, weekday = ?, hour = ?, tz = ?, report = ?, group_by = ?,
			vehicle_ids = ?, tags = ?, enabled = ?, next_run_at = ?
		WHERE id = ? AND account_id = ?`,
		r.Frequency, r.Weekday, r.Hour, r.TZ, r.Report, r.GroupBy, jsonText(nonNil(r.VehicleIDs)), jsonText(nonNil(r.Tags)),
		r.Enabled, toDB(r.NextRunAt), r.ID, r.AccountID)
	if err != nil {
		return wrap(err, "update report schedule")
	}
	if n == 0 {
		return fleet.NotFound("report schedule", r.ID)
	}
	return nil
}

// DeleteReportSchedule implements fleet.Tx.
func (t *tx) DeleteReportSchedule(accountID, id string) error {
	n, err := t.update(`DELETE FROM report_schedules WHERE id = ? AND account_id = ?`, id, accountID)
	if err != nil {
		return wrap(err, "delete report schedule")
	}
	if n == 0 {
		return fleet.NotFound("report schedule", id)
	}
	return nil
}

// ReportSchedulesByID implements fleet.Tx.
func (t *tx) ReportSchedulesByID(ids []string) ([]fleet.ReportSchedule, error) {
	if len(ids) == 0 {
		return []fleet.ReportSchedule{}, nil
	}
	return t.rptSchedules("read report schedules", t.d.idsIn, t.d.idsArg(ids))
}

// DueReportSchedules implements fleet.Tx.
func (t *tx) DueReportSchedules(now time.Time, limit int) ([]fleet.ReportSchedule, error) {
	return t.rptSchedules("read due report schedules", `enabled AND next_run_at <= ? ORDER BY next_run_at, id LIMIT ?`,
		toDB(now), int64(limit))
}

// QueueReport implements fleet.Tx: the unique (schedule, period) index
// keeps a period's run to one row.
func (t *tx) QueueReport(m fleet.Mail) (bool, error) {
	n, err := t.update(`INSERT INTO mail_outbox (`+mailColumns+`, item_count)
		VALUES (?, ?, ?, ?, ?, FALSE, ?, ?, FALSE, ?, 0, '', ?, 0, ?, NULL, '', ?, NULL, 0)
		ON CONFLICT (rule_id, period) WHERE period <> '' DO NOTHING`,
		m.ID, m.AccountID, string(m.Kind), m.RuleID, m.UserID, string(m.Phase), string(m.Status), toDB(m.WindowEnd),
		m.Period, toNullDB(m.NextAttemptAt), toDB(m.CreatedAt))
	return n == 1, wrap(err, "queue report")
}

// ClaimMail implements fleet.Store: one write transaction that picks the
// due rows (skipping, on PostgreSQL, rows a concurrent claim locked) and
// moves them to the lease in one UPDATE ... RETURNING, whose condition,
// evaluated again on each row's latest version, drops those another claim
// took meanwhile.
func (s *Store) ClaimMail(ctx context.Context, now, until time.Time, limit int) ([]fleet.Mail, error) {
	var out []fleet.Mail
	err := s.eng.write(ctx, func(t *tx) error {
		out = out[:0]
		rows, err := t.query(t.d.q(`SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?`+t.d.skipLocked), toDB(now), int64(limit))
		if err != nil {
			return wrap(t.failed(err), "claim mail")
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return wrap(err, "claim mail")
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return wrap(t.failed(err), "claim mail")
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err = t.query(t.d.q(`UPDATE mail_outbox SET next_attempt_at = ?,
				is_open = CASE WHEN phase = 'digest' THEN FALSE ELSE is_open END
			WHERE `+t.d.idsIn+` AND status = 'pending' AND next_attempt_at <= ?
			RETURNING `+mailColumns), toDB(until), t.d.idsArg(ids), toDB(now))
		if err != nil {
			return wrap(t.failed(err), "claim mail")
		}
		defer rows.Close()
		for rows.Next() {
			m, err := scanMail(rows)
			if err != nil {
				return wrap(err, "claim mail")
			}
			out = append(out, m)
		}
		return wrap(t.failed(rows.Err()), "claim mail")
	})
	if err != nil {
		return nil, err
	}
	sortMail(out)
	return out, nil
}

func sortMail(ms []fleet.Mail) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && mailBefore(ms[j], ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func mailBefore(a, b fleet.Mail) bool {
	if c := a.NextAttemptAt.Compare(*b.NextAttemptAt); c != 0 {
		return c < 0
	}
	return strings.Compare(a.ID, b.ID) < 0
}

// RecordMail implements fleet.Store: a write transaction in which a
// conditional update of each row is its lease check.
func (s *Store) RecordMail(ctx context.Context, recs []fleet.MailRecord) ([]bool, error) {
	held := make([]bool, len(recs))
	err := s.eng.write(ctx, func(t *tx) error {
		clear(held)
		for i, r := range recs {
			m := r.Mail
			n, err := t.update(`UPDATE mail_outbox SET is_open = ?, phase = ?, status = ?, noticed = ?, attempts = ?,
					next_attempt_at = ?, first_attempt_at = ?, error = ?, sent_at = ?
				WHERE id = ? AND account_id = ? AND status = 'pending' AND next_attempt_at = ?`,
				m.Open, string(m.Phase), string(m.Status), m.Noticed, m.Attempts, toNullDB(m.NextAttemptAt),
				toNullDB(m.FirstAttemptAt), m.Error, toNullDB(m.SentAt), m.ID, m.AccountID, toDB(r.Lease))
			if err != nil {
				return wrap(err, "record mail")
			}
			held[i] = n == 1
		}
		return nil
	})
	if err != nil {
		return make([]bool, len(recs)), err
	}
	return held, nil
}

// PurgeMail implements fleet.Store.
func (s *Store) PurgeMail(ctx context.Context, before time.Time) (int, error) {
	if _, err := s.purge(ctx, `DELETE FROM mail_unsubscribe WHERE added_at < ?`, before, "purge unsubscribe tokens"); err != nil {
		return 0, err
	}
	return s.purge(ctx, `DELETE FROM mail_outbox WHERE status <> 'pending' AND created_at < ?`, before, "purge mail")
}
