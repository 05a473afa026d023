POS = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 3,
       "description": "[longitude, latitude] (an altitude may follow and is ignored); longitude -180..180, latitude -90..90."}
SEV = {"type": "string", "enum": ["info", "warning", "critical"]}
ATYPES = ["speeding", "vehicle_offline", "geofence_enter", "geofence_exit", "maintenance_due_soon", "maintenance_overdue", "custom"]
RTYPES = ["speeding", "vehicle_offline", "geofence_enter", "geofence_exit"]
GEOMETRY_DESC = ("A GeoJSON (RFC 7946) geometry: a `Polygon` (an outer ring, then holes; each ring closed, at least 4 positions; "
    "at most 1,000 positions per ring and 10,000 in all, else 422 naming the ring or the coordinates) or a `Point`, the centre of a circle whose radius is `radius_m`. Edges are straight lines in "
    "longitude and latitude, as RFC 7946 has them. A ring whose consecutive longitudes jump by more than 180 degrees is read as crossing "
    "the antimeridian (the ring goes on past ±180), so a ring drawn from 170 to -170 covers the 20 degrees around 180, not the 340 around 0; "
    "RFC 7946 asks for such rings to be split, and split rings work too. The boundary counts as inside: a position on an edge or a vertex "
    "of the outer ring or of a hole is inside the geofence, and so is one exactly `radius_m` from a circle's centre (haversine distance, "
    "mean Earth radius 6,371,008.8 m).")
