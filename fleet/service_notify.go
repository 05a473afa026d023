package fleet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/cache"
)

// Person is one of the account's people as the API shows them (GET
// /v1/users): whom a notification rule or a report schedule may address.
type Person struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Name   string `json:"name"`
	Role   Role   `json:"role"`
}

// NotificationRuleInput is what a client sets when it creates a rule: the
// person by UserID or by Email (one of them), and the rule's fields; nil
// pointers take their defaults.
type NotificationRuleInput struct {
	UserID        string
	Email         string
	Events        []string
	AlertTypes    []AlertType
	VehicleIDs    []string
	Tags          []string
	Channel       string
	QuietHours    *QuietHours
	DigestMinutes *int
	Enabled       *bool
}

// NotificationRulePatch is a JSON merge patch of a rule: fields not Set
// stay. A rule's person does not change.
type NotificationRulePatch struct {
	Events        Optional[[]string]    `json:"events,omitzero"`
	AlertTypes    Optional[[]AlertType] `json:"alert_types,omitzero"`
	VehicleIDs    Optional[[]string]    `json:"vehicle_ids,omitzero"`
	Tags          Optional[[]string]    `json:"tags,omitzero"`
	Channel       Optional[string]      `json:"channel,omitzero"`
	QuietHours    Optional[*QuietHours] `json:"quiet_hours,omitzero"`
	DigestMinutes Optional[*int]        `json:"digest_minutes,omitzero"`
	Enabled       Optional[*bool]       `json:"enabled,omitzero"`
}

// NotificationRuleDeleted is the answer to a deletion.
type NotificationRuleDeleted struct {
	NotificationRuleID string `json:"notification_rule_id"`
	Deleted            bool   `json:"deleted"`
}

func notFoundNotificationRule(id string) error { return NotFound("notification rule", id) }

// ownerOnly returns the user a principal acting from the dashboard is
// confined to: a person who is not an admin sees and sets their own
// rules and schedules only. "" for an API key or an admin.
func ownerOnly(p Principal) string {
	if ValidID(PrefixUser, p.Key.ID) && !p.Key.Permissions.Allows(PermAll) {
		return p.Key.ID
	}
	return ""
}

// NotifyPrincipal returns the principal a person acts as on their own
// notification rules and report schedules from the dashboard: their role's,
// with notifications:write, which a viewer holds for their own only.
func (u UserSession) NotifyPrincipal() Principal {
	p := u.Principal()
	if !p.Key.Permissions.Allows(PermNotificationsWrite) {
		p.Key.Permissions = append(slices.Clone(p.Key.Permissions), PermNotificationsWrite)
	}
	return p
}

// addressee reads the person a rule or schedule addresses, by id or by
// e-mail address, and checks that mail can be sent to them.
func addressee(tx UserTx, p Principal, userID, email string, val *Validator) (User, error) {
	var u User
	var err error
	switch {
	case userID != "" && email != "":
		val.Add("email", "give user_id or email, not both")
		return User{}, nil
	case userID != "":
		u, err = accountUser(tx, p.Account.ID, userID)
		if ErrorCode(err) == CodeNotFound {
			val.Add("user_id", "is not a person of this account; see GET /v1/users")
			return User{}, nil
		}
	case email != "":
		if cerr := CheckRecipient(email); cerr != nil {
			val.Add("email", "%s", cerr.Error())
			return User{}, nil
		}
		u, err = tx.UserByEmail(strings.ToLower(email))
		if ErrorCode(err) == CodeNotFound || err == nil && u.AccountID != p.Account.ID {
			val.Add("email", "is not the address of a person of this account; see GET /v1/users")
			return User{}, nil
		}
	default:
		if own := ownerOnly(p); own != "" {
			u, err = accountUser(tx, p.Account.ID, own)
			break
		}
		val.Add("user_id", "is required: the person the rule sends to (or give their email)")
		return User{}, nil
	}
	if err != nil {
		return User{}, err
	}
	if own := ownerOnly(p); own != "" && u.ID != own {
		val.Add("user_id", "you may set your own notifications only")
		return User{}, nil
	}
	if cerr := CheckRecipient(u.Email); cerr != nil {
		val.Add("user_id", "the person's e-mail address cannot be sent to: %s", cerr.Error())
	}
	return u, nil
}

