package fleet

import "time"

// telemetryJudgement is what one vehicle's forward points of a location
// batch did, for the telematics alert rules (API.md §14) to judge, in the
// batch's write transaction.
type telemetryJudgement struct {
	accountID string
	// deviceID is the device whose report the batch is ("" for an API
	// client's batch).
	deviceID string
	// cfg is the account's alert configuration the batch was judged
	// against (its compiled rules).
	cfg *alertConfig
	// before is the vehicle as the batch found it (its telematics state
	// and Telemetry memory before the batch).
	before Vehicle
	// vehicle is the vehicle after the batch; the caller writes it after
	// the judgement, so an alert opened for it moves its AlertsVersion
	// here (openRuleAlert does), and is written with it.
	vehicle *Vehicle
	// previous is the vehicle's latest forward point before the batch (its
	// position, time, speed and heading, as the vehicle kept them; no
	// attributes: the state it left is before's), nil when it had none.
	previous *Point
	// points are the batch's forward points of the vehicle, in time order,
	// with their attributes.
	points []Point
	// events are the telematics events the points emitted, in the order
	// they were emitted.
	events []telemetryEvent
	now    time.Time
}

// telemetryEvent is one event a forward point emitted: its type, its data
// (IgnitionChange, DeviceAlarm, DriverChange, FuelChange, IdlingChange) and
// the index in telemetryJudgement.points of the point that caused it.
type telemetryEvent struct {
	typ   string
	data  any
	point int
}

// judgeTelemetry opens and resolves the alerts of the telematics rules
// (API.md §14) for what one vehicle's forward points of a batch did.
func (s *Service) judgeTelemetry(tx resolveTx, in telemetryJudgement) error { return nil }
