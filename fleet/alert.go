package fleet

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// AlertType is what an alert is about; rules (RuleTypes) open alerts by
// themselves, maintenance schedules open the maintenance ones, and clients
// open custom ones.
type AlertType string

// Alert types.
const (
	AlertSpeeding           AlertType = "speeding"
	AlertVehicleOffline     AlertType = "vehicle_offline"
	AlertGeofenceEnter      AlertType = "geofence_enter"
	AlertGeofenceExit       AlertType = "geofence_exit"
	AlertMaintenanceDueSoon AlertType = "maintenance_due_soon"
	AlertMaintenanceOverdue AlertType = "maintenance_overdue"
	AlertCustom             AlertType = "custom"
	// Telematics rule types (API.md §14).
	AlertAlarm        AlertType = "alarm"
	AlertIgnitionOn   AlertType = "ignition_on"
	AlertIdling       AlertType = "idling"
	AlertFuelDrop     AlertType = "fuel_drop"
	AlertHarshDriving AlertType = "harsh_driving"
	AlertPowerCut     AlertType = "power_cut"
)

var (
	alertTypes = []AlertType{AlertSpeeding, AlertVehicleOffline, AlertGeofenceEnter, AlertGeofenceExit,
		AlertMaintenanceDueSoon, AlertMaintenanceOverdue, AlertCustom,
		AlertAlarm, AlertIgnitionOn, AlertIdling, AlertFuelDrop, AlertHarshDriving, AlertPowerCut}
	ruleTypes = []AlertType{AlertSpeeding, AlertVehicleOffline, AlertGeofenceEnter, AlertGeofenceExit,
		AlertAlarm, AlertIgnitionOn, AlertIdling, AlertFuelDrop, AlertHarshDriving, AlertPowerCut}
)

// AlertTypes lists every alert type.
func AlertTypes() []AlertType { return slices.Clone(alertTypes) }

// RuleTypes lists the alert types rules can be created for.
func RuleTypes() []AlertType { return slices.Clone(ruleTypes) }

// Valid reports whether t is a known alert type.
func (t AlertType) Valid() bool { return slices.Contains(alertTypes, t) }

// RuleType reports whether rules of type t can be created.
func (t AlertType) RuleType() bool { return slices.Contains(ruleTypes, t) }

// Severity is how serious an alert is.
type Severity string

// Severities.
const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

var severities = []Severity{SeverityInfo, SeverityWarning, SeverityCritical}

// Severities lists every severity, least serious first.
func Severities() []Severity { return slices.Clone(severities) }

// Valid reports whether s is a known severity.
func (s Severity) Valid() bool { return slices.Contains(severities, s) }

// AlertStatus is where an alert stands; it moves only as alertMoves allows.
type AlertStatus string

// Alert statuses.
const (
	AlertOpen         AlertStatus = "open"
	AlertAcknowledged AlertStatus = "acknowledged"
	AlertResolved     AlertStatus = "resolved"
)

// alertMoves is the alert state machine of the contract: the statuses each
// status may move to. resolved is final.
var alertMoves = map[AlertStatus][]AlertStatus{
	AlertOpen:         {AlertAcknowledged, AlertResolved},
	AlertAcknowledged: {AlertResolved},
	AlertResolved:     nil,
}

// AlertStatuses lists every alert status, in the order an alert moves.
func AlertStatuses() []AlertStatus { return []AlertStatus{AlertOpen, AlertAcknowledged, AlertResolved} }

// Valid reports whether s is a known status.
func (s AlertStatus) Valid() bool {
	_, ok := alertMoves[s]
	return ok
}

// Active reports whether an alert in status s still holds its condition:
// while one is active, the same condition opens no other.
func (s AlertStatus) Active() bool { return s == AlertOpen || s == AlertAcknowledged }

// AlertMoves returns the statuses an alert in status from may move to.
func AlertMoves(from AlertStatus) []AlertStatus { return slices.Clone(alertMoves[from]) }

// CheckAlertTransition returns nil if an alert may move from from to to, and
// invalid_state_transition naming both otherwise. Unlike work orders, a
// repeat (acknowledging an acknowledged alert) is refused too: each move is
// an action with its own timestamp and event.
func CheckAlertTransition(from, to AlertStatus) error {
	if slices.Contains(alertMoves[from], to) {
		return nil
	}
	return Errorf(CodeInvalidStateTransition, "An alert cannot move from %s to %s.", from, to)
}

