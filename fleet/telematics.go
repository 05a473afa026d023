package fleet

import (
	"slices"
	"time"
)

// Telematics (API.md §14): what a report says besides where the vehicle
// is becomes the vehicle's state (Vehicle.Ignition, FuelLevel...) and the
// events below, judged on the vehicle's forward points in time order, once
// each: a resent, duplicate or older point emits nothing.

// The events of telematics.
const (
	EventVehicleIgnitionOn    = "vehicle.ignition_on"
	EventVehicleIgnitionOff   = "vehicle.ignition_off"
	EventDeviceAlarm          = "device.alarm"
	EventVehicleFuelDrop      = "vehicle.fuel_drop"
	EventVehicleRefuel        = "vehicle.refuel"
	EventVehicleIdlingStarted = "vehicle.idling_started"
	EventVehicleIdlingEnded   = "vehicle.idling_ended"
)

// EventLocation is where a telematics event happened: the position of the
// point that caused it.
type EventLocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// IgnitionChange is the data of vehicle.ignition_on and
// vehicle.ignition_off. At is the time of the point that caused it;
// DeviceID the device that reported it (null for an API client's point).
type IgnitionChange struct {
	VehicleID string        `json:"vehicle_id"`
	At        time.Time     `json:"at"`
	Location  EventLocation `json:"location"`
	DeviceID  *string       `json:"device_id"`
}

// DeviceAlarm is the data of device.alarm: one alarm word of the
// vocabulary (Alarm: "sos", "power_cut"...) a point raised. DeviceID is
// null for an API client's point.
type DeviceAlarm struct {
	DeviceID  *string       `json:"device_id"`
	VehicleID string        `json:"vehicle_id"`
	Alarm     string        `json:"alarm"`
	At        time.Time     `json:"at"`
	Location  EventLocation `json:"location"`
}

// Fuel units of FuelChange.
const (
	FuelUnitPercent = "percent"
	FuelUnitLitres  = "l"
)

// FuelChange is the data of vehicle.fuel_drop and vehicle.refuel: the
// fuel went From To (in Unit, FuelUnitPercent or FuelUnitLitres) between
// consecutive forward points while the vehicle was not moving.
type FuelChange struct {
	VehicleID string        `json:"vehicle_id"`
	From      float64       `json:"from"`
	To        float64       `json:"to"`
	Unit      string        `json:"unit"`
	At        time.Time     `json:"at"`
	Location  EventLocation `json:"location"`
}

// IdlingChange is the data of vehicle.idling_started (At: the point that
// made the idling reach IdlingAfter; Minutes: how long it had lasted) and
// vehicle.idling_ended (At: the point that ended it; Minutes: how long it
// lasted).
type IdlingChange struct {
	VehicleID string    `json:"vehicle_id"`
	At        time.Time `json:"at"`
	Minutes   float64   `json:"minutes"`
}

// Thresholds of the telematics events (API.md §14).
const (
	// IdlingAfter is how long ignition on below the moving speed is
	// idling.
	IdlingAfter = 5 * time.Minute
	// FuelChangePercent and FuelChangeLitres are the least fall (rise) of
	// fuel between consecutive forward points that is a fuel drop
	// (refuel).
	FuelChangePercent = 5.0
	FuelChangeLitres  = 5.0
	// AlarmRepeatWindow: a device's alarm of one type raises at most one
	// device.alarm in it (devices repeat an alarm flag in several
	// reports).
	AlarmRepeatWindow = 5 * time.Minute
	// DriverReleaseAfter: ignition off for this long ends the driver's
	// assignment that a report made (API.md §15).
	DriverReleaseAfter = 30 * time.Minute
	// MaxGPSOdometerSpeed: a vehicle whose reports carry no odometer
	// advances by the distance between consecutive forward points unless
	// covering it would need more than this, in km/h (a jump).
	MaxGPSOdometerSpeed = 300.0
	// OdometerBackwardKm is how far a reported odometer may go backwards
	// and still be taken (a device replaced or reset is a manual PATCH).
	OdometerBackwardKm = 1.0
)

// TelemetryMemory is what the telematics rules remember of a vehicle
// between its reports; never shown.
type TelemetryMemory struct {
	// IdlingSince is when the vehicle's current idling began (ignition on
	// and below the moving speed), nil when it is not idling; Idling
	// reports whether vehicle.idling_started was emitted for it.
	IdlingSince *time.Time `json:"idling_since,omitempty"`
	Idling      bool       `json:"idling,omitempty"`
	// IgnitionOffSince is when the ignition last went off, nil while it is
	// on or unknown: DriverReleaseAfter later, a report releases the
	// driver a report assigned.
	IgnitionOffSince *time.Time `json:"ignition_off_since,omitempty"`
	// Alarms is when each alarm type was last raised as device.alarm, by
	// device: its repeats within AlarmRepeatWindow raise nothing.
	Alarms []AlarmSeen `json:"alarms,omitempty"`
	// ReportsOdometer and ReportsEngineHours: a report of the vehicle
	// carried an odometer (engine hours); from then on only reports set
	// it, and the distance between points (the time with the ignition on)
	// no longer advances it.
	ReportsOdometer    bool `json:"reports_odometer,omitempty"`
	ReportsEngineHours bool `json:"reports_engine_hours,omitempty"`
	// DriverKey is the last driver identifier a forward point carried;
	// ReportedDriverID the driver a report assigned by it (API.md §15),
	// whom ignition off for DriverReleaseAfter releases.
	DriverKey        string `json:"driver_key,omitempty"`
	ReportedDriverID string `json:"reported_driver_id,omitempty"`
}

// AlarmSeen is when an alarm type of a device (DeviceID "" for an API
// client's points) last raised device.alarm.
type AlarmSeen struct {
	DeviceID string    `json:"device_id,omitempty"`
	Alarm    string    `json:"alarm"`
	At       time.Time `json:"at"`
}

// Clone returns a copy of m that shares no memory with it.
func (m TelemetryMemory) Clone() TelemetryMemory {
	m.IdlingSince, m.IgnitionOffSince = clonePtr(m.IdlingSince), clonePtr(m.IgnitionOffSince)
	if len(m.Alarms) > 0 {
		m.Alarms = append([]AlarmSeen(nil), m.Alarms...)
	} else {
		m.Alarms = nil
	}
	return m
}

// IsZero reports whether m remembers nothing.
func (m TelemetryMemory) IsZero() bool {
	return m.IdlingSince == nil && !m.Idling && m.IgnitionOffSince == nil && len(m.Alarms) == 0 &&
		!m.ReportsOdometer && !m.ReportsEngineHours && m.DriverKey == "" && m.ReportedDriverID == ""
}

// The alarm words of the vocabulary (API.md §14): the values the alarm
// attribute holds, comma-separated when several.
var alarmWords = []string{
	"sos", "power_cut", "power_restored", "low_power", "low_battery", "vibration", "movement", "overspeed", "tow",
	"tampering", "jamming", "door", "hard_acceleration", "hard_braking", "hard_cornering", "accident", "fall_down",
	"fatigue_driving", "temperature", "geofence_enter", "geofence_exit", "general",
}

// AlarmWords lists the alarm words of the vocabulary.
func AlarmWords() []string { return slices.Clone(alarmWords) }