// checkAddressed is what creating a rule or a schedule that sends mail
// checks before it counts and writes: the person it addresses (by id or
// e-mail address, addressee), its own fields (validate, given that
// person) and its vehicles, every mistake named at once.
func checkAddressed(tx interface {
	UserTx
	VehicleTx
}, p Principal, userID, email string, vehicleIDs []string, validate func(User, *Validator)) error {
	var val Validator
	u, err := addressee(tx, p, strings.TrimSpace(userID), strings.TrimSpace(email), &val)
	if err != nil {
		return err
	}
	validate(u, &val)
	if err := checkVehicles(tx, p.Account.ID, vehicleIDs, &val); err != nil {
		return err
	}
	return val.Err()
}

// checkVehicles checks that the account has each vehicle.
func checkVehicles(tx VehicleTx, accountID string, ids []string, val *Validator) error {
	for i, id := range ids {
		if !ValidID(PrefixVehicle, id) {
			continue // reported by validate
		}
		if _, err := tx.Vehicle(accountID, id); ErrorCode(err) == CodeNotFound {
			val.Add("vehicle_ids["+itoa(i)+"]", "is not a vehicle of this account")
		} else if err != nil {
			return err
		}
	}
	return nil
}

// CreateNotificationRule stores a rule for a person of the account, named
// by user_id or by email.
func (s *Service) CreateNotificationRule(ctx context.Context, p Principal, in NotificationRuleInput) (NotificationRule, error) {
	if err := p.allow("CreateNotificationRule"); err != nil {
		return NotificationRule{}, err
	}
	r := NotificationRule{
		ID: NewID(PrefixNotificationRule), AccountID: p.Account.ID, Events: in.Events, AlertTypes: in.AlertTypes,
		VehicleIDs: in.VehicleIDs, Tags: in.Tags, Channel: in.Channel, QuietHours: in.QuietHours,
		DigestMinutes: DefaultDigestMinutes, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: s.Now(),
	}
	if in.DigestMinutes != nil {
		r.DigestMinutes = *in.DigestMinutes
	}
	normaliseNotificationRule(&r)
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		err := checkAddressed(tx, p, in.UserID, in.Email, r.VehicleIDs, func(u User, val *Validator) {
			r.UserID = u.ID
			r.validate(val)
		})
		if err != nil {
			return err
		}
		n, err := tx.CountNotificationRules(r.AccountID)
		if err != nil {
			return err
		}
		if n >= MaxNotificationRules {
			return Errorf(CodeConflict, "An account may have at most %d notification rules and this account has %d; delete one first.", MaxNotificationRules, n)
		}
		if err := tx.CreateNotificationRule(r); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return NotificationRule{}, err
	}
	return r, nil
}

func (s *Service) getNotificationRule(tx NotifyTx, p Principal, id string) (NotificationRule, error) {
	return getOwned(p, PrefixNotificationRule, id, notFoundNotificationRule, tx.NotificationRule,
		func(r NotificationRule) string { return r.UserID })
}

// getOwned reads a person's rule or schedule of the principal's account:
// not_found for a malformed id, another account's, or, from the
// dashboard, another person's unless the principal is an admin.
func getOwned[T any](p Principal, prefix, id string, notFound func(string) error, read func(accountID, id string) (T, error), owner func(T) string) (T, error) {
	var zero T
	if !ValidID(prefix, id) {
		return zero, notFound(id)
	}
	v, err := read(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return zero, notFound(id)
	}
	if own := ownerOnly(p); err == nil && own != "" && owner(v) != own {
		return zero, notFound(id)
	}
	return v, err
}

