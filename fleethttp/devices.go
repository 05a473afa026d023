package fleethttp

import (
	"fmt"
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Devices go out as fleet.Device, whose JSON is the API's.

func (h *Handler) createDevice(c *call) error {
	req, err := decode[fleetwire.DeviceInput](c.body, false)
	if err != nil {
		return err
	}
	d, err := h.svc.CreateDevice(c.r.Context(), c.p, fleet.Device{Identifier: req.Identifier, VehicleID: deref(req.VehicleID),
		Name: deref(req.Name)})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, d)
}

func (h *Handler) getDevice(c *call) error {
	d, err := h.svc.Device(c.r.Context(), c.p, c.r.PathValue("device_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) listDevices(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListDevices(c.r.Context(), c.p, fleet.DeviceFilter{Identifier: q.Get("identifier"), VehicleID: q.Get("vehicle_id")}, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchDevice(c *call) error {
	p, err := decode[fleet.DevicePatch](c.body, false)
	if err != nil {
		return err
	}
	d, err := h.svc.UpdateDevice(c.r.Context(), c.p, c.r.PathValue("device_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) deleteDevice(c *call) error {
	d, err := h.svc.DeleteDevice(c.r.Context(), c.p, c.r.PathValue("device_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

// The document's words on devices.

func identifierSchema() *obj {
	return o("type", "string", "pattern", fmt.Sprintf("^[0-9A-Za-z._-]{1,%d}$", fleet.MaxIdentifier), "minLength", 1, "maxLength", fleet.MaxIdentifier,
		"examples", []string{"356307042441013"},
		"description", "What the device sends to name itself: a tracker's IMEI, H02's terminal id, the Traccar Client's device identifier (OsmAnd `id`). "+
			fmt.Sprintf("1 to %d characters of digits, letters, `.`, `_` and `-`. Unique on the server, across every account.", fleet.MaxIdentifier))
}

func descDevices() string {
	return "Trackers and phone apps report positions to the server's device listeners in their own protocols; a device registered here " +
		"with the identifier it sends has them stored as its vehicle's locations, by the rules of `POST /v1/vehicles/{vehicle_id}/locations`. " +
		"Device changes emit no events."
}

func descCreateDevice() string {
	return "A taken identifier is 409 conflict, whichever account holds it (the message does not say which). " +
		"An account holds at most as many devices as its plan allows (" + byPlan(func(l fleet.PlanLimits) int { return l.Devices }) +
		"): one more is 409 conflict naming the plan's cap. A `vehicle_id` that is not a vehicle of the account is 422 naming it. " +
		"Without a vehicle, the device's reports are acknowledged and kept as its `last_report` only."
}

func registerDeviceComponents(g *generator) {
	whole[struct{}](g, "NotStoredReason", func() *obj {
		return enum(fleet.Reasons(), "Why a position was not stored: duplicate (the vehicle has a point at its time, or an earlier position of the same message had it), "+
			"too_old (older than the account's plan reaches back: "+byPlan(func(l fleet.PlanLimits) int { return days(l.HistoryReach) })+" days), "+
			"no_fix (the device had no valid fix, or sent a value a location may not have, such as latitude 91 or a heading of 360), "+
			fmt.Sprintf("future (more than %s ahead of the server's clock), ", minutes(fleet.MaxFutureSkew))+
			"no_vehicle (the device is attached to no vehicle), points_allowance (the account's points per hour were spent: the message was not acknowledged, and the device sends it again later), "+
			"device_points_allowance (the device's own points per hour were spent — a fifth of its account's, at least "+num(fleet.MinDevicePointsPerHour)+": not acknowledged either, and sent again later).")
	})
	comp[fleet.DevicePosition](g, "DevicePosition", output, func(s *shape) {
		s.describe("A position as the device sent it, in the API's units. A position that was not stored (no_fix) may hold values a location cannot.").
			with("speed", "description", "km/h; null when the device sent none.").
			with("heading", "description", "Degrees clockwise from north.").
			with("altitude", "description", "Metres.").
			with("valid", "description", "Whether the device had a fix.").
			with("satellites", "description", "Satellites in use.").
			replace("attributes", o("type", "object", "additionalProperties", o("title", "DeviceAttribute", "oneOf", []any{
				o("title", "Number", "type", "number", "format", "double"), o("title", "Flag", "type", "boolean"), o("title", "Text", "type", "string")},
				// Go has no union of scalars: a value of any of the three.
				"x-go-type", "interface{}"),
				"description", fmt.Sprintf("What the device sent beside the position, in the common vocabulary (ignition, power, fuel, odometer, alarm...; a value whose meaning depends on the model under its raw name, such as Teltonika's `io240`): numbers, booleans and text; at most %d, the first in name order, a name of at most %d bytes (`^[a-z][a-z0-9_]*$`), a text of at most %d characters; an attribute outside these rules is dropped and counted, the position kept.",
					fleet.MaxPointAttributes, fleet.MaxAttrName, fleet.MaxAttrText)))
	})
	comp[fleet.LastReport](g, "LastReport", output, func(s *shape) {
		s.describe("The last position of the device's last message, in the order the message carries them (a Teltonika frame often ends with its oldest record), whether or not it was stored.").
			with("received_at", "description", "When the server received the message.").
			with("protocol", "description", "The protocol of the message.").
			replace("position", ref("DevicePosition")).
			with("stored", "description", "Whether the position was stored as a location of the device's vehicle.").
			replace("reason", o("oneOf", []any{ref("NotStoredReason"), o("type", "null")}, "description", "Why it was not stored; null when it was."))
	})
	comp[fleet.Device](g, "Device", output, func(s *shape) {
		s.describe(descDevices()).
			replace("device_id", id(fleet.PrefixDevice)).
			replace("identifier", identifierSchema()).
			replace("vehicle_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixVehicle),
				"description", "The vehicle whose locations its positions become; null when none. Deleting the vehicle sets it to null.")).
			null("name").with("name", "maxLength", fleet.MaxDeviceName).
			null("protocol").with("protocol", "description", "The protocol it last spoke (teltonika, osmand, gt06...); null before its first message.").
			with("updated_at", "description", "Last change by a client (reports do not move it).").
			with("last_seen_at", "format", "date-time", "description", "When its last message arrived; null before the first.").
			replace("last_report", o("oneOf", []any{ref("LastReport"), o("type", "null")}))
	})
	comp[fleetwire.DeviceInput](g, "DeviceInput", input, func(s *shape) {
		s.describe("Registers a device by the identifier it sends. "+descCreateDevice()).
			require("identifier").replace("identifier", identifierSchema()).
			with("vehicle_id", "description", "The vehicle whose locations its positions become.").
			with("name", "maxLength", fleet.MaxDeviceName)
	})
	comp[fleet.DevicePatch](g, "DevicePatch", input, func(s *shape) {
		s.describe("JSON merge patch: an absent field is unchanged, null clears it (a null `vehicle_id` detaches the device). The identifier is fixed at registration. "+
			"A device moved to another vehicle reports to it from its next message on; what it reported before stays the old vehicle's.").
			null("vehicle_id name").
			with("name", "maxLength", fleet.MaxDeviceName)
	})
	comp[fleet.DeviceDeleted](g, "DeviceDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
}