EXTRA_SCHEMAS.update({
  "Severity": {**SEV, "description": "How serious an alert is. Default `warning`."},
  "AlertType": {"type": "string", "enum": ATYPES},
  "AlertStatus": {"type": "string", "enum": ["open", "acknowledged", "resolved"],
     "description": "open → acknowledged | resolved; acknowledged → resolved; resolved is final. Anything else, a repeat included, is 409 invalid_state_transition naming from and to."},
  "Alert": {"type": "object", "additionalProperties": False,
     "required": ["alert_id", "type", "severity", "status", "vehicle_id", "rule_id", "message", "data", "created_at", "acknowledged_at", "resolved_at"],
     "properties": {
       "alert_id": {"type": "string", "pattern": "^alt_[0-9a-z]{26}$"},
       "type": ref("AlertType"), "severity": ref("Severity"), "status": ref("AlertStatus"),
       "vehicle_id": {"type": ["string", "null"]},
       "rule_id": {"type": ["string", "null"], "description": "The rule that opened it; null for maintenance and custom alerts. Alerts stay when their rule or vehicle is deleted."},
       "message": {"type": "string"},
       "data": {"type": "object", "description": "What the alert is about. speeding: `{speed, threshold_kmh, latitude, longitude, timestamp}` of the point; "
          "geofence_enter / geofence_exit: `{geofence_id, geofence_name, latitude, longitude, timestamp}` of the first point inside (outside); "
          "vehicle_offline: `{last_reported_at, after_minutes, latitude, longitude}`; maintenance alerts: `{schedule_id, schedule_name, next_due_date, next_due_odometer_km, last_service_date}`; "
          "custom: what the client sent."},
       "created_at": TS, "acknowledged_at": TSN, "resolved_at": TSN}},
  "AlertInput": {"type": "object", "additionalProperties": False, "required": ["message"],
     "description": "Opens a `custom` alert. `vehicle_id`, when given, must name a vehicle of the account, else 422 validation_error naming it.",
     "properties": {"vehicle_id": {"type": ["string", "null"]}, "severity": {"oneOf": [ref("Severity"), {"type": "null"}]},
       "message": {"type": "string", "minLength": 1, "maxLength": 1000},
       "data": {"type": ["object", "null"], "description": "Any JSON object, at most 16 KiB."}}},
  "AlertRule": {"type": "object", "additionalProperties": False,
     "required": ["rule_id", "type", "severity", "threshold_kmh", "after_minutes", "geofence_id", "vehicle_ids", "enabled", "created_at", "updated_at"],
     "properties": {
       "rule_id": {"type": "string", "pattern": "^rule_[0-9a-z]{26}$"},
       "type": {"type": "string", "enum": RTYPES},
       "severity": ref("Severity"),
       "threshold_kmh": {"type": ["number", "null"], "description": "speeding: a point above this speed (strictly) opens an alert."},
       "after_minutes": {"type": ["integer", "null"], "description": "vehicle_offline: a vehicle silent this long opens an alert."},
       "geofence_id": {"type": ["string", "null"], "description": "geofence_enter / geofence_exit: the geofence."},
       "vehicle_ids": {"type": "array", "items": {"type": "string"}, "description": "The vehicles it watches; empty: every vehicle of the account, present and future. "
          "Deleting a vehicle removes it from here; a rule that listed only that vehicle is disabled then, never widened to every vehicle."},
       "enabled": {"type": "boolean"},
       "created_at": TS, "updated_at": TS}},
  "AlertRuleInput": {"type": "object", "additionalProperties": False, "required": ["type"],
     "description": "Exactly the field the type needs: `threshold_kmh` (0 < x ≤ 1000) for speeding, `after_minutes` (1..10080) for vehicle_offline, "
        "`geofence_id` for geofence_enter and geofence_exit; another type's field is 422. `vehicle_ids` (at most 500) and `geofence_id` must be the account's, else 422 naming them.",
     "properties": {"type": {"type": "string", "enum": RTYPES}, "severity": {"oneOf": [ref("Severity"), {"type": "null"}]},
       "threshold_kmh": {"type": ["number", "null"]}, "after_minutes": {"type": ["integer", "null"]},
       "geofence_id": {"type": ["string", "null"]}, "vehicle_ids": {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 500},
       "enabled": {"type": ["boolean", "null"], "description": "Default true."}}},
  "AlertRulePatch": {"type": "object", "additionalProperties": False,
     "description": "JSON merge patch: an absent field is unchanged. `type` is fixed at creation. The result is validated as on creation: "
        "each of `vehicle_ids` must name a vehicle of the account (else 422 naming it). A deleted vehicle never lingers in a rule (deleting it "
        "removes it from every rule), so patching other fields of a rule that listed it works. Setting `enabled: true` on a rule whose "
        "`vehicle_ids` is empty makes it watch every vehicle.",
     "properties": {"severity": ref("Severity"), "threshold_kmh": {"type": ["number", "null"]}, "after_minutes": {"type": ["integer", "null"]},
       "geofence_id": {"type": ["string", "null"]}, "vehicle_ids": {"type": ["array", "null"], "items": {"type": "string"}}, "enabled": {"type": "boolean"}}},
  "RuleDeleted": {"type": "object", "additionalProperties": False, "required": ["rule_id", "deleted"],
     "properties": {"rule_id": {"type": "string"}, "deleted": {"const": True}}},
  "Geometry": {"description": GEOMETRY_DESC, "oneOf": [
     {"type": "object", "additionalProperties": False, "required": ["type", "coordinates"],
      "properties": {"type": {"const": "Polygon"}, "coordinates": {"type": "array", "minItems": 1, "maxItems": 100,
         "items": {"type": "array", "minItems": 4, "maxItems": 1000, "items": POS}}, "bbox": {"type": "array", "items": {"type": "number"}}}},
     {"type": "object", "additionalProperties": False, "required": ["type", "coordinates"],
      "properties": {"type": {"const": "Point"}, "coordinates": POS, "bbox": {"type": "array", "items": {"type": "number"}}}}]},
  "Geofence": {"type": "object", "additionalProperties": False, "required": ["geofence_id", "name", "geometry", "radius_m", "created_at", "updated_at"],
     "properties": {"geofence_id": {"type": "string", "pattern": "^geo_[0-9a-z]{26}$"}, "name": {"type": "string"},
       "geometry": ref("Geometry"), "radius_m": {"type": ["number", "null"], "description": "The circle's radius in metres; null for a polygon."},
       "created_at": TS, "updated_at": TS}},
  "GeofenceInput": {"type": "object", "additionalProperties": False, "required": ["name", "geometry"],
     "description": "Invalid geometry (a ring not closed or under 4 positions, a position out of range, a ring of more than 1,000 positions, more than 10,000 positions in all, a circle without a radius above 0 and at most 1,000,000 m, radius_m on a polygon) is 422 validation_error naming each bad field, e.g. `geometry.coordinates[0][3]`. The geometry is read as one GeoJSON document, so what is wrong inside it, a value of the wrong JSON type included, is a 422 naming its position, not a 400.",
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100}, "geometry": ref("Geometry"),
       "radius_m": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000000}}},
  "GeofencePatch": {"type": "object", "additionalProperties": False,
     "description": "JSON merge patch: an absent field is unchanged. The result is validated as on creation. Vehicles are judged against the new shape from their next report on.",
     "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100}, "geometry": ref("Geometry"), "radius_m": {"type": ["number", "null"]}}},
  "GeofenceDeleted": {"type": "object", "additionalProperties": False, "required": ["geofence_id", "deleted"],
     "properties": {"geofence_id": {"type": "string"}, "deleted": {"const": True}}},
})
EXTRA_PARAMS.update({
  "AlertID": {"name": "alert_id", "in": "path", "required": True, "schema": {"type": "string"}},
  "RuleID": {"name": "rule_id", "in": "path", "required": True, "schema": {"type": "string"}},
  "GeofenceID": {"name": "geofence_id", "in": "path", "required": True, "schema": {"type": "string"}},
})
EVAL = ("Rules are judged as follows. speeding: on each stored point of a location report (late points too), in time order per vehicle, "
    "in the transaction that stores the points. geofence_enter / geofence_exit: on each point that moves the vehicle forward in time, against "
    "the position before it (the vehicle's last location, then each point of the batch in turn): enter = previous position outside, this one "
    "inside; exit the converse. A vehicle's first position ever decides nothing, and points older than its last location decide no crossing. "
    "vehicle_offline: by the server's clock, every few seconds, with no request: a vehicle that has reported and then been silent for "
    "after_minutes; vehicles that never reported are not judged (a batch of old reports that leaves a vehicle silent past after_minutes "
    "already opens that alert with the batch). "
    "While an alert of a rule for a vehicle is open or acknowledged, the same condition opens no other; once it is resolved the next "
    "occurrence opens a new one (for vehicle_offline: the next silence, after a new report). Maintenance alerts open when a schedule becomes "
    "due_soon or overdue, one of each type per service cycle.")
