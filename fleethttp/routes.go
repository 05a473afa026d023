package fleethttp

import (
	"net/http"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// route is one endpoint of the API: what the mux serves, and what the
// OpenAPI document says of it. useCase names the use case of fleet.Service
// the route calls: what it needs of the key is stated there, once
// (fleet.PermissionOf), and the document and the tests read it from there.
type route struct {
	method  string
	pattern string
	useCase string
	maxBody int64 // 0: MaxBody
	serve   func(*call) error
	doc     opDoc
}

// opDoc is a route's operation in the OpenAPI document.
type opDoc struct {
	id, summary, tag string
	desc             string
	query            []param // query and header parameters (path parameters come from the pattern)
	in               any     // the request body's wire type (a zero value); nil: no body
	inOptional       bool    // the body may be left out
	out              any     // the response data's wire type (a zero value; a slice for lists)
	outDesc          string
	status           int  // success status; 0: 200
	list             bool // a page, with pagination
	stream           bool // Server-Sent Events
	// tokenAuth: the route also takes a stream token (?token=) in place of
	// the Authorization header (GET only).
	tokenAuth bool
	// csv is the header row of the route's text/csv variant (Accept:
	// text/csv); nil: JSON only.
	csv []string
	// errs are the error codes the route may answer beyond those every
	// route may (400, 401, 403, 429, 500, 503), 404 for a route with a path
	// parameter, 409 for a POST (Idempotency-Key) and 413/415 for a body.
	errs []string
	// errNotes describe, for this route, what an error code means here
	// (the response is the common one, with this description).
	errNotes map[string]string

	// A deprecated operation stays in /v1 and works as before; the document
	// marks it `deprecated: true` and every answer of the route carries
	// `Deprecation: @<deprecatedAt as Unix seconds>` (RFC 9745, which needs
	// the date: the generator refuses deprecated without deprecatedAt).
	// Once a date of removal is decided, sunset sets it (`Sunset`, RFC
	// 8594), no sooner than docs/compatibility.md's rules allow, and
	// replacement names the successor's path (`Link: <path>;
	// rel="successor-version"`).
	deprecated   bool
	deprecatedAt time.Time
	sunset       time.Time
	replacement  string
}

// validated reports whether a route is a GET of one resource: its 200
// carries an ETag, and a request whose If-None-Match names it is answered
// 304 Not Modified, so that a client polling a resource pays for its body
// only when it changed. Lists and streams have none (a page's content
// moves with every write of the account).
func (rt route) validated() bool {
	return rt.method == http.MethodGet && !rt.doc.list && !rt.doc.stream && rt.doc.csv == nil
}

const (
	codeConflict   = fleet.CodeConflict
	codeValidation = fleet.CodeValidation
)

// routeTable lists every route of the API: one glance shows it all.
func (h *Handler) routeTable() []route {
	post := http.MethodPost
	return []route{
		{method: "GET", pattern: "/v1/account", useCase: "Account", serve: h.getAccount, doc: opDoc{id: "getAccount", summary: "The account of the key", tag: tagAccount,
			out: fleetwire.Account{}, outDesc: "The account.", desc: "Any valid key may call it (no permission needed): it is how a client checks a key."}},

		{method: "GET", pattern: "/v1/api_keys", useCase: "ListKeys", serve: h.listKeys, doc: opDoc{id: "listApiKeys", summary: "List API keys", tag: tagKeys,
			query: pageParams(), out: []fleetwire.APIKey{}, list: true, outDesc: "A page of keys, oldest first."}},
		{method: post, pattern: "/v1/api_keys", useCase: "CreateKey", serve: h.createKey, doc: opDoc{id: "createApiKey", summary: "Create an API key", tag: tagKeys,
			in: fleetwire.CreateKeyRequest{}, out: fleetwire.NewAPIKey{}, status: http.StatusCreated, outDesc: "The new key with its secret in `key`, shown this once.",
			errs: []string{codeValidation},
			desc: "A key can only grant permissions it holds (403 otherwise), and a key cannot outlive the key that creates it: the new key's `expires_at` may not be later than the creating key's (422 naming `expires_at`), and without one it takes the creating key's. " +
				"An account holds at most its plan's number of active (neither revoked nor expired) keys: " + byPlan(func(l fleet.PlanLimits) int { return l.ActiveKeys }) + "; one more is 409 conflict naming the cap, whoever creates it."}},
		{method: "GET", pattern: "/v1/api_keys/{key_id}", useCase: "Key", serve: h.getKey, doc: opDoc{id: "getApiKey", summary: "Get an API key", tag: tagKeys,
			out: fleetwire.APIKey{}, outDesc: "The key."}},
		{method: "DELETE", pattern: "/v1/api_keys/{key_id}", useCase: "RevokeKey", serve: h.revokeKey, doc: opDoc{id: "revokeApiKey", summary: "Revoke an API key", tag: tagKeys,
			out: fleetwire.APIKey{}, outDesc: "The revoked key. Revoking a revoked key changes nothing.",
			desc: "The key is refused at once by this server, and by every server sharing the store within 5 seconds. A key may revoke itself; another key only if it holds every permission that key holds (403 insufficient_permissions naming what it lacks)."}},
		{method: post, pattern: "/v1/api_keys/{key_id}/rotate", useCase: "RotateKey", serve: h.rotateKey, doc: opDoc{id: "rotateApiKey", summary: "Rotate an API key", tag: tagKeys,
			in: fleetwire.RotateKeyRequest{}, inOptional: true, out: fleetwire.NewAPIKey{}, status: http.StatusCreated,
			outDesc: "The new key with its secret, and the old key in `previous_key`.", errs: []string{codeValidation},
			desc: "Creates a key with the same name, permissions, environment and expiry; the old key expires after the grace period (sooner if it was to expire sooner). A revoked or expired key cannot be rotated (409 conflict). " +
				"A key may rotate itself; another key only if it holds every permission that key holds and does not expire before it (403 insufficient_permissions). " +
				"During a grace period both keys are active, so at the plan's cap of active keys a rotation with a grace period is 409 conflict; `grace_period_seconds: 0` replaces the key at once and is always allowed."}},
		{method: "GET", pattern: "/v1/api_keys/{key_id}/usage", useCase: "KeyUsage", serve: h.keyUsage, doc: opDoc{id: "getApiKeyUsage", summary: "Hourly usage of an API key", tag: tagKeys,
			query: []param{{name: "hours", schema: o("type", "integer", "minimum", 1, "maximum", fleet.MaxUsageHours, "default", 24)}},
			out:   fleetwire.KeyUsage{}, outDesc: "Request counts per hour, newest first, with totals."}},

		{method: "GET", pattern: "/v1/vehicles", useCase: "ListVehicles", serve: h.listVehicles, doc: opDoc{id: "listVehicles", summary: "List vehicles", tag: tagVehicles,
			query: listParams(enumParam("status", "VehicleStatus"), tagFilter(),
				param{name: "q", desc: "Name, license plate or VIN contains this (case-insensitive).", schema: o("type", "string")}),
			out: []fleet.Vehicle{}, list: true, outDesc: "A page of vehicles, oldest first."}},
		{method: post, pattern: "/v1/vehicles", useCase: "CreateVehicle", serve: h.createVehicle, doc: opDoc{id: "createVehicle", summary: "Create a vehicle", tag: tagVehicles,
			in: fleetwire.VehicleInput{}, out: fleet.Vehicle{}, status: http.StatusCreated, outDesc: "The vehicle (offline until it reports).",
			errs: []string{codeValidation}, desc: "409 conflict when another vehicle of the account has the same external_id. Emits vehicle.created."}},
		{method: "GET", pattern: "/v1/vehicles/{vehicle_id}", useCase: "Vehicle", serve: h.getVehicle, doc: opDoc{id: "getVehicle", summary: "Get a vehicle", tag: tagVehicles,
			out: fleet.Vehicle{}, outDesc: "The vehicle."}},
		{method: "PATCH", pattern: "/v1/vehicles/{vehicle_id}", useCase: "UpdateVehicle", serve: h.patchVehicle, doc: opDoc{id: "updateVehicle", summary: "Update a vehicle (JSON merge patch)", tag: tagVehicles,
			in: fleet.VehiclePatch{}, out: fleet.Vehicle{}, outDesc: "The vehicle after the change.", errs: []string{codeValidation, codeConflict},
			desc: "Absent fields stay, null clears. Emits vehicle.updated."}},
		{method: "DELETE", pattern: "/v1/vehicles/{vehicle_id}", useCase: "DeleteVehicle", serve: h.deleteVehicle, doc: opDoc{id: "deleteVehicle", summary: "Delete a vehicle", tag: tagVehicles,
			out: fleet.VehicleDeleted{}, outDesc: "Deleted.", desc: descDeleteVehicle}},

		{method: "GET", pattern: "/v1/share_links", useCase: "ListShareLinks", serve: h.listShareLinks, doc: opDoc{id: "listShareLinks", summary: "List share links", tag: tagShareLinks,
			query: listParams(idFilter("vehicle_id", "Only this vehicle's links."), enumParam("status", "ShareLinkStatus")),
			out:   []fleetwire.ShareLink{}, list: true, outDesc: "A page of share links, oldest first, without their url: the token is never shown again.",
			desc: "Expired and revoked links are listed too (`status`) until " + num(int(fleet.ShareLinkRetention/(24*time.Hour))) + " days after they expired. " +
				"An unknown status, or a vehicle_id that is not a vehicle id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/share_links", useCase: "CreateShareLink", serve: h.createShareLink, doc: opDoc{id: "createShareLink", summary: "Create a share link", tag: tagShareLinks,
			in: fleetwire.ShareLinkInput{}, out: fleetwire.NewShareLink{}, status: http.StatusCreated, outDesc: "The link with its url, shown this once.",
			errs:     []string{codeValidation, codeConflict, fleet.CodeNotFound},
			errNotes: map[string]string{fleet.CodeNotFound: "`vehicle_id` names no vehicle of the account (another account's vehicle included)."},
			desc:     descShareLinks()}},
		{method: "GET", pattern: "/v1/share_links/{share_link_id}", useCase: "ShareLink", serve: h.getShareLink, doc: opDoc{id: "getShareLink", summary: "Get a share link", tag: tagShareLinks,
			out: fleetwire.ShareLink{}, outDesc: "The link, without its url."}},
		{method: "DELETE", pattern: "/v1/share_links/{share_link_id}", useCase: "RevokeShareLink", serve: h.revokeShareLink, doc: opDoc{id: "revokeShareLink", summary: "Revoke a share link", tag: tagShareLinks,
			out: fleetwire.ShareLink{}, outDesc: "The revoked link. Revoking a revoked or expired link changes nothing.",
			desc: "Its page answers 404 from now on, as an unknown link's does; the live streams open on it end at once on this server, and within 5 seconds on every server sharing the store."}},

		{method: "GET", pattern: "/v1/vehicles/locations", useCase: "ListLocations", serve: h.snapshot, doc: opDoc{id: "listLocations", summary: "Latest location of every vehicle", tag: tagTracking,
			query: listParams(repeatedIDs("vehicle_id"), enumParam("status", "VehicleStatus"), tagFilter()),
			out:   []fleet.LocationRecord{}, list: true, outDesc: "A page of location records of vehicles that have reported, in vehicle id order."}},
		{method: post, pattern: "/v1/vehicles/locations", useCase: "IngestBulk", maxBody: MaxBatchBody, serve: h.ingestBulk, doc: opDoc{id: "ingestLocationsBulk", summary: "Post locations of many vehicles", tag: tagTracking,
			in: bulkRequest{}, out: fleet.IngestResult{}, outDesc: "Counts of the batch.", errs: []string{codeValidation},
			errNotes: map[string]string{fleet.CodeRateLimitExceeded: descPointsRefused()},
			desc:     "For gateways: 1 to " + num(fleet.MaxPointsPerBulkBatch) + " points, each naming its vehicle. " + descIngest()}},
		{method: "GET", pattern: "/v1/vehicles/locations/stream", useCase: "Subscribe", serve: h.stream, doc: opDoc{id: "streamLocations", summary: "Live locations (Server-Sent Events)", tag: tagTracking,
			query: []param{repeatedIDs("vehicle_id"), {name: "Last-Event-ID", in: "header", schema: o("type", "string")},
				{name: "last_event_id", schema: o("type", "string")}},
			stream: true, outDesc: "An event stream.", desc: descStream(),
			errNotes: map[string]string{fleet.CodeRateLimitExceeded: "Over the hourly allowance, or this key already has as many live streams open on this server as its plan allows (" +
				byPlan(func(l fleet.PlanLimits) int { return l.StreamsPerKey }) + "), and the message names that limit: \"This API key has 2 live streams open, the most the free plan allows; close one first.\" (`rate_limit_exceeded`). " +
				"A request refused for the stream limit counts against the hourly allowance like any other; `Retry-After` is then " + streamRetryAfter + " seconds.", fleet.CodeUnauthorized: descStreamUnauthorized}, tokenAuth: true}},
		{method: post, pattern: "/v1/stream_tokens", useCase: "CreateStreamToken", serve: h.createStreamToken, doc: opDoc{id: "createStreamToken", summary: "Create a stream token", tag: tagTracking,
			in: struct{}{}, inOptional: true, out: fleetwire.StreamToken{}, status: http.StatusCreated, outDesc: "The token, shown this once, and when it stops being usable.",
			desc: descStreamToken()}},
		{method: "GET", pattern: "/v1/vehicles/{vehicle_id}/locations", useCase: "ListHistory", serve: h.history, doc: opDoc{id: "getLocationHistory", summary: "Location history of a vehicle", tag: tagTracking,
			query: []param{
				timeParam("from", "Default: 24 hours before `to`. Clamped to the plan's reach ("+byPlan(func(l fleet.PlanLimits) int { return days(l.HistoryReach) })+" days)."),
				timeParam("to", "Default: now."),
				{name: "limit", schema: o("type", "integer", "minimum", 1, "maximum", fleet.MaxHistoryLimit, "default", fleet.DefaultHistoryLimit)},
				pageParams()[1]},
			out: []fleet.Point{}, list: true, outDesc: "Points in ascending time.", desc: "Both ends are included."}},
		{method: post, pattern: "/v1/vehicles/{vehicle_id}/locations", useCase: "IngestLocations", maxBody: MaxBatchBody, serve: h.ingestVehicle, doc: opDoc{id: "ingestLocations", summary: "Post locations of a vehicle", tag: tagTracking,
			in: fleetwire.LocationBatch{}, out: fleet.IngestResult{}, outDesc: "Counts of the batch.", errs: []string{codeValidation},
			errNotes: map[string]string{fleet.CodeRateLimitExceeded: descPointsRefused()},
			desc:     "1 to " + num(fleet.MaxPointsPerVehicleBatch) + " points. " + descIngest()}},
		{method: "GET", pattern: "/v1/vehicles/{vehicle_id}/trips", useCase: "ListTrips", serve: h.listTrips, doc: opDoc{id: "listTrips", summary: "Trips of a vehicle", tag: tagTrips,
			query: tripParams(), out: []fleet.Trip{}, list: true, csv: tripCSVHeader,
			outDesc: "A page of the trips that meet [from, to], in start order.", desc: descTrips()}},
		{method: "GET", pattern: "/v1/vehicles/{vehicle_id}/stops", useCase: "ListStops", serve: h.listStops, doc: opDoc{id: "listStops", summary: "Stops of a vehicle", tag: tagTrips,
			query: tripParams(), out: []fleet.Stop{}, list: true, csv: stopCSVHeader,
			outDesc: "A page of the stops that meet [from, to], in start order.",
			desc:    "A stop is the time between two trips (at least " + minutes(fleet.DefaultStatusThresholds.StopAfter) + " minutes), or after the vehicle's last completed trip (`end` null while it lasts); its location is where the trip before it ended."}},
		{method: "GET", pattern: "/v1/trips/{trip_id}", useCase: "Trip", serve: h.getTrip, doc: opDoc{id: "getTrip", summary: "Get a trip", tag: tagTrips,
			query: tripPointsParams(), out: fleet.TripDetail{}, outDesc: "The trip.", desc: descTripPoints()}},
		{method: "GET", pattern: "/v1/reports/summary", useCase: "Summary", serve: h.summary, doc: opDoc{id: "getSummary", summary: "Daily summary of driving", tag: tagTrips,
			query: summaryParams(), out: []summaryItem{}, list: true, csv: summaryCSVHeader, errs: []string{fleet.CodeNotFound},
			outDesc: "A page of rows: by vehicle id then day (`SummaryRow`); with `group_by=driver`, by driver id, the trips with no driver last, then day (`DriverSummaryRow`).", desc: descSummary()}},

		{method: "GET", pattern: "/v1/maintenance/work_orders", useCase: "ListWorkOrders", serve: h.listWorkOrders, doc: opDoc{id: "listWorkOrders", summary: "List work orders", tag: tagMaintenance,
			query: listParams(idFilter("vehicle_id", "Only this vehicle's."), enumParam("status", "WorkOrderStatus"), enumParam("priority", "Priority")),
			out:   []fleet.WorkOrder{}, list: true, outDesc: "A page of work orders, oldest first.",
			desc: "An unknown status or priority, or a vehicle_id that is not a vehicle id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/maintenance/work_orders", useCase: "CreateWorkOrder", serve: h.createWorkOrder, doc: opDoc{id: "createWorkOrder", summary: "Create a work order", tag: tagMaintenance,
			in: fleetwire.WorkOrderInput{}, out: fleet.WorkOrder{}, status: http.StatusCreated, outDesc: "The work order, open.", errs: []string{codeValidation},
			desc: "Emits work_order.created."}},
		{method: "GET", pattern: "/v1/maintenance/work_orders/{work_order_id}", useCase: "WorkOrder", serve: h.getWorkOrder, doc: opDoc{id: "getWorkOrder", summary: "Get a work order", tag: tagMaintenance,
			out: fleet.WorkOrder{}, outDesc: "The work order."}},
		{method: "PATCH", pattern: "/v1/maintenance/work_orders/{work_order_id}", useCase: "UpdateWorkOrder", serve: h.patchWorkOrder, doc: opDoc{id: "updateWorkOrder", summary: "Update a work order, its status included (JSON merge patch)", tag: tagMaintenance,
			in: fleet.WorkOrderPatch{}, out: fleet.WorkOrder{}, outDesc: "The work order after the change.",
			errs: []string{codeValidation, fleet.CodeInvalidStateTransition}, desc: descPatchWorkOrder}},
		{method: "GET", pattern: "/v1/maintenance/schedules", useCase: "ListSchedules", serve: h.listSchedules, doc: opDoc{id: "listSchedules", summary: "List schedules", tag: tagMaintenance,
			query: listParams(idFilter("vehicle_id", "Only this vehicle's."), enumParam("status", "ScheduleStatus")),
			out:   []fleet.Schedule{}, list: true, outDesc: "A page of schedules, oldest first.",
			desc: "An unknown status, or a vehicle_id that is not a vehicle id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/maintenance/schedules", useCase: "CreateSchedule", serve: h.createSchedule, doc: opDoc{id: "createSchedule", summary: "Create a schedule", tag: tagMaintenance,
			in: fleetwire.ScheduleInput{}, out: fleet.Schedule{}, status: http.StatusCreated, outDesc: "The schedule, with its computed fields.",
			errs: []string{codeValidation}, desc: descScheduleDue}},
		{method: "GET", pattern: "/v1/maintenance/schedules/{schedule_id}", useCase: "Schedule", serve: h.getSchedule, doc: opDoc{id: "getSchedule", summary: "Get a schedule", tag: tagMaintenance,
			out: fleet.Schedule{}, outDesc: "The schedule."}},
		{method: "PATCH", pattern: "/v1/maintenance/schedules/{schedule_id}", useCase: "UpdateSchedule", serve: h.patchSchedule, doc: opDoc{id: "updateSchedule", summary: "Update a schedule (JSON merge patch)", tag: tagMaintenance,
			in: fleet.SchedulePatch{}, out: fleet.Schedule{}, outDesc: "The schedule after the change, recomputed.", errs: []string{codeValidation},
			desc: descScheduleDue}},
		{method: "DELETE", pattern: "/v1/maintenance/schedules/{schedule_id}", useCase: "DeleteSchedule", serve: h.deleteSchedule, doc: opDoc{id: "deleteSchedule", summary: "Delete a schedule", tag: tagMaintenance,
			out: fleet.ScheduleDeleted{}, outDesc: "Deleted.",
			desc: "Work orders linked to it stay, with their schedule_id, as history. Deleting a vehicle deletes its schedules."}},

		{method: "GET", pattern: "/v1/alerts", useCase: "ListAlerts", serve: h.listAlerts, doc: opDoc{id: "listAlerts", summary: "List alerts", tag: tagAlerts,
			query: listParams(enumParam("status", "AlertStatus"), enumParam("type", "AlertType"), enumParam("severity", "Severity"),
				idFilter("vehicle_id", ""), timeParam("from", "Created at or after."), timeParam("to", "Created at or before.")),
			out: []fleet.Alert{}, list: true, outDesc: "A page of alerts, oldest first.",
			desc: "An unknown status, type or severity, a vehicle_id that is not a vehicle id, a malformed time or from after to is 400 invalid_request.\n\n" + descRuleEvaluation}},
		{method: post, pattern: "/v1/alerts", useCase: "CreateAlert", serve: h.createAlert, doc: opDoc{id: "createAlert", summary: "Open a custom alert", tag: tagAlerts,
			in: fleetwire.AlertInput{}, out: fleet.Alert{}, status: http.StatusCreated, outDesc: "The alert, open.", errs: []string{codeValidation},
			desc: "Emits alert.created (data: the alert)."}},
		{method: "GET", pattern: "/v1/alerts/{alert_id}", useCase: "Alert", serve: h.getAlert, doc: opDoc{id: "getAlert", summary: "Get an alert", tag: tagAlerts,
			out: fleet.Alert{}, outDesc: "The alert.",
			desc: "`/alerts/rules` is the rules' own path, not an alert: a literal segment takes precedence over `{alert_id}`, and alert ids always start with `alt_`."}},
		{post, "/v1/alerts/{alert_id}/acknowledge", "AcknowledgeAlert", 0, h.acknowledgeAlert, alertMove("acknowledge", fleet.AlertAcknowledged, fleet.EventAlertAcknowledged)},
		{post, "/v1/alerts/{alert_id}/resolve", "ResolveAlert", 0, h.resolveAlert, alertMove("resolve", fleet.AlertResolved, fleet.EventAlertResolved)},
		{method: "GET", pattern: "/v1/alerts/rules", useCase: "ListAlertRules", serve: h.listRules, doc: opDoc{id: "listAlertRules", summary: "List alert rules", tag: tagAlerts,
			query: listParams(enumParam("type", "RuleType"), idFilter("geofence_id", "Only rules naming this geofence.")),
			out:   []fleet.AlertRule{}, list: true, outDesc: "A page of rules, oldest first."}},
		{method: post, pattern: "/v1/alerts/rules", useCase: "CreateAlertRule", serve: h.createRule, doc: opDoc{id: "createAlertRule", summary: "Create an alert rule", tag: tagAlerts,
			in: fleetwire.AlertRuleInput{}, out: fleet.AlertRule{}, status: http.StatusCreated, outDesc: "The rule.", errs: []string{codeValidation},
			desc: "An account holds at most as many rules, enabled or not, as its plan allows (" + byPlan(func(l fleet.PlanLimits) int { return l.AlertRules }) +
				"): creating one more is 409 conflict whose message names the plan's cap (delete one first). Every location report is judged against all of the account's enabled rules, hence the cap.\n\n" + descRuleEvaluation}},
		{method: "GET", pattern: "/v1/alerts/rules/{rule_id}", useCase: "AlertRule", serve: h.getRule, doc: opDoc{id: "getAlertRule", summary: "Get an alert rule", tag: tagAlerts,
			out: fleet.AlertRule{}, outDesc: "The rule."}},
		{method: "PATCH", pattern: "/v1/alerts/rules/{rule_id}", useCase: "UpdateAlertRule", serve: h.patchRule, doc: opDoc{id: "updateAlertRule", summary: "Update an alert rule (JSON merge patch)", tag: tagAlerts,
			in: fleet.AlertRulePatch{}, out: fleet.AlertRule{}, outDesc: "The rule after the change.", errs: []string{codeValidation}}},
		{method: "DELETE", pattern: "/v1/alerts/rules/{rule_id}", useCase: "DeleteAlertRule", serve: h.deleteRule, doc: opDoc{id: "deleteAlertRule", summary: "Delete an alert rule", tag: tagAlerts,
			out: fleet.RuleDeleted{}, outDesc: "Deleted.", desc: "The alerts it opened stay, with their rule_id, as history."}},
		{method: "GET", pattern: "/v1/geofences", useCase: "ListGeofences", serve: h.listGeofences, doc: opDoc{id: "listGeofences", summary: "List geofences", tag: tagAlerts,
			query: pageParams(), out: []fleet.Geofence{}, list: true, outDesc: "A page of geofences, oldest first."}},
		{method: post, pattern: "/v1/geofences", useCase: "CreateGeofence", serve: h.createGeofence, doc: opDoc{id: "createGeofence", summary: "Create a geofence", tag: tagAlerts,
			in: fleetwire.GeofenceInput{}, out: fleet.Geofence{}, status: http.StatusCreated, outDesc: "The geofence.", errs: []string{codeValidation},
			desc: "An account holds at most as many geofences as its plan allows (" + byPlan(func(l fleet.PlanLimits) int { return l.Geofences }) +
				"): creating one more is 409 conflict whose message names the plan's cap (delete one first).\n\n" + geometryDesc()}},
		{method: "GET", pattern: "/v1/geofences/{geofence_id}", useCase: "Geofence", serve: h.getGeofence, doc: opDoc{id: "getGeofence", summary: "Get a geofence", tag: tagAlerts,
			out: fleet.Geofence{}, outDesc: "The geofence."}},
		{method: "PATCH", pattern: "/v1/geofences/{geofence_id}", useCase: "UpdateGeofence", serve: h.patchGeofence, doc: opDoc{id: "updateGeofence", summary: "Update a geofence (JSON merge patch)", tag: tagAlerts,
			in: fleet.GeofencePatch{}, out: fleet.Geofence{}, outDesc: "The geofence after the change.", errs: []string{codeValidation}}},
		{method: "DELETE", pattern: "/v1/geofences/{geofence_id}", useCase: "DeleteGeofence", serve: h.deleteGeofence, doc: opDoc{id: "deleteGeofence", summary: "Delete a geofence", tag: tagAlerts,
			out: fleet.GeofenceDeleted{}, outDesc: "Deleted.", errs: []string{codeConflict},
			desc: "A geofence that alert rules name cannot be deleted: that is 409 conflict, whose message and details name the rules (up to 10). " +
				"Delete those rules or point them at another geofence first. Nothing cascades, so no rule is left watching nothing."}},

		{method: "GET", pattern: "/v1/devices", useCase: "ListDevices", serve: h.listDevices, doc: opDoc{id: "listDevices", summary: "List devices", tag: tagDevices,
			query: listParams(param{name: "identifier", desc: "Only the device with this identifier.", schema: o("type", "string")},
				idFilter("vehicle_id", "Only the devices attached to this vehicle.")),
			out: []fleet.Device{}, list: true, outDesc: "A page of devices, oldest first, each with its last report.",
			desc: "An identifier that no device can have, or a vehicle_id that is not a vehicle id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/devices", useCase: "CreateDevice", serve: h.createDevice, doc: opDoc{id: "createDevice", summary: "Register a device", tag: tagDevices,
			in: fleetwire.DeviceInput{}, out: fleet.Device{}, status: http.StatusCreated, outDesc: "The device, not seen yet.", errs: []string{codeValidation},
			desc: descCreateDevice()}},
		{method: "GET", pattern: "/v1/devices/{device_id}", useCase: "Device", serve: h.getDevice, doc: opDoc{id: "getDevice", summary: "Get a device", tag: tagDevices,
			out: fleet.Device{}, outDesc: "The device, with what it last sent."}},
		{method: "PATCH", pattern: "/v1/devices/{device_id}", useCase: "UpdateDevice", serve: h.patchDevice, doc: opDoc{id: "updateDevice", summary: "Update a device (JSON merge patch)", tag: tagDevices,
			in: fleet.DevicePatch{}, out: fleet.Device{}, outDesc: "The device after the change.", errs: []string{codeValidation},
			desc: "Moves the device to another vehicle (from its next message on), detaches it (`vehicle_id: null`) or renames it."}},
		{method: "DELETE", pattern: "/v1/devices/{device_id}", useCase: "DeleteDevice", serve: h.deleteDevice, doc: opDoc{id: "deleteDevice", summary: "Delete a device", tag: tagDevices,
			out: fleet.DeviceDeleted{}, outDesc: "Deleted.",
			desc: "Its identifier is unknown from then on, and free to register again; the locations it reported stay its vehicle's, and its commands are deleted."}},
		{method: post, pattern: "/v1/devices/{device_id}/commands", useCase: "CreateCommand", serve: h.createCommand, doc: opDoc{id: "createCommand", summary: "Send a command to a device", tag: tagCommands,
			in: fleetwire.CommandInput{}, out: fleet.Command{}, status: http.StatusAccepted, outDesc: "The command, queued.", errs: []string{codeValidation},
			desc: descCreateCommand()}},
		{method: "GET", pattern: "/v1/devices/{device_id}/commands", useCase: "ListCommands", serve: h.listCommands, doc: opDoc{id: "listCommands", summary: "List a device's commands", tag: tagCommands,
			query: listParams(enumParam("status", "CommandStatus")),
			out:   []fleet.Command{}, list: true, outDesc: "A page of the device's commands, newest first.",
			desc: "Newest first; `status` keeps those with that status (" + commandStatuses() + ")."}},
		{method: "GET", pattern: "/v1/commands/{command_id}", useCase: "Command", serve: h.getCommand, doc: opDoc{id: "getCommand", summary: "Get a command", tag: tagCommands,
			out: fleet.Command{}, outDesc: "The command, where it stands."}},
		{method: post, pattern: "/v1/commands/{command_id}/cancel", useCase: "CancelCommand", serve: h.cancelCommand, doc: opDoc{id: "cancelCommand", summary: "Cancel a queued command", tag: tagCommands,
			in: struct{}{}, inOptional: true, out: fleet.Command{}, outDesc: "The command, cancelled.", errs: []string{fleet.CodeInvalidStateTransition},
			desc: "Only while it is queued; a command in any other status is 409 invalid_state_transition naming from and to. Emits no event. The body, if any, is `{}`."}},

		{method: "GET", pattern: "/v1/drivers", useCase: "ListDrivers", serve: h.listDrivers, doc: opDoc{id: "listDrivers", summary: "List drivers", tag: tagDrivers,
			query: listParams(param{name: "q", desc: "Name, identifier, phone, e-mail, license number or external_id contains this (case-insensitive).", schema: o("type", "string")},
				param{name: "identifier", desc: "Only the driver with this identifier (compared without regard to case).", schema: o("type", "string")},
				idFilter("vehicle_id", "Only the driver who drives this vehicle now.")),
			out: []fleet.Driver{}, list: true, outDesc: "A page of drivers, oldest first, each with the vehicle they drive now.",
			desc: "An identifier that no driver can have, or a vehicle_id that is not a vehicle id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/drivers", useCase: "CreateDriver", serve: h.createDriver, doc: opDoc{id: "createDriver", summary: "Add a driver", tag: tagDrivers,
			in: fleetwire.DriverInput{}, out: fleet.Driver{}, status: http.StatusCreated, outDesc: "The driver, driving no vehicle yet.", errs: []string{codeValidation},
			desc: descCreateDriver()}},
		{method: "GET", pattern: "/v1/drivers/{driver_id}", useCase: "Driver", serve: h.getDriver, doc: opDoc{id: "getDriver", summary: "Get a driver", tag: tagDrivers,
			out: fleet.Driver{}, outDesc: "The driver, with the vehicle they drive now."}},
		{method: "PATCH", pattern: "/v1/drivers/{driver_id}", useCase: "UpdateDriver", serve: h.patchDriver, doc: opDoc{id: "updateDriver", summary: "Update a driver (JSON merge patch)", tag: tagDrivers,
			in: fleet.DriverPatch{}, out: fleet.Driver{}, outDesc: "The driver after the change.", errs: []string{codeValidation, codeConflict},
			desc: "Absent fields stay, null clears. `vehicle_id` is not a member: assign with `PUT /v1/vehicles/{vehicle_id}/driver`."}},
		{method: "DELETE", pattern: "/v1/drivers/{driver_id}", useCase: "DeleteDriver", serve: h.deleteDriver, doc: opDoc{id: "deleteDriver", summary: "Delete a driver", tag: tagDrivers,
			out: fleet.DriverDeleted{}, outDesc: "Deleted.",
			desc: "The vehicle they drove has no driver from then on (`vehicle.driver_changed`, in the same transaction). Trips keep the driver's `driver_id` as history, and the summary by driver still counts them under it; their identifier is free for another driver."}},
		{method: "PUT", pattern: "/v1/vehicles/{vehicle_id}/driver", useCase: "AssignDriver", serve: h.putVehicleDriver, doc: opDoc{id: "assignDriver", summary: "Assign a vehicle's driver", tag: tagDrivers,
			in: fleet.DriverAssignment{}, out: fleet.VehicleDriver{}, outDesc: "The vehicle's driver after the change.", errs: []string{codeValidation},
			desc: descAssignDriver()}},

		{method: "GET", pattern: "/v1/events", useCase: "ListEvents", serve: h.listEvents, doc: opDoc{id: "listEvents", summary: "List events", tag: tagEvents,
			query: listParams(enumParam("type", "EventType"), timeParam("from", "Events created at or after this time.")),
			out:   []fleet.Event{}, list: true, outDesc: "A page of events, oldest first (kept 30 days)."}},
		{method: "GET", pattern: "/v1/events/{event_id}", useCase: "Event", serve: h.getEvent, doc: opDoc{id: "getEvent", summary: "Get an event", tag: tagEvents,
			out: fleet.Event{}, outDesc: "The event."}},

		{method: "GET", pattern: "/v1/webhooks", useCase: "ListWebhooks", serve: h.listWebhooks, doc: opDoc{id: "listWebhooks", summary: "List webhook endpoints", tag: tagWebhooks,
			query: pageParams(), out: []fleet.Webhook{}, list: true, outDesc: "A page of endpoints, oldest first (secrets are never listed).",
			desc: "Endpoints of the account." + descNoWebhooksOnFree}},
		{method: post, pattern: "/v1/webhooks", useCase: "CreateWebhook", serve: h.createWebhook, doc: opDoc{id: "createWebhook", summary: "Register a webhook endpoint", tag: tagWebhooks,
			in: fleetwire.WebhookInput{}, out: fleet.WebhookWithSecret{}, status: http.StatusCreated, outDesc: "The endpoint with its secret, shown this once.",
			errs: []string{codeValidation}, desc: descSending() + " An account at its plan's cap of endpoints gets 409 conflict." + descNoWebhooksOnFree}},
		{method: "GET", pattern: "/v1/webhooks/{webhook_id}", useCase: "Webhook", serve: h.getWebhook, doc: opDoc{id: "getWebhook", summary: "Get a webhook endpoint", tag: tagWebhooks,
			out: fleet.Webhook{}, outDesc: "The endpoint."}},
		{method: "PATCH", pattern: "/v1/webhooks/{webhook_id}", useCase: "UpdateWebhook", serve: h.patchWebhook, doc: opDoc{id: "updateWebhook", summary: "Update a webhook endpoint (JSON merge patch)", tag: tagWebhooks,
			in: fleet.WebhookPatch{}, out: fleet.Webhook{}, outDesc: "The endpoint after the change.", errs: []string{codeValidation}}},
		{method: "DELETE", pattern: "/v1/webhooks/{webhook_id}", useCase: "DeleteWebhook", serve: h.deleteWebhook, doc: opDoc{id: "deleteWebhook", summary: "Delete a webhook endpoint", tag: tagWebhooks,
			out: fleet.WebhookDeleted{}, outDesc: "Deleted, with its delivery log."}},
		{method: post, pattern: "/v1/webhooks/{webhook_id}/rotate_secret", useCase: "RotateWebhookSecret", serve: h.rotateWebhookSecret, doc: opDoc{id: "rotateWebhookSecret", summary: "Rotate an endpoint's secret", tag: tagWebhooks,
			in: struct{}{}, inOptional: true, out: fleet.WebhookWithSecret{}, outDesc: "The endpoint with its new secret, shown this once.",
			desc: "For 24 hours the old secret keeps signing too: `webhook-signature` then carries both signatures, space-separated, so receivers can switch at leisure."}},
		{method: post, pattern: "/v1/webhooks/{webhook_id}/test", useCase: "TestWebhook", serve: h.testWebhook, doc: opDoc{id: "testWebhook", summary: "Send a test event", tag: tagWebhooks,
			in: struct{}{}, inOptional: true, out: fleet.WebhookTestSent{}, status: http.StatusAccepted, outDesc: "The webhook.test event and its pending delivery, sent within a second.",
			desc: "Emits a `webhook.test` event (data: `{webhook_id}`) delivered to this endpoint only. A disabled endpoint is 409 conflict."}},
		{method: "GET", pattern: "/v1/webhooks/{webhook_id}/deliveries", useCase: "ListDeliveries", serve: h.listDeliveries, doc: opDoc{id: "listDeliveries", summary: "List an endpoint's delivery attempts", tag: tagWebhooks,
			query: listParams(enumParam("status", "DeliveryStatus"), idFilter("event_id", "Only this event's.")),
			out:   []fleet.Delivery{}, list: true, outDesc: "A page of attempts, oldest first.",
			desc: "An unknown status, or an event_id that is not an event id, is 400 invalid_request."}},
		{method: post, pattern: "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", useCase: "RetryDelivery", serve: h.retryDelivery, doc: opDoc{id: "retryDelivery", summary: "Send a delivery's event again now", tag: tagWebhooks,
			in: struct{}{}, inOptional: true, out: fleet.Delivery{}, status: http.StatusAccepted, outDesc: "The new pending attempt: the first of a new series.",
			desc: "A disabled endpoint is 409 conflict."}},

		{method: "GET", pattern: "/v1/users", useCase: "ListPeople", serve: h.listPeople, doc: opDoc{id: "listUsers", summary: "List the account's people", tag: tagNotifications,
			query: pageParams(), out: []fleet.Person{}, list: true, outDesc: "A page of people, oldest first.",
			desc: "The people who sign in to the dashboard: whom a notification rule or a report schedule may address, by `user_id` or by `email`."}},
		{method: "GET", pattern: "/v1/notification_rules", useCase: "ListNotificationRules", serve: h.listNotificationRules, doc: opDoc{id: "listNotificationRules", summary: "List notification rules", tag: tagNotifications,
			query: listParams(userFilter()), out: []fleet.NotificationRule{}, list: true, outDesc: "A page of rules, oldest first.",
			desc: "A user_id that is not a user id is 400 invalid_request."}},
		{method: post, pattern: "/v1/notification_rules", useCase: "CreateNotificationRule", serve: h.createNotificationRule, doc: opDoc{id: "createNotificationRule", summary: "Create a notification rule", tag: tagNotifications,
			in: fleetwire.NotificationRuleInput{}, out: fleet.NotificationRule{}, status: http.StatusCreated, outDesc: "The rule.",
			errs: []string{codeValidation}, desc: descNotifications}},
		{method: "GET", pattern: "/v1/notification_rules/{notification_rule_id}", useCase: "NotificationRule", serve: h.getNotificationRule, doc: opDoc{id: "getNotificationRule", summary: "Get a notification rule", tag: tagNotifications,
			out: fleet.NotificationRule{}, outDesc: "The rule."}},
		{method: "PATCH", pattern: "/v1/notification_rules/{notification_rule_id}", useCase: "UpdateNotificationRule", serve: h.patchNotificationRule, doc: opDoc{id: "updateNotificationRule", summary: "Update a notification rule (JSON merge patch)", tag: tagNotifications,
			in: fleet.NotificationRulePatch{}, out: fleet.NotificationRule{}, outDesc: "The rule after the change.", errs: []string{codeValidation}}},
		{method: "DELETE", pattern: "/v1/notification_rules/{notification_rule_id}", useCase: "DeleteNotificationRule", serve: h.deleteNotificationRule, doc: opDoc{id: "deleteNotificationRule", summary: "Delete a notification rule", tag: tagNotifications,
			out: fleet.NotificationRuleDeleted{}, outDesc: "Deleted. Mail of it not yet sent is not sent."}},
		{method: "GET", pattern: "/v1/report_schedules", useCase: "ListReportSchedules", serve: h.listReportSchedules, doc: opDoc{id: "listReportSchedules", summary: "List report schedules", tag: tagNotifications,
			query: listParams(userFilter()), out: []fleet.ReportSchedule{}, list: true, outDesc: "A page of schedules, oldest first."}},
		{method: post, pattern: "/v1/report_schedules", useCase: "CreateReportSchedule", serve: h.createReportSchedule, doc: opDoc{id: "createReportSchedule", summary: "Schedule a report by e-mail", tag: tagNotifications,
			in: fleetwire.ReportScheduleInput{}, out: fleet.ReportSchedule{}, status: http.StatusCreated, outDesc: "The schedule, with its next run.",
			errs: []string{codeValidation}}},
		{method: "GET", pattern: "/v1/report_schedules/{report_schedule_id}", useCase: "ReportSchedule", serve: h.getReportSchedule, doc: opDoc{id: "getReportSchedule", summary: "Get a report schedule", tag: tagNotifications,
			out: fleet.ReportSchedule{}, outDesc: "The schedule."}},
		{method: "PATCH", pattern: "/v1/report_schedules/{report_schedule_id}", useCase: "UpdateReportSchedule", serve: h.patchReportSchedule, doc: opDoc{id: "updateReportSchedule", summary: "Update a report schedule (JSON merge patch)", tag: tagNotifications,
			in: fleet.ReportSchedulePatch{}, out: fleet.ReportSchedule{}, outDesc: "The schedule after the change.", errs: []string{codeValidation}}},
		{method: "DELETE", pattern: "/v1/report_schedules/{report_schedule_id}", useCase: "DeleteReportSchedule", serve: h.deleteReportSchedule, doc: opDoc{id: "deleteReportSchedule", summary: "Delete a report schedule", tag: tagNotifications,
			out: fleet.ReportScheduleDeleted{}, outDesc: "Deleted."}},
	}
}

func tagFilter() param {
	return param{name: "tag", desc: "Vehicles carrying this tag.", schema: o("type", "string")}
}

// alertMove documents acknowledge and resolve.
func alertMove(verb string, to fleet.AlertStatus, event string) opDoc {
	return opDoc{id: verb + "Alert", summary: string(verb[0]-'a'+'A') + verb[1:] + " an alert", tag: tagAlerts,
		in: struct{}{}, inOptional: true, out: fleet.Alert{}, outDesc: "The alert after the change.", errs: []string{fleet.CodeInvalidStateTransition},
		desc: "Moves the alert to " + string(to) + " and sets " + string(to) + "_at; emits " + event + " (data: the alert after the change). " +
			"A move the state machine forbids (" + statusDesc(fleet.AlertStatuses(), fleet.AlertMoves) + ") is 409 invalid_state_transition naming from and to. The body, if any, is `{}`."}
}

// permission is what the route's use case needs of the key ("" for none).
func (rt route) permission() fleet.Permission {
	p, ok := fleet.PermissionOf(rt.useCase)
	if !ok {
		panic("fleethttp: route " + rt.method + " " + rt.pattern + " names no use case of fleet.Service: " + rt.useCase)
	}
	return p
}

// RouteInfo describes one route of the API.
type RouteInfo struct {
	Method     string
	Pattern    string           // Go ServeMux pattern, e.g. /v1/vehicles/{vehicle_id}
	UseCase    string           // the use case of fleet.Service it calls
	Permission fleet.Permission // what that use case needs; "" when any valid key may call it
}

// Routes lists every route the handler serves under /v1 (besides
// GET /v1/openapi.json, which needs no key).
func (h *Handler) Routes() []RouteInfo {
	out := make([]RouteInfo, len(h.routes))
	for i, rt := range h.routes {
		out[i] = RouteInfo{Method: rt.method, Pattern: rt.pattern, UseCase: rt.useCase, Permission: rt.permission()}
	}
	return out
}