// listOwned lists a person's rules or schedules of the principal's
// account (of userID alone unless it is "", and of the principal's person
// alone from the dashboard unless an admin), oldest first.
func listOwned[T any](ctx context.Context, s *Service, p Principal, useCase, prefix, userID string, q ListQuery,
	read func(tx NotifyTx, accountID, userID string, page Page) ([]T, error), id func(T) string) (List[T], error) {
	if err := p.allow(useCase); err != nil {
		return List[T]{}, err
	}
	if userID != "" && !ValidID(PrefixUser, userID) {
		return List[T]{}, Errorf(CodeInvalidRequest, "user_id must be a user id (usr_...).")
	}
	if own := ownerOnly(p); own != "" {
		userID = own
	}
	page, limit, err := q.page(prefix, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[T]{}, err
	}
	var vs []T
	err = s.view(ctx, func(tx Tx) (err error) { vs, err = read(tx, p.Account.ID, userID, page); return err })
	if err != nil {
		return List[T]{}, err
	}
	return finish(vs, limit, id), nil
}

// NotificationRule returns one of the account's rules.
func (s *Service) NotificationRule(ctx context.Context, p Principal, id string) (NotificationRule, error) {
	if err := p.allow("NotificationRule"); err != nil {
		return NotificationRule{}, err
	}
	var r NotificationRule
	err := s.view(ctx, func(tx Tx) (err error) { r, err = s.getNotificationRule(tx, p, id); return err })
	return r, err
}

// ListNotificationRules lists the account's rules (of userID alone unless
// it is ""), oldest first.
func (s *Service) ListNotificationRules(ctx context.Context, p Principal, userID string, q ListQuery) (List[NotificationRule], error) {
	return listOwned(ctx, s, p, "ListNotificationRules", PrefixNotificationRule, userID, q, NotifyTx.NotificationRules,
		func(r NotificationRule) string { return r.ID })
}

// UpdateNotificationRule applies a merge patch to a rule; the result is
// validated whole, and nothing changes if it is invalid.
func (s *Service) UpdateNotificationRule(ctx context.Context, p Principal, id string, patch NotificationRulePatch) (NotificationRule, error) {
	if err := p.allow("UpdateNotificationRule"); err != nil {
		return NotificationRule{}, err
	}
	var r NotificationRule
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) (err error) {
		r, err = s.getNotificationRule(tx, p, id)
		if err != nil {
			return err
		}
		var val Validator
		set(&r.Events, patch.Events)
		set(&r.AlertTypes, patch.AlertTypes)
		set(&r.VehicleIDs, patch.VehicleIDs)
		set(&r.Tags, patch.Tags)
		set(&r.Channel, patch.Channel)
		set(&r.QuietHours, patch.QuietHours)
		if patch.Channel.Set && r.Channel == "" {
			val.Add("channel", "must be email")
		}
		if patch.DigestMinutes.Set {
			if patch.DigestMinutes.Value == nil {
				r.DigestMinutes = DefaultDigestMinutes
			} else {
				r.DigestMinutes = *patch.DigestMinutes.Value
			}
		}
		if patch.Enabled.Set {
			if patch.Enabled.Value == nil {
				val.Add("enabled", "must be true or false")
			} else {
				r.Enabled = *patch.Enabled.Value
			}
		}
		normaliseNotificationRule(&r)
		if patch.Channel.Set && patch.Channel.Value == "" {
			r.Channel = ""
		}
		r.validate(&val)
		if patch.VehicleIDs.Set {
			if err := checkVehicles(tx, r.AccountID, r.VehicleIDs, &val); err != nil {
				return err
			}
		}
		if err := val.Err(); err != nil {
			return err
		}
		if err := tx.UpdateNotificationRule(r); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return NotificationRule{}, err
	}
	return r, nil
}

