package fleet

import (
	"context"
	"time"
)

// NotifyTx is the notifications area's part of a Tx: notification rules,
// report schedules and the mail outbox.
type NotifyTx interface {
	// CreateNotificationRule stores a new rule. Returns conflict if the id
	// exists, not_found if its account does not.
	CreateNotificationRule(r NotificationRule) error
	// NotificationRule returns not_found if the account has no such rule.
	NotificationRule(accountID, id string) (NotificationRule, error)
	// NotificationRules returns the account's rules (of userID alone unless
	// it is "") in id order, after p.After, at most p.Limit of them.
	NotificationRules(accountID, userID string, p Page) ([]NotificationRule, error)
	// EnabledNotificationRules returns the account's enabled rules in id
	// order: what the service compiles and caches for emitting events.
	EnabledNotificationRules(accountID string) ([]NotificationRule, error)
	// CountNotificationRules returns how many rules the account has.
	CountNotificationRules(accountID string) (int, error)
	// UpdateNotificationRule replaces a stored rule (every field but ID,
	// AccountID, UserID and CreatedAt). Returns not_found if the account
	// has no such rule.
	UpdateNotificationRule(r NotificationRule) error
	// DeleteNotificationRule deletes a rule; its pending mail is dropped
	// when a sender claims it. Returns not_found if the account has no
	// such rule.
	DeleteNotificationRule(accountID, id string) error
	// NotificationRulesByID returns the stored rules, of any account, among
	// ids (in no order; ids not stored are left out).
	NotificationRulesByID(ids []string) ([]NotificationRule, error)

	// QueueMail is the outbox's one write made for a transaction's events
	// of a rule, and the only one: if q.RuleID has an open mail (Open,
	// pending), it adds q.Count to its Count and appends q.Items to its
	// Items while they hold fewer than MailItemsKept (a store may keep the
	// whole of the q that crosses the mark); otherwise it stores
	// q.NewMail(). It is one statement (an upsert) where the store has
	// them, so that a storm of events costs one small write a transaction
	// and the outbox holds one row per rule and window.
	QueueMail(q MailQueued) error
	// Mail returns not_found if the account has no such mail.
	Mail(accountID, id string) (Mail, error)
	// MailByUnsubscribe returns the mail an attempt of which carried the
	// unsubscribe token of hash, of whichever account; not_found if none
	// (or the mail was purged).
	MailByUnsubscribe(hash [32]byte) (Mail, error)
	// AddMailUnsubscribe stores the hash of the unsubscribe token the
	// mail's next attempt carries; the tokens its earlier attempts carried
	// stay valid (a notice's link still works once its digest went out).
	// Returns not_found if the account has no such mail.
	AddMailUnsubscribe(accountID, id string, hash [32]byte, at time.Time) error
	// Mails returns the account's mail of a rule or schedule ("" for all)
	// in id order, after p.After, at most p.Limit of them.
	Mails(accountID, ruleID string, p Page) ([]Mail, error)

	// CreateReportSchedule stores a new schedule. Returns conflict if the
	// id exists, not_found if its account does not.
	CreateReportSchedule(r ReportSchedule) error
	// ReportSchedule returns not_found if the account has no such schedule.
	ReportSchedule(accountID, id string) (ReportSchedule, error)
	// ReportSchedules returns the account's schedules (of userID alone
	// unless it is "") in id order, after p.After, at most p.Limit.
	ReportSchedules(accountID, userID string, p Page) ([]ReportSchedule, error)
	// CountReportSchedules returns how many schedules the account has.
	CountReportSchedules(accountID string) (int, error)
	// UpdateReportSchedule replaces a stored schedule (every field but ID,
	// AccountID, UserID and CreatedAt). Returns not_found if the account
	// has no such schedule.
	UpdateReportSchedule(r ReportSchedule) error
	// DeleteReportSchedule returns not_found if the account has no such
	// schedule.
	DeleteReportSchedule(accountID, id string) error
	// ReportSchedulesByID returns the stored schedules, of any account,
	// among ids (in no order; ids not stored are left out).
	ReportSchedulesByID(ids []string) ([]ReportSchedule, error)
	// DueReportSchedules returns enabled schedules, of any account, whose
	// NextRunAt is at or before now, earliest first, at most limit.
	DueReportSchedules(now time.Time, limit int) ([]ReportSchedule, error)
	// QueueReport stores m, a report's run, unless the schedule has a mail
	// of m.Period already: the run of a period is stored once, whatever
	// the number of servers. It reports whether m was stored.
	QueueReport(m Mail) (bool, error)
}

// NotifyStore is the notifications area's part of a Store: the outbox
// that hands due mail to senders and records what they did.
type NotifyStore interface {
	// ClaimMail leases up to limit pending mails due at now (NextAttemptAt
	// <= now), earliest due first: it moves their NextAttemptAt to until
	// and closes (Open false) those in PhaseDigest, whose window so ends,
	// and returns them so changed. Of claims running at once, across every
	// process sharing the store, none gets a mail another got.
	ClaimMail(ctx context.Context, now, until time.Time, limit int) ([]Mail, error)
	// RecordMail stores, for each record whose mail is still pending with
	// NextAttemptAt equal to the record's Lease, the record's Mail's
	// mutable fields (Open, Phase, Status, Noticed, Attempts,
	// NextAttemptAt, FirstAttemptAt, Error, SentAt; never Count or Items,
	// which events may have added to meanwhile). It reports, for each
	// record, whether it was stored.
	RecordMail(ctx context.Context, recs []MailRecord) ([]bool, error)
	// PurgeMail deletes mail that is no longer pending and was created
	// before before, and the unsubscribe tokens added before before.
	PurgeMail(ctx context.Context, before time.Time) (int, error)
}

// MailRecord is the outcome of a claimed mail, to store while its lease
// holds.
type MailRecord struct {
	Mail  Mail
	Lease time.Time
}
