package fleet

import (
	"encoding/json"
	"slices"
	"time"
)

// Event types.
const (
	EventVehicleCreated         = "vehicle.created"
	EventVehicleUpdated         = "vehicle.updated"
	EventVehicleDeleted         = "vehicle.deleted"
	EventVehicleStatusChanged   = "vehicle.status_changed"
	EventWorkOrderCreated       = "work_order.created"
	EventWorkOrderUpdated       = "work_order.updated"
	EventWorkOrderStatusChanged = "work_order.status_changed"
	EventMaintenanceDueSoon     = "maintenance.due_soon"
	EventMaintenanceOverdue     = "maintenance.overdue"
	EventAlertCreated           = "alert.created"
	EventAlertAcknowledged      = "alert.acknowledged"
	EventAlertResolved          = "alert.resolved"
	EventWebhookTest            = "webhook.test"
	EventTripStarted            = "trip.started"
	EventTripCompleted          = "trip.completed"
	EventVehicleDriverChanged   = "vehicle.driver_changed"
)

// EventTypes lists every event type.
var eventTypes = []string{
	EventVehicleCreated, EventVehicleUpdated, EventVehicleDeleted, EventVehicleStatusChanged,
	EventWorkOrderCreated, EventWorkOrderUpdated, EventWorkOrderStatusChanged,
	EventMaintenanceDueSoon, EventMaintenanceOverdue,
	EventAlertCreated, EventAlertAcknowledged, EventAlertResolved, EventWebhookTest,
	EventTripStarted, EventTripCompleted, EventVehicleDriverChanged,
	EventVehicleIgnitionOn, EventVehicleIgnitionOff, EventDeviceAlarm, EventVehicleFuelDrop, EventVehicleRefuel,
	EventVehicleIdlingStarted, EventVehicleIdlingEnded,
}

// EventTypes lists every event type.
func EventTypes() []string { return slices.Clone(eventTypes) }

// ValidEventType reports whether t is a known event type.
func ValidEventType(t string) bool { return slices.Contains(eventTypes, t) }

// EventRetention is how long events are kept.
const EventRetention = 30 * 24 * time.Hour

// Event records a change. Data is the JSON of the object after the change
// (for status changes {vehicle_id, from, to, at}).
type Event struct {
	ID        string          `json:"event_id"`
	AccountID string          `json:"-"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// EventFilter selects events in a list.
type EventFilter struct {
	Type string    // "" for any
	From time.Time // zero for any: events created at or after From
}

// Match reports whether e passes the filter.
func (f EventFilter) Match(e *Event) bool {
	return (f.Type == "" || e.Type == f.Type) && (f.From.IsZero() || !e.CreatedAt.Before(f.From))
}

// StatusChange is the data of a vehicle.status_changed event.
type StatusChange struct {
	VehicleID string        `json:"vehicle_id"`
	From      VehicleStatus `json:"from"`
	To        VehicleStatus `json:"to"`
	At        time.Time     `json:"at"`
}

// EventData returns a zero value of the type whose JSON an event of type
// typ holds as its data (nil for an unknown type): what a webhook receiver
// of that type gets, for documents and clients that describe events.
func EventData(typ string) any {
	switch typ {
	case EventVehicleCreated, EventVehicleUpdated:
		return Vehicle{}
	case EventVehicleDeleted:
		return VehicleDeleted{}
	case EventVehicleStatusChanged:
		return StatusChange{}
	case EventWorkOrderCreated, EventWorkOrderUpdated:
		return WorkOrder{}
	case EventWorkOrderStatusChanged:
		return WorkOrderStatusChange{}
	case EventMaintenanceDueSoon, EventMaintenanceOverdue:
		return Schedule{}
	case EventAlertCreated, EventAlertAcknowledged, EventAlertResolved:
		return Alert{}
	case EventWebhookTest:
		return WebhookTestData{}
	case EventTripStarted, EventTripCompleted:
		return Trip{}
	case EventVehicleDriverChanged:
		return DriverChange{}
	case EventVehicleIgnitionOn, EventVehicleIgnitionOff:
		return IgnitionChange{}
	case EventDeviceAlarm:
		return DeviceAlarm{}
	case EventVehicleFuelDrop, EventVehicleRefuel:
		return FuelChange{}
	case EventVehicleIdlingStarted, EventVehicleIdlingEnded:
		return IdlingChange{}
	}
	return nil
}

// newEvent builds an event of the account whose data is v as JSON.
func newEvent(accountID, typ string, now time.Time, v any) (Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: NewID(PrefixEvent), AccountID: accountID, Type: typ, CreatedAt: now, Data: data}, nil
}
