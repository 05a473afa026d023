package fleethttp

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// The document's component schemas: each is built from its Go wire type by
// reflection (member names, order, types, nullability of pointers), and the
// notes here add what a type cannot say — descriptions, and limits, which
// come from package fleet.

func ts() *obj { return o("type", "string", "format", "date-time") }

func id(prefix string) *obj { return o("type", "string", "pattern", fleet.IDPattern(prefix)) }

func comp[T any](g *generator, name string, kind schemaKind, notes func(*shape)) {
	g.add(component{name: name, typ: reflect.TypeFor[T](), kind: kind, notes: notes})
}

func whole[T any](g *generator, name string, schema func() *obj) {
	var typ reflect.Type
	if t := reflect.TypeFor[T](); t != reflect.TypeFor[struct{}]() {
		typ = t
	}
	g.add(component{name: name, typ: typ, whole: schema})
}

// statusDesc describes a state machine from its transition table.
func statusDesc[T ~string](all []T, moves func(T) []T) string {
	var parts, final []string
	for _, s := range all {
		to := moves(s)
		if len(to) == 0 {
			final = append(final, string(s))
			continue
		}
		names := make([]string, len(to))
		for i, t := range to {
			names[i] = string(t)
		}
		parts = append(parts, string(s)+" -> "+strings.Join(names, " | "))
	}
	return strings.Join(parts, "; ") + "; " + strings.Join(final, " and ") + " final."
}