// Alert is something that needs a person's attention. Key is how the
// service recognises "the same condition" (never shown): rule and vehicle
// for rule alerts, schedule, type and service cycle for maintenance alerts,
// "" for custom alerts.
type Alert struct {
	ID             string          `json:"alert_id"`
	AccountID      string          `json:"-"`
	Type           AlertType       `json:"type"`
	Severity       Severity        `json:"severity"`
	Status         AlertStatus     `json:"status"`
	VehicleID      string          `json:"vehicle_id"` // "" when none
	RuleID         string          `json:"rule_id"`    // "" when no rule opened it
	Message        string          `json:"message"`
	Data           json.RawMessage `json:"data"` // a JSON object
	Key            string          `json:"-"`
	CreatedAt      time.Time       `json:"created_at"`
	AcknowledgedAt *time.Time      `json:"acknowledged_at"`
	ResolvedAt     *time.Time      `json:"resolved_at"`
}

// MarshalJSON writes the alert as the API shows it.
func (a Alert) MarshalJSON() ([]byte, error) {
	data := a.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return json.Marshal(struct {
		ID             string          `json:"alert_id"`
		Type           AlertType       `json:"type"`
		Severity       Severity        `json:"severity"`
		Status         AlertStatus     `json:"status"`
		VehicleID      *string         `json:"vehicle_id"`
		RuleID         *string         `json:"rule_id"`
		Message        string          `json:"message"`
		Data           json.RawMessage `json:"data"`
		CreatedAt      time.Time       `json:"created_at"`
		AcknowledgedAt *time.Time      `json:"acknowledged_at"`
		ResolvedAt     *time.Time      `json:"resolved_at"`
	}{a.ID, a.Type, a.Severity, a.Status, nullString(a.VehicleID), nullString(a.RuleID), a.Message, data,
		a.CreatedAt, a.AcknowledgedAt, a.ResolvedAt})
}

// Limits on alerts and rules.
const (
	MaxAlertMessage  = 1000
	MaxAlertData     = 16 << 10 // bytes of JSON
	MaxRuleVehicles  = 500
	MaxThresholdKmh  = 1000
	MaxAfterMinutes  = 7 * 24 * 60
	DefaultSeverity  = SeverityWarning
	alertKeySep      = "/"
	MaxGeofenceName  = 100
	MaxGeofenceRings = 100
)

// AlertFilter selects alerts in a list; zero fields match any. From and To
// bound created_at, both inclusive.
type AlertFilter struct {
	Status    AlertStatus
	Type      AlertType
	Severity  Severity
	VehicleID string
	From, To  time.Time
}

// Match reports whether a passes the filter.
func (f AlertFilter) Match(a *Alert) bool {
	return (f.Status == "" || a.Status == f.Status) && (f.Type == "" || a.Type == f.Type) &&
		(f.Severity == "" || a.Severity == f.Severity) && (f.VehicleID == "" || a.VehicleID == f.VehicleID) &&
		(f.From.IsZero() || !a.CreatedAt.Before(f.From)) && (f.To.IsZero() || !a.CreatedAt.After(f.To))
}