AF = [{"name": n, "in": "query", "schema": s} for n, s in [("status", ref("AlertStatus")), ("type", ref("AlertType")), ("severity", ref("Severity")),
      ("vehicle_id", {"type": "string"})]] + [
      {"name": "from", "in": "query", "description": "Created at or after.", "schema": {"type": "string", "format": "date-time"}},
      {"name": "to", "in": "query", "description": "Created at or before.", "schema": {"type": "string", "format": "date-time"}}]
add("/alerts", "get", op("listAlerts", "List alerts", "Alerts",
    ok("A page of alerts, oldest first.", {"type": "array", "items": ref("Alert")}, listing=True),
    params=[P("Limit"), P("Cursor")] + AF, perm="alerts:read",
    desc="An unknown status, type or severity, a vehicle_id that is not a vehicle id, a malformed time or from after to is 400 invalid_request.\n\n" + EVAL))
add("/alerts", "post", op("createAlert", "Open a custom alert", "Alerts", ok("The alert, open.", ref("Alert"), "201"),
    errors=["ValidationError", "Conflict"], body=body("AlertInput"), perm="alerts:write", post=True, desc="Emits alert.created (data: the alert)."))
add("/alerts/{alert_id}", "get", op("getAlert", "Get an alert", "Alerts", ok("The alert.", ref("Alert")),
    errors=["NotFound"], params=[P("AlertID")], perm="alerts:read",
    desc="`/alerts/rules` is the rules' own path, not an alert: a literal segment takes precedence over `{alert_id}`, and alert ids always start with `alt_`."))
for verb, to, ev in [("acknowledge", "acknowledged", "alert.acknowledged"), ("resolve", "resolved", "alert.resolved")]:
    add("/alerts/{alert_id}/" + verb, "post", op(verb + "Alert", verb.capitalize() + " an alert", "Alerts",
        ok("The alert after the change.", ref("Alert")), errors=["NotFound", "Conflict"], params=[P("AlertID")],
        body={"required": False, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "properties": {}}}}},
        perm="alerts:write", post=True,
        desc="Moves the alert to " + to + " and sets " + to + "_at; emits " + ev + " (data: the alert after the change). "
             "A move the state machine forbids (open → acknowledged | resolved; acknowledged → resolved) is 409 invalid_state_transition naming from and to. The body, if any, is `{}`."))
