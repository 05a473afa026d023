package fleetweb

import (
	"context"
	"math"
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

// ruleKind is how the pages speak of a rule type and the form's fields
// it takes. A type fleet offers (fleet.RuleTypes) that is not here is
// named from its identifier and takes no field of its own: a new type
// needs only its line here, and its fields in ruleFields.
type ruleKind struct {
	Name   string   // "Speeding"
	Fields []string // the form's inputs, of ruleFields
}

var ruleKinds = map[fleet.AlertType]ruleKind{
	fleet.AlertSpeeding:       {"Speeding", []string{"threshold_kmh"}},
	fleet.AlertVehicleOffline: {"Not reporting", []string{"after_minutes"}},
	fleet.AlertGeofenceEnter:  {"Enters a geofence", []string{"geofence_id"}},
	fleet.AlertGeofenceExit:   {"Leaves a geofence", []string{"geofence_id"}},
	fleet.AlertAlarm:          {"Alarm", []string{"alarms"}},
	fleet.AlertIgnitionOn:     {"Ignition on", []string{"outside_hours"}},
	fleet.AlertIdling:         {"Idling", []string{"idle_minutes"}},
	fleet.AlertFuelDrop:       {"Fuel drop", []string{"threshold_percent", "threshold_l"}},
	fleet.AlertHarshDriving:   {"Harsh driving", []string{"types", "threshold_g"}},
	fleet.AlertPowerCut:       {"Power cut", []string{"threshold_v"}},
}

// ruleField is one of the inputs a rule type may take: the rule's field
// it sets (API, as the use cases name it in their errors), its label, the
// hint beside it, and how the form reads it: a number, a whole number, a
// geofence, ticks among Options, or working hours (a zone, days, from and
// to).
type ruleField struct {
	Input, API, Label, Hint, Kind string
	Options                       []string
	Example                       string // a number as the form wants it: "90 km/h"
}

var ruleFields = map[string]ruleField{
	"threshold_kmh": {Example: "90 km/h", Input: "threshold_kmh", API: "threshold_kmh", Label: "Speed limit (km/h)", Hint: "An alert opens when a vehicle reports a speed above it.", Kind: "number"},
	"after_minutes": {Example: "30 minutes", Input: "after_minutes", API: "after_minutes", Label: "Silent for (minutes)", Hint: "An alert opens when a vehicle has not reported for this long.", Kind: "integer"},
	"geofence_id":   {Input: "geofence_id", API: "geofence_id", Label: "Geofence", Hint: "The area the vehicles enter or leave.", Kind: "geofence"},
	"alarms": {Input: "alarms", API: "alarms", Label: "Alarms", Kind: "choices", Options: fleet.AlarmWords(),
		Hint: "The alarms a tracker raises that open an alert; none ticked: every alarm."},
	"outside_hours": {Input: "outside_hours", API: "outside_hours", Label: "Only outside working hours (optional)", Kind: "hours",
		Hint: "An alert opens when the ignition goes on outside these hours; left empty: whenever it goes on."},
	"idle_minutes": {Example: "10 minutes", Input: "idle_minutes", API: "after_minutes", Label: "Idle for (minutes)", Hint: "An alert opens when a vehicle's engine runs this long without moving.", Kind: "integer"},
	"threshold_percent": {Example: "10 percent points", Input: "threshold_percent", API: "threshold_percent", Label: "Drop of at least (percent points)", Kind: "number",
		Hint: "Give this or the litres below: an alert opens when the tank's level falls by this much at once."},
	"threshold_l": {Example: "20 litres", Input: "threshold_l", API: "threshold_l", Label: "Or of at least (litres)", Kind: "number", Hint: "For trackers that report litres."},
	"types": {Input: "types", API: "types", Label: "Harsh events", Kind: "choices", Options: fleet.HarshTypes(),
		Hint: "None ticked: every kind."},
	"threshold_g": {Example: "0.4 g", Input: "threshold_g", API: "threshold_g", Label: "Speed change above (g, optional)", Kind: "number",
		Hint: "Judged from the reported speeds when the tracker raises no alarm; 0.4 g when empty."},
	"threshold_v": {Example: "9 volts", Input: "threshold_v", API: "threshold_v", Label: "Power back above (volts, optional)", Kind: "number",
		Hint: "The alert resolves itself when the power is back above it; 9 V when empty."},
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

// fieldsOf are the inputs of a rule type.
func fieldsOf(t fleet.AlertType) []ruleField {
	var out []ruleField
	for _, name := range kindOf(t).Fields {
		out = append(out, ruleFields[name])
	}
	return out
}

// alertRuleForm is what the rule form holds: the type, the severity, the
// type's inputs as typed (by input name; working hours as NAME_tz,
// NAME_days, NAME_from, NAME_to), the vehicles, and the mistakes, as
// sentences by input.
type alertRuleForm struct {
	Type, Severity string
	Values         url.Values
	VehicleIDs     []string
	Enabled        bool
	Errors         map[string]string
}

// Value is an input's value as typed.
func (f alertRuleForm) Value(input string) string { return f.Values.Get(input) }

// Ticked reports whether a tick box of an input is ticked.
func (f alertRuleForm) Ticked(input, option string) bool {
	return slices.Contains(f.Values[input], option)
}

func num64(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'f', -1, 64)
}

func alertRuleFormOf(r fleet.AlertRule) alertRuleForm {
	f := alertRuleForm{Type: string(r.Type), Severity: string(r.Severity), Values: url.Values{}, VehicleIDs: r.VehicleIDs, Enabled: r.Enabled}
	for _, fd := range fieldsOf(r.Type) {
		set := func(v string) {
			if v != "" {
				f.Values.Set(fd.Input, v)
			}
		}
		switch fd.API {
		case "threshold_kmh":
			set(num64(r.ThresholdKmh))
		case "after_minutes":
			if r.AfterMinutes != nil {
				set(strconv.Itoa(*r.AfterMinutes))
			}
		case "geofence_id":
			set(r.GeofenceID)
		case "alarms":
			f.Values[fd.Input] = slices.Clone(r.Alarms)
		case "types":
			f.Values[fd.Input] = slices.Clone(r.Types)
		case "threshold_percent":
			set(num64(r.ThresholdPercent))
		case "threshold_l":
			set(num64(r.ThresholdL))
		case "threshold_g":
			set(num64(r.ThresholdG))
		case "threshold_v":
			set(num64(r.ThresholdV))
		case "outside_hours":
			if h := r.OutsideHours; h != nil {
				f.Values.Set(fd.Input+"_tz", h.TZ)
				f.Values[fd.Input+"_days"] = slices.Clone(h.Days)
				f.Values.Set(fd.Input+"_from", h.From)
				f.Values.Set(fd.Input+"_to", h.To)
			}
		}
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
	f := alertRuleForm{Type: v("type"), Severity: v("severity"), Values: url.Values{}, VehicleIDs: ids, Enabled: v("enabled") != ""}
	for _, fd := range ruleFields {
		for _, name := range []string{fd.Input, fd.Input + "_tz", fd.Input + "_days", fd.Input + "_from", fd.Input + "_to"} {
			for _, x := range r.PostForm[name] {
				f.Values.Add(name, strings.TrimSpace(x))
			}
		}
	}
	return f
}

// rule turns the form into a rule: the inputs of its type only (an input
// of another type the form kept is not sent). What cannot be read as a
// number is said by input; every rule on the values is the use case's.
func (f alertRuleForm) rule() (fleet.AlertRule, []fleet.FieldError) {
	r := fleet.AlertRule{Type: fleet.AlertType(f.Type), Severity: fleet.Severity(f.Severity), VehicleIDs: f.VehicleIDs}
	var bad []fleet.FieldError
	number := func(fd ruleField, whole bool) (*float64, *int) {
		s := f.Value(fd.Input)
		if s == "" {
			return nil, nil
		}
		if whole {
			n, err := strconv.Atoi(s)
			if err != nil {
				bad = append(bad, fleet.FieldError{Field: fd.Input, Message: "must be a whole number, such as " + fd.Example})
				return nil, nil
			}
			return nil, &n
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			bad = append(bad, fleet.FieldError{Field: fd.Input, Message: "must be a number, such as " + fd.Example})
			return nil, nil
		}
		return &x, nil
	}
	for _, fd := range fieldsOf(r.Type) {
		switch fd.API {
		case "threshold_kmh":
			r.ThresholdKmh, _ = number(fd, false)
		case "after_minutes":
			_, r.AfterMinutes = number(fd, true)
		case "geofence_id":
			r.GeofenceID = f.Value(fd.Input)
		case "alarms":
			r.Alarms = f.Values[fd.Input]
		case "types":
			r.Types = f.Values[fd.Input]
		case "threshold_percent":
			r.ThresholdPercent, _ = number(fd, false)
		case "threshold_l":
			r.ThresholdL, _ = number(fd, false)
		case "threshold_g":
			r.ThresholdG, _ = number(fd, false)
		case "threshold_v":
			r.ThresholdV, _ = number(fd, false)
		case "outside_hours":
			h := fleet.WorkingHours{TZ: f.Value(fd.Input + "_tz"), Days: f.Values[fd.Input+"_days"], From: f.Value(fd.Input + "_from"), To: f.Value(fd.Input + "_to")}
			if h.TZ != "" || len(h.Days) > 0 || h.From != "" || h.To != "" {
				r.OutsideHours = &h
			}
		}
	}
	return r, bad
}

// patch is the form as a merge patch: severity, the fields of the rule's
// type (an empty one cleared), and its vehicles.
func (f alertRuleForm) patch(r fleet.AlertRule) fleet.AlertRulePatch {
	p := fleet.AlertRulePatch{Severity: fleet.Some(r.Severity), VehicleIDs: fleet.Some(r.VehicleIDs)}
	if r.VehicleIDs == nil {
		p.VehicleIDs = fleet.Some([]string{})
	}
	for _, fd := range fieldsOf(r.Type) {
		switch fd.API {
		case "threshold_kmh":
			p.ThresholdKmh = fleet.Some(r.ThresholdKmh)
		case "after_minutes":
			p.AfterMinutes = fleet.Some(r.AfterMinutes)
		case "geofence_id":
			p.GeofenceID = fleet.Some(r.GeofenceID)
		case "alarms":
			p.Alarms = fleet.Some(nonNil(r.Alarms))
		case "types":
			p.Types = fleet.Some(nonNil(r.Types))
		case "threshold_percent":
			p.ThresholdPercent = fleet.Some(r.ThresholdPercent)
		case "threshold_l":
			p.ThresholdL = fleet.Some(r.ThresholdL)
		case "threshold_g":
			p.ThresholdG = fleet.Some(r.ThresholdG)
		case "threshold_v":
			p.ThresholdV = fleet.Some(r.ThresholdV)
		case "outside_hours":
			p.OutsideHours = fleet.Some(r.OutsideHours)
		}
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// inputOf is the form's input that a use case's field names: the input
// of the rule's type that sets it ("outside_hours.tz" is the working
// hours', "alarms[2]" the alarms').
func (f alertRuleForm) inputOf(apiField string) string {
	base := apiField
	if i := strings.IndexAny(base, ".["); i > 0 {
		base = base[:i]
	}
	for _, fd := range fieldsOf(fleet.AlertType(f.Type)) {
		if fd.API == base || fd.Input == base {
			return fd.Input
		}
	}
	if base == "vehicle_ids" {
		return base
	}
	return apiField
}

func (f alertRuleForm) withErrors(p *page) alertRuleForm {
	f.Errors = map[string]string{}
	for _, fe := range p.Fields {
		in := f.inputOf(fe.Field)
		if _, ok := f.Errors[in]; !ok {
			label := fe
			if fd, ok := ruleFields[in]; ok && fd.Kind != "hours" {
				label.Field = in // the input's label words it
			}
			f.Errors[in] = fieldSentence(label)
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
		if r.GeofenceID != "" {
			name, ok := fences[r.GeofenceID]
			if !ok {
				g, err := h.svc.Geofence(ctx, pr, r.GeofenceID)
				if err != nil && fleet.ErrorCode(err) != fleet.CodeNotFound {
					return nil, err
				}
				name, fences[r.GeofenceID] = g.Name, g.Name
			}
			row.Condition = name
		} else {
			row.Condition = conditionWords(r)
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

// conditionWords says a rule's condition, as its name continues it:
// "above 90 km/h", "silent for 30 minutes", "on sos or tow".
func conditionWords(r fleet.AlertRule) string {
	g := func(x *float64) string { return strconv.FormatFloat(*x, 'f', -1, 64) }
	list := func(words []string, every string) string {
		if len(words) == 0 {
			return every
		}
		out := make([]string, len(words))
		for i, w := range words {
			out[i] = strings.ReplaceAll(w, "_", " ")
		}
		if len(out) == 1 {
			return out[0]
		}
		return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
	}
	switch r.Type {
	case fleet.AlertSpeeding:
		if r.ThresholdKmh != nil {
			return "above " + g(r.ThresholdKmh) + " km/h"
		}
	case fleet.AlertVehicleOffline:
		if r.AfterMinutes != nil {
			return "silent for " + plural(*r.AfterMinutes, "minute", "minutes")
		}
	case fleet.AlertIdling:
		if r.AfterMinutes != nil {
			return "for " + plural(*r.AfterMinutes, "minute", "minutes")
		}
	case fleet.AlertAlarm:
		return "on " + list(r.Alarms, "any alarm")
	case fleet.AlertIgnitionOn:
		if h := r.OutsideHours; h != nil {
			days := "every day"
			if len(h.Days) > 0 {
				days = strings.Join(h.Days, ", ")
			}
			return "outside " + h.From + "–" + h.To + ", " + days + " (" + h.TZ + ")"
		}
		return "at any time"
	case fleet.AlertFuelDrop:
		if r.ThresholdPercent != nil {
			return "by " + g(r.ThresholdPercent) + " percent points"
		}
		if r.ThresholdL != nil {
			return "by " + g(r.ThresholdL) + " litres"
		}
	case fleet.AlertHarshDriving:
		s := list(r.Types, "any harsh event")
		if r.ThresholdG != nil {
			s += ", or a speed change above " + g(r.ThresholdG) + " g"
		}
		return s
	case fleet.AlertPowerCut:
		if r.ThresholdV != nil {
			return "until power is back above " + g(r.ThresholdV) + " V"
		}
	}
	return ""
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
	Days         []string // working hours' days
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
	d.Days = fleet.WorkingDays()
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
	if err == nil { // a rule's vehicles beyond the list stay chosen
		listed := d.Vehicles
		d.Vehicles = append(h.chosenBeyond(ctx, pr, func(id string) bool {
			return slices.ContainsFunc(listed, func(v fleet.Vehicle) bool { return v.ID == id })
		}, d.Form.VehicleIDs), listed...)
	}
	return err
}

// rulesPage lists the account's alert rules; the form adds one.
func (h *Handler) rulesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Alert rules", Nav: "rules", User: &us}
	h.takeNoticeInto(r, &p)
	f := alertRuleForm{Type: string(fleet.AlertSpeeding), Severity: string(fleet.DefaultSeverity), Enabled: true}
	if g := r.URL.Query().Get("geofence"); g != "" { // "Add a rule" from a geofence's page
		f = alertRuleForm{Type: string(fleet.AlertGeofenceExit), Severity: string(fleet.DefaultSeverity), Values: url.Values{"geofence_id": {g}}, Enabled: true}
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

// addAlertRule adds a rule with the CreateAlertRule use case.
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
	http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+h.ruleTitle(r.Context(), us.Principal(), rule)+"” is added.")+"#rule-"+rule.ID, http.StatusSeeOther)
}

// ruleTitle names a rule in a notice: "Speeding above 90 km/h".
func (h *Handler) ruleTitle(ctx context.Context, pr fleet.Principal, rule fleet.AlertRule) string {
	rows, err := h.ruleRows(ctx, pr, []fleet.AlertRule{rule})
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

// saveAlertRule changes a rule with the UpdateAlertRule use case.
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
		http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+h.ruleTitle(r.Context(), us.Principal(), rule)+"” is "+what)+"#rule-"+rule.ID, http.StatusSeeOther)
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
	http.Redirect(w, r, "/rules?notice="+h.noticeOnce(r, "The rule “"+h.ruleTitle(r.Context(), us.Principal(), rule)+"” is deleted."), http.StatusSeeOther)
}
