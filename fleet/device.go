package fleet

import (
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// A Device is a GPS tracker or phone app that reports positions itself, in
// its own protocol, to a listener of the server (API.md §13). Its
// Identifier is what it sends to name itself (an IMEI, H02's terminal id,
// OsmAnd's id), unique on the server across every account; a device with a
// vehicle has its positions ingested as that vehicle's locations.
//
// This file holds the registry's types and rules and what a listener hands
// the service and gets back; the use cases are in service_devices.go (the
// registry) and device_edge.go (what listeners call), the store's part in
// store_devices.go.

// DevicePosition is one position of a device's report, in the API's units
// (speed km/h, heading degrees, altitude metres, time UTC).
type DevicePosition struct {
	Latitude   float64   `json:"latitude"`
	Longitude  float64   `json:"longitude"`
	Timestamp  time.Time `json:"timestamp"`
	Speed      *float64  `json:"speed"`
	Heading    *float64  `json:"heading"`
	Altitude   *float64  `json:"altitude"`
	Valid      bool      `json:"valid"`
	Satellites *int      `json:"satellites"`
	// Attrs are what the device sent beside the position, in the common
	// vocabulary where a decoder knows it (API.md §14): the stored point
	// and the last report keep those that pass the rules (the others are
	// dropped and counted, Stats.DeviceAttributesDropped). On the wire, as
	// a last report is stored and shown, they are one JSON object. The
	// service may reorder them in place.
	Attrs Attributes `json:"attributes"`
}

// DeviceReport is one message of a device as a listener decoded it.
type DeviceReport struct {
	// Identifier names the device (the registry's Device.Identifier).
	Identifier string
	// Protocol is the protocol the device spoke ("teltonika").
	Protocol string
	// RemoteAddr is where it came from (host:port), for the operator's
	// record of unknown devices.
	RemoteAddr string
	// Positions in the order the message carries them; the last one is
	// the device's last_report. Only the last needs Attributes.
	Positions []DevicePosition
}

// Why a device's position was not stored (LastReport.Reason).
const (
	ReasonDuplicate       = "duplicate"        // the vehicle already has a point at its time
	ReasonTooOld          = "too_old"          // older than the account's plan keeps history
	ReasonNoFix           = "no_fix"           // the device had no valid fix
	ReasonFuture          = "future"           // more than MaxFutureSkew ahead of the server's clock
	ReasonNoVehicle       = "no_vehicle"       // the device is not attached to a vehicle
	ReasonPointsAllowance = "points_allowance" // the account's points per hour are spent (not acknowledged)
	// ReasonDevicePointsAllowance: the device's own points per hour are
	// spent (Account.DevicePointsPerHour; not acknowledged).
	ReasonDevicePointsAllowance = "device_points_allowance"
)

// DeviceResult is what the service did with a report.
type DeviceResult struct {
	// Accepted and Duplicates count the report's points as
	// IngestLocations counts a batch's.
	Accepted   int
	Duplicates int
	// Stored and Reason describe the report's last position (the
	// device's last_report).
	Stored bool
	Reason string
}

// Limits of the device registry.
const (
	// MaxIdentifier is the longest identifier: 1 to 32 characters of
	// [0-9A-Za-z._-].
	MaxIdentifier = 32
	// MaxDeviceName is the longest device name, as a vehicle's.
	MaxDeviceName = MaxVehicleName
	// MaxDeviceAttributes, MaxAttributeName and MaxAttributeText were the
	// bounds of a last report's attribute map.
	//
	// Deprecated: a device's attributes follow the rules of every point's
	// (MaxPointAttributes, MaxAttrName, MaxAttrText); these bound nothing.
	MaxDeviceAttributes = 256
	MaxAttributeName    = 64
	MaxAttributeText    = 256
	// UnknownDeviceRetention is how long an unknown identifier's record is
	// kept after its last attempt.
	UnknownDeviceRetention = 30 * 24 * time.Hour
	// DefaultUnknownDevices and MaxUnknownDevices are how many records of
	// unknown identifiers Operator.UnknownDevices returns by default and at
	// most.
	DefaultUnknownDevices = 100
	MaxUnknownDevices     = 10_000
)

// Device is a tracker or phone app registered to an account. Optional text
// fields are "" when unset (null on the wire).
type Device struct {
	ID        string `json:"device_id"`
	AccountID string `json:"-"`
	// Identifier is what the device sends to name itself; unique on the
	// server, across every account.
	Identifier string `json:"identifier"`
	// VehicleID is the vehicle whose locations the device's positions
	// become; "" when none (its reports are then kept as LastReport only).
	VehicleID string `json:"vehicle_id"`
	Name      string `json:"name"`
	// Protocol is the protocol the device last spoke; "" before its first
	// report.
	Protocol  string    `json:"protocol"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is the last change by a client (reports do not move it).
	UpdatedAt  time.Time   `json:"updated_at"`
	LastSeenAt *time.Time  `json:"last_seen_at"`
	LastReport *LastReport `json:"last_report"`
}

// LastReport is the last position of the last message a device sent, in
// the order the message carries them, and what became of it.
type LastReport struct {
	ReceivedAt time.Time      `json:"received_at"`
	Protocol   string         `json:"protocol"`
	Position   DevicePosition `json:"position"`
	// Stored reports whether the position was stored as a location of the
	// device's vehicle; Reason says why not (one of the Reason*
	// constants), "" when it was.
	Stored bool   `json:"stored"`
	Reason string `json:"reason"`
}

// Reasons lists every reason a position was not stored.
func Reasons() []string {
	return []string{ReasonDuplicate, ReasonTooOld, ReasonNoFix, ReasonFuture, ReasonNoVehicle, ReasonPointsAllowance,
		ReasonDevicePointsAllowance}
}

// MarshalJSON writes the device as the API shows it: unset text fields are
// null.
func (d Device) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID         string      `json:"device_id"`
		Identifier string      `json:"identifier"`
		VehicleID  *string     `json:"vehicle_id"`
		Name       *string     `json:"name"`
		Protocol   *string     `json:"protocol"`
		CreatedAt  time.Time   `json:"created_at"`
		UpdatedAt  time.Time   `json:"updated_at"`
		LastSeenAt *time.Time  `json:"last_seen_at"`
		LastReport *LastReport `json:"last_report"`
	}{d.ID, d.Identifier, nullString(d.VehicleID), nullString(d.Name), nullString(d.Protocol), d.CreatedAt, d.UpdatedAt,
		d.LastSeenAt, d.LastReport})
}

// Clone returns a copy of d that shares no memory with it.
func (d Device) Clone() Device {
	d.LastSeenAt = clonePtr(d.LastSeenAt)
	if d.LastReport != nil {
		r := *d.LastReport
		r.Position = r.Position.Clone()
		d.LastReport = &r
	}
	return d
}

// Clone returns a copy of p that shares no memory with it.
func (p DevicePosition) Clone() DevicePosition {
	p.Speed, p.Heading, p.Altitude, p.Satellites = clonePtr(p.Speed), clonePtr(p.Heading), clonePtr(p.Altitude), clonePtr(p.Satellites)
	p.Attrs = p.Attrs.Clone()
	return p
}

// ValidIdentifier reports whether s is a device identifier: 1 to
// MaxIdentifier characters of [0-9A-Za-z._-].
func ValidIdentifier(s string) bool {
	if len(s) == 0 || len(s) > MaxIdentifier {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !identifierByte(s[i]) {
			return false
		}
	}
	return true
}

func identifierByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '.' || c == '_' || c == '-'
}

const identifierRule = "must be 1 to 32 characters of digits, letters, '.', '_' and '-'"

func normaliseDevice(d *Device) { d.Name = strings.TrimSpace(d.Name) }

// validate checks the fields a client sets (the vehicle, which must be the
// account's, is the service's to look up).
func (d *Device) validate(val *Validator) {
	val.Check(ValidIdentifier(d.Identifier), "identifier", "%s", identifierRule)
	val.Check(utf8.RuneCountInString(d.Name) <= MaxDeviceName, "name", "must be at most %d characters", MaxDeviceName)
	val.Text("name", d.Name)
}

// DeviceFilter selects devices in a list.
type DeviceFilter struct {
	Identifier string // "" for any
	VehicleID  string // "" for any
}

// Match reports whether d passes the filter; stores use it so that the rule
// is written once.
func (f DeviceFilter) Match(d *Device) bool {
	return (f.Identifier == "" || d.Identifier == f.Identifier) && (f.VehicleID == "" || d.VehicleID == f.VehicleID)
}

// check refuses filter values that name no device or vehicle, as the query
// parameters that carry them, before they reach a store.
func (f DeviceFilter) check() error {
	if err := CheckQueryText("identifier", f.Identifier); err != nil {
		return err
	}
	if err := CheckQueryText("vehicle_id", f.VehicleID); err != nil {
		return err
	}
	if f.Identifier != "" && !ValidIdentifier(f.Identifier) {
		return Errorf(CodeInvalidRequest, "identifier %s.", identifierRule)
	}
	if f.VehicleID != "" && !ValidID(PrefixVehicle, f.VehicleID) {
		return Errorf(CodeInvalidRequest, "vehicle_id must be a vehicle id (veh_...).")
	}
	return nil
}

// DevicePatch is a JSON merge patch of a device: fields not Set stay; a
// null vehicle_id detaches the device, a null name clears it. The
// identifier is fixed at registration.
type DevicePatch struct {
	VehicleID Optional[string] `json:"vehicle_id,omitzero"`
	Name      Optional[string] `json:"name,omitzero"`
}

// DeviceDeleted is the answer to deleting a device.
type DeviceDeleted struct {
	DeviceID string `json:"device_id"`
	Deleted  bool   `json:"deleted"`
}

// UnknownDevice is the operator's record of an identifier that tried to
// log in or report without being registered, from one address in one
// protocol.
type UnknownDevice struct {
	Identifier string    `json:"identifier"`
	Protocol   string    `json:"protocol"`
	Address    string    `json:"address"` // the host, without the port
	FirstSeen  time.Time `json:"first_seen_at"`
	LastSeen   time.Time `json:"last_seen_at"`
	// Count is how many attempts were recorded (attempts past an
	// address's or the server's rate are counted in the metrics only: see
	// DeviceEdge.Known).
	Count int64 `json:"count"`
}

// cleanAttrs keeps of p.Attrs those that pass the rules, in name order
// (in their memory), and returns how many it dropped.
func (p *DevicePosition) cleanAttrs() int {
	var dropped int
	p.Attrs, dropped = p.Attrs.clean()
	return dropped
}

// point is the location a valid position becomes, with its attributes
// (cleaned: cleanAttrs).
func (p DevicePosition) point() Point {
	return Point{Latitude: p.Latitude, Longitude: p.Longitude, Timestamp: Timestamp(p.Timestamp),
		Speed: clonePtr(p.Speed), Heading: clonePtr(p.Heading), Attributes: p.Attrs}
}

// shown returns the position as a device's last report keeps it: its time
// at the stores' precision, values JSON cannot hold (NaN, infinities) left
// out (a coordinate as 0), and its attributes as cleanAttrs kept them.
func (p DevicePosition) shown() DevicePosition {
	finite := func(f *float64) *float64 {
		if f == nil || math.IsNaN(*f) || math.IsInf(*f, 0) {
			return nil
		}
		return clonePtr(f)
	}
	out := DevicePosition{Latitude: p.Latitude, Longitude: p.Longitude, Timestamp: Timestamp(p.Timestamp),
		Speed: finite(p.Speed), Heading: finite(p.Heading), Altitude: finite(p.Altitude), Valid: p.Valid,
		Satellites: clonePtr(p.Satellites)}
	if math.IsNaN(out.Latitude) || math.IsInf(out.Latitude, 0) {
		out.Latitude = 0
	}
	if math.IsNaN(out.Longitude) || math.IsInf(out.Longitude, 0) {
		out.Longitude = 0
	}
	if p.Timestamp.IsZero() {
		out.Timestamp = time.Time{}
	}
	out.Attrs = p.Attrs.Clone()
	return out
}
