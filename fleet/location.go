package fleet

import (
	"math"
	"time"
)

// Point is one location report of a vehicle. Latitude, Longitude and
// Timestamp are required: a NaN coordinate, as NoCoordinate, is one that was
// not given (0 is a position), and a zero Timestamp is none.
type Point struct {
	VehicleID  string    `json:"-"`
	Latitude   float64   `json:"latitude"`
	Longitude  float64   `json:"longitude"`
	Timestamp  time.Time `json:"timestamp"`
	Speed      *float64  `json:"speed"`
	Heading    *float64  `json:"heading"`
	OdometerKm *float64  `json:"odometer_km"`
	// Attributes are what the report said besides its position (API.md
	// §14), in name order; omitted when none.
	Attributes Attributes `json:"attributes,omitempty"`
}

// NoCoordinate is a coordinate that was not given: a Point with it as its
// Latitude or Longitude is refused, "is required".
var NoCoordinate = math.NaN()

// Batch limits of the contract.
const (
	MaxPointsPerVehicleBatch = 1_000
	MaxPointsPerBulkBatch    = 10_000
	MaxFutureSkew            = 5 * time.Minute
	DefaultHistoryWindow     = 24 * time.Hour
	DefaultHistoryLimit      = 1_000
	MaxHistoryLimit          = 10_000
	StreamReplayWindow       = 10 * time.Minute
)

// validate checks one point at time now into v (whose prefix names it),
// once its numbers are stored without -0 (unsignedZero), its attributes
// included.
func (p *Point) validate(v *Validator, now time.Time) {
	p.validatePosition(v, now)
	p.Attributes.validate(v)
}

// validatePosition is validate without the attributes: a device's
// position, whose attributes were cleaned instead (see positionReason).
func (p *Point) validatePosition(v *Validator, now time.Time) {
	p.Latitude, p.Longitude = unsignedZero(p.Latitude), unsignedZero(p.Longitude)
	p.Speed, p.Heading, p.OdometerKm = unsignedZeroPtr(p.Speed), unsignedZeroPtr(p.Heading), unsignedZeroPtr(p.OdometerKm)
	switch {
	case math.IsNaN(p.Latitude):
		v.Add("latitude", "is required")
	default:
		v.Check(p.Latitude >= -90 && p.Latitude <= 90, "latitude", "must be between -90 and 90")
	}
	switch {
	case math.IsNaN(p.Longitude):
		v.Add("longitude", "is required")
	default:
		v.Check(p.Longitude >= -180 && p.Longitude <= 180, "longitude", "must be between -180 and 180")
	}
	switch {
	case p.Timestamp.IsZero():
		v.Add("timestamp", "is required")
	case p.Timestamp.After(now.Add(MaxFutureSkew)):
		v.Add("timestamp", "is more than 5 minutes in the future")
	case p.Timestamp.Year() < 2000:
		v.Add("timestamp", "must be in the year 2000 or later")
	}
	if p.Speed != nil {
		v.Check(*p.Speed >= 0 && *p.Speed <= 1000, "speed", "must be between 0 and 1000 km/h")
	}
	if p.Heading != nil {
		v.Check(*p.Heading >= 0 && *p.Heading < 360, "heading", "must be at least 0 and below 360")
	}
	if p.OdometerKm != nil {
		v.Check(*p.OdometerKm >= 0 && *p.OdometerKm < 1e8, "odometer_km", "must be between 0 and 100000000")
	}
}

// IngestResult is the answer to a location batch.
type IngestResult struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
}

// LocationRecord is a vehicle's latest location as the snapshot and the
// stream show it.
type LocationRecord struct {
	VehicleID string        `json:"vehicle_id"`
	Name      string        `json:"name"`
	Location  RecordPoint   `json:"location"`
	Status    VehicleStatus `json:"status"`
	Speed     *float64      `json:"speed"`
	Heading   *float64      `json:"heading"`
	// Attributes are the latest report's (API.md §14); omitted when none.
	Attributes Attributes `json:"attributes,omitempty"`
}

// RecordPoint is the location object of a LocationRecord.
type RecordPoint struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
}

// Record returns the vehicle's latest location record; ok is false if it has
// never reported.
func (v *Vehicle) Record() (LocationRecord, bool) {
	if v.LastLocation == nil {
		return LocationRecord{}, false
	}
	return LocationRecord{
		VehicleID: v.ID, Name: v.Name, Status: v.Status, Speed: v.Speed, Heading: v.LastLocation.Heading, Attributes: v.LastAttributes,
		Location: RecordPoint{Latitude: v.LastLocation.Latitude, Longitude: v.LastLocation.Longitude, Timestamp: v.LastLocation.Timestamp},
	}, true
}

// AppendJSON appends the point as JSON to b, byte for byte as
// encoding/json writes it, without reflection or the re-reading of a
// Marshaler's output: what a page of history is written with.
func (p *Point) AppendJSON(b []byte) []byte {
	b = append(b, `{"latitude":`...)
	b = appendJSONNumber(b, p.Latitude)
	b = append(b, `,"longitude":`...)
	b = appendJSONNumber(b, p.Longitude)
	b = append(b, `,"timestamp":"`...)
	b = p.Timestamp.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","speed":`...)
	b = appendJSONOptional(b, p.Speed)
	b = append(b, `,"heading":`...)
	b = appendJSONOptional(b, p.Heading)
	b = append(b, `,"odometer_km":`...)
	b = appendJSONOptional(b, p.OdometerKm)
	if len(p.Attributes) > 0 {
		b = append(b, `,"attributes":`...)
		b = p.Attributes.AppendJSON(b)
	}
	return append(b, '}')
}

// appendJSONWith is AppendJSON of the point with the attributes blobs
// holds for point i, written from their binary form (p.Attributes is nil).
func (p *Point) appendJSONWith(b []byte, blobs *AttributeBlobs, i int) ([]byte, error) {
	b = p.AppendJSON(b)
	stored := blobs.At(i)
	if len(stored) == 0 {
		return b, nil
	}
	b = append(b[:len(b)-1], `,"attributes":`...) // in place of the closing brace
	n := len(b)
	b, err := AppendAttributesJSON(b, stored)
	if err != nil {
		return b, err
	}
	if len(b) == n+2 { // a form of no attributes: omitted, as when empty
		b = b[:n-len(`,"attributes":`)]
	}
	return append(b, '}'), nil
}

func appendJSONOptional(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendJSONNumber(b, *f)
}
