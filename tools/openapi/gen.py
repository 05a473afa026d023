import json, sys
RL = {
 "X-RateLimit-Limit": ("integer", "Request allowance of the current window."),
 "X-RateLimit-Remaining": ("integer", "Requests left in the window, after this one."),
 "X-RateLimit-Used": ("integer", "Requests counted in the window."),
 "X-RateLimit-Reset": ("integer", "Unix time, in seconds, at which the window ends."),
 "RateLimit-Policy": ("string", "IETF policy: `\"hourly\";q=LIMIT;w=3600`."),
 "RateLimit": ("string", "IETF state: `\"hourly\";r=REMAINING;t=SECONDS_TO_RESET`."),
}
def hdr_refs(extra=()):
    h = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    for k in RL: h[k] = {"$ref": "#/components/headers/"+k}
    for e in extra: h[e] = {"$ref": "#/components/headers/"+e}
    return h
def ref(name): return {"$ref": "#/components/schemas/"+name}
def nullable(t, **kw):
    d = {"type": [t, "null"]}; d.update(kw); return d
TS = {"type": "string", "format": "date-time"}
MULTILINE = "Multi-line text: tab, line feed and carriage return are allowed, other control characters are not (422)."
TSN = {"type": ["string", "null"], "format": "date-time"}

ERRORS = [
 ("BadRequest", 400, "invalid_request", "Malformed JSON, an unknown or read-only field, a wrong type, or a bad query parameter or cursor (a query parameter holding a control character included: `details` names it)."),
 ("Unauthorized", 401, "unauthorized", "The API key is missing, malformed, unknown, revoked or expired. Such requests are limited per client address (60 an hour by default); the rate-limit headers describe that allowance, and are absent when the server turns the limit off (`--anonymous-limit 0`, for local development)."),
 ("Forbidden", 403, "insufficient_permissions", "The key lacks the permission, or the plan lacks the feature."),
 ("NotFound", 404, "not_found", "No such route, or no such resource in the caller's account."),
 ("MethodNotAllowed", 405, "method_not_allowed", "The path exists but not with this method; `Allow` lists the methods."),
 ("Conflict", 409, "conflict", "A duplicate, an Idempotency-Key reused with another body or still in flight, or a forbidden state transition (`invalid_state_transition`)."),
 ("PayloadTooLarge", 413, "payload_too_large", "The body is over the limit (1 MiB; 8 MiB for location batches)."),
 ("UnsupportedMediaType", 415, "unsupported_media_type", "The body's Content-Type is not application/json."),
 ("ValidationError", 422, "validation_error", "Well-formed but invalid values; `details` names every bad field. Text never holds control characters (U+0000 to U+001F, U+007F), in any field, array item or nested member; multi-line text (work order and webhook `description`, alert `message`, the strings of a custom alert's `data`) may hold tab, line feed and carriage return."),
 ("TooManyRequests", 429, "rate_limit_exceeded", "Over the key's hourly allowance (\"Rate limit exceeded. Retry after N seconds.\"), or over the per-address allowance of requests without a valid API key (\"Too many requests without a valid API key from this address; retry after N seconds.\"); `Retry-After` says when to retry."),
 ("InternalError", 500, "internal_error", "Something unexpected; logged with the request id."),
 ("Unavailable", 503, "unavailable", "The server is shutting down or the store is unreachable."),
]

