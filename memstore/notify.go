package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// notifyTables hold notification rules, report schedules and the mail
// outbox, with the outbox's indexes: each rule's open mail, the mail of
// each unsubscribe token, each schedule's mail by period, pending mail.
type notifyTables struct {
	rules     *table[fleet.NotificationRule]
	schedules *table[fleet.ReportSchedule]
	mails     *table[fleet.Mail]
	open      map[string]string       // rule id -> its open pending mail
	unsub     map[[32]byte]unsubToken // token hash -> its mail
	periods   map[string]string       // schedule id + "\x00" + period -> mail id
	pending   map[string]struct{}     // pending mail ids
}

type unsubToken struct {
	mailID string
	at     time.Time
}

func newNotifyTables() notifyTables {
	return notifyTables{
		rules: newTable("notification rule", func(r fleet.NotificationRule) string { return r.ID },
			func(r fleet.NotificationRule) string { return r.AccountID }, fleet.NotificationRule.Clone),
		schedules: newTable("report schedule", func(r fleet.ReportSchedule) string { return r.ID },
			func(r fleet.ReportSchedule) string { return r.AccountID }, fleet.ReportSchedule.Clone),
		mails: newTable("mail", func(m fleet.Mail) string { return m.ID },
			func(m fleet.Mail) string { return m.AccountID }, fleet.Mail.Clone),
		open: map[string]string{}, unsub: map[[32]byte]unsubToken{}, periods: map[string]string{}, pending: map[string]struct{}{},
	}
}

// setIndex sets (or, with del, deletes) m[k] undoably.
func setIndex[K comparable, V any](tx *txn, m map[K]V, k K, v V, del bool) {
	old, had := m[k]
	if del {
		delete(m, k)
	} else {
		m[k] = v
	}
	tx.undo(func() {
		if had {
			m[k] = old
		} else {
			delete(m, k)
		}
	})
}

// index brings the indexes in line with m as stored now (old as it was,
// nil when new).
func (n *notifyTables) index(tx *txn, old *fleet.Mail, m fleet.Mail) {
	if old != nil && old.Open && old.Status == fleet.MailPending && !(m.Open && m.Status == fleet.MailPending) {
		if n.open[old.RuleID] == m.ID {
			setIndex(tx, n.open, old.RuleID, "", true)
		}
	}
	if m.Open && m.Status == fleet.MailPending {
		setIndex(tx, n.open, m.RuleID, m.ID, false)
	}
	if m.Period != "" {
		setIndex(tx, n.periods, m.RuleID+"\x00"+m.Period, m.ID, false)
	}
	_, was := n.pending[m.ID]
	if is := m.Status == fleet.MailPending; is != was {
		setIndex(tx, n.pending, m.ID, struct{}{}, !is)
	}
}

func (t *tx) CreateNotificationRule(r fleet.NotificationRule) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.accounts.get("", r.AccountID); err != nil {
		return err
	}
	return t.s.nt.rules.insert(t.txn, r)
}

func (t *tx) NotificationRule(accountID, id string) (fleet.NotificationRule, error) {
	return t.s.nt.rules.get(accountID, id)
}

func (t *tx) NotificationRules(accountID, userID string, p fleet.Page) ([]fleet.NotificationRule, error) {
	return t.s.nt.rules.list(accountID, p, func(r fleet.NotificationRule) bool { return userID == "" || r.UserID == userID }), nil
}

func (t *tx) EnabledNotificationRules(accountID string) ([]fleet.NotificationRule, error) {
	n := len(t.s.nt.rules.order[accountID])
	if n == 0 {
		return []fleet.NotificationRule{}, nil
	}
	return t.s.nt.rules.list(accountID, fleet.Page{Limit: n}, func(r fleet.NotificationRule) bool { return r.Enabled }), nil
}

func (t *tx) CountNotificationRules(accountID string) (int, error) {
	return len(t.s.nt.rules.order[accountID]), nil
}