func registerComponents(g *generator) {
	th := fleet.DefaultStatusThresholds
	whole[struct{}](g, "FieldError", func() *obj {
		return o("type", "object", "required", []string{"field", "message"}, "additionalProperties", false,
			"properties", o("field", o("type", "string", "examples", []string{"locations[3].latitude"}), "message", o("type", "string")))
	})
	whole[struct{}](g, "Error", func() *obj {
		return o("type", "object", "required", []string{"code", "message", "request_id"}, "additionalProperties", false,
			"properties", o("code", o("type", "string", "enum", errorCodes()), "message", o("type", "string"),
				"request_id", o("type", "string"), "details", o("type", "array", "items", ref("FieldError"))))
	})
	whole[struct{}](g, "ErrorEnvelope", func() *obj {
		return o("type", "object", "required", []string{"success", "error"}, "additionalProperties", false,
			"properties", o("success", single(false), "error", ref("Error")))
	})
	comp[pagination](g, "Pagination", output, func(s *shape) {
		s.with("next_cursor", "description", "Pass as `cursor` to get the next page; null on the last page.")
	})
	whole[fleet.Plan](g, "Plan", func() *obj { return enum(fleet.Plans(), "") })
	whole[struct{}](g, "Permission", func() *obj {
		return enum(append([]fleet.Permission{fleet.PermAll}, fleet.AllPermissions()...),
			"`*` is every permission; `RESOURCE:write` implies `RESOURCE:read`.")
	})
	comp[fleetwire.Account](g, "Account", output, func(s *shape) {
		s.replace("account_id", id(fleet.PrefixAccount)).replace("plan", ref("Plan")).
			replace("api_version", single(fleet.APIVersion)).
			with("rate_limit_per_hour", "description", "Hourly allowance of each key: the plan's, or the account's own higher limit.").
			replace("created_at", ts())
	})
	whole[fleet.KeyStatus](g, "KeyStatus", func() *obj { return enum(fleet.KeyStatuses(), "") })
	keyFields := func(s *shape) *shape {
		return s.replace("key_id", id(fleet.PrefixKey)).
			with("prefix", "description", fmt.Sprintf("The first %d characters of the secret, to recognise it by.", fleet.KeyPrefixLen),
				"minLength", fleet.KeyPrefixLen, "maxLength", fleet.KeyPrefixLen).
			replace("permissions", o("type", "array", "items", ref("Permission"))).
			with("environment", "description", "Free label, e.g. production or development.").
			replace("status", ref("KeyStatus"))
	}
	comp[fleetwire.APIKey](g, "ApiKey", output, func(s *shape) { keyFields(s) })
	comp[fleetwire.NewAPIKey](g, "NewApiKey", output, func(s *shape) {
		keyFields(s).describe("A key as created or rotated, with its secret: shown this once only.").
			replace("key", o("type", "string", "pattern", fmt.Sprintf("^%s[0-9A-Za-z]{%d}$", fleet.SecretPrefix, fleet.SecretLen-len(fleet.SecretPrefix)),
				"description", "The secret. Store it now: it cannot be read again.")).
			replace("previous_key", o("$ref", "#/components/schemas/ApiKey", "description", "On rotation: the old key, with the expiry its grace period gives it."))
	})
	comp[fleetwire.StreamToken](g, "StreamToken", output, func(s *shape) {
		s.describe("A stream token: opens one live stream of the key that made it, within its validity. Shown this once.").
			replace("token", o("type", "string", "pattern", fmt.Sprintf("^%s[0-9A-Za-z]{%d}$", fleet.StreamTokenPrefix, fleet.StreamTokenLen-len(fleet.StreamTokenPrefix)),
				"description", "Pass it as `?token=` to `GET /v1/vehicles/locations/stream`, once.")).
			with("expires_at", "description", "When the token stops being usable: "+seconds(fleet.StreamTokenTTL)+" after it was made.")
	})
	comp[fleetwire.KeyUsage](g, "KeyUsage", output, func(s *shape) {
		hours := s.prop("hours")
		hours.set("description", "One entry per clock hour, newest first, the current hour included; hours without requests count zero.")
		item := hours.get("items").(*obj)
		item.get("properties").(*obj).get("requests").(*obj).set("description", "Requests made with the key, rejected ones included.")
		item.get("properties").(*obj).get("rejected").(*obj).set("description", "Requests refused by the rate limit (429).")
	})
	comp[fleetwire.CreateKeyRequest](g, "CreateKeyRequest", input, func(s *shape) {
		s.require("name").with("name", "minLength", 1, "maxLength", fleet.MaxKeyName).
			replace("permissions", o("type", "array", "items", ref("Permission"), "minItems", 1,
				"description", "Defaults to the permissions of the key making the request; a key can only grant permissions it holds.")).
			with("environment", "maxLength", fleet.MaxEnvironment, "description", "Defaults to `production`.").
			replace("expires_at", o("type", "string", "format", "date-time", "description", "Must be in the future, and not later than the expiry of the key making the request. Omitted: that key's expiry, or none for a key that does not expire."))
	})
	comp[fleetwire.RotateKeyRequest](g, "RotateKeyRequest", input, func(s *shape) {
		s.replace("grace_period_seconds", o("type", "integer", "minimum", 0, "maximum", int64(fleet.MaxRotationGrace/time.Second),
			"default", int64(fleet.DefaultRotationGrace/time.Second), "description", "How long the old key keeps working. 0 replaces it at once (allowed at the cap of active keys)."))
	})

	// Vehicles and tracking.
	comp[fleet.Position](g, "Position", output, func(s *shape) {
		s.with("latitude", "minimum", -90, "maximum", 90).with("longitude", "minimum", -180, "maximum", 180).
			with("heading", "minimum", 0, "exclusiveMaximum", 360)
	})
	whole[fleet.VehicleStatus](g, "VehicleStatus", func() *obj {
		return enum(fleet.VehicleStatuses(), fmt.Sprintf("moving: latest report at %g km/h or more; idle: below that, stationary under %s; stopped: stationary %s or more; offline: no report for %s, or never reported. Derived by the server (thresholds configurable per server).",
			th.MovingSpeed, minutes(th.StopAfter), minutes(th.StopAfter), minutes(th.OfflineAfter)))
	})
	comp[fleet.Vehicle](g, "Vehicle", output, func(s *shape) {
		s.replace("vehicle_id", id(fleet.PrefixVehicle)).
			with("name", "minLength", 1, "maxLength", fleet.MaxVehicleName).
			null("vin make model license_plate external_id").
			replace("vin", o("type", []string{"string", "null"}, "pattern", "^[A-HJ-NPR-Z0-9]{17}$")).
			replace("driver_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver),
				"description", "The driver who drives the vehicle now; null when none. Read-only: assigned with `PUT /v1/vehicles/{vehicle_id}/driver`, or by a device's report carrying a driver's identifier.")).
			with("external_id", "description", "Your own id for the vehicle, unique in the account.").
			with("speed", "description", "km/h, from the latest report.").
			with("odometer_km", "description", "Set by hand, by a report's `odometer_km` (never backwards by more than 1 km), or, for a vehicle whose reports carry none, advanced by the distance between its reports.").
			with("ignition", "description", "Whether the ignition is on, from the newest report that said; null until one did.").
			with("engine_hours", "minimum", 0, "description", "Total engine hours: a report's `engine_hours`, or advanced by the time between reports while the ignition was on; null until known.").
			with("fuel_level", "description", "Fuel in the tank, percent, from the newest report that carried it; null until one did.").
			with("fuel_l", "description", "Fuel in the tank, litres, from the newest report that carried it; null until one did.").
			with("power_v", "description", "External (vehicle) power, volts, from the newest report that carried it; null until one did.").
			with("telemetry_at", "description", "The time of the newest report the telematics state (ignition, engine hours, fuel, power) comes from; null before one.").
			with("updated_at", "description", "Last change by a client (location reports do not move it).")
	})
	vehicleFields := func(s *shape) *shape {
		return s.with("name", "minLength", 1, "maxLength", fleet.MaxVehicleName).
			with("vin", "minLength", 17, "maxLength", 17).
			with("make model license_plate external_id", "maxLength", fleet.MaxTextField).
			with("year", "minimum", 1900).
			replace("tags", o("type", []string{"array", "null"}, "maxItems", fleet.MaxTags, "items", o("type", "string", "minLength", 1, "maxLength", fleet.MaxTagLen))).
			with("odometer_km", "minimum", 0)
	}
	comp[fleetwire.VehicleInput](g, "VehicleInput", input, func(s *shape) {
		vehicleFields(s).describe(fmt.Sprintf("Unset optional fields are null. A VIN is 17 characters without I, O or Q (stored upper-case); year from 1900 to next year; at most %d tags.", fleet.MaxTags)).
			require("name")
	})
	comp[fleet.VehiclePatch](g, "VehiclePatch", input, func(s *shape) {
		vehicleFields(s).describe("JSON merge patch: an absent field is unchanged, null clears it (name cannot be cleared).").
			null("vin make model license_plate external_id")
	})
	comp[fleet.VehicleDeleted](g, "VehicleDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
	comp[fleet.LocationRecord](g, "LocationRecord", output, func(s *shape) {
		s.replace("status", ref("VehicleStatus"))
	})
	pointFields := func(s *shape) *shape {
		return s.require("latitude longitude timestamp").nonNull("latitude longitude timestamp").
			with("latitude", "minimum", -90, "maximum", 90).with("longitude", "minimum", -180, "maximum", 180).
			with("timestamp", "description", fmt.Sprintf("At most %s in the future.", minutes(fleet.MaxFutureSkew))).
			with("speed", "minimum", 0, "maximum", 1000, "description", "km/h. Absent counts as stationary.").
			with("heading", "minimum", 0, "exclusiveMaximum", 360).
			with("odometer_km", "minimum", 0, "description", "Updates the vehicle's odometer when the point is its newest.")
	}
	comp[fleetwire.LocationInput](g, "LocationInput", input, func(s *shape) {
		pointFields(s).describe("A location report of the vehicle the path names (a `vehicle_id` here is 422: the bulk batch takes it).").
			drop("vehicle_id")
	})
	comp[fleetwire.LocationInput](g, "BulkLocationInput", input, func(s *shape) {
		pointFields(s).describe("A location report of a bulk batch, naming its vehicle.").
			require("vehicle_id").nonNull("vehicle_id").
			with("vehicle_id", "description", "The vehicle of the point: one of the account's.")
	})
	comp[fleetwire.LocationBatch](g, "VehicleBatch", input, func(s *shape) {
		s.require("locations").replace("locations", o("type", "array", "minItems", 1, "maxItems", fleet.MaxPointsPerVehicleBatch,
			"items", ref("LocationInput")))
	})
	comp[bulkRequest](g, "BulkBatch", input, func(s *shape) {
		s.require("locations").replace("locations", o("type", "array", "minItems", 1, "maxItems", fleet.MaxPointsPerBulkBatch,
			"items", ref("BulkLocationInput")))
	})
	comp[fleet.Point](g, "Point", output, nil)
	comp[fleet.IngestResult](g, "IngestResult", output, func(s *shape) {
		s.with("accepted", "description", "Points stored (durable once this answer is sent).").
			with("duplicates", "description", "Points skipped: the vehicle has a point at that timestamp already.")
	})

	// Events.
	whole[struct{}](g, "EventType", func() *obj { return enum(fleet.EventTypes(), "") })
	comp[fleet.StatusChange](g, "VehicleStatusChange", output, func(s *shape) {
		s.describe("The data of a vehicle.status_changed event.").replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("from", ref("VehicleStatus")).replace("to", ref("VehicleStatus")).
			with("at", "description", "When the vehicle changed status: the report's time, or the clock's for a change the sweep found.")
	})
	comp[fleet.WorkOrderStatusChange](g, "WorkOrderStatusChange", output, func(s *shape) {
		s.describe("The data of a work_order.status_changed event.").replace("work_order_id", id(fleet.PrefixWorkOrder)).
			replace("vehicle_id", id(fleet.PrefixVehicle)).replace("from", ref("WorkOrderStatus")).replace("to", ref("WorkOrderStatus"))
	})
	comp[fleet.WebhookTestData](g, "WebhookTestData", output, func(s *shape) {
		s.describe("The data of a webhook.test event: the endpoint tested.").replace("webhook_id", id(fleet.PrefixWebhook))
	})
	comp[fleet.Event](g, "Event", output, func(s *shape) {
		s.replace("event_id", id(fleet.PrefixEvent)).replace("type", ref("EventType")).
			replace("data", o("$ref", "#/components/schemas/EventData", "description", "The object after the change, of the type's payload (see EventData)."))
	})
	// Event.data is the union of the event payloads: referenced from the
	// paths (GET /v1/events), so that generators that keep only what the
	// paths reach keep them, and typed, so that a client reads them as
	// such.
	whole[struct{}](g, "EventData", func() *obj {
		var branches []any
		var names, desc []string
		for _, typ := range fleet.EventTypes() {
			name, ok := g.byType[reflect.TypeOf(fleet.EventData(typ))]
			if !ok {
				g.fail("event type %s: its data type %T is not a component", typ, fleet.EventData(typ))
				continue
			}
			desc = append(desc, "`"+typ+"`: "+name)
			if !slices.Contains(names, name) {
				names = append(names, name)
				branches = append(branches, ref(name))
				g.title(name)
			}
		}
		return o("title", "EventData", "description", "The data of an event, by its `type`: "+strings.Join(desc, "; ")+".", "oneOf", branches)
	})

	// Maintenance.
	whole[fleet.WorkOrderStatus](g, "WorkOrderStatus", func() *obj {
		return enum(fleet.WorkOrderStatuses, statusDesc(fleet.WorkOrderStatuses, fleet.WorkOrderMoves)+
			" Any other move is 409 invalid_state_transition; repeating the current status is not a move and changes nothing.")
	})
	whole[fleet.Priority](g, "Priority", func() *obj { return enum(fleet.Priorities(), "") })
	comp[fleet.WorkOrder](g, "WorkOrder", output, func(s *shape) {
		s.replace("work_order_id", id(fleet.PrefixWorkOrder)).
			with("vehicle_id", "description", "The vehicle serviced. A work order stays, as history, when its vehicle is deleted.").
			with("title", "minLength", 1, "maxLength", fleet.MaxTitle).
			null("description due_date assigned_to currency schedule_id").
			with("due_date", "format", "date").
			with("assigned_to", "description", "Who does the work: a person, a team or a garage.").
			with("odometer_km", "description", "The odometer reading at the service.").
			with("cost_cents", "minimum", 0, "description", "Cost in minor units of `currency` (cents for EUR or USD).").
			with("currency", "pattern", "^[A-Z]{3}$", "description", "ISO 4217 code.").
			with("schedule_id", "description", "The schedule whose service this is (set on work orders a schedule opened itself). Completing the work order records the service on that schedule.").
			with("completed_at", "description", "When it moved to completed.")
	})
	workOrderFields := func(s *shape) *shape {
		return s.with("title", "minLength", 1, "maxLength", fleet.MaxTitle).
			with("description", "maxLength", fleet.MaxDescription, "description", descMultiline).
			with("due_date", "format", "date").
			with("assigned_to", "maxLength", fleet.MaxTextField).
			with("odometer_km", "minimum", 0).
			with("cost_cents", "minimum", 0).
			with("currency", "pattern", "^[A-Z]{3}$", "description", "Required when `cost_cents` is set.")
	}
	comp[fleetwire.WorkOrderInput](g, "WorkOrderInput", input, func(s *shape) {
		workOrderFields(s).describe("A new work order is `open`; its status then changes through PATCH. `vehicle_id` must name a vehicle of the account and `schedule_id` a schedule of that vehicle, else 422 validation_error naming the field.").
			require("vehicle_id title").
			set("dependentRequired", o("cost_cents", []string{"currency"}))
		s.
			replace("priority", o("oneOf", []any{ref("Priority"), o("type", "null")}, "description", "Default `medium`.")).
			with("schedule_id", "description", "Links the work order to a schedule of the same vehicle. The first linked work order of a service cycle counts as the cycle's: the schedule then opens none itself.")
	})
	comp[fleet.WorkOrderPatch](g, "WorkOrderPatch", input, func(s *shape) {
		workOrderFields(s).describe("JSON merge patch: an absent field is unchanged, null clears it (title, priority and status cannot be cleared). `vehicle_id` and `schedule_id` are fixed at creation. Fields other than status stay editable in every status. A patch that changes nothing is a no-op: no event, `updated_at` stays.").
			null("description due_date assigned_to currency")
	})
	whole[fleet.ScheduleStatus](g, "ScheduleStatus", func() *obj {
		return enum(fleet.ScheduleStatuses(), fmt.Sprintf("overdue: today is after next_due_date, or the odometer is past next_due_odometer_km, or the engine hours past next_due_engine_hours; due_soon: next_due_date is %d days away or less, or the odometer is within %g km of next_due_odometer_km, or the engine hours within %g%% of interval_engine_hours of next_due_engine_hours; ok otherwise. Dates are UTC days.", fleet.DueSoonDays, fleet.DueSoonKm, 100*fleet.DueSoonEngineHoursShare))
	})
	scheduleFields := func(s *shape) *shape {
		return s.with("name", "minLength", 1, "maxLength", fleet.MaxVehicleName).
			with("interval_days", "minimum", 1, "maximum", fleet.MaxIntervalDay).
			with("interval_km", "exclusiveMinimum", 0, "maximum", fleet.MaxIntervalKm).
			with("interval_engine_hours", "exclusiveMinimum", 0, "maximum", fleet.MaxIntervalEngineHours,
				"description", "Due every that many engine hours of the vehicle (its `engine_hours`: reported by its device, or counted from the time with the ignition on).").
			with("last_service_engine_hours", "minimum", 0)
	}
	comp[fleet.Schedule](g, "Schedule", output, func(s *shape) {
		scheduleFields(s).replace("schedule_id", id(fleet.PrefixSchedule)).
			with("last_service_date", "format", "date").
			replace("last_service_odometer_km", o("type", "number", "format", "double", "minimum", 0)).
			with("auto_create_work_order", "description", "When the schedule becomes due_soon (or overdue), open one linked work order, once per service cycle.").
			null("next_due_date").
			with("next_due_date", "format", "date", "description", "last_service_date + interval_days; null without interval_days.").
			with("next_due_odometer_km", "description", "last_service_odometer_km + interval_km; null without interval_km.").
			with("last_service_engine_hours", "description", "The vehicle's engine hours at the last service; null without interval_engine_hours.").
			with("next_due_engine_hours", "description", "last_service_engine_hours + interval_engine_hours; null without interval_engine_hours.")
	})
	comp[fleetwire.ScheduleInput](g, "ScheduleInput", input, func(s *shape) {
		scheduleFields(s).describe("At least one of interval_days, interval_km and interval_engine_hours. `vehicle_id` must name a vehicle of the account, else 422 validation_error naming it. The computed fields (next_due_date, next_due_odometer_km, status) are read-only.").
			require("vehicle_id name").
			with("last_service_date", "format", "date", "description", "Default: today. Not in the future.").
			with("last_service_odometer_km", "minimum", 0, "description", "Default: the vehicle's odometer now (0 if it has none).").
			with("auto_create_work_order", "description", "Default false.").
			with("last_service_engine_hours", "description", "With interval_engine_hours. Default: the vehicle's engine hours now (0 if unknown).")
	})
	comp[fleet.SchedulePatch](g, "SchedulePatch", input, func(s *shape) {
		scheduleFields(s).describe("JSON merge patch: an absent field is unchanged, null clears it (at least one interval must remain; name, last_service_date, last_service_odometer_km and auto_create_work_order cannot be cleared). Changing last_service_date, last_service_odometer_km or last_service_engine_hours records a service done elsewhere and starts a new cycle; changing the intervals does not.").
			null("last_service_date").
			with("last_service_date", "format", "date").
			with("last_service_odometer_km", "minimum", 0)
	})
	comp[fleet.ScheduleDeleted](g, "ScheduleDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
	whole[struct{}](g, "Health", func() *obj {
		return o("type", "object", "required", []string{"status"}, "properties", o("status", o("type", "string", "enum", []string{"ok", "unavailable"})))
	})

	registerAlertComponents(g)
	registerWebhookComponents(g)
	registerTripComponents(g)
	registerDeviceComponents(g)
	registerDriverComponents(g)
	registerTelematicsComponents(g)
	registerShareLinkComponents(g)
	registerNotifyComponents(g)
}

func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return d.String()
}

