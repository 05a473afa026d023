package fleet

import "time"

// A Device is a GPS tracker or phone app that reports positions itself, in
// its own protocol, to a listener of the server (API.md §13). Its
// Identifier is what it sends to name itself (an IMEI, H02's terminal id,
// OsmAnd's id), unique on the server across every account; a device with a
// vehicle has its positions ingested as that vehicle's locations.
//
// The registry (Device, its store and its use cases) is in device*.go;
// this file holds what a listener hands the service and gets back.

// DevicePosition is one position of a device's report, in the API's units
// (speed km/h, heading degrees, altitude metres, time UTC).
type DevicePosition struct {
	Latitude   float64        `json:"latitude"`
	Longitude  float64        `json:"longitude"`
	Timestamp  time.Time      `json:"timestamp"`
	Speed      *float64       `json:"speed"`
	Heading    *float64       `json:"heading"`
	Altitude   *float64       `json:"altitude"`
	Valid      bool           `json:"valid"`
	Satellites *int           `json:"satellites"`
	Attributes map[string]any `json:"attributes"`
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
