package fleetweb

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The Notifications page (/notifications): each person sets their own
// e-mail notification rules and scheduled reports; an admin sees, and may
// set, everyone's. The one-click unsubscribe links of the e-mails
// (/unsubscribe/{token}) work without a session.

type notificationsData struct {
	MailNote   string
	Admin      bool
	People     []fleet.Person
	Rules      []ruleRow
	Schedules  []scheduleRow
	Events     []string
	AlertTypes []fleet.AlertType
	Vehicles   []fleet.Vehicle
	More       bool // the account has more vehicles than Vehicles lists
	Weekdays   []string
	Rule       ruleForm
	Report     reportForm
}

type ruleRow struct {
	fleet.NotificationRule
	Email    string
	Describe string
}

type scheduleRow struct {
	fleet.ReportSchedule
	Email    string
	Describe string
}

// ruleForm is the rule form as typed, with its mistakes by field.
type ruleForm struct {
	UserID        string
	Events        map[string]bool
	AlertTypes    map[string]bool
	VehicleIDs    map[string]bool
	Tags          string
	DigestMinutes string
	QuietFrom     string
	QuietTo       string
	QuietTZ       string
	Errors        map[string]string
}

// reportForm is the schedule form as typed, with its mistakes by field.
type reportForm struct {
	UserID, Frequency, Weekday, Hour, TZ, Report, GroupBy, Tags string
	Errors                                                      map[string]string
}

func errorsOf(p page) map[string]string {
	m := map[string]string{}
	for _, fe := range p.Fields {
		field := fe.Field
		if i := strings.IndexAny(field, "[."); i > 0 && !strings.HasPrefix(field, "quiet_hours") {
			field = field[:i]
		}
		if _, ok := m[field]; !ok {
			m[field] = fieldSentence(fe)
		}
	}
	return m
}

func splitTags(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func (h *Handler) notificationsPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Notifications", Nav: "notifications", User: &us}
	if v, ok := h.takeNotice(r); ok {
		if s, ok := v.(string); ok {
			p.Notice = s
		}
	}
	h.showNotifications(w, r, us, http.StatusOK, p, ruleForm{Events: map[string]bool{fleet.EventAlertCreated: true}, DigestMinutes: "5"},
		reportForm{Frequency: fleet.FrequencyDaily, Hour: "7", TZ: "UTC", Report: fleet.ReportSummary, GroupBy: fleet.GroupByVehicle})
}