// DeleteNotificationRule deletes a rule; mail of it not yet sent is not.
func (s *Service) DeleteNotificationRule(ctx context.Context, p Principal, id string) (NotificationRuleDeleted, error) {
	if err := p.allow("DeleteNotificationRule"); err != nil {
		return NotificationRuleDeleted{}, err
	}
	err := s.updateAlone(ctx, p.Account.ID, func(tx Tx) error {
		r, err := s.getNotificationRule(tx, p, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteNotificationRule(r.AccountID, r.ID); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	if err != nil {
		return NotificationRuleDeleted{}, err
	}
	return NotificationRuleDeleted{NotificationRuleID: id, Deleted: true}, nil
}

// ListPeople lists the account's people, oldest first: whom rules and
// schedules may address.
func (s *Service) ListPeople(ctx context.Context, p Principal, q ListQuery) (List[Person], error) {
	if err := p.allow("ListPeople"); err != nil {
		return List[Person]{}, err
	}
	page, limit, err := q.page(PrefixUser, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Person]{}, err
	}
	var us []User
	err = s.view(ctx, func(tx Tx) (err error) { us, err = tx.Users(p.Account.ID, page); return err })
	if err != nil {
		return List[Person]{}, err
	}
	out := make([]Person, len(us))
	for i, u := range us {
		out[i] = Person{UserID: u.ID, Email: u.Email, Name: u.Name, Role: u.Role}
	}
	return finish(out, limit, func(p Person) string { return p.UserID }), nil
}

// Emitting events into the outbox.

// notifyCache keeps accounts' enabled notification rules by the account's
// alert configuration version, which every change of a rule moves (in the
// change's transaction): an entry serves an event only when its version is
// the one the event's transaction reads, so no server mails by rules
// another has changed since. An account without rules keeps an empty entry,
// so that its events cost no read and no write.
type notifyCache = cache.Versioned[[]NotificationRule]

// maxNotifyEntries bounds the cache; past it, it starts again empty.
const maxNotifyEntries = 100_000

// notifyReadTx is what reading the account's rules needs: the
// configuration version, and the rules when it moved.
type notifyReadTx interface {
	AlertTx
	NotifyTx
}

// notificationRulesOf returns the account's enabled rules, from the cache
// when the account's configuration has not moved. The rules are shared:
// callers read them only.
func (s *Service) notificationRulesOf(tx notifyReadTx, accountID string) ([]NotificationRule, error) {
	version, err := tx.AlertConfigVersion(accountID)
	if err != nil {
		return nil, err
	}
	if rules, ok := s.notify.Get(accountID, version); ok {
		return rules, nil
	}
	rules, err := tx.EnabledNotificationRules(accountID)
	if err != nil {
		return nil, err
	}
	s.notify.Put(accountID, version, rules)
	return rules, nil
}

// queueNotifications gives each of the account's enabled rules that takes
// the event its outbox write: one QueueMail a matching rule, none when no
// rule matches.
func (s *Service) queueNotifications(tx emitTx, e Event, data any) error {
	rules, err := s.notificationRulesOf(tx, e.AccountID)
	if err != nil || len(rules) == 0 {
		return err
	}
	subj := subjectOf(e.Type, data)
	var tags []string
	tagsRead := false
	readTags := func(vehicleID string) ([]string, error) {
		if !tagsRead {
			v, err := tx.Vehicle(e.AccountID, vehicleID)
			if err != nil && ErrorCode(err) != CodeNotFound {
				return nil, err
			}
			tags, tagsRead = v.Tags, true
		}
		return tags, nil
	}
	for i := range rules {
		r := &rules[i]
		ok, err := r.matches(e.Type, subj, readTags)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		q := MailQueued{
			ID: NewID(PrefixMail), AccountID: e.AccountID, RuleID: r.ID, UserID: r.UserID, Phase: PhaseNotice,
			WindowEnd: e.CreatedAt.Add(time.Duration(r.DigestMinutes) * time.Minute), CreatedAt: e.CreatedAt,
			Count: 1,
			Items: []MailItem{{EventID: e.ID, Type: e.Type, At: e.CreatedAt, VehicleID: subj.vehicleID, AlertType: subj.alertType,
				Severity: subj.severity, Text: subj.text, Path: subj.path}},
		}
		if end, held := r.QuietHours.HeldUntil(e.CreatedAt); held {
			q.Phase, q.WindowEnd = PhaseDigest, end
		}
		if err := tx.QueueMail(q); err != nil {
			return err
		}
	}
	return nil
}

// svcTx is the Tx a use case's function gets from Service.update: the
// store's, which remembers the account configuration versions it read (an
// event's rules read the version its location batch's judgement read
// already: no second read), gathers the transaction's outbox writes by
// rule (written once each as the function returns: flushMail), and
// whether mail was queued (so that the mail sender is woken once the
// transaction commits).
type svcTx struct {
	Tx
	versions map[string]int64
	queued   bool
	mail     []*MailQueued // by rule, in the order of their first event
}

func (t *svcTx) AlertConfigVersion(accountID string) (int64, error) {
	if v, ok := t.versions[accountID]; ok {
		return v, nil
	}
	v, err := t.Tx.AlertConfigVersion(accountID)
	if err == nil {
		if t.versions == nil {
			t.versions = make(map[string]int64, 1)
		}
		t.versions[accountID] = v
	}
	return v, err
}

func (t *svcTx) BumpAlertConfig(accountID string) error {
	delete(t.versions, accountID)
	return t.Tx.BumpAlertConfig(accountID)
}

// QueueMail gathers q with the transaction's earlier events of its rule.
func (t *svcTx) QueueMail(q MailQueued) error {
	t.queued = true
	for _, m := range t.mail {
		if m.RuleID == q.RuleID {
			m.Count += q.Count
			if room := MailItemsKept - len(m.Items); room > 0 {
				m.Items = append(m.Items, q.Items[:min(room, len(q.Items))]...)
			}
			return nil
		}
	}
	q.Items = slices.Clone(q.Items)
	t.mail = append(t.mail, &q)
	return nil
}

// flushMail writes the gathered outbox writes: one QueueMail a rule.
func (t *svcTx) flushMail() error {
	for _, q := range t.mail {
		if err := t.Tx.QueueMail(*q); err != nil {
			return err
		}
	}
	t.mail = nil
	return nil
}

func (t *svcTx) QueueReport(m Mail) (bool, error) {
	t.queued = true
	return t.Tx.QueueReport(m)
}

// wakeMail tells the mail sender, if it listens, that mail was queued.
func (s *Service) wakeMail() {
	select {
	case s.mailWake <- struct{}{}:
	default:
	}
}

// MailQueued returns a channel that receives when a transaction that
// queued mail has committed on this server: the mail sender waits on it
// (and polls, for mail queued by other servers).
func (j Jobs) MailQueued() <-chan struct{} { return j.s.mailWake }

// Unsubscribing.

// Unsubscribed is what a one-click unsubscribe link did.
type Unsubscribed struct {
	// What names what was turned off: "notification rule" or "report".
	What string
	ID   string
	// Describe says it in words, for the page.
	Describe string
}

// UnsubscribeToken returns a new unsubscribe token and its hash.
func newUnsubscribeToken() (string, [32]byte) {
	var b [32]byte
	rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	return tok, sha256.Sum256([]byte(tok))
}

func errBadUnsubscribe() *Error {
	return &Error{Code: CodeNotFound, Message: "This unsubscribe link is not valid: it may be older than 90 days. Sign in to change your notifications."}
}

// unsubscribeMail reads the mail a token was sent in.
func unsubscribeMail(tx NotifyTx, token string) (Mail, error) {
	if len(token) != 43 {
		return Mail{}, errBadUnsubscribe()
	}
	m, err := tx.MailByUnsubscribe(sha256.Sum256([]byte(token)))
	if ErrorCode(err) == CodeNotFound {
		return Mail{}, errBadUnsubscribe()
	}
	return m, err
}

// UnsubscribeInfo says what the token's link would turn off, without
// changing anything (the page a GET shows, with its button).
func (s *Service) UnsubscribeInfo(ctx context.Context, token string) (Unsubscribed, error) {
	var u Unsubscribed
	err := s.view(ctx, func(tx Tx) error {
		m, err := unsubscribeMail(tx, token)
		if err != nil {
			return err
		}
		u, err = describeUnsubscribe(tx, m)
		return err
	})
	return u, err
}

func describeUnsubscribe(tx NotifyTx, m Mail) (Unsubscribed, error) {
	if m.Kind == MailReport {
		r, err := tx.ReportSchedule(m.AccountID, m.RuleID)
		if ErrorCode(err) == CodeNotFound {
			return Unsubscribed{}, errBadUnsubscribe()
		}
		return Unsubscribed{What: "report", ID: r.ID, Describe: DescribeReportSchedule(r)}, err
	}
	r, err := tx.NotificationRule(m.AccountID, m.RuleID)
	if ErrorCode(err) == CodeNotFound {
		return Unsubscribed{}, errBadUnsubscribe()
	}
	return Unsubscribed{What: "notification rule", ID: r.ID, Describe: DescribeNotificationRule(r)}, err
}

// Unsubscribe turns off the rule or report schedule a one-click link was
// sent for (RFC 8058): it needs no session, the token is the proof. Doing
// it again changes nothing.
func (s *Service) Unsubscribe(ctx context.Context, token string) (Unsubscribed, error) {
	var u Unsubscribed
	err := s.update(ctx, func(tx Tx) error {
		m, err := unsubscribeMail(tx, token)
		if err != nil {
			return err
		}
		if u, err = describeUnsubscribe(tx, m); err != nil {
			return err
		}
		if m.Kind == MailReport {
			r, err := tx.ReportSchedule(m.AccountID, m.RuleID)
			if err != nil || !r.Enabled {
				return err
			}
			r.Enabled = false
			return tx.UpdateReportSchedule(r)
		}
		r, err := tx.NotificationRule(m.AccountID, m.RuleID)
		if err != nil || !r.Enabled {
			return err
		}
		r.Enabled = false
		if err := tx.UpdateNotificationRule(r); err != nil {
			return err
		}
		return tx.BumpAlertConfig(r.AccountID)
	})
	return u, err
}

// DescribeNotificationRule says what a rule sends, in words.
func DescribeNotificationRule(r NotificationRule) string {
	var b strings.Builder
	b.WriteString(strings.Join(r.Events, ", "))
	if len(r.AlertTypes) > 0 {
		b.WriteString(" (")
		for i, t := range r.AlertTypes {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(string(t))
		}
		b.WriteString(")")
	}
	switch {
	case len(r.VehicleIDs) > 0 && len(r.Tags) > 0:
		b.WriteString(" of " + itoa(len(r.VehicleIDs)) + " vehicles tagged " + strings.Join(r.Tags, ", "))
	case len(r.VehicleIDs) > 0:
		b.WriteString(" of " + itoa(len(r.VehicleIDs)) + " vehicles")
	case len(r.Tags) > 0:
		b.WriteString(" of vehicles tagged " + strings.Join(r.Tags, ", "))
	default:
		b.WriteString(" of every vehicle")
	}
	return b.String()
}

// DescribeReportSchedule says what a schedule sends, in words.
func DescribeReportSchedule(r ReportSchedule) string {
	what := r.Report + " report"
	if r.Report == ReportSummary {
		what = "summary report by " + r.GroupBy
	}
	when := "daily"
	if r.Frequency == FrequencyWeekly {
		when = "every " + r.Weekday
	}
	return what + ", " + when + " at " + twoDigits(r.Hour) + ":00 " + r.TZ
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + itoa(n)
	}
	return itoa(n)
}
