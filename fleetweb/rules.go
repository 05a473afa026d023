package fleetweb

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The alert rules' pages: the account's rules in words ("Speeding above
// 90 km/h, every vehicle"), and, for whoever may change them, a form for a
// rule of any type fleet offers (fleet.RuleTypes) with the fields of its
// type, the same form to change one, enable and disable, and a deletion
// after a question that names it.

// ruleKind is how the pages speak of a rule type and which of the form's
// fields it takes. A type fleet offers that is not here is named from its
// identifier and takes no field of its own.
type ruleKind struct {
	Name   string   // "Speeding"
	Fields []string // of ruleFields
}

var ruleKinds = map[fleet.AlertType]ruleKind{
	fleet.AlertSpeeding:       {"Speeding", []string{"threshold_kmh"}},
	fleet.AlertVehicleOffline: {"Not reporting", []string{"after_minutes"}},
	fleet.AlertGeofenceEnter:  {"Enters a geofence", []string{"geofence_id"}},
	fleet.AlertGeofenceExit:   {"Leaves a geofence", []string{"geofence_id"}},
}

// ruleField is one of the fields a rule type may take: its label, the
// hint beside it, and how the form reads it (a number, a whole number or
// a geofence).
type ruleField struct {
	Name, Label, Hint, Kind string
}

var ruleFields = map[string]ruleField{
	"threshold_kmh": {"threshold_kmh", "Speed limit (km/h)", "An alert opens when a vehicle reports a speed above it.", "number"},
	"after_minutes": {"after_minutes", "Silent for (minutes)", "An alert opens when a vehicle has not reported for this long.", "integer"},
	"geofence_id":   {"geofence_id", "Geofence", "The area the vehicles enter or leave.", "geofence"},
}

func kindOf(t fleet.AlertType) ruleKind {
	if k, ok := ruleKinds[t]; ok {
		return k
	}
	s := strings.ReplaceAll(string(t), "_", " ")
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return ruleKind{Name: s}
}

// alertRuleForm is what the rule form holds: the fields as typed, and the
// mistakes, as sentences by field.
type alertRuleForm struct {
	Type, Severity, ThresholdKmh, AfterMinutes, GeofenceID string
	VehicleIDs                                             []string
	Enabled                                                bool
	Errors                                                 map[string]string
}

func alertRuleFormOf(r fleet.AlertRule) alertRuleForm {
	f := alertRuleForm{Type: string(r.Type), Severity: string(r.Severity), GeofenceID: r.GeofenceID, VehicleIDs: r.VehicleIDs, Enabled: r.Enabled}
	if r.ThresholdKmh != nil {
		f.ThresholdKmh = strconv.FormatFloat(*r.ThresholdKmh, 'f', -1, 64)
	}
	if r.AfterMinutes != nil {
		f.AfterMinutes = strconv.Itoa(*r.AfterMinutes)
	}
	return f
}

func readAlertRuleForm(r *http.Request) alertRuleForm {
	v := r.PostFormValue
	var ids []string
	for _, id := range r.PostForm["vehicle_ids"] {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return alertRuleForm{Type: v("type"), Severity: v("severity"), ThresholdKmh: strings.TrimSpace(v("threshold_kmh")),
		AfterMinutes: strings.TrimSpace(v("after_minutes")), GeofenceID: v("geofence_id"), VehicleIDs: ids, Enabled: v("enabled") != ""}
}

// takes reports whether the form's type takes the field.
func (f alertRuleForm) takes(field string) bool {
	return slices.Contains(kindOf(fleet.AlertType(f.Type)).Fields, field)
}

// rule turns the form into a rule: the fields of its type only (a field
// of another type the form kept is not sent). What cannot be read as a
// number is said by field; every rule on the values is the use case's.
func (f alertRuleForm) rule() (fleet.AlertRule, []fleet.FieldError) {
	r := fleet.AlertRule{Type: fleet.AlertType(f.Type), Severity: fleet.Severity(f.Severity), VehicleIDs: f.VehicleIDs}
	var bad []fleet.FieldError
	if f.takes("threshold_kmh") && f.ThresholdKmh != "" {
		if x, err := strconv.ParseFloat(f.ThresholdKmh, 64); err != nil {
			bad = append(bad, fleet.FieldError{Field: "threshold_kmh", Message: "must be a number of km/h, such as 90"})
		} else {
			r.ThresholdKmh = &x
		}
	}
	if f.takes("after_minutes") && f.AfterMinutes != "" {
		if n, err := strconv.Atoi(f.AfterMinutes); err != nil {
			bad = append(bad, fleet.FieldError{Field: "after_minutes", Message: "must be a whole number of minutes, such as 30"})
		} else {
			r.AfterMinutes = &n
		}
	}
	if f.takes("geofence_id") {
		r.GeofenceID = f.GeofenceID
	}
	return r, bad
}

// patch is the form as a merge patch: severity, the fields of the rule's
// type, and its vehicles.
func (f alertRuleForm) patch(r fleet.AlertRule) fleet.AlertRulePatch {
	p := fleet.AlertRulePatch{Severity: fleet.Some(r.Severity), VehicleIDs: fleet.Some(r.VehicleIDs)}
	if r.VehicleIDs == nil {
		p.VehicleIDs = fleet.Some([]string{})
	}
	if f.takes("threshold_kmh") {
		p.ThresholdKmh = fleet.Some(r.ThresholdKmh)
	}
	if f.takes("after_minutes") {
		p.AfterMinutes = fleet.Some(r.AfterMinutes)
	}
	if f.takes("geofence_id") {
		p.GeofenceID = fleet.Some(r.GeofenceID)
	}
	return p
}

func (f alertRuleForm) withErrors(p *page) alertRuleForm {
	f.Errors = map[string]string{}
	for i, fe := range p.Fields {
		if strings.HasPrefix(fe.Field, "vehicle_ids[") {
			fe.Field = "vehicle_ids"
			p.Fields[i] = fe
		}
		if _, ok := f.Errors[fe.Field]; !ok {
			f.Errors[fe.Field] = fieldSentence(fe)
		}
	}
	return f
}

// Chosen reports whether the form has vehicle id chosen.
func (f alertRuleForm) Chosen(id string) bool { return slices.Contains(f.VehicleIDs, id) }

// alertRuleRow is a rule in words.
type alertRuleRow struct {
	Rule      fleet.AlertRule
	Kind      string // "Speeding"
	Condition string // "above 90 km/h"
	Vehicles  string // "every vehicle", "Truck 7, Van 2 and 3 more"
}

// ruleRows words rules, reading the names of their geofences and vehicles.
func (h *Handler) ruleRows(ctx context.Context, pr fleet.Principal, rules []fleet.AlertRule) ([]alertRuleRow, error) {
	fences := map[string]string{}
	names := map[string]string{}
	var ids []string
	for _, r := range rules {
		for _, id := range r.VehicleIDs {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	for len(ids) > 0 {
		n := min(len(ids), fleet.MaxPageLimit)
		l, err := h.svc.ListVehicles(ctx, pr, fleet.VehicleFilter{IDs: ids[:n]}, fleet.ListQuery{Limit: fleet.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		for _, v := range l.Items {
			names[v.ID] = v.Name
		}
		ids = ids[n:]
	}
	rows := make([]alertRuleRow, 0, len(rules))
	for _, r := range rules {
		row := alertRuleRow{Rule: r, Kind: kindOf(r.Type).Name, Vehicles: "every vehicle"}
		switch {
		case r.ThresholdKmh != nil:
			row.Condition = "above " + strconv.FormatFloat(*r.ThresholdKmh, 'f', -1, 64) + " km/h"
		case r.AfterMinutes != nil:
			row.Condition = "silent for " + plural(*r.AfterMinutes, "minute", "minutes")
		case r.GeofenceID != "":
			name, ok := fences[r.GeofenceID]
			if !ok {
				g, err := h.svc.Geofence(ctx, pr, r.GeofenceID)
				if err != nil && fleet.ErrorCode(err) != fleet.CodeNotFound {
					return nil, err
				}
				name, fences[r.GeofenceID] = g.Name, g.Name
			}
			row.Condition = name
		}
		if len(r.VehicleIDs) > 0 {
			var vs []string
			for _, id := range r.VehicleIDs {
				if len(vs) == 3 {
					break
				}
				if n := names[id]; n != "" {
					vs = append(vs, n)
				}
			}
			row.Vehicles = strings.Join(vs, ", ")
			if rest := len(r.VehicleIDs) - len(vs); rest > 0 {
				if len(vs) > 0 {
					row.Vehicles += " and " + plural(rest, "more", "more")
				} else {
					row.Vehicles = plural(rest, "vehicle", "vehicles")
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

type choice struct{ Value, Label string }

type rulesData struct {
	Rows       []alertRuleRow
	More       bool
	Limit      int
	Count      int
	Form       alertRuleForm
	Rule       *alertRuleRow // the rule the form changes (nil to add one)
	Types      []choice
	Severities []string
	// Fields are the type fields a form may show, each with the types
	// that take it (the script shows a type's fields only).
	Fields       []typeField
	Geofences    []fleet.Geofence
	Vehicles     []fleet.Vehicle
	MoreVehicles bool
	CanEdit      bool
}

type typeField struct {
	ruleField
	Types string // space-separated
}

// ruleChoices fills what every rule form offers: the types, severities,
// type fields, geofences and vehicles.
func (h *Handler) ruleChoices(ctx context.Context, pr fleet.Principal, d *rulesData) error {
	var order []string
	types := map[string][]string{}
	for _, t := range fleet.RuleTypes() {
		k := kindOf(t)
		d.Types = append(d.Types, choice{string(t), k.Name})
		for _, f := range k.Fields {
			if _, ok := types[f]; !ok {
				order = append(order, f)
			}
			types[f] = append(types[f], string(t))
		}
	}
	for _, f := range order {
		d.Fields = append(d.Fields, typeField{ruleField: ruleFields[f], Types: strings.Join(types[f], " ")})
	}
	for _, s := range fleet.Severities() {
		d.Severities = append(d.Severities, string(s))
	}
	var err error
	d.Geofences, _, err = walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Geofence], error) {
		return h.svc.ListGeofences(ctx, pr, q)
	})
	if err != nil {
		return err
	}
	d.Vehicles, d.MoreVehicles, err = walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, pr, fleet.VehicleFilter{}, q)
	})
	slices.SortStableFunc(d.Vehicles, func(a, b fleet.Vehicle) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return err
}

// rulesPage lists the account's alert rules; the form adds one.
func (h *Handler) rulesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Alert rules", Nav: "rules", User: &us}
	h.takeNoticeInto(r, &p)
	f := alertRuleForm{Type: string(fleet.AlertSpeeding), Severity: string(fleet.DefaultSeverity), Enabled: true}
	if g := r.URL.Query().Get("geofence"); g != "" { // "Add a rule" from a geofence's page
		f = alertRuleForm{Type: string(fleet.AlertGeofenceExit), Severity: string(fleet.DefaultSeverity), GeofenceID: g, Enabled: true}
	}
	h.showRules(w, r, us, http.StatusOK, p, f)
}

func (h *Handler) showRules(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, form alertRuleForm) {
	ctx := r.Context()
	pr := us.Principal()
	rules, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.AlertRule], error) {
		return h.svc.ListAlertRules(ctx, pr, fleet.AlertRuleFilter{}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d := rulesData{More: more, Count: len(rules), Limit: us.Account.Plan.Limits().AlertRules, Form: form.withErrors(&p), CanEdit: may(us, "CreateAlertRule")}
	if d.Rows, err = h.ruleRows(ctx, pr, rules); err == nil && d.CanEdit {
		err = h.ruleChoices(ctx, pr, &d)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p.Data = d
	h.render(w, status, "rules", p)
}

// addRule adds a rule with the CreateAlertRule use case.
func (h *Handler) addAlertRule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readAlertRuleForm(r)
	in, bad := f.rule()
	var err error
	var rule fleet.AlertRule
	if len(bad) > 0 {
		err = formError(bad, nil)
	} else {
		rule, err = h.svc.CreateAlertRule(r.Context(), us.Principal(), in, &f.Enabled)
	}
	if err != nil {
		p := page{Title: "Alert rules", Nav: "rules", User: &us}
		errorPage(&p, err)
		h.showRules(w, r, us, statusOf(err), p, f)
		return
	}
	http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+ruleTitle(rule, h, r, us)+"” is added.")+"#rule-"+rule.ID, http.StatusSeeOther)
}

// ruleTitle names a rule in a notice: "Speeding above 90 km/h".
func ruleTitle(rule fleet.AlertRule, h *Handler, r *http.Request, us fleet.UserSession) string {
	rows, err := h.ruleRows(r.Context(), us.Principal(), []fleet.AlertRule{rule})
	if err != nil || len(rows) == 0 {
		return kindOf(rule.Type).Name
	}
	return strings.TrimSpace(rows[0].Kind + " " + rows[0].Condition)
}

// rulePage shows one rule with the form that changes it.
func (h *Handler) rulePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	rule, err := h.svc.AlertRule(r.Context(), us.Principal(), r.PathValue("rule_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: "Alert rule", Nav: "rules", User: &us}
	h.takeNoticeInto(r, &p)
	h.showRule(w, r, us, http.StatusOK, p, rule, alertRuleFormOf(rule))
}

func (h *Handler) showRule(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, rule fleet.AlertRule, form alertRuleForm) {
	ctx := r.Context()
	pr := us.Principal()
	rows, err := h.ruleRows(ctx, pr, []fleet.AlertRule{rule})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	form.Type = string(rule.Type) // a rule's type does not change
	d := rulesData{Rule: &rows[0], Form: form.withErrors(&p), CanEdit: may(us, "UpdateAlertRule")}
	p.Title = rows[0].Kind + " " + rows[0].Condition
	if d.CanEdit {
		if err := h.ruleChoices(ctx, pr, &d); err != nil {
			h.fail(w, r, &us, err)
			return
		}
	}
	p.Data = d
	h.render(w, status, "rule", p)
}

// saveRule changes a rule with the UpdateAlertRule use case.
func (h *Handler) saveAlertRule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	old, err := h.svc.AlertRule(ctx, us.Principal(), r.PathValue("rule_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	f := readAlertRuleForm(r)
	f.Type = string(old.Type)
	in, bad := f.rule()
	var rule fleet.AlertRule
	if len(bad) > 0 {
		err = formError(bad, nil)
	} else {
		rule, err = h.svc.UpdateAlertRule(ctx, us.Principal(), old.ID, f.patch(in))
	}
	if err != nil {
		p := page{User: &us, Nav: "rules"}
		errorPage(&p, err)
		h.showRule(w, r, us, statusOf(err), p, old, f)
		return
	}
	http.Redirect(w, r, "/rules/"+url.PathEscape(rule.ID)+"?notice="+h.noticeOnce(r, "The rule is saved."), http.StatusSeeOther)
}

// enableAlertRule enables or disables a rule and leads back to the list.
func (h *Handler) enableAlertRule(on bool) userFunc {
	return func(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
		rule, err := h.svc.UpdateAlertRule(r.Context(), us.Principal(), r.PathValue("rule_id"), fleet.AlertRulePatch{Enabled: fleet.Some(&on)})
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		what := "disabled: it opens no alert until it is enabled again."
		if on {
			what = "enabled."
		}
		http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+ruleTitle(rule, h, r, us)+"” is "+what)+"#rule-"+rule.ID, http.StatusSeeOther)
	}
}

// deleteAlertRulePage asks to confirm a rule's deletion, naming it.
func (h *Handler) deleteAlertRulePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !may(us, "DeleteAlertRule") {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Your role cannot delete alert rules."))
		return
	}
	rule, err := h.svc.AlertRule(r.Context(), us.Principal(), r.PathValue("rule_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	rows, err := h.ruleRows(r.Context(), us.Principal(), []fleet.AlertRule{rule})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deleterule", page{Title: "Delete an alert rule", Nav: "rules", User: &us, Data: rows[0]})
}

// deleteAlertRule deletes a rule with the DeleteAlertRule use case.
func (h *Handler) deleteAlertRule(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	rule, err := h.svc.AlertRule(ctx, us.Principal(), r.PathValue("rule_id"))
	if err == nil {
		_, err = h.svc.DeleteAlertRule(ctx, us.Principal(), rule.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+ruleTitle(rule, h, r, us)+"” is deleted."), http.StatusSeeOther)
}
