package fleet

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
)

// Notifications by e-mail (API.md §17). A person of the account
// subscribes, with a notification rule, to the events they want to hear
// about. Where the service emits an event, the matching enabled rules of
// the account get outbox work in the same transaction (QueueMail): the
// first matching event of a quiet rule is e-mailed at once (a notice); what
// follows within the rule's digest window is gathered into one digest row
// per rule and window, sent at the window's end; quiet hours hold
// everything into one digest sent when they end. A mail sender (fleetmail)
// claims due mail through Jobs, sends it and records the outcome.

// ID prefixes of notifications.
const (
	PrefixNotificationRule = "ntf"
	PrefixMail             = "mail"
	PrefixReportSchedule   = "rpt"
)

// ChannelEmail is the one channel a rule sends on.
const ChannelEmail = "email"

// Notification rule limits.
const (
	DefaultDigestMinutes = 5
	MaxDigestMinutes     = 24 * 60
	// MaxNotificationRules is how many rules an account may have.
	MaxNotificationRules = 500
	// MaxRuleFilter is how many event types, alert types, vehicles or
	// tags one rule may name.
	MaxRuleFilter = 100
	// MailItemsKept is how many events a digest lists; the rest are
	// counted ("and N more").
	MailItemsKept = 50
	// MailRetention is how long sent and failed mail is kept, and with it
	// the unsubscribe links it carried.
	MailRetention = 90 * 24 * time.Hour
	// MailRetryFor is how long a mail the server refuses for now (4xx) is
	// retried before it is marked failed.
	MailRetryFor = 24 * time.Hour
)

// QuietHours are the hours of the day, in a time zone, when a rule sends
// nothing at once: what happens then is held and sent as one digest when
// they end. From and To are "HH:MM"; From after To spans midnight.
type QuietHours struct {
	TZ   string `json:"tz"`
	From string `json:"from"`
	To   string `json:"to"`
}

// NotificationRule is what a person of the account wants to hear about,
// and how.
type NotificationRule struct {
	ID            string      `json:"notification_rule_id"`
	AccountID     string      `json:"-"`
	UserID        string      `json:"user_id"`
	Events        []string    `json:"events"`
	AlertTypes    []AlertType `json:"alert_types"`
	VehicleIDs    []string    `json:"vehicle_ids"`
	Tags          []string    `json:"tags"`
	Channel       string      `json:"channel"`
	QuietHours    *QuietHours `json:"quiet_hours"`
	DigestMinutes int         `json:"digest_minutes"`
	Enabled       bool        `json:"enabled"`
	CreatedAt     time.Time   `json:"created_at"`
}

// Clone returns a copy that shares no memory with r.
func (r NotificationRule) Clone() NotificationRule {
	r.Events = slices.Clone(r.Events)
	r.AlertTypes = slices.Clone(r.AlertTypes)
	r.VehicleIDs = slices.Clone(r.VehicleIDs)
	r.Tags = slices.Clone(r.Tags)
	if r.QuietHours != nil {
		q := *r.QuietHours
		r.QuietHours = &q
	}
	return r
}