add("/alerts/rules", "get", op("listAlertRules", "List alert rules", "Alerts",
    ok("A page of rules, oldest first.", {"type": "array", "items": ref("AlertRule")}, listing=True),
    params=[P("Limit"), P("Cursor"), {"name": "type", "in": "query", "schema": {"type": "string", "enum": RTYPES}},
            {"name": "geofence_id", "in": "query", "description": "Only rules naming this geofence.", "schema": {"type": "string"}}],
    perm="alerts:read"))
add("/alerts/rules", "post", op("createAlertRule", "Create an alert rule", "Alerts", ok("The rule.", ref("AlertRule"), "201"),
    errors=["ValidationError", "Conflict"], body=body("AlertRuleInput"), perm="alerts:write", post=True,
    desc="An account holds at most as many rules, enabled or not, as its plan allows (free 20, pro 200, enterprise 1,000): creating one more "
         "is 409 conflict whose message names the plan's cap (delete one first). Every location report is judged against all of the account's "
         "enabled rules, hence the cap.\n\n" + EVAL))
add("/alerts/rules/{rule_id}", "get", op("getAlertRule", "Get an alert rule", "Alerts", ok("The rule.", ref("AlertRule")),
    errors=["NotFound"], params=[P("RuleID")], perm="alerts:read"))
add("/alerts/rules/{rule_id}", "patch", op("updateAlertRule", "Update an alert rule (JSON merge patch)", "Alerts",
    ok("The rule after the change.", ref("AlertRule")), errors=["NotFound", "ValidationError"], params=[P("RuleID")],
    body={"required": True, "content": {"application/json": {"schema": ref("AlertRulePatch")}, "application/merge-patch+json": {"schema": ref("AlertRulePatch")}}},
    perm="alerts:write"))
add("/alerts/rules/{rule_id}", "delete", op("deleteAlertRule", "Delete an alert rule", "Alerts", ok("Deleted.", ref("RuleDeleted")),
    errors=["NotFound"], params=[P("RuleID")], perm="alerts:write", desc="The alerts it opened stay, with their rule_id, as history."))
add("/geofences", "get", op("listGeofences", "List geofences", "Alerts",
    ok("A page of geofences, oldest first.", {"type": "array", "items": ref("Geofence")}, listing=True),
    params=[P("Limit"), P("Cursor")], perm="alerts:read"))
add("/geofences", "post", op("createGeofence", "Create a geofence", "Alerts", ok("The geofence.", ref("Geofence"), "201"),
    errors=["ValidationError", "Conflict"], body=body("GeofenceInput"), perm="alerts:write", post=True,
    desc="An account holds at most as many geofences as its plan allows (free 20, pro 200, enterprise 1,000): creating one more is 409 conflict "
         "whose message names the plan's cap (delete one first).\n\n" + GEOMETRY_DESC))
add("/geofences/{geofence_id}", "get", op("getGeofence", "Get a geofence", "Alerts", ok("The geofence.", ref("Geofence")),
    errors=["NotFound"], params=[P("GeofenceID")], perm="alerts:read"))
add("/geofences/{geofence_id}", "patch", op("updateGeofence", "Update a geofence (JSON merge patch)", "Alerts",
    ok("The geofence after the change.", ref("Geofence")), errors=["NotFound", "ValidationError"], params=[P("GeofenceID")],
    body={"required": True, "content": {"application/json": {"schema": ref("GeofencePatch")}, "application/merge-patch+json": {"schema": ref("GeofencePatch")}}},
    perm="alerts:write"))
add("/geofences/{geofence_id}", "delete", op("deleteGeofence", "Delete a geofence", "Alerts", ok("Deleted.", ref("GeofenceDeleted")),
    errors=["NotFound", "Conflict"], params=[P("GeofenceID")], perm="alerts:write",
    desc="A geofence that alert rules name cannot be deleted: that is 409 conflict, whose message and details name the rules (up to 10). "
         "Delete those rules or point them at another geofence first. Nothing cascades, so no rule is left watching nothing."))
