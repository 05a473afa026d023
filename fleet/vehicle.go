package fleet

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// VehicleStatus is derived from location reports and the clock by
// VehicleStatusAt; it is never set by a client.
type VehicleStatus string

const (
	StatusMoving  VehicleStatus = "moving"  // latest report at or above the moving speed
	StatusIdle    VehicleStatus = "idle"    // below it, stationary for less than StopAfter
	StatusStopped VehicleStatus = "stopped" // stationary for StopAfter or more
	StatusOffline VehicleStatus = "offline" // no report for OfflineAfter, or never reported
)

var vehicleStatuses = []VehicleStatus{StatusMoving, StatusIdle, StatusStopped, StatusOffline}

// VehicleStatuses lists every vehicle status.
func VehicleStatuses() []VehicleStatus { return slices.Clone(vehicleStatuses) }

// Valid reports whether s is a known status.
func (s VehicleStatus) Valid() bool { return slices.Contains(vehicleStatuses, s) }

// StatusThresholds configure the vehicle status machine.
type StatusThresholds struct {
	MovingSpeed  float64       // km/h; default 5
	StopAfter    time.Duration // default 5 minutes
	OfflineAfter time.Duration // default 30 minutes
}

// DefaultStatusThresholds are the contract's.
var DefaultStatusThresholds = StatusThresholds{MovingSpeed: 5, StopAfter: 5 * time.Minute, OfflineAfter: 30 * time.Minute}

func (t StatusThresholds) orDefault() StatusThresholds {
	d := DefaultStatusThresholds
	if t.MovingSpeed > 0 {
		d.MovingSpeed = t.MovingSpeed
	}
	if t.StopAfter > 0 {
		d.StopAfter = t.StopAfter
	}
	if t.OfflineAfter > 0 {
		d.OfflineAfter = t.OfflineAfter
	}
	return d
}

// VehicleStatusAt is the vehicle status machine: the status at time now of
// a vehicle whose latest report is v.LastLocation (with v.Speed), stationary
// since v.StationarySince.
func VehicleStatusAt(v Vehicle, now time.Time, th StatusThresholds) VehicleStatus {
	th = th.orDefault()
	if v.LastLocation == nil || now.Sub(v.LastLocation.Timestamp) >= th.OfflineAfter {
		return StatusOffline
	}
	if v.Speed != nil && *v.Speed >= th.MovingSpeed {
		return StatusMoving
	}
	since := v.LastLocation.Timestamp
	if v.StationarySince != nil {
		since = *v.StationarySince
	}
	if now.Sub(since) >= th.StopAfter {
		return StatusStopped
	}
	return StatusIdle
}

// Position is where a vehicle was at a time.
type Position struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
	Heading   *float64  `json:"heading"`
}

