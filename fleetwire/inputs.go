package fleetwire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The request bodies that create things. A pointer member is optional: nil
// is absent (or null), for the service to default; updates are merge
// patches, sent as fleet's patch types (fleet.VehiclePatch...).

// VehicleInput is the body of POST /v1/vehicles.
type VehicleInput struct {
	Name         string   `json:"name"`
	VIN          *string  `json:"vin"`
	Make         *string  `json:"make"`
	Model        *string  `json:"model"`
	Year         *int     `json:"year"`
	LicensePlate *string  `json:"license_plate"`
	ExternalID   *string  `json:"external_id"`
	Tags         []string `json:"tags"`
	OdometerKm   *float64 `json:"odometer_km"`
}

// LocationInput is one point of a location batch. VehicleID is sent in a
// bulk batch only (POST /v1/vehicles/locations); a vehicle's own batch
// leaves it out.
type LocationInput struct {
	VehicleID  *string    `json:"vehicle_id,omitempty"`
	Latitude   *float64   `json:"latitude"`
	Longitude  *float64   `json:"longitude"`
	Timestamp  *time.Time `json:"timestamp"`
	Speed      *float64   `json:"speed"`
	Heading    *float64   `json:"heading"`
	OdometerKm *float64   `json:"odometer_km"`
	// Attributes are what the report says besides its position (API.md
	// §14): a JSON object of numbers, booleans and strings.
	Attributes fleet.Attributes `json:"attributes,omitempty"`
}

// LocationBatch is a location batch: a vehicle's own (its points leave out
// vehicle_id) or a bulk one (each point names its vehicle).
type LocationBatch struct {
	Locations []LocationInput `json:"locations"`
}

// WorkOrderInput is the body of POST /v1/maintenance/work_orders.
type WorkOrderInput struct {
	VehicleID   string   `json:"vehicle_id"`
	Title       string   `json:"title"`
	Description *string  `json:"description"`
	Priority    *string  `json:"priority"`
	DueDate     *string  `json:"due_date"`
	AssignedTo  *string  `json:"assigned_to"`
	OdometerKm  *float64 `json:"odometer_km"`
	CostCents   *int64   `json:"cost_cents"`
	Currency    *string  `json:"currency"`
	ScheduleID  *string  `json:"schedule_id"`
}

// ScheduleInput is the body of POST /v1/maintenance/schedules.
type ScheduleInput struct {
	VehicleID             string   `json:"vehicle_id"`
	Name                  string   `json:"name"`
	IntervalDays          *int     `json:"interval_days"`
	IntervalKm            *float64 `json:"interval_km"`
	LastServiceDate       *string  `json:"last_service_date"`
	LastServiceOdometerKm *float64 `json:"last_service_odometer_km"`
	AutoCreateWorkOrder   *bool    `json:"auto_create_work_order"`
	// By engine hours (API.md §6, §14); left out when unset.
	IntervalEngineHours    *float64 `json:"interval_engine_hours,omitempty"`
	LastServiceEngineHours *float64 `json:"last_service_engine_hours,omitempty"`
}

// AlertInput is the body of POST /v1/alerts, a custom alert.
type AlertInput struct {
	VehicleID *string    `json:"vehicle_id"`
	Severity  *string    `json:"severity"`
	Message   string     `json:"message"`
	Data      JSONObject `json:"data"`
}

// JSONObject is a JSON object (or null) kept as it came; any other JSON
// value is of the wrong type, a 400 like every other. Empty encodes as
// null.
type JSONObject json.RawMessage

// UnmarshalJSON keeps an object or null, and refuses any other value.
func (o *JSONObject) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || (t[0] != '{' && !bytes.Equal(t, []byte("null"))) {
		return &json.UnmarshalTypeError{Value: "non-object", Type: reflect.TypeFor[map[string]any]()}
	}
	*o = append((*o)[:0], b...)
	return nil
}

// MarshalJSON writes the object as it came, or null when empty.
func (o JSONObject) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("null"), nil
	}
	return o, nil
}

// AlertRuleInput is the body of POST /v1/alerts/rules.
type AlertRuleInput struct {
	Type         string   `json:"type"`
	Severity     *string  `json:"severity"`
	ThresholdKmh *float64 `json:"threshold_kmh"`
	AfterMinutes *int     `json:"after_minutes"`
	GeofenceID   *string  `json:"geofence_id"`
	VehicleIDs   []string `json:"vehicle_ids"`
	Enabled      *bool    `json:"enabled"`
}

// GeofenceInput is the body of POST /v1/geofences.
type GeofenceInput struct {
	Name     string          `json:"name"`
	Geometry *fleet.Geometry `json:"geometry"`
	RadiusM  *float64        `json:"radius_m"`
}

// WebhookInput is the body of POST /v1/webhooks; a nil Enabled is
// enabled.
type WebhookInput struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

// DeviceInput is the body of POST /v1/devices.
type DeviceInput struct {
	Identifier string  `json:"identifier"`
	VehicleID  *string `json:"vehicle_id"`
	Name       *string `json:"name"`
}

// DriverInput is the body of POST /v1/drivers.
type DriverInput struct {
	Name             string  `json:"name"`
	Identifier       *string `json:"identifier"`
	Phone            *string `json:"phone"`
	Email            *string `json:"email"`
	LicenseNumber    *string `json:"license_number"`
	LicenseExpiresOn *string `json:"license_expires_on"`
	Notes            *string `json:"notes"`
	ExternalID       *string `json:"external_id"`
}

// NotificationRuleInput is the body of POST /v1/notification_rules: the
// person by user_id or by email (one of them), what they hear about, and
// how.
type NotificationRuleInput struct {
	UserID        *string           `json:"user_id"`
	Email         *string           `json:"email"`
	Events        []string          `json:"events"`
	AlertTypes    []fleet.AlertType `json:"alert_types"`
	VehicleIDs    []string          `json:"vehicle_ids"`
	Tags          []string          `json:"tags"`
	Channel       *string           `json:"channel"`
	QuietHours    *fleet.QuietHours `json:"quiet_hours"`
	DigestMinutes *int              `json:"digest_minutes"`
	Enabled       *bool             `json:"enabled"`
}

// ReportScheduleInput is the body of POST /v1/report_schedules.
type ReportScheduleInput struct {
	UserID     *string  `json:"user_id"`
	Email      *string  `json:"email"`
	Frequency  string   `json:"frequency"`
	Weekday    *string  `json:"weekday"`
	Hour       *int     `json:"hour"`
	TZ         *string  `json:"tz"`
	Report     string   `json:"report"`
	GroupBy    *string  `json:"group_by"`
	VehicleIDs []string `json:"vehicle_ids"`
	Tags       []string `json:"tags"`
	Enabled    *bool    `json:"enabled"`
}
