package fleethttp

import (
	"fmt"

	"github.com/fleetkit/fleetapi/fleet"
)

// registerTelematicsComponents describes the attributes of a point and the
// data of the telematics events (API.md §14).
func registerTelematicsComponents(g *generator) {
	whole[fleet.Attributes](g, "Attributes", func() *obj {
		return o("type", "object", "maxProperties", fleet.MaxPointAttributes,
			"propertyNames", o("pattern", fmt.Sprintf("^[a-z][a-z0-9_]{0,%d}$", fleet.MaxAttrName-1)),
			"additionalProperties", o("title", "AttributeValue", "oneOf", []any{
				o("title", "Number", "type", "number", "format", "double"), o("title", "Flag", "type", "boolean"),
				o("title", "Text", "type", "string", "maxLength", fleet.MaxAttrText)},
				// Go has no union of scalars: a value of any of the three.
				"x-go-type", "interface{}"),
			"description", fmt.Sprintf("What the report says besides its position (API.md §14), by name: numbers (finite), booleans and text (at most %d characters, no control characters); at most %d. Names of the common vocabulary (`ignition`, `power_v`, `odometer_km`, `engine_hours`, `fuel_level`, `fuel_l`, `driver_identifier`, `alarm`...) have one meaning and unit whatever the source. Omitted when empty.",
				fleet.MaxAttrText, fleet.MaxPointAttributes))
	})
	location := func(s *shape) *shape {
		return s.with("location", "description", "Where the vehicle was: the point's position.")
	}
	comp[fleet.EventLocation](g, "EventLocation", output, func(s *shape) {
		s.with("latitude", "minimum", -90, "maximum", 90).with("longitude", "minimum", -180, "maximum", 180)
	})
	comp[fleet.IgnitionChange](g, "IgnitionChange", output, func(s *shape) {
		location(s).describe("The data of vehicle.ignition_on and vehicle.ignition_off: the ignition changed between consecutive forward points.").
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			with("at", "description", "The time of the point that changed it.").
			replace("device_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDevice), "description", "The device that reported it; null for an API client's point."))
	})
	comp[fleet.DeviceAlarm](g, "DeviceAlarm", output, func(s *shape) {
		location(s).describe(fmt.Sprintf("The data of device.alarm: an alarm a point raised, at most once per device and alarm type in %s.", minutes(fleet.AlarmRepeatWindow))).
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("device_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDevice), "description", "The device that raised it; null for an API client's point.")).
			with("alarm", "description", "One alarm word of the vocabulary: "+joinWords(fleet.AlarmWords())+".").
			with("at", "description", "The time of the point that raised it.")
	})
	comp[fleet.FuelChange](g, "FuelChange", output, func(s *shape) {
		location(s).describe(fmt.Sprintf("The data of vehicle.fuel_drop and vehicle.refuel: fuel fell (rose) by at least %g percent points or %g litres between consecutive forward points while the vehicle was not moving.", fleet.FuelChangePercent, fleet.FuelChangeLitres)).
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("unit", o("type", "string", "enum", []string{fleet.FuelUnitPercent, fleet.FuelUnitLitres}, "description", "`percent` of the tank (`fuel_level`) or litres (`fuel_l`).")).
			with("at", "description", "The time of the point that showed it.")
	})
	comp[fleet.IdlingChange](g, "IdlingChange", output, func(s *shape) {
		s.describe(fmt.Sprintf("The data of vehicle.idling_started (ignition on below the moving speed for %s) and vehicle.idling_ended (movement or ignition off).", minutes(fleet.IdlingAfter))).
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			with("at", "description", "The time of the point that started (ended) it.").
			with("minutes", "minimum", 0, "description", "How long the idling had lasted at `at`.")
	})
}

// joinWords writes words as `a`, `b`, `c`.
func joinWords(words []string) string {
	out := ""
	for i, w := range words {
		if i > 0 {
			out += ", "
		}
		out += "`" + w + "`"
	}
	return out
}