def components():
    headers = {
      "X-Request-Id": {"description": "The request's id: the client's own X-Request-Id if it sent a sane one, else a new one.", "required": True, "schema": {"type": "string"}},
      "Retry-After": {"description": "Seconds until the rate-limit window resets.", "required": True, "schema": {"type": "integer", "minimum": 1}},
      "Idempotent-Replayed": {"description": "`true` when this is the stored response of an earlier request with the same Idempotency-Key.", "schema": {"type": "string", "enum": ["true"]}},
    }
    for k, (t, d) in RL.items():
        headers[k] = {"description": d, "required": True, "schema": {"type": t}}
    responses = {}
    for name, status, code, desc in ERRORS:
        if status == 405:
            continue  # answered for a path's other methods, never by an operation
        extra = []
        if status == 429: extra = ["Retry-After"]
        h = hdr_refs(extra)
        if status == 401:  # the per-address window's; none when the server runs with --anonymous-limit 0
            for k in RL: h[k] = {**headers[k], "required": False}
        responses[name] = {"description": desc + " (`" + code + "`)", "headers": h,
            "content": {"application/json": {"schema": ref("ErrorEnvelope")}}}
    schemas = {
      "FieldError": {"type": "object", "required": ["field", "message"], "additionalProperties": False,
         "properties": {"field": {"type": "string", "examples": ["locations[3].latitude"]}, "message": {"type": "string"}}},
      "Error": {"type": "object", "required": ["code", "message", "request_id"], "additionalProperties": False,
         "properties": {
           "code": {"type": "string", "enum": sorted(set(e[2] for e in ERRORS) | {"invalid_state_transition"})},
           "message": {"type": "string"},
           "request_id": {"type": "string"},
           "details": {"type": "array", "items": ref("FieldError")}}},
      "ErrorEnvelope": {"type": "object", "required": ["success", "error"], "additionalProperties": False,
         "properties": {"success": {"const": False}, "error": ref("Error")}},
      "Pagination": {"type": "object", "required": ["next_cursor", "has_more"], "additionalProperties": False,
         "properties": {"next_cursor": {"type": ["string", "null"], "description": "Pass as `cursor` to get the next page; null on the last page."}, "has_more": {"type": "boolean"}}},
      "Plan": {"type": "string", "enum": ["free", "pro", "enterprise"]},
      "Permission": {"type": "string", "enum": ["*", "vehicles:read", "vehicles:write", "locations:read", "locations:write",
          "maintenance:read", "maintenance:write", "alerts:read", "alerts:write", "webhooks:read", "webhooks:write",
          "events:read", "keys:read", "keys:write"]},
      "Account": {"type": "object", "additionalProperties": False,
         "required": ["account_id", "company_name", "plan", "api_version", "rate_limit_per_hour", "created_at"],
         "properties": {
           "account_id": {"type": "string", "pattern": "^acc_[0-9a-z]{26}$"},
           "company_name": {"type": "string"},
           "plan": ref("Plan"),
           "api_version": {"type": "string", "const": "v1"},
           "rate_limit_per_hour": {"type": "integer", "description": "Hourly allowance of each key: the plan's, or the account's own higher limit."},
           "created_at": TS}},
      "ApiKey": {"type": "object", "additionalProperties": False,
         "required": ["key_id", "name", "prefix", "permissions", "environment", "status", "created_at", "last_used_at", "expires_at", "revoked_at"],
         "properties": {
           "key_id": {"type": "string", "pattern": "^key_[0-9a-z]{26}$"},
           "name": {"type": "string"},
           "prefix": {"type": "string", "description": "The first 12 characters of the secret, to recognise it by.", "minLength": 12, "maxLength": 12},
           "permissions": {"type": "array", "items": ref("Permission")},
           "environment": {"type": "string", "description": "Free label, e.g. production or development."},
           "status": {"type": "string", "enum": ["active", "revoked", "expired"]},
           "created_at": TS, "last_used_at": TSN, "expires_at": TSN, "revoked_at": TSN}},
      "KeyUsage": {"type": "object", "additionalProperties": False, "required": ["key_id", "hours", "totals"],
         "properties": {
           "key_id": {"type": "string"},
           "hours": {"type": "array", "description": "One entry per clock hour, newest first, the current hour included; hours without requests count zero.",
              "items": {"type": "object", "additionalProperties": False, "required": ["hour", "requests", "rejected"],
                "properties": {"hour": TS, "requests": {"type": "integer", "description": "Requests made with the key, rejected ones included."},
                               "rejected": {"type": "integer", "description": "Requests refused by the rate limit (429)."}}}},
           "totals": {"type": "object", "additionalProperties": False, "required": ["requests", "rejected"],
              "properties": {"requests": {"type": "integer"}, "rejected": {"type": "integer"}}}}},
      "CreateKeyRequest": {"type": "object", "additionalProperties": False, "required": ["name"],
         "properties": {
           "name": {"type": "string", "minLength": 1, "maxLength": 100},
           "permissions": {"type": "array", "items": ref("Permission"), "minItems": 1, "description": "Defaults to the permissions of the key making the request; a key can only grant permissions it holds."},
           "environment": {"type": "string", "maxLength": 50, "description": "Defaults to `production`."},
           "expires_at": {"type": "string", "format": "date-time", "description": "Must be in the future, and not later than the expiry of the key making the request. Omitted: that key's expiry, or none for a key that does not expire."}}},
      "RotateKeyRequest": {"type": "object", "additionalProperties": False,
         "properties": {"grace_period_seconds": {"type": "integer", "minimum": 0, "maximum": 2592000, "default": 3600,
             "description": "How long the old key keeps working. 0 replaces it at once (allowed at the cap of active keys)."}}},
      "Position": {"type": "object", "additionalProperties": False, "required": ["latitude", "longitude", "timestamp", "heading"],
         "properties": {"latitude": {"type": "number", "minimum": -90, "maximum": 90}, "longitude": {"type": "number", "minimum": -180, "maximum": 180},
                        "timestamp": TS, "heading": {"type": ["number", "null"], "minimum": 0, "exclusiveMaximum": 360}}},
      "VehicleStatus": {"type": "string", "enum": ["moving", "idle", "stopped", "offline"],
         "description": "moving: latest report at 5 km/h or more; idle: below that, stationary under 5 minutes; stopped: stationary 5 minutes or more; offline: no report for 30 minutes, or never reported. Derived by the server (thresholds configurable per server)."},
      "Vehicle": {"type": "object", "additionalProperties": False,
         "required": ["vehicle_id", "name", "vin", "make", "model", "year", "license_plate", "external_id", "tags", "odometer_km", "status", "speed", "last_location", "created_at", "updated_at"],
         "properties": {
           "vehicle_id": {"type": "string", "pattern": "^veh_[0-9a-z]{26}$"},
           "name": {"type": "string", "minLength": 1, "maxLength": 100},
           "vin": {"type": ["string", "null"], "pattern": "^[A-HJ-NPR-Z0-9]{17}$"},
           "make": {"type": ["string", "null"]}, "model": {"type": ["string", "null"]},
           "year": {"type": ["integer", "null"]},
           "license_plate": {"type": ["string", "null"]},
           "external_id": {"type": ["string", "null"], "description": "Your own id for the vehicle, unique in the account."},
           "tags": {"type": "array", "items": {"type": "string"}},
           "odometer_km": {"type": ["number", "null"]},
           "status": ref("VehicleStatus"),
           "speed": {"type": ["number", "null"], "description": "km/h, from the latest report."},
           "last_location": {"oneOf": [ref("Position"), {"type": "null"}]},
           "created_at": TS, "updated_at": {**TS, "description": "Last change by a client (location reports do not move it)."}}},
      "VehicleInput": {"type": "object", "additionalProperties": False, "required": ["name"],
         "description": "Unset optional fields are null. A VIN is 17 characters without I, O or Q (stored upper-case); year from 1900 to next year; at most 50 tags.",
         "properties": {
           "name": {"type": "string", "minLength": 1, "maxLength": 100},
           "vin": {"type": ["string", "null"], "minLength": 17, "maxLength": 17},
           "make": {"type": ["string", "null"], "maxLength": 100}, "model": {"type": ["string", "null"], "maxLength": 100},
           "year": {"type": ["integer", "null"], "minimum": 1900},
           "license_plate": {"type": ["string", "null"], "maxLength": 100},
           "external_id": {"type": ["string", "null"], "maxLength": 100},
           "tags": {"type": ["array", "null"], "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 50}},
           "odometer_km": {"type": ["number", "null"], "minimum": 0}}},
      "VehiclePatch": {"type": "object", "additionalProperties": False,
         "description": "JSON merge patch: an absent field is unchanged, null clears it (name cannot be cleared).",
         "properties": {}},
      "VehicleDeleted": {"type": "object", "additionalProperties": False, "required": ["vehicle_id", "deleted"],
         "properties": {"vehicle_id": {"type": "string"}, "deleted": {"const": True}}},
      "LocationRecord": {"type": "object", "additionalProperties": False, "required": ["vehicle_id", "name", "location", "status", "speed", "heading"],
         "properties": {"vehicle_id": {"type": "string"}, "name": {"type": "string"},
           "location": {"type": "object", "additionalProperties": False, "required": ["latitude", "longitude", "timestamp"],
              "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}, "timestamp": TS}},
           "status": ref("VehicleStatus"), "speed": {"type": ["number", "null"]}, "heading": {"type": ["number", "null"]}}},
      "PointInput": {"type": "object", "additionalProperties": False, "required": ["latitude", "longitude", "timestamp"],
         "properties": {"latitude": {"type": "number", "minimum": -90, "maximum": 90}, "longitude": {"type": "number", "minimum": -180, "maximum": 180},
           "timestamp": {"type": "string", "format": "date-time", "description": "At most 5 minutes in the future."},
           "speed": {"type": ["number", "null"], "minimum": 0, "maximum": 1000, "description": "km/h. Absent counts as stationary."},
           "heading": {"type": ["number", "null"], "minimum": 0, "exclusiveMaximum": 360},
           "odometer_km": {"type": ["number", "null"], "minimum": 0, "description": "Updates the vehicle's odometer when the point is its newest."}}},
      "BulkPointInput": {"type": "object", "additionalProperties": False, "required": ["vehicle_id", "latitude", "longitude", "timestamp"],
         "properties": {"vehicle_id": {"type": "string"}}},
      "Point": {"type": "object", "additionalProperties": False, "required": ["latitude", "longitude", "timestamp", "speed", "heading", "odometer_km"],
         "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}, "timestamp": TS,
           "speed": {"type": ["number", "null"]}, "heading": {"type": ["number", "null"]}, "odometer_km": {"type": ["number", "null"]}}},
      "IngestResult": {"type": "object", "additionalProperties": False, "required": ["accepted", "duplicates"],
         "properties": {"accepted": {"type": "integer", "description": "Points stored (durable once this answer is sent)."},
                        "duplicates": {"type": "integer", "description": "Points skipped: the vehicle has a point at that timestamp already."}}},
      "Event": {"type": "object", "additionalProperties": False, "required": ["event_id", "type", "created_at", "data"],
         "properties": {"event_id": {"type": "string", "pattern": "^evt_[0-9a-z]{26}$"}, "type": ref("EventType"), "created_at": TS,
           "data": {"type": "object", "description": "The object after the change; for vehicle.status_changed {vehicle_id, from, to, at}; for vehicle.deleted {vehicle_id, deleted}; for work_order.status_changed {work_order_id, vehicle_id, from, to, at}; for maintenance.due_soon and maintenance.overdue the Schedule."}}},
      "EventType": {"type": "string", "enum": ["vehicle.created", "vehicle.updated", "vehicle.deleted", "vehicle.status_changed",
          "work_order.created", "work_order.updated", "work_order.status_changed", "maintenance.due_soon", "maintenance.overdue",
          "alert.created", "alert.acknowledged", "alert.resolved", "webhook.test"]},
      "WorkOrderStatus": {"type": "string", "enum": ["open", "in_progress", "on_hold", "completed", "cancelled"],
         "description": "open -> in_progress | on_hold | completed | cancelled; in_progress -> on_hold | completed | cancelled; on_hold -> in_progress | cancelled; completed and cancelled are final. Any other move is 409 invalid_state_transition; repeating the current status is not a move and changes nothing."},
      "Priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]},
      "WorkOrder": {"type": "object", "additionalProperties": False,
         "required": ["work_order_id", "vehicle_id", "title", "description", "priority", "status", "due_date", "assigned_to", "odometer_km", "cost_cents", "currency", "schedule_id", "created_at", "updated_at", "completed_at"],
         "properties": {
           "work_order_id": {"type": "string", "pattern": "^wo_[0-9a-z]{26}$"},
           "vehicle_id": {"type": "string", "description": "The vehicle serviced. A work order stays, as history, when its vehicle is deleted."},
           "title": {"type": "string", "minLength": 1, "maxLength": 200},
           "description": {"type": ["string", "null"]},
           "priority": ref("Priority"),
           "status": ref("WorkOrderStatus"),
           "due_date": {"type": ["string", "null"], "format": "date"},
           "assigned_to": {"type": ["string", "null"], "description": "Who does the work: a person, a team or a garage."},
           "odometer_km": {"type": ["number", "null"], "description": "The odometer reading at the service."},
           "cost_cents": {"type": ["integer", "null"], "minimum": 0, "description": "Cost in minor units of `currency` (cents for EUR or USD)."},
           "currency": {"type": ["string", "null"], "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code."},
           "schedule_id": {"type": ["string", "null"], "description": "The schedule whose service this is (set on work orders a schedule opened itself). Completing the work order records the service on that schedule."},
           "created_at": TS, "updated_at": TS,
           "completed_at": {**TSN, "description": "When it moved to completed."}}},
      "WorkOrderInput": {"type": "object", "additionalProperties": False, "required": ["vehicle_id", "title"],
         "description": "A new work order is `open`; its status then changes through PATCH. `vehicle_id` must name a vehicle of the account and `schedule_id` a schedule of that vehicle, else 422 validation_error naming the field.",
         "properties": {
           "vehicle_id": {"type": "string"},
           "title": {"type": "string", "minLength": 1, "maxLength": 200},
           "description": {"type": ["string", "null"], "maxLength": 5000, "description": MULTILINE},
           "priority": {"oneOf": [ref("Priority"), {"type": "null"}], "description": "Default `medium`."},
           "due_date": {"type": ["string", "null"], "format": "date"},
           "assigned_to": {"type": ["string", "null"], "maxLength": 100},
           "odometer_km": {"type": ["number", "null"], "minimum": 0},
           "cost_cents": {"type": ["integer", "null"], "minimum": 0},
           "currency": {"type": ["string", "null"], "pattern": "^[A-Z]{3}$", "description": "Required when `cost_cents` is set."},
           "schedule_id": {"type": ["string", "null"], "description": "Links the work order to a schedule of the same vehicle. The first linked work order of a service cycle counts as the cycle's: the schedule then opens none itself."}}},
      "WorkOrderPatch": {"type": "object", "additionalProperties": False,
         "description": "JSON merge patch: an absent field is unchanged, null clears it (title, priority and status cannot be cleared). `vehicle_id` and `schedule_id` are fixed at creation. Fields other than status stay editable in every status. A patch that changes nothing is a no-op: no event, `updated_at` stays.",
         "properties": {}},
      "ScheduleStatus": {"type": "string", "enum": ["ok", "due_soon", "overdue"],
         "description": "overdue: today is after next_due_date, or the odometer is past next_due_odometer_km; due_soon: next_due_date is 7 days away or less, or the odometer is within 500 km of next_due_odometer_km; ok otherwise. Dates are UTC days."},
      "Schedule": {"type": "object", "additionalProperties": False,
         "required": ["schedule_id", "vehicle_id", "name", "interval_days", "interval_km", "last_service_date", "last_service_odometer_km", "auto_create_work_order", "next_due_date", "next_due_odometer_km", "status", "created_at", "updated_at"],
         "properties": {
           "schedule_id": {"type": "string", "pattern": "^sch_[0-9a-z]{26}$"},
           "vehicle_id": {"type": "string"},
           "name": {"type": "string", "minLength": 1, "maxLength": 100},
           "interval_days": {"type": ["integer", "null"], "minimum": 1, "maximum": 3650},
           "interval_km": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000000},
           "last_service_date": {"type": "string", "format": "date"},
           "last_service_odometer_km": {"type": "number", "minimum": 0},
           "auto_create_work_order": {"type": "boolean", "description": "When the schedule becomes due_soon (or overdue), open one linked work order, once per service cycle."},
           "next_due_date": {"type": ["string", "null"], "format": "date", "description": "last_service_date + interval_days; null without interval_days."},
           "next_due_odometer_km": {"type": ["number", "null"], "description": "last_service_odometer_km + interval_km; null without interval_km."},
           "status": ref("ScheduleStatus"),
           "created_at": TS, "updated_at": TS}},
      "ScheduleInput": {"type": "object", "additionalProperties": False, "required": ["vehicle_id", "name"],
         "description": "At least one of interval_days and interval_km. `vehicle_id` must name a vehicle of the account, else 422 validation_error naming it. The computed fields (next_due_date, next_due_odometer_km, status) are read-only.",
         "properties": {
           "vehicle_id": {"type": "string"},
           "name": {"type": "string", "minLength": 1, "maxLength": 100},
           "interval_days": {"type": ["integer", "null"], "minimum": 1, "maximum": 3650},
           "interval_km": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000000},
           "last_service_date": {"type": ["string", "null"], "format": "date", "description": "Default: today. Not in the future."},
           "last_service_odometer_km": {"type": ["number", "null"], "minimum": 0, "description": "Default: the vehicle's odometer now (0 if it has none)."},
           "auto_create_work_order": {"type": ["boolean", "null"], "description": "Default false."}}},
      "SchedulePatch": {"type": "object", "additionalProperties": False,
         "description": "JSON merge patch: an absent field is unchanged, null clears it (at least one interval must remain; name, last_service_date, last_service_odometer_km and auto_create_work_order cannot be cleared). Changing last_service_date or last_service_odometer_km records a service done elsewhere and starts a new cycle; changing the intervals does not.",
         "properties": {}},
      "ScheduleDeleted": {"type": "object", "additionalProperties": False, "required": ["schedule_id", "deleted"],
         "properties": {"schedule_id": {"type": "string"}, "deleted": {"const": True}}},
      "Health": {"type": "object", "required": ["status"], "properties": {"status": {"type": "string", "enum": ["ok", "unavailable"]}}},
    }
    wp = schemas["WorkOrderPatch"]
    wp["properties"] = {k: v for k, v in json.loads(json.dumps(schemas["WorkOrderInput"]["properties"])).items() if k not in ("vehicle_id", "schedule_id")}
    wp["properties"]["status"] = ref("WorkOrderStatus")
    sp = schemas["SchedulePatch"]
    sp["properties"] = {k: v for k, v in json.loads(json.dumps(schemas["ScheduleInput"]["properties"])).items() if k != "vehicle_id"}
    vp = schemas["VehiclePatch"]
    vp["properties"] = json.loads(json.dumps(schemas["VehicleInput"]["properties"]))
    bp = schemas["BulkPointInput"]
    bp["properties"] = {**bp["properties"], **json.loads(json.dumps(schemas["PointInput"]["properties"]))}
    nk = json.loads(json.dumps(schemas["ApiKey"]))
    nk["description"] = "A key as created or rotated, with its secret: shown this once only."
    nk["required"] = nk["required"] + ["key"]
    nk["properties"]["key"] = {"type": "string", "pattern": "^fleet_[0-9A-Za-z]{38}$", "description": "The secret. Store it now: it cannot be read again."}
    nk["properties"]["previous_key"] = {**ref("ApiKey"), "description": "On rotation: the old key, with the expiry its grace period gives it."}
    schemas["NewApiKey"] = nk
    params = {
      "Limit": {"name": "limit", "in": "query", "description": "Page size.", "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}},
      "Cursor": {"name": "cursor", "in": "query", "description": "The `next_cursor` of the previous page.", "schema": {"type": "string"}},
      "IdempotencyKey": {"name": "Idempotency-Key", "in": "header", "description": "1 to 255 printable characters, scoped to the API key and kept 24 hours. A repeat with the same body returns the first response with `Idempotent-Replayed: true`; with another body, or while the first is running, it is 409 conflict.", "schema": {"type": "string", "minLength": 1, "maxLength": 255}},
      "KeyID": {"name": "key_id", "in": "path", "required": True, "schema": {"type": "string"}},
      "VehicleID": {"name": "vehicle_id", "in": "path", "required": True, "schema": {"type": "string"}},
      "EventID": {"name": "event_id", "in": "path", "required": True, "schema": {"type": "string"}},
      "WorkOrderID": {"name": "work_order_id", "in": "path", "required": True, "schema": {"type": "string"}},
      "ScheduleID": {"name": "schedule_id", "in": "path", "required": True, "schema": {"type": "string"}},
    }
    schemas.update(EXTRA_SCHEMAS); params.update(EXTRA_PARAMS)  # from the *_paths.py parts
    return {"securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer", "description": "`Authorization: Bearer fleet_...`: an API key secret."}},
            "headers": headers, "responses": responses, "schemas": schemas, "parameters": params}