func (h *Handler) showNotifications(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, rf ruleForm, sf reportForm) {
	ctx := r.Context()
	pr := us.NotifyPrincipal()
	d := notificationsData{MailNote: h.opts.MailNote, Admin: us.IsAdmin(), Weekdays: []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}}
	d.Events = slices.DeleteFunc(fleet.EventTypes(), func(t string) bool { return t == fleet.EventWebhookTest })
	d.AlertTypes = fleet.AlertTypes()
	people, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Person], error) {
		return h.svc.ListPeople(ctx, us.Principal(), q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	emails := map[string]string{}
	for _, pe := range people {
		emails[pe.UserID] = pe.Email
	}
	if d.Admin {
		d.People = people
	}
	rules, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.NotificationRule], error) {
		return h.svc.ListNotificationRules(ctx, pr, "", q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	for _, ru := range rules {
		d.Rules = append(d.Rules, ruleRow{NotificationRule: ru, Email: emails[ru.UserID], Describe: fleet.DescribeNotificationRule(ru)})
	}
	scheds, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.ReportSchedule], error) {
		return h.svc.ListReportSchedules(ctx, pr, "", q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	for _, s := range scheds {
		d.Schedules = append(d.Schedules, scheduleRow{ReportSchedule: s, Email: emails[s.UserID], Describe: fleet.DescribeReportSchedule(s)})
	}
	d.Vehicles, d.More, err = walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, us.Principal(), fleet.VehicleFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	listed := d.Vehicles // a rule's vehicles beyond the list stay chosen
	d.Vehicles = append(h.chosenBeyond(ctx, us.Principal(), func(id string) bool {
		return slices.ContainsFunc(listed, func(v fleet.Vehicle) bool { return v.ID == id })
	}, slices.Collect(maps.Keys(rf.VehicleIDs))), listed...)
	if rf.UserID == "" {
		rf.UserID = us.User.ID
	}
	if sf.UserID == "" {
		sf.UserID = us.User.ID
	}
	d.Rule, d.Report = rf, sf
	p.Data = d
	h.render(w, status, "notifications", p)
}

// addRule creates a rule from the form: the person's own, or, for an
// admin, the person chosen. A mistake shows the page again with what was
// typed and the mistake beside its field.
func (h *Handler) addRule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := ruleForm{UserID: r.PostFormValue("user_id"), Events: map[string]bool{}, AlertTypes: map[string]bool{}, VehicleIDs: map[string]bool{},
		Tags: r.PostFormValue("tags"), DigestMinutes: strings.TrimSpace(r.PostFormValue("digest_minutes")),
		QuietFrom: r.PostFormValue("quiet_from"), QuietTo: r.PostFormValue("quiet_to"), QuietTZ: strings.TrimSpace(r.PostFormValue("quiet_tz"))}
	in := fleet.NotificationRuleInput{UserID: f.UserID, Tags: splitTags(f.Tags), Events: []string{}}
	if !us.IsAdmin() {
		in.UserID = us.User.ID
	}
	for _, e := range r.PostForm["events"] {
		f.Events[e] = true
		in.Events = append(in.Events, e)
	}
	for _, t := range r.PostForm["alert_types"] {
		f.AlertTypes[t] = true
		in.AlertTypes = append(in.AlertTypes, fleet.AlertType(t))
	}
	for _, v := range r.PostForm["vehicle_ids"] {
		f.VehicleIDs[v] = true
		in.VehicleIDs = append(in.VehicleIDs, v)
	}
	var val fleet.Validator
	if f.DigestMinutes != "" {
		n, err := strconv.Atoi(f.DigestMinutes)
		if err != nil {
			val.Add("digest_minutes", "must be a whole number of minutes, 1 to %d", fleet.MaxDigestMinutes)
		}
		in.DigestMinutes = &n
	}
	if f.QuietFrom != "" || f.QuietTo != "" {
		in.QuietHours = &fleet.QuietHours{TZ: f.QuietTZ, From: f.QuietFrom, To: f.QuietTo}
	}
	err := val.Err()
	if err == nil {
		_, err = h.svc.CreateNotificationRule(r.Context(), us.NotifyPrincipal(), in)
	}
	if err != nil {
		p := page{Title: "Notifications", Nav: "notifications", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showNotifications(w, r, us, statusOf(err), p, f, reportForm{Frequency: fleet.FrequencyDaily, Hour: "7", TZ: "UTC", Report: fleet.ReportSummary, GroupBy: fleet.GroupByVehicle})
		return
	}
	h.notificationsDone(w, r, "The rule is saved."+h.mailSuffix())
}

func (h *Handler) mailSuffix() string {
	if h.opts.MailNote != "" {
		return " " + h.opts.MailNote
	}
	return ""
}

// setRule turns a rule on or off, or deletes it.
func (h *Handler) setRule(action string) userFunc {
	return func(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
		id := r.PathValue("notification_rule_id")
		var err error
		msg := "The rule is deleted."
		switch action {
		case "delete":
			_, err = h.svc.DeleteNotificationRule(r.Context(), us.NotifyPrincipal(), id)
		default:
			on := action == "enable"
			_, err = h.svc.UpdateNotificationRule(r.Context(), us.NotifyPrincipal(), id, fleet.NotificationRulePatch{Enabled: fleet.Some(&on)})
			msg = "The rule is turned off: it sends nothing until it is turned on again."
			if on {
				msg = "The rule is turned on."
			}
		}
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		h.notificationsDone(w, r, msg)
	}
}

// addReport schedules a report from the form.
func (h *Handler) addReport(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	v := r.PostFormValue
	f := reportForm{UserID: v("user_id"), Frequency: v("frequency"), Weekday: v("weekday"), Hour: strings.TrimSpace(v("hour")),
		TZ: strings.TrimSpace(v("tz")), Report: v("report"), GroupBy: v("group_by"), Tags: v("tags")}
	in := fleet.ReportScheduleInput{UserID: f.UserID, Frequency: f.Frequency, TZ: f.TZ, Report: f.Report, Tags: splitTags(f.Tags)}
	if !us.IsAdmin() {
		in.UserID = us.User.ID
	}
	if f.Frequency == fleet.FrequencyWeekly {
		in.Weekday = f.Weekday
	}
	if f.Report == fleet.ReportSummary {
		in.GroupBy = f.GroupBy
	}
	var val fleet.Validator
	n, perr := strconv.Atoi(f.Hour)
	if perr != nil {
		val.Add("hour", "must be an hour of the day, 0 to 23")
	}
	in.Hour = n
	err := val.Err()
	if err == nil {
		_, err = h.svc.CreateReportSchedule(r.Context(), us.NotifyPrincipal(), in)
	}
	if err != nil {
		p := page{Title: "Notifications", Nav: "notifications", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showNotifications(w, r, us, statusOf(err), p, ruleForm{Events: map[string]bool{fleet.EventAlertCreated: true}, DigestMinutes: "5"}, f)
		return
	}
	h.notificationsDone(w, r, "The report is scheduled."+h.mailSuffix())
}

// deleteReport deletes a schedule.
func (h *Handler) deleteReport(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if _, err := h.svc.DeleteReportSchedule(r.Context(), us.NotifyPrincipal(), r.PathValue("report_schedule_id")); err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.notificationsDone(w, r, "The scheduled report is deleted.")
}

func (h *Handler) notificationsDone(w http.ResponseWriter, r *http.Request, notice string) {
	http.Redirect(w, r, "/notifications?notice="+h.noticeOnce(r, notice), http.StatusSeeOther)
}

type unsubscribeData struct {
	Token string
	What  fleet.Unsubscribed
	Done  bool
}

// unsubscribePage shows what an e-mail's one-click link turns off, with a
// button: a GET changes nothing (mail scanners follow links).
func (h *Handler) unsubscribePage(w http.ResponseWriter, r *http.Request) {
	tok := r.PathValue("token")
	u, err := h.svc.UnsubscribeInfo(r.Context(), tok)
	if err != nil {
		h.renderError(w, r, statusOf(err), fleet.ErrorMessage(err))
		return
	}
	h.render(w, http.StatusOK, "unsubscribe", page{Title: "Unsubscribe", Data: unsubscribeData{Token: tok, What: u}})
}

// unsubscribe turns the rule or report off (RFC 8058: a POST without a
// session; the token is the proof).
func (h *Handler) unsubscribe(w http.ResponseWriter, r *http.Request) {
	tok := r.PathValue("token")
	u, err := h.svc.Unsubscribe(r.Context(), tok)
	if err != nil {
		h.renderError(w, r, statusOf(err), fleet.ErrorMessage(err))
		return
	}
	h.render(w, http.StatusOK, "unsubscribe", page{Title: "Unsubscribed", Data: unsubscribeData{What: u, Done: true}})
}
