VF = [{"name": "status", "in": "query", "schema": ref("VehicleStatus")},
      {"name": "tag", "in": "query", "description": "Vehicles carrying this tag.", "schema": {"type": "string"}}]
add("/vehicles", "get", op("listVehicles", "List vehicles", "Vehicles",
    ok("A page of vehicles, oldest first.", {"type": "array", "items": ref("Vehicle")}, listing=True),
    params=[P("Limit"), P("Cursor")] + VF + [{"name": "q", "in": "query", "description": "Name, license plate or VIN contains this (case-insensitive).", "schema": {"type": "string"}}],
    perm="vehicles:read"))
add("/vehicles", "post", op("createVehicle", "Create a vehicle", "Vehicles", ok("The vehicle (offline until it reports).", ref("Vehicle"), "201"),
    errors=["ValidationError", "Conflict"], body=body("VehicleInput"), perm="vehicles:write", post=True,
    desc="409 conflict when another vehicle of the account has the same external_id. Emits vehicle.created."))
add("/vehicles/{vehicle_id}", "get", op("getVehicle", "Get a vehicle", "Vehicles", ok("The vehicle.", ref("Vehicle")),
    errors=["NotFound"], params=[P("VehicleID")], perm="vehicles:read"))
add("/vehicles/{vehicle_id}", "patch", op("updateVehicle", "Update a vehicle (JSON merge patch)", "Vehicles", ok("The vehicle after the change.", ref("Vehicle")),
    errors=["NotFound", "ValidationError", "Conflict"], params=[P("VehicleID")], body={"required": True, "content": {"application/json": {"schema": ref("VehiclePatch")}, "application/merge-patch+json": {"schema": ref("VehiclePatch")}}},
    perm="vehicles:write", desc="Absent fields stay, null clears. Emits vehicle.updated."))
add("/vehicles/{vehicle_id}", "delete", op("deleteVehicle", "Delete a vehicle", "Vehicles", ok("Deleted.", ref("VehicleDeleted")),
    errors=["NotFound"], params=[P("VehicleID")], perm="vehicles:write",
    desc="Removes the vehicle, its location history and its schedules; work orders and alerts stay as history. Emits vehicle.deleted.\n\n"
         "In the same change the vehicle leaves the `vehicle_ids` of every alert rule that lists it (their `updated_at` moves; rule changes emit no event). "
         "A rule that listed only this vehicle is left with empty `vehicle_ids` and is disabled (`enabled: false`): empty means every vehicle, "
         "and a rule scoped to one vehicle must not widen to the whole fleet. It stays, with its id and settings, to be pointed at other vehicles "
         "or deleted; enabling it again without setting `vehicle_ids` makes it watch every vehicle. Rules that watch every vehicle are unchanged."))
add("/vehicles/locations", "get", op("listLocations", "Latest location of every vehicle", "Tracking",
    ok("A page of location records of vehicles that have reported, in vehicle id order.", {"type": "array", "items": ref("LocationRecord")}, listing=True),
    params=[P("Limit"), P("Cursor"), {"name": "vehicle_id", "in": "query", "description": "Repeatable: only these vehicles.", "schema": {"type": "array", "items": {"type": "string"}}, "style": "form", "explode": True}] + VF,
    perm="locations:read"))
INGEST = ("The batch is validated whole (422 `details` name each bad index, e.g. `locations[3].latitude`) and stored whole or not at all. "
  "A point at a vehicle and timestamp already stored is a duplicate: skipped and counted, not an error. Points may come out of order; "
  "history stays sorted and `last_location` only moves forward. A 2xx means the points are durable. Body limit 8 MiB.")
add("/vehicles/locations", "post", op("ingestLocationsBulk", "Post locations of many vehicles", "Tracking", ok("Counts of the batch.", ref("IngestResult")),
    errors=["ValidationError"], perm="locations:write", post=True, desc="For gateways: 1 to 10,000 points, each naming its vehicle. " + INGEST,
    body={"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["locations"],
        "properties": {"locations": {"type": "array", "minItems": 1, "maxItems": 10000, "items": ref("BulkPointInput")}}}}}}))