func (t *tx) UpdateNotificationRule(r fleet.NotificationRule) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.nt.rules.get(r.AccountID, r.ID)
	if err != nil {
		return err
	}
	r.UserID, r.CreatedAt = old.UserID, old.CreatedAt
	return t.s.nt.rules.put(t.txn, r)
}

func (t *tx) DeleteNotificationRule(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.nt.rules.delete(t.txn, accountID, id)
}

func (t *tx) NotificationRulesByID(ids []string) ([]fleet.NotificationRule, error) {
	out := make([]fleet.NotificationRule, 0, len(ids))
	for _, id := range ids {
		if r, err := t.s.nt.rules.get("", id); err == nil && !slices.ContainsFunc(out, func(o fleet.NotificationRule) bool { return o.ID == id }) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (t *tx) QueueMail(q fleet.MailQueued) error {
	if err := t.writable(); err != nil {
		return err
	}
	n := &t.s.nt
	if id, ok := n.open[q.RuleID]; ok {
		m := n.mails.byID[id]
		old := m
		m.Count += max(q.Count, 1)
		if room := fleet.MailItemsKept - len(m.Items); room > 0 {
			m.Items = append(slices.Clip(m.Items), q.Items[:min(room, len(q.Items))]...)
		}
		n.mails.byID[id] = m
		t.undo(func() { n.mails.byID[id] = old })
		return nil
	}
	m := q.NewMail()
	if err := n.mails.insert(t.txn, m); err != nil {
		return err
	}
	n.index(t.txn, nil, m)
	return nil
}

func (t *tx) Mail(accountID, id string) (fleet.Mail, error) {
	return t.s.nt.mails.get(accountID, id)
}

func (t *tx) MailByUnsubscribe(hash [32]byte) (fleet.Mail, error) {
	tok, ok := t.s.nt.unsub[hash]
	if !ok {
		return fleet.Mail{}, fleet.NotFound("mail", "")
	}
	return t.s.nt.mails.get("", tok.mailID)
}

func (t *tx) AddMailUnsubscribe(accountID, id string, hash [32]byte, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.nt.mails.get(accountID, id); err != nil {
		return err
	}
	if _, ok := t.s.nt.unsub[hash]; ok {
		return fleet.Errorf(fleet.CodeConflict, "This unsubscribe token exists.")
	}
	setIndex(t.txn, t.s.nt.unsub, hash, unsubToken{id, at}, false)
	return nil
}

func (t *tx) Mails(accountID, ruleID string, p fleet.Page) ([]fleet.Mail, error) {
	return t.s.nt.mails.list(accountID, p, func(m fleet.Mail) bool { return ruleID == "" || m.RuleID == ruleID }), nil
}

func (t *tx) CreateReportSchedule(r fleet.ReportSchedule) error {
	if err := t.writable(); err != nil {
		return err
	}
	if _, err := t.s.accounts.get("", r.AccountID); err != nil {
		return err
	}
	return t.s.nt.schedules.insert(t.txn, r)
}

func (t *tx) ReportSchedule(accountID, id string) (fleet.ReportSchedule, error) {
	return t.s.nt.schedules.get(accountID, id)
}

func (t *tx) ReportSchedules(accountID, userID string, p fleet.Page) ([]fleet.ReportSchedule, error) {
	return t.s.nt.schedules.list(accountID, p, func(r fleet.ReportSchedule) bool { return userID == "" || r.UserID == userID }), nil
}

func (t *tx) CountReportSchedules(accountID string) (int, error) {
	return len(t.s.nt.schedules.order[accountID]), nil
}

func (t *tx) UpdateReportSchedule(r fleet.ReportSchedule) error {
	if err := t.writable(); err != nil {
		return err
	}
	old, err := t.s.nt.schedules.get(r.AccountID, r.ID)
	if err != nil {
		return err
	}
	r.UserID, r.CreatedAt = old.UserID, old.CreatedAt
	return t.s.nt.schedules.put(t.txn, r)
}

func (t *tx) DeleteReportSchedule(accountID, id string) error {
	if err := t.writable(); err != nil {
		return err
	}
	return t.s.nt.schedules.delete(t.txn, accountID, id)
}

func (t *tx) ReportSchedulesByID(ids []string) ([]fleet.ReportSchedule, error) {
	out := make([]fleet.ReportSchedule, 0, len(ids))
	for _, id := range ids {
		if r, err := t.s.nt.schedules.get("", id); err == nil && !slices.ContainsFunc(out, func(o fleet.ReportSchedule) bool { return o.ID == id }) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (t *tx) DueReportSchedules(now time.Time, limit int) ([]fleet.ReportSchedule, error) {
	var out []fleet.ReportSchedule
	for _, r := range t.s.nt.schedules.byID {
		if r.Enabled && !r.NextRunAt.After(now) {
			out = append(out, r.Clone())
		}
	}
	slices.SortFunc(out, func(a, b fleet.ReportSchedule) int {
		if c := a.NextRunAt.Compare(b.NextRunAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (t *tx) QueueReport(m fleet.Mail) (bool, error) {
	if err := t.writable(); err != nil {
		return false, err
	}
	n := &t.s.nt
	if _, ok := n.periods[m.RuleID+"\x00"+m.Period]; ok {
		return false, nil
	}
	if err := n.mails.insert(t.txn, m); err != nil {
		return false, err
	}
	n.index(t.txn, nil, m)
	return true, nil
}

// ClaimMail implements fleet.Store.
func (s *Store) ClaimMail(ctx context.Context, now, until time.Time, limit int) ([]fleet.Mail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed()
	}
	n := &s.nt
	var due []fleet.Mail
	for id := range n.pending {
		m := n.mails.byID[id]
		if m.NextAttemptAt != nil && !m.NextAttemptAt.After(now) {
			due = append(due, m)
		}
	}
	slices.SortFunc(due, func(a, b fleet.Mail) int {
		if c := a.NextAttemptAt.Compare(*b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(due) > limit {
		due = due[:limit]
	}
	tx := &txn{} // claims are not undone
	out := make([]fleet.Mail, len(due))
	for i, m := range due {
		old := m
		m = m.Clone()
		u := until
		m.NextAttemptAt = &u
		if m.Phase == fleet.PhaseDigest {
			m.Open = false
		}
		n.mails.byID[m.ID] = m.Clone()
		n.index(tx, &old, m)
		out[i] = m
	}
	return out, nil
}

// RecordMail implements fleet.Store.
func (s *Store) RecordMail(ctx context.Context, recs []fleet.MailRecord) ([]bool, error) {
	held := make([]bool, len(recs))
	err := s.Update(ctx, func(ftx fleet.Tx) error {
		t := ftx.(*tx)
		n := &t.s.nt
		for i, r := range recs {
			old, ok := n.mails.byID[r.Mail.ID]
			if !ok || old.AccountID != r.Mail.AccountID || old.Status != fleet.MailPending || old.NextAttemptAt == nil || !old.NextAttemptAt.Equal(r.Lease) {
				continue
			}
			m := old.Clone()
			d := r.Mail
			m.Open, m.Phase, m.Status, m.Noticed, m.Attempts = d.Open, d.Phase, d.Status, d.Noticed, d.Attempts
			m.NextAttemptAt, m.FirstAttemptAt, m.Error, m.SentAt = clonePtr(d.NextAttemptAt), clonePtr(d.FirstAttemptAt), d.Error, clonePtr(d.SentAt)
			if err := n.mails.put(t.txn, m); err != nil {
				return err
			}
			n.index(t.txn, &old, m)
			held[i] = true
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
	s.mu.Lock()
	defer s.mu.Unlock()
	n := &s.nt
	var old []fleet.Mail
	for _, m := range n.mails.byID {
		if m.Status != fleet.MailPending && m.CreatedAt.Before(before) {
			old = append(old, m)
		}
	}
	for _, m := range old {
		n.mails.remove(m.AccountID, m.ID)
		if m.Period != "" {
			delete(n.periods, m.RuleID+"\x00"+m.Period)
		}
	}
	for h, tok := range n.unsub {
		if tok.at.Before(before) {
			delete(n.unsub, h)
		}
	}
	return len(old), nil
}