// Vehicle is a vehicle of an account. Optional text fields are "" when
// unset (and null on the wire).
type Vehicle struct {
	ID           string        `json:"vehicle_id"`
	AccountID    string        `json:"-"`
	Name         string        `json:"name"`
	VIN          string        `json:"vin"`
	Make         string        `json:"make"`
	Model        string        `json:"model"`
	Year         *int          `json:"year"`
	LicensePlate string        `json:"license_plate"`
	ExternalID   string        `json:"external_id"`
	Tags         []string      `json:"tags"`
	OdometerKm   *float64      `json:"odometer_km"`
	Status       VehicleStatus `json:"status"`
	Speed        *float64      `json:"speed"`
	LastLocation *Position     `json:"last_location"`
	// DriverID is the driver who drives the vehicle now (API.md §15), ""
	// when none. Only an assignment changes it (Service.AssignDriver, or a
	// device's report naming a driver): stores write it with
	// DriverTx.SetVehicleDriver alone, never with UpdateVehicle, so that
	// a copy of the vehicle read before an assignment cannot undo it.
	DriverID string `json:"driver_id"`
	// The vehicle's telematics state (API.md §14), from the attributes of
	// its forward points: each nil until a report carries it.
	// TelemetryAt is the time of the report the newest of them came from.
	Ignition    *bool      `json:"ignition"`
	EngineHours *float64   `json:"engine_hours"`
	FuelLevel   *float64   `json:"fuel_level"` // percent
	FuelL       *float64   `json:"fuel_l"`     // litres
	PowerV      *float64   `json:"power_v"`    // volts
	TelemetryAt *time.Time `json:"telemetry_at"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	// StationarySince is when the vehicle last came to rest (the first
	// report below the moving speed after moving); nil while moving.
	StationarySince *time.Time `json:"-"`
	// AlertsVersion moves forward whenever an alert a rule opened for the
	// vehicle opens or is resolved, in that change's transaction. Location
	// ingest judges a batch against the vehicle's alerts before its write
	// transaction and checks, in it, that this has not moved since.
	AlertsVersion int64 `json:"-"`
	// Telemetry is what the telematics rules remember between reports.
	Telemetry TelemetryMemory `json:"-"`
	// LastAttributes are the attributes of the latest report (LastLocation),
	// which the snapshot and the live stream show.
	LastAttributes Attributes `json:"-"`
}

// Clone returns a copy of v that shares no memory with it (tags, and
// what its pointers point to), so that a store may keep one and hand out
// the other.
func (v Vehicle) Clone() Vehicle {
	v.Tags = slices.Clone(v.Tags)
	v.Year = clonePtr(v.Year)
	v.OdometerKm = clonePtr(v.OdometerKm)
	v.Speed = clonePtr(v.Speed)
	v.StationarySince = clonePtr(v.StationarySince)
	v.Ignition, v.EngineHours, v.FuelLevel = clonePtr(v.Ignition), clonePtr(v.EngineHours), clonePtr(v.FuelLevel)
	v.FuelL, v.PowerV, v.TelemetryAt = clonePtr(v.FuelL), clonePtr(v.PowerV), clonePtr(v.TelemetryAt)
	v.Telemetry = v.Telemetry.Clone()
	v.LastAttributes = v.LastAttributes.Clone()
	if v.LastLocation != nil {
		l := *v.LastLocation
		l.Heading = clonePtr(l.Heading)
		v.LastLocation = &l
	}
	return v
}

// clonePtr returns a pointer to a copy of what p points to (nil for nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// MarshalJSON writes the vehicle as the API shows it, in responses and in
// event data alike: unset text fields are null, tags an empty list.
func (v Vehicle) MarshalJSON() ([]byte, error) {
	tags := v.Tags
	if tags == nil {
		tags = []string{}
	}
	return json.Marshal(struct {
		ID           string        `json:"vehicle_id"`
		Name         string        `json:"name"`
		VIN          *string       `json:"vin"`
		Make         *string       `json:"make"`
		Model        *string       `json:"model"`
		Year         *int          `json:"year"`
		LicensePlate *string       `json:"license_plate"`
		ExternalID   *string       `json:"external_id"`
		Tags         []string      `json:"tags"`
		OdometerKm   *float64      `json:"odometer_km"`
		Status       VehicleStatus `json:"status"`
		Speed        *float64      `json:"speed"`
		LastLocation *Position     `json:"last_location"`
		DriverID     *string       `json:"driver_id"`
		Ignition     *bool         `json:"ignition"`
		EngineHours  *float64      `json:"engine_hours"`
		FuelLevel    *float64      `json:"fuel_level"`
		FuelL        *float64      `json:"fuel_l"`
		PowerV       *float64      `json:"power_v"`
		TelemetryAt  *time.Time    `json:"telemetry_at"`
		CreatedAt    time.Time     `json:"created_at"`
		UpdatedAt    time.Time     `json:"updated_at"`
	}{
		v.ID, v.Name, nullString(v.VIN), nullString(v.Make), nullString(v.Model), v.Year, nullString(v.LicensePlate),
		nullString(v.ExternalID), tags, v.OdometerKm, v.Status, v.Speed, v.LastLocation, nullString(v.DriverID),
		v.Ignition, v.EngineHours, v.FuelLevel, v.FuelL, v.PowerV, v.TelemetryAt, v.CreatedAt, v.UpdatedAt,
	})
}

// ExternalIDForm returns the form an external_id is stored and compared
// in: Unicode NFC, so that two spellings of the same text (a precomposed
// "é", or "e" and a combining acute accent) are one external_id, and a
// second vehicle with it is a conflict.
func ExternalIDForm(s string) string { return norm.NFC.String(s) }

// Limits on vehicle fields.
const (
	MaxVehicleName = 100
	MaxTextField   = 100
	MaxTags        = 50
	MaxTagLen      = 50
)

// Validate checks the fields a client sets, naming every bad one.
func (v *Vehicle) Validate(now time.Time) error {
	var val Validator
	name := strings.TrimSpace(v.Name)
	val.Check(name != "" && utf8.RuneCountInString(v.Name) <= MaxVehicleName, "name", "is required, 1 to %d characters", MaxVehicleName)
	val.Text("name", v.Name)
	if v.VIN != "" {
		val.Check(validVIN(v.VIN), "vin", "must be 17 characters, letters and digits without I, O or Q")
	}
	for _, f := range []struct {
		name, value string
	}{{"make", v.Make}, {"model", v.Model}, {"license_plate", v.LicensePlate}, {"external_id", v.ExternalID}} {
		val.Check(utf8.RuneCountInString(f.value) <= MaxTextField, f.name, "must be at most %d characters", MaxTextField)
		val.Text(f.name, f.value)
	}
	if v.Year != nil {
		next := now.Year() + 1
		val.Check(*v.Year >= 1900 && *v.Year <= next, "year", "must be between 1900 and %d", next)
	}
	val.Check(len(v.Tags) <= MaxTags, "tags", "must have at most %d tags", MaxTags)
	for i, t := range v.Tags {
		val.Check(strings.TrimSpace(t) != "" && utf8.RuneCountInString(t) <= MaxTagLen, "tags["+itoa(i)+"]", "must be 1 to %d characters", MaxTagLen)
		val.Text("tags["+itoa(i)+"]", t)
	}
	if v.OdometerKm != nil {
		val.Check(*v.OdometerKm >= 0 && *v.OdometerKm < 1e8, "odometer_km", "must be between 0 and 100000000")
	}
	return val.Err()
}

func validVIN(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 'I' || c == 'O' || c == 'Q' || c == 'i' || c == 'o' || c == 'q':
			return false
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		default:
			return false
		}
	}
	return true
}

// VehicleFilter selects vehicles in a list.
type VehicleFilter struct {
	Status   VehicleStatus // "" for any
	Tag      string        // "" for any
	Query    string        // name, plate or VIN contains, case-insensitive
	IDs      []string      // empty for any
	Reported bool          // only vehicles that have reported a location
}

// checkText refuses control characters in the filter's text, named as the
// query parameters that carry it, before it reaches a store.
func (f VehicleFilter) checkText() error {
	if err := CheckQueryText("tag", f.Tag); err != nil {
		return err
	}
	if err := CheckQueryText("q", f.Query); err != nil {
		return err
	}
	return CheckQueryText("vehicle_id", f.IDs...)
}

// Match reports whether v passes the filter; stores use it so that the rule
// is written once.
func (f VehicleFilter) Match(v *Vehicle) bool {
	if f.Status != "" && v.Status != f.Status {
		return false
	}
	if f.Reported && v.LastLocation == nil {
		return false
	}
	if f.Tag != "" {
		found := false
		for _, t := range v.Tags {
			if t == f.Tag {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if f.Query != "" {
		q := strings.ToLower(f.Query)
		if !strings.Contains(strings.ToLower(v.Name), q) && !strings.Contains(strings.ToLower(v.LicensePlate), q) &&
			!strings.Contains(strings.ToLower(v.VIN), q) {
			return false
		}
	}
	if len(f.IDs) > 0 {
		found := false
		for _, id := range f.IDs {
			if id == v.ID {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