add("/vehicles/locations/stream", "get", {"operationId": "streamLocations", "summary": "Live locations (Server-Sent Events)", "tags": ["Tracking"],
    "description": "Permission: `locations:read`.\n\nEach report that moves a vehicle's latest location is sent as `event: location` with an `id:` and a LocationRecord as `data:`. A comment heartbeat is sent every 15 s. Reconnect with `Last-Event-ID` (or `last_event_id`) to get what was missed, up to 10 minutes back, before live data. A client that falls behind reads from the server's replay buffer; one that falls further behind than the buffer holds is disconnected and should reconnect the same way. The stream ends within 5 seconds of its key being revoked, expiring or leaving its rotation grace (a reconnect is then 401). A key may have 2 (free), 10 (pro) or 50 (enterprise) streams open at once on each server. The stream carries the reports ingested by the server it is connected to.",
    "parameters": [{"name": "vehicle_id", "in": "query", "description": "Repeatable: only these vehicles.", "schema": {"type": "array", "items": {"type": "string"}}, "style": "form", "explode": True},
                   {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
                   {"name": "last_event_id", "in": "query", "schema": {"type": "string"}}],
    "responses": {"200": {"description": "An event stream.", "headers": hdr_refs(), "content": {"text/event-stream": {"schema": {"type": "string"}}}}, **errs(),
        "429": {"description": "Over the hourly allowance, or this key already has as many live streams open on this server as its plan allows (free 2, pro 10, enterprise 50), and the message names that limit: \"This API key has 2 live streams open, the most the free plan allows; close one first.\" (`rate_limit_exceeded`). A request refused for the stream limit counts against the hourly allowance like any other; `Retry-After` is then 5 seconds.",
            "headers": hdr_refs(["Retry-After"]), "content": {"application/json": {"schema": ref("ErrorEnvelope")}}}}})
add("/vehicles/{vehicle_id}/locations", "get", op("getLocationHistory", "Location history of a vehicle", "Tracking",
    ok("Points in ascending time.", {"type": "array", "items": ref("Point")}, listing=True), errors=["NotFound"],
    params=[P("VehicleID"), {"name": "from", "in": "query", "description": "Default: 24 hours before `to`. Clamped to the plan's reach (free 7 days, pro 90, enterprise 365).", "schema": {"type": "string", "format": "date-time"}},
            {"name": "to", "in": "query", "description": "Default: now.", "schema": {"type": "string", "format": "date-time"}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}, P("Cursor")],
    perm="locations:read", desc="Both ends are included."))
add("/vehicles/{vehicle_id}/locations", "post", op("ingestLocations", "Post locations of a vehicle", "Tracking", ok("Counts of the batch.", ref("IngestResult")),
    errors=["NotFound", "ValidationError"], params=[P("VehicleID")], perm="locations:write", post=True, desc="1 to 1,000 points. " + INGEST,
    body={"required": True, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False, "required": ["locations"],
        "properties": {"locations": {"type": "array", "minItems": 1, "maxItems": 1000, "items": ref("PointInput")}}}}}}))
add("/events", "get", op("listEvents", "List events", "Events", ok("A page of events, oldest first (kept 30 days).", {"type": "array", "items": ref("Event")}, listing=True),
    params=[P("Limit"), P("Cursor"), {"name": "type", "in": "query", "schema": ref("EventType")},
            {"name": "from", "in": "query", "description": "Events created at or after this time.", "schema": {"type": "string", "format": "date-time"}}],
    perm="events:read"))
add("/events/{event_id}", "get", op("getEvent", "Get an event", "Events", ok("The event.", ref("Event")), errors=["NotFound"], params=[P("EventID")], perm="events:read"))