// AlertRule opens alerts when its condition holds for one of its vehicles
// (all of the account's when VehicleIDs is empty). Only the fields of its
// Type are set: ThresholdKmh (speeding), AfterMinutes (vehicle_offline,
// idling), GeofenceID (geofence_enter, geofence_exit), or those of
// RuleParams for the telematics types.
type AlertRule struct {
	ID           string    `json:"rule_id"`
	AccountID    string    `json:"-"`
	Type         AlertType `json:"type"`
	Severity     Severity  `json:"severity"`
	ThresholdKmh *float64  `json:"threshold_kmh"` // speeding: above this speed
	AfterMinutes *int      `json:"after_minutes"` // vehicle_offline: silent this long; idling: idle this long
	GeofenceID   string    `json:"geofence_id"`   // geofence_enter, geofence_exit
	RuleParams
	VehicleIDs []string  `json:"vehicle_ids"` // empty: every vehicle of the account
	Enabled    bool      `json:"enabled"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// MarshalJSON writes the rule as the API shows it.
func (r AlertRule) MarshalJSON() ([]byte, error) {
	ids := r.VehicleIDs
	if ids == nil {
		ids = []string{}
	}
	return json.Marshal(struct {
		ID           string    `json:"rule_id"`
		Type         AlertType `json:"type"`
		Severity     Severity  `json:"severity"`
		ThresholdKmh *float64  `json:"threshold_kmh"`
		AfterMinutes *int      `json:"after_minutes"`
		GeofenceID   *string   `json:"geofence_id"`
		RuleParams
		VehicleIDs []string  `json:"vehicle_ids"`
		Enabled    bool      `json:"enabled"`
		CreatedAt  time.Time `json:"created_at"`
		UpdatedAt  time.Time `json:"updated_at"`
	}{r.ID, r.Type, r.Severity, r.ThresholdKmh, r.AfterMinutes, nullString(r.GeofenceID), r.RuleParams, ids, r.Enabled, r.CreatedAt, r.UpdatedAt})
}

// Applies reports whether the rule watches vehicle id.
func (r *AlertRule) Applies(vehicleID string) bool {
	return len(r.VehicleIDs) == 0 || slices.Contains(r.VehicleIDs, vehicleID)
}

// validate checks the rule's own fields (that the vehicles and the geofence
// are the account's is the service's to check).
func (r *AlertRule) validate(val *Validator) {
	if !r.Type.RuleType() {
		val.Add("type", "must be one of %s", ruleTypeList())
	}
	val.Check(r.Severity.Valid(), "severity", "must be one of info, warning, critical")
	need := func(set bool, field, what string) {
		if set {
			return
		}
		val.Add(field, "is required for a %s rule (%s)", r.Type, what)
	}
	forbid := func(set bool, field string) {
		if set && r.Type.RuleType() {
			val.Add(field, "does not apply to a %s rule", r.Type)
		}
	}
	switch r.Type {
	case AlertSpeeding:
		need(r.ThresholdKmh != nil, "threshold_kmh", "a speed in km/h")
		if r.ThresholdKmh != nil {
			v := *r.ThresholdKmh
			val.Check(!math.IsNaN(v) && v > 0 && v <= MaxThresholdKmh, "threshold_kmh", "must be above 0 and at most %d", MaxThresholdKmh)
		}
	case AlertVehicleOffline:
		need(r.AfterMinutes != nil, "after_minutes", "minutes of silence")
		if r.AfterMinutes != nil {
			val.Check(*r.AfterMinutes >= 1 && *r.AfterMinutes <= MaxAfterMinutes, "after_minutes", "must be between 1 and %d", MaxAfterMinutes)
		}
	case AlertGeofenceEnter, AlertGeofenceExit:
		need(r.GeofenceID != "", "geofence_id", "a geofence of the account")
	}
	forbid(r.Type != AlertSpeeding && r.ThresholdKmh != nil, "threshold_kmh")
	forbid(r.Type != AlertVehicleOffline && r.Type != AlertIdling && r.AfterMinutes != nil, "after_minutes")
	forbid(r.Type != AlertGeofenceEnter && r.Type != AlertGeofenceExit && r.GeofenceID != "", "geofence_id")
	r.validateParams(val, forbid)
	val.Check(len(r.VehicleIDs) <= MaxRuleVehicles, "vehicle_ids", "must hold at most %d vehicles", MaxRuleVehicles)
	for i, id := range r.VehicleIDs {
		if !ValidID(PrefixVehicle, id) {
			val.Add("vehicle_ids["+itoa(i)+"]", "must be a vehicle id (veh_...)")
		}
	}
}

// ruleTypeList is the rule types as a message lists them.
func ruleTypeList() string {
	names := make([]string, len(ruleTypes))
	for i, t := range ruleTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// ruleKey is the key of alerts a rule opens for a vehicle.
func ruleKey(ruleID, vehicleID string) string { return ruleID + alertKeySep + vehicleID }

// validateCustom checks an alert a client opens.
func (a *Alert) validateCustom(val *Validator) {
	val.Check(a.Severity.Valid(), "severity", "must be one of info, warning, critical")
	msg := strings.TrimSpace(a.Message)
	val.Check(msg != "" && utf8.RuneCountInString(a.Message) <= MaxAlertMessage, "message", "is required, 1 to %d characters", MaxAlertMessage)
	val.MultilineText("message", a.Message)
	if len(a.Data) > 0 {
		t := strings.TrimSpace(string(a.Data))
		switch {
		case len(a.Data) > MaxAlertData:
			val.Add("data", "must be at most %d bytes of JSON", MaxAlertData)
		case !strings.HasPrefix(t, "{") || !json.Valid(a.Data):
			val.Add("data", "must be a JSON object")
		default:
			val.JSONText("data", a.Data)
		}
	}
}

// AlertRuleFilter selects rules in a list; zero fields match any.
// VehicleID matches the rules whose VehicleIDs list the vehicle, not the
// rules that watch every vehicle.
type AlertRuleFilter struct {
	Type       AlertType
	GeofenceID string
	VehicleID  string
}

// Match reports whether r passes the filter.
func (f AlertRuleFilter) Match(r *AlertRule) bool {
	return (f.Type == "" || r.Type == f.Type) && (f.GeofenceID == "" || r.GeofenceID == f.GeofenceID) &&
		(f.VehicleID == "" || slices.Contains(r.VehicleIDs, f.VehicleID))
}