def ok(desc, schema, status="200", listing=False, extra_headers=()):
    if status == "201":
        extra_headers = tuple(extra_headers) + ("Idempotent-Replayed",)
    props = {"success": {"const": True}, "data": schema}
    req = ["success", "data"]
    if listing:
        props["pagination"] = ref("Pagination"); req.append("pagination")
    return {status: {"description": desc, "headers": hdr_refs(extra_headers),
        "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": req, "properties": props}}}}}

def errs(*names):
    base = ["BadRequest", "Unauthorized", "Forbidden", "TooManyRequests", "InternalError", "Unavailable"]
    out = {}
    for n in base + list(names):
        st = [e[1] for e in ERRORS if e[0] == n][0]
        out[str(st)] = {"$ref": "#/components/responses/" + n}
    return out

def op(opid, summary, tag, resp, errors=(), params=(), body=None, perm=None, desc=None, post=False):
    o = {"operationId": opid, "summary": summary, "tags": [tag]}
    d = desc or ""
    if perm: d = (d + "\n\n" if d else "") + "Permission: `" + perm + "`."
    if d: o["description"] = d
    ps = list(params)
    if post: ps.append({"$ref": "#/components/parameters/IdempotencyKey"})
    if ps: o["parameters"] = ps
    if body is not None:
        o["requestBody"] = body
    r = dict(resp); r.update(errs(*errors))
    if body is not None or post:
        r.update({"413": {"$ref": "#/components/responses/PayloadTooLarge"}, "415": {"$ref": "#/components/responses/UnsupportedMediaType"}})
    o["responses"] = r
    return o

def body(schema_name, required=True):
    return {"required": required, "content": {"application/json": {"schema": ref(schema_name)}}}

# Schemas and parameters a *_paths.py file adds for its own area.
EXTRA_SCHEMAS, EXTRA_PARAMS = {}, {}
P = lambda n: {"$ref": "#/components/parameters/" + n}
paths = {}
def add(path, method, o): paths.setdefault(path, {})[method] = o