func registerAlertComponents(g *generator) {
	whole[fleet.Severity](g, "Severity", func() *obj {
		return enum(fleet.Severities(), "How serious an alert is. Default `"+string(fleet.DefaultSeverity)+"`.")
	})
	whole[fleet.AlertType](g, "AlertType", func() *obj { return enum(fleet.AlertTypes(), "") })
	whole[struct{}](g, "RuleType", func() *obj { return enum(fleet.RuleTypes(), "") })
	whole[fleet.AlertStatus](g, "AlertStatus", func() *obj {
		return enum(fleet.AlertStatuses(), statusDesc(fleet.AlertStatuses(), fleet.AlertMoves)+
			" Anything else, a repeat included, is 409 invalid_state_transition naming from and to.")
	})
	comp[fleet.Alert](g, "Alert", output, func(s *shape) {
		s.replace("alert_id", id(fleet.PrefixAlert)).
			null("vehicle_id rule_id").
			with("rule_id", "description", "The rule that opened it; null for maintenance and custom alerts. Alerts stay when their rule or vehicle is deleted.").
			replace("data", o("type", "object", "additionalProperties", true, "description", "What the alert is about. speeding: `{speed, threshold_kmh, latitude, longitude, timestamp}` of the point; "+
				"geofence_enter / geofence_exit: `{geofence_id, geofence_name, latitude, longitude, timestamp}` of the first point inside (outside); "+
				"vehicle_offline: `{last_reported_at, after_minutes, latitude, longitude}`; maintenance alerts: `{schedule_id, schedule_name, next_due_date, next_due_odometer_km, last_service_date}`; "+
				"custom: what the client sent."))
	})
	comp[fleetwire.AlertInput](g, "AlertInput", input, func(s *shape) {
		s.describe("Opens a `custom` alert. `vehicle_id`, when given, must name a vehicle of the account, else 422 validation_error naming it.").
			require("message").
			replace("severity", o("oneOf", []any{ref("Severity"), o("type", "null")})).
			with("message", "minLength", 1, "maxLength", fleet.MaxAlertMessage, "description", descMultiline).
			replace("data", o("type", []string{"object", "null"}, "additionalProperties", true, "description", fmt.Sprintf("Any JSON object, at most %d KiB. Its strings are multi-line text (tab, line feed and carriage return allowed, no other control character); member names hold no control character. A bad one is 422 naming its path, e.g. `data.notes[2]`.", fleet.MaxAlertData>>10)))
	})
	comp[fleet.AlertRule](g, "AlertRule", output, func(s *shape) {
		s.replace("rule_id", id(fleet.PrefixRule)).
			replace("type", ref("RuleType")).
			with("threshold_kmh", "description", "speeding: a point above this speed (strictly) opens an alert.").
			with("after_minutes", "description", "vehicle_offline: a vehicle silent this long opens an alert.").
			null("geofence_id").
			with("geofence_id", "description", "geofence_enter / geofence_exit: the geofence.").
			with("vehicle_ids", "description", "The vehicles it watches; empty: every vehicle of the account, present and future. "+
				"Deleting a vehicle removes it from here; a rule that listed only that vehicle is disabled then, never widened to every vehicle.")
	})
	comp[fleetwire.AlertRuleInput](g, "AlertRuleInput", input, func(s *shape) {
		s.describe(fmt.Sprintf("Exactly the field the type needs: `threshold_kmh` (0 < x ≤ %d) for speeding, `after_minutes` (1..%d) for vehicle_offline, "+
			"`geofence_id` for geofence_enter and geofence_exit; another type's field is 422. `vehicle_ids` (at most %d) and `geofence_id` must be the account's, else 422 naming them.",
			fleet.MaxThresholdKmh, fleet.MaxAfterMinutes, fleet.MaxRuleVehicles)).
			require("type").replace("type", ref("RuleType")).
			replace("severity", o("oneOf", []any{ref("Severity"), o("type", "null")})).
			with("vehicle_ids", "maxItems", fleet.MaxRuleVehicles).
			with("enabled", "description", "Default true.")
	})
	comp[fleet.AlertRulePatch](g, "AlertRulePatch", input, func(s *shape) {
		s.describe("JSON merge patch: an absent field is unchanged. `type` is fixed at creation. The result is validated as on creation: "+
			"each of `vehicle_ids` must name a vehicle of the account (else 422 naming it). A deleted vehicle never lingers in a rule (deleting it "+
			"removes it from every rule), so patching other fields of a rule that listed it works. Setting `enabled: true` on a rule whose "+
			"`vehicle_ids` is empty makes it watch every vehicle.").
			null("geofence_id vehicle_ids").nonNull("enabled").
			with("vehicle_ids", "maxItems", fleet.MaxRuleVehicles)
	})
	comp[fleet.RuleDeleted](g, "RuleDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
	pos := func() *obj {
		return o("type", "array", "items", o("type", "number", "format", "double"), "minItems", 2, "maxItems", 3,
			"description", "[longitude, latitude] (an altitude may follow and is ignored); longitude -180..180, latitude -90..90.")
	}
	bbox := func() *obj { return o("type", "array", "items", o("type", "number", "format", "double")) }
	// The geometry is a union of two named shapes, told apart by `type`
	// (a discriminator), so that generators name them as a person would.
	whole[struct{}](g, "PolygonGeometry", func() *obj {
		return o("title", "PolygonGeometry", "description", "A GeoJSON Polygon: an outer ring, then holes.",
			"type", "object", "additionalProperties", false, "required", []string{"type", "coordinates"},
			"properties", o("type", single(fleet.GeometryPolygon),
				"coordinates", o("type", "array", "minItems", 1, "maxItems", fleet.MaxGeofenceRings,
					"items", o("type", "array", "minItems", 4, "maxItems", fleet.MaxRingVertices, "items", pos())),
				"bbox", bbox()))
	})
	whole[struct{}](g, "PointGeometry", func() *obj {
		return o("title", "PointGeometry", "description", "A GeoJSON Point: the centre of a circle whose radius is the geofence's `radius_m`.",
			"type", "object", "additionalProperties", false, "required", []string{"type", "coordinates"},
			"properties", o("type", single(fleet.GeometryPoint), "coordinates", pos(), "bbox", bbox()))
	})
	whole[fleet.Geometry](g, "Geometry", func() *obj {
		return o("description", geometryDesc(), "oneOf", []any{ref("PolygonGeometry"), ref("PointGeometry")},
			"discriminator", o("propertyName", "type", "mapping", o(
				fleet.GeometryPolygon, "#/components/schemas/PolygonGeometry",
				fleet.GeometryPoint, "#/components/schemas/PointGeometry")))
	})
	comp[fleet.Geofence](g, "Geofence", output, func(s *shape) {
		s.replace("geofence_id", id(fleet.PrefixGeofence)).
			with("radius_m", "description", "The circle's radius in metres; null for a polygon.")
	})
	comp[fleetwire.GeofenceInput](g, "GeofenceInput", input, func(s *shape) {
		s.describe(fmt.Sprintf("Invalid geometry (a ring not closed or under 4 positions, a position out of range, a ring of more than %s positions, more than %s positions in all, a circle without a radius above 0 and at most %s m, radius_m on a polygon) is 422 validation_error naming each bad field, e.g. `geometry.coordinates[0][3]`. The geometry is read as one GeoJSON document, so what is wrong inside it, a value of the wrong JSON type included, is a 422 naming its position, not a 400.", num(fleet.MaxRingVertices), num(fleet.MaxGeofenceVertices), num(fleet.MaxRadiusM))).
			require("name geometry").
			with("name", "minLength", 1, "maxLength", fleet.MaxGeofenceName).
			replace("geometry", ref("Geometry")).
			with("radius_m", "exclusiveMinimum", 0, "maximum", fleet.MaxRadiusM)
	})
	comp[fleet.GeofencePatch](g, "GeofencePatch", input, func(s *shape) {
		s.describe("JSON merge patch: an absent field is unchanged. The result is validated as on creation. Vehicles are judged against the new shape from their next report on.").
			with("name", "minLength", 1, "maxLength", fleet.MaxGeofenceName).
			replace("geometry", ref("Geometry"))
	})
	comp[fleet.GeofenceDeleted](g, "GeofenceDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
}

func geometryDesc() string {
	return fmt.Sprintf("A GeoJSON (RFC 7946) geometry: a `Polygon` (an outer ring, then holes; each ring closed, at least 4 positions; "+
		"at most %s positions per ring and %s in all, else 422 naming the ring or the coordinates) or a `Point`, the centre of a circle whose radius is `radius_m`. Edges are straight lines in "+
		"longitude and latitude, as RFC 7946 has them. A ring whose consecutive longitudes jump by more than 180 degrees is read as crossing "+
		"the antimeridian (the ring goes on past ±180), so a ring drawn from 170 to -170 covers the 20 degrees around 180, not the 340 around 0; "+
		"RFC 7946 asks for such rings to be split, and split rings work too. The boundary counts as inside: a position on an edge or a vertex "+
		"of the outer ring or of a hole is inside the geofence, and so is one exactly `radius_m` from a circle's centre (haversine distance, "+
		"mean Earth radius %s m).", num(fleet.MaxRingVertices), num(fleet.MaxGeofenceVertices), strings.Replace(fmt.Sprintf("%.1f", fleet.EarthRadiusM), "6371008", "6,371,008", 1))
}

func urlDesc() string {
	return "Must be `https` and must not resolve to a loopback, private, link-local, unique-local, carrier-grade NAT, multicast or unspecified " +
		"address, in any notation (IPv4-mapped IPv6, decimal, octal or hex IPv4), nor to an IPv6 address that embeds or tunnels to an IPv4 one " +
		"(IPv4-compatible, IPv4-translated `::ffff:0:0:0/96`, NAT64, 6to4, Teredo `2001::/32`); checked here and again when connecting. " +
		"A host that cannot be used, for whatever reason (such an address, a name that resolves to one, a name that does not resolve), gets one answer: " +
		"422 naming `url`, \"cannot be used as a webhook endpoint: it must be an https URL on a public host\". " +
		"Errors of form (not https, user information, a bad port, a fragment, an IP address not in its standard form) are named as such. " +
		"A server started with `--insecure-webhooks` allows `http` and such addresses."
}

func registerWebhookComponents(g *generator) {
	// `*` is the only entry when it is there: the rule is in the schema,
	// so that generated validators refuse what the server refuses
	// (if it contains `*`, then it holds one item), beside `items`, which
	// generators read to type the array.
	whole[struct{}](g, "EventFilter", func() *obj {
		return enum(append(fleet.EventTypes(), "*"), "An event type, or `*` for every type.")
	})
	events := func(extra string) *obj {
		return o("type", "array", "items", ref("EventFilter"), "minItems", 1, "uniqueItems", true,
			"if", o("contains", single("*")), "then", o("maxItems", 1),
			"description", "Event types to receive, or `[\"*\"]` (alone) for every type. `webhook.test` goes only to the endpoint tested."+extra)
	}
	webhookFields := func(s *shape) *shape {
		return s.replace("webhook_id", id(fleet.PrefixWebhook)).
			with("url", "format", "uri", "maxLength", fleet.MaxWebhookURLLen).
			replace("events", events("")).
			with("description", "maxLength", fleet.MaxWebhookDescription, "description", descMultiline).
			with("enabled", "description", fmt.Sprintf("Disabled endpoints get no deliveries. The server disables an endpoint that answers 410, or whose deliveries have all failed for %d days.", days(fleet.WebhookDisableAfter)))
	}
	comp[fleet.Webhook](g, "Webhook", output, func(s *shape) { webhookFields(s) })
	comp[fleet.WebhookWithSecret](g, "WebhookWithSecret", output, func(s *shape) {
		webhookFields(s).describe("An endpoint with its signing secret: shown only by create and rotate_secret.").
			with("secret", "pattern", "^"+fleet.WebhookSecretPrefix+"[A-Za-z0-9+/]{43}=$",
				"description", "`"+fleet.WebhookSecretPrefix+"` + base64 of 32 random bytes. The HMAC key is the base64-decoded part after `"+fleet.WebhookSecretPrefix+"`.")
	})
	comp[fleetwire.WebhookInput](g, "WebhookInput", input, func(s *shape) {
		s.describe(fmt.Sprintf("The plan caps the number of endpoints (%s): one more is 409 conflict. The free plan has no webhooks (403).",
			byPlanWhere(func(l fleet.PlanLimits) int { return l.WebhookEndpoints }))).
			require("url").
			with("url", "maxLength", fleet.MaxWebhookURLLen, "description", urlDesc()).
			replace("events", events(" Default `[\"*\"]`.")).
			with("description", "maxLength", fleet.MaxWebhookDescription, "description", descMultiline).
			with("enabled", "description", "Default true.")
	})
	comp[fleet.WebhookPatch](g, "WebhookPatch", input, func(s *shape) {
		s.describe("JSON merge patch: an absent field is unchanged; a null `description` clears it. `url`, `events` and `enabled` cannot be null: a null one is 422 validation_error naming it, and nothing changes. Enabling a disabled endpoint forgets its failures.").
			with("url", "maxLength", fleet.MaxWebhookURLLen, "description", urlDesc()).
			replace("events", events("")).nonNull("enabled").
			null("description").with("description", "maxLength", fleet.MaxWebhookDescription, "description", descMultiline)
	})
	comp[fleet.WebhookDeleted](g, "WebhookDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
	whole[fleet.DeliveryStatus](g, "DeliveryStatus", func() *obj { return enum(fleet.DeliveryStatuses(), "") })
	comp[fleet.Delivery](g, "Delivery", output, func(s *shape) {
		s.describe("One attempt to deliver an event. A pending attempt is due at next_attempt_at; a failed one that will be retried names when (the retry is a new pending attempt), else next_attempt_at is null.").
			replace("delivery_id", id(fleet.PrefixDelivery)).
			with("attempt", "minimum", 1, "maximum", fleet.MaxAttempts).
			with("duration_ms", "minimum", 0)
	})
	comp[fleet.WebhookTestSent](g, "WebhookTest", output, nil)
}

// byPlanWhere is byPlan over the plans that have the feature at all.
func byPlanWhere(f func(fleet.PlanLimits) int) string {
	var parts []string
	for _, p := range fleet.Plans() {
		if n := f(p.Limits()); n > 0 {
			parts = append(parts, string(p)+" "+num(n))
		}
	}
	return strings.Join(parts, ", ")
}