// normaliseNotificationRule trims, deduplicates and fills defaults.
func normaliseNotificationRule(r *NotificationRule) {
	dedupe := func(in []string) []string {
		out := []string{}
		for _, s := range in {
			s = strings.TrimSpace(s)
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	r.Events = dedupe(r.Events)
	r.VehicleIDs = dedupe(r.VehicleIDs)
	r.Tags = dedupe(r.Tags)
	types := []AlertType{}
	for _, t := range r.AlertTypes {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	r.AlertTypes = types
	if r.Channel == "" {
		r.Channel = ChannelEmail
	}
	if r.QuietHours != nil {
		q := *r.QuietHours
		q.TZ, q.From, q.To = strings.TrimSpace(q.TZ), strings.TrimSpace(q.From), strings.TrimSpace(q.To)
		r.QuietHours = &q
	}
}

// validate checks the rule's own fields (not that its user and vehicles
// exist: the service reads them).
func (r *NotificationRule) validate(val *Validator) {
	val.Check(len(r.Events) > 0, "events", "must name at least one event type, e.g. alert.created")
	val.Check(len(r.Events) <= MaxRuleFilter, "events", "may name at most %d event types", MaxRuleFilter)
	for i, e := range r.Events {
		val.Check(ValidEventType(e) && e != EventWebhookTest, fmt.Sprintf("events[%d]", i), "%q is not an event type; see GET /v1/events for the types", e)
	}
	val.Check(len(r.AlertTypes) <= MaxRuleFilter, "alert_types", "may name at most %d alert types", MaxRuleFilter)
	for i, t := range r.AlertTypes {
		val.Check(t.Valid(), fmt.Sprintf("alert_types[%d]", i), "%q is not an alert type", t)
	}
	val.Check(len(r.VehicleIDs) <= MaxRuleFilter, "vehicle_ids", "may name at most %d vehicles", MaxRuleFilter)
	for i, id := range r.VehicleIDs {
		val.Check(ValidID(PrefixVehicle, id), fmt.Sprintf("vehicle_ids[%d]", i), "must be a vehicle id (veh_...)")
	}
	val.Check(len(r.Tags) <= MaxRuleFilter, "tags", "may name at most %d tags", MaxRuleFilter)
	for i, t := range r.Tags {
		val.Check(t != "" && len(t) <= 50 && !hasControl(t), fmt.Sprintf("tags[%d]", i), "must be 1 to 50 characters, none of them control characters")
	}
	val.Check(r.Channel == ChannelEmail, "channel", "must be email")
	val.Check(r.DigestMinutes >= 1 && r.DigestMinutes <= MaxDigestMinutes, "digest_minutes", "must be from 1 to %d", MaxDigestMinutes)
	if q := r.QuietHours; q != nil {
		if _, err := LoadTZ(q.TZ); err != nil {
			val.Add("quiet_hours.tz", "must be an IANA time zone such as Europe/Berlin")
		}
		_, okFrom := clockMinutes(q.From)
		_, okTo := clockMinutes(q.To)
		val.Check(okFrom, "quiet_hours.from", "must be a time of day HH:MM, e.g. 22:00")
		val.Check(okTo, "quiet_hours.to", "must be a time of day HH:MM, e.g. 07:00")
		val.Check(!okFrom || !okTo || q.From != q.To, "quiet_hours.to", "must differ from quiet_hours.from")
	}
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// LoadTZ loads an IANA time zone by name; "" and "Local" are refused.
func LoadTZ(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("no time zone %q", name)
	}
	return time.LoadLocation(name)
}

// clockMinutes reads "HH:MM" as minutes after midnight.
func clockMinutes(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// HeldUntil reports whether now falls within the quiet hours, and if so
// when they end.
func (q *QuietHours) HeldUntil(now time.Time) (time.Time, bool) {
	if q == nil {
		return time.Time{}, false
	}
	loc, err := LoadTZ(q.TZ)
	from, ok1 := clockMinutes(q.From)
	to, ok2 := clockMinutes(q.To)
	if err != nil || !ok1 || !ok2 || from == to {
		return time.Time{}, false
	}
	local := now.In(loc)
	m := local.Hour()*60 + local.Minute()
	in := from < to && m >= from && m < to || from > to && (m >= from || m < to)
	if !in {
		return time.Time{}, false
	}
	y, mo, d := local.Date()
	end := time.Date(y, mo, d, to/60, to%60, 0, 0, loc)
	if !end.After(now) {
		end = time.Date(y, mo, d+1, to/60, to%60, 0, 0, loc)
	}
	return end.UTC(), true
}

// CheckRecipient checks an e-mail address that mail is sent to: one plain
// address, no display name, no control characters (a CR or LF would start
// a header of its own).
func CheckRecipient(addr string) error {
	if addr == "" || len(addr) > MaxEmail || hasControl(addr) || strings.ContainsAny(addr, "<>\",;()\\ ") {
		return fmt.Errorf("must be one plain e-mail address such as ana@example.com")
	}
	a, err := mail.ParseAddress(addr)
	if err != nil || a.Address != addr || a.Name != "" {
		return fmt.Errorf("must be one plain e-mail address such as ana@example.com")
	}
	return nil
}

// eventSubject is what a rule filters an event by, and what a mail shows
// of it: read from the event's data as emit has it.
type eventSubject struct {
	vehicleID string
	tags      []string // known when the data is a vehicle
	hasTags   bool
	alertType AlertType
	severity  Severity
	text      string
	path      string // the dashboard page of what it is about
}

func subjectOf(typ string, data any) eventSubject {
	var s eventSubject
	switch d := data.(type) {
	case Alert:
		s.vehicleID, s.alertType, s.severity, s.text = d.VehicleID, d.Type, d.Severity, d.Message
		s.path = "/alerts"
		if d.VehicleID != "" {
			s.path = "/vehicles/" + d.VehicleID
		}
	case *Alert:
		return subjectOf(typ, *d)
	case Vehicle:
		s.vehicleID, s.tags, s.hasTags = d.ID, d.Tags, true
		s.text, s.path = d.Name, "/vehicles/"+d.ID
	case VehicleDeleted:
		s.vehicleID, s.path = d.VehicleID, "/vehicles"
	case StatusChange:
		s.vehicleID, s.path = d.VehicleID, "/vehicles/"+d.VehicleID
		s.text = fmt.Sprintf("Status changed from %s to %s.", d.From, d.To)
	case WorkOrder:
		s.vehicleID, s.text, s.path = d.VehicleID, d.Title, "/vehicles/"+d.VehicleID
	case WorkOrderStatusChange:
		s.vehicleID, s.path = d.VehicleID, "/vehicles/"+d.VehicleID
		s.text = fmt.Sprintf("Work order status changed from %s to %s.", d.From, d.To)
	case Schedule:
		s.vehicleID, s.text, s.path = d.VehicleID, d.Name, "/vehicles/"+d.VehicleID
	case Trip:
		s.vehicleID, s.path = d.VehicleID, "/vehicles/"+d.VehicleID
	case *Trip:
		return subjectOf(typ, *d)
	}
	if s.path == "" {
		s.path = "/"
	}
	return s
}

// matches reports whether an event of type typ about s is one the rule
// takes; tags reads the vehicle's tags when the rule filters by them and
// the data did not carry them.
func (r *NotificationRule) matches(typ string, s eventSubject, tags func(vehicleID string) ([]string, error)) (bool, error) {
	if !r.Enabled || !slices.Contains(r.Events, typ) {
		return false, nil
	}
	if len(r.AlertTypes) > 0 && (s.alertType == "" || !slices.Contains(r.AlertTypes, s.alertType)) {
		return false, nil
	}
	if len(r.VehicleIDs) > 0 && (s.vehicleID == "" || !slices.Contains(r.VehicleIDs, s.vehicleID)) {
		return false, nil
	}
	if len(r.Tags) > 0 {
		if s.vehicleID == "" {
			return false, nil
		}
		vt := s.tags
		if !s.hasTags {
			var err error
			if vt, err = tags(s.vehicleID); err != nil {
				return false, err
			}
		}
		if !slices.ContainsFunc(vt, func(t string) bool { return slices.Contains(r.Tags, t) }) {
			return false, nil
		}
	}
	return true, nil
}

// MailKind is what a mail is.
type MailKind string

const (
	// MailNotification is a rule's mail: a notice of the first event of a
	// window, then a digest of the rest.
	MailNotification MailKind = "notification"
	// MailReport is a scheduled report's run.
	MailReport MailKind = "report"
)

// MailPhase is what a notification mail sends next.
type MailPhase string

const (
	// PhaseNotice: the first event, on its own, now.
	PhaseNotice MailPhase = "notice"
	// PhaseDigest: what the window gathered, at its end.
	PhaseDigest MailPhase = "digest"
	// PhaseReport: a scheduled report.
	PhaseReport MailPhase = "report"
)

// MailStatus is where a mail stands.
type MailStatus string

const (
	MailPending MailStatus = "pending"
	MailSent    MailStatus = "sent"
	MailFailed  MailStatus = "failed"
)

// MailItem is one event a mail tells of.
type MailItem struct {
	EventID   string    `json:"event_id"`
	Type      string    `json:"type"`
	At        time.Time `json:"at"`
	VehicleID string    `json:"vehicle_id,omitempty"`
	AlertType AlertType `json:"alert_type,omitempty"`
	Severity  Severity  `json:"severity,omitempty"`
	Text      string    `json:"text,omitempty"`
	Path      string    `json:"path"`
}

// Mail is one row of the outbox: a rule's window (a notice of its first
// event, then a digest of the rest) or a scheduled report's run.
type Mail struct {
	ID        string
	AccountID string
	Kind      MailKind
	// RuleID is the notification rule (MailNotification) or the report
	// schedule (MailReport) the mail is of.
	RuleID string
	UserID string
	// Open is set while a rule's window gathers events: an account's rule
	// has at most one open mail.
	Open   bool
	Phase  MailPhase
	Status MailStatus
	// Noticed is set once the window's first event was e-mailed alone.
	Noticed   bool
	WindowEnd time.Time
	// Count is how many events the window gathered; Items the first
	// MailItemsKept of them.
	Count int
	Items []MailItem
	// Period names a report's run (its due time, RFC 3339 in UTC): one mail
	// per schedule and period.
	Period         string
	Attempts       int
	NextAttemptAt  *time.Time
	FirstAttemptAt *time.Time
	Error          string
	CreatedAt      time.Time
	SentAt         *time.Time
}

// Clone returns a copy that shares no memory with m.
func (m Mail) Clone() Mail {
	m.Items = slices.Clone(m.Items)
	m.NextAttemptAt = clonePtrTime(m.NextAttemptAt)
	m.FirstAttemptAt = clonePtrTime(m.FirstAttemptAt)
	m.SentAt = clonePtrTime(m.SentAt)
	return m
}

func clonePtrTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

// MailQueued is what a transaction adds to a rule's outbox
// (NotifyTx.QueueMail): Count events, Items the first of them (at most
// MailItemsKept), added to the rule's open mail if it has one, else the
// start of a new one. The service gathers a transaction's events of a
// rule into one (svcTx), so that a location batch that opens a thousand
// alerts writes one row, once.
type MailQueued struct {
	// ID, Phase, WindowEnd and CreatedAt are the new mail's, should there
	// be no open one: Phase is PhaseNotice (due at CreatedAt) or
	// PhaseDigest (held in quiet hours, due at WindowEnd).
	ID        string
	AccountID string
	RuleID    string
	UserID    string
	Phase     MailPhase
	WindowEnd time.Time
	CreatedAt time.Time
	Count     int
	Items     []MailItem
}

// NewMail is the mail QueueMail stores for q when the rule has none open.
func (q MailQueued) NewMail() Mail {
	due := q.CreatedAt
	if q.Phase == PhaseDigest {
		due = q.WindowEnd
	}
	return Mail{ID: q.ID, AccountID: q.AccountID, Kind: MailNotification, RuleID: q.RuleID, UserID: q.UserID,
		Open: true, Phase: q.Phase, Status: MailPending, WindowEnd: q.WindowEnd, Count: max(q.Count, 1),
		Items: slices.Clone(q.Items[:min(len(q.Items), MailItemsKept)]), NextAttemptAt: &due, CreatedAt: q.CreatedAt}
}

// EncodeMailItems and DecodeMailItems are the items' stored form: one JSON
// object a line, so that a store appends an item by appending a line.
func EncodeMailItem(it MailItem) string {
	b, _ := json.Marshal(it) // no newline: JSON escapes them
	return string(b) + "\n"
}

// DecodeMailItems reads items stored as EncodeMailItem wrote them, the
// first MailItemsKept of them (a store may keep a few more: the items of
// the transaction that filled the list are appended whole).
func DecodeMailItems(s string) ([]MailItem, error) {
	out := []MailItem{}
	for line := range strings.SplitSeq(s, "\n") {
		if line == "" {
			continue
		}
		if len(out) == MailItemsKept {
			break
		}
		var it MailItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// MailRetryAfter is the wait before attempt n+1 of a mail the server
// refused for now (4xx): a minute, then doubling, at most an hour.
func MailRetryAfter(attempts int) time.Duration {
	d := time.Minute
	for i := 1; i < attempts && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}
