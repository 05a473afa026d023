WH_EVENTS = {"type": "array", "minItems": 1, "uniqueItems": True,
    "items": {"anyOf": [ref("EventType"), {"const": "*"}]},
    "description": "Event types to receive, or `[\"*\"]` for every type. `webhook.test` goes only to the endpoint tested."}
WH_PROPS = {
    "webhook_id": {"type": "string", "pattern": "^wh_[0-9a-z]{26}$"},
    "url": {"type": "string", "format": "uri", "maxLength": 2048},
    "events": WH_EVENTS,
    "description": {"type": "string", "maxLength": 500},
    "enabled": {"type": "boolean", "description": "Disabled endpoints get no deliveries. The server disables an endpoint that answers 410, or whose deliveries have all failed for 5 days."},
    "created_at": TS}
WH_REQ = ["webhook_id", "url", "events", "description", "enabled", "created_at"]
URL_DESC = ("Must be `https` and must not resolve to a loopback, private, link-local, unique-local, carrier-grade NAT, multicast or unspecified "
            "address, in any notation (IPv4-mapped IPv6, decimal, octal or hex IPv4), nor to an IPv6 address that embeds or tunnels to an IPv4 one "
            "(IPv4-compatible, IPv4-translated `::ffff:0:0:0/96`, NAT64, 6to4, Teredo `2001::/32`); checked here and again when connecting. "
            "A host that cannot be used, for whatever reason (such an address, a name that resolves to one, a name that does not resolve), gets one answer: "
            "422 naming `url`, \"cannot be used as a webhook endpoint: it must be an https URL on a public host\". "
            "Errors of form (not https, user information, a bad port, a fragment, an IP address not in its standard form) are named as such. "
            "A server started with `--insecure-webhooks` allows `http` and such addresses.")
EXTRA_SCHEMAS.update({
  "Webhook": {"type": "object", "additionalProperties": False, "required": WH_REQ, "properties": WH_PROPS},
  "WebhookWithSecret": {"type": "object", "additionalProperties": False, "required": WH_REQ + ["secret"],
     "description": "An endpoint with its signing secret: shown only by create and rotate_secret.",
     "properties": {**WH_PROPS, "secret": {"type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
        "description": "`whsec_` + base64 of 32 random bytes. The HMAC key is the base64-decoded part after `whsec_`."}}},
  "WebhookInput": {"type": "object", "additionalProperties": False, "required": ["url"],
     "description": "The plan caps the number of endpoints (pro 10, enterprise 100): one more is 409 conflict. The free plan has no webhooks (403).",
     "properties": {"url": {"type": "string", "maxLength": 2048, "description": URL_DESC},
        "events": {**WH_EVENTS, "description": WH_EVENTS["description"] + " Default `[\"*\"]`."},
        "description": {"type": ["string", "null"], "maxLength": 500, "description": MULTILINE},
        "enabled": {"type": ["boolean", "null"], "description": "Default true."}}},
  "WebhookPatch": {"type": "object", "additionalProperties": False,
     "description": "JSON merge patch: an absent field is unchanged; a null `description` clears it. `url`, `events` and `enabled` cannot be null: a null one is 422 validation_error naming it, and nothing changes. Enabling a disabled endpoint forgets its failures.",
     "properties": {"url": {"type": "string", "maxLength": 2048, "description": URL_DESC}, "events": WH_EVENTS,
        "description": {"type": ["string", "null"], "maxLength": 500, "description": MULTILINE}, "enabled": {"type": "boolean"}}},
  "WebhookDeleted": {"type": "object", "additionalProperties": False, "required": ["webhook_id", "deleted"],
     "properties": {"webhook_id": {"type": "string"}, "deleted": {"const": True}}},
  "DeliveryStatus": {"type": "string", "enum": ["pending", "succeeded", "failed"]},
  "Delivery": {"type": "object", "additionalProperties": False,
     "description": "One attempt to deliver an event. A pending attempt is due at next_attempt_at; a failed one that will be retried names when (the retry is a new pending attempt), else next_attempt_at is null.",
     "required": ["delivery_id", "webhook_id", "event_id", "attempt", "status", "response_status", "error", "duration_ms", "next_attempt_at", "created_at"],
     "properties": {"delivery_id": {"type": "string", "pattern": "^del_[0-9a-z]{26}$"}, "webhook_id": {"type": "string"},
        "event_id": {"type": "string"}, "attempt": {"type": "integer", "minimum": 1, "maximum": 10},
        "status": ref("DeliveryStatus"), "response_status": {"type": ["integer", "null"]},
        "error": {"type": ["string", "null"]}, "duration_ms": {"type": ["integer", "null"], "minimum": 0},
        "next_attempt_at": TSN, "created_at": TS}},
  "WebhookTest": {"type": "object", "additionalProperties": False, "required": ["event", "delivery"],
     "properties": {"event": ref("Event"), "delivery": ref("Delivery")}},
})
EXTRA_PARAMS.update({
  "WebhookID": {"name": "webhook_id", "in": "path", "required": True, "schema": {"type": "string"}},
  "DeliveryID": {"name": "delivery_id", "in": "path", "required": True, "schema": {"type": "string"}},
})
SENDING = ("Every event goes to each enabled endpoint whose `events` take its type, as a `POST` of the event JSON with headers "
           "`webhook-id` (the event id), `webhook-timestamp` (Unix seconds) and `webhook-signature` "
           "(`v1,<base64 HMAC-SHA256(key, \"{id}.{timestamp}.{body}\")>`, per the Standard Webhooks specification). "
           "A 2xx within 15 seconds is success; redirects are not followed. Failed attempts are retried after 5 s, 5 min, 30 min, 2 h, 5 h, "
           "10 h, 14 h, 20 h and 24 h (with up to 10% jitter, and no sooner than a `Retry-After` on 429, 502 or 504), then the delivery has failed. "
           "A 410 disables the endpoint at once.")
FREE = " The free plan has no webhooks: 403 insufficient_permissions naming the plan."
add("/webhooks", "get", op("listWebhooks", "List webhook endpoints", "Webhooks",
    ok("A page of endpoints, oldest first (secrets are never listed).", {"type": "array", "items": ref("Webhook")}, listing=True),
    params=[P("Limit"), P("Cursor")], perm="webhooks:read", desc="Endpoints of the account." + FREE))
add("/webhooks", "post", op("createWebhook", "Register a webhook endpoint", "Webhooks",
    ok("The endpoint with its secret, shown this once.", ref("WebhookWithSecret"), "201"),
    errors=["ValidationError", "Conflict"], body=body("WebhookInput"), perm="webhooks:write", post=True,
    desc=SENDING + " An account at its plan's cap of endpoints gets 409 conflict." + FREE))
add("/webhooks/{webhook_id}", "get", op("getWebhook", "Get a webhook endpoint", "Webhooks",
    ok("The endpoint.", ref("Webhook")), errors=["NotFound"], params=[P("WebhookID")], perm="webhooks:read"))
add("/webhooks/{webhook_id}", "patch", op("updateWebhook", "Update a webhook endpoint (JSON merge patch)", "Webhooks",
    ok("The endpoint after the change.", ref("Webhook")), errors=["NotFound", "ValidationError"], params=[P("WebhookID")],
    body={"required": True, "content": {"application/json": {"schema": ref("WebhookPatch")}, "application/merge-patch+json": {"schema": ref("WebhookPatch")}}},
    perm="webhooks:write"))
add("/webhooks/{webhook_id}", "delete", op("deleteWebhook", "Delete a webhook endpoint", "Webhooks",
    ok("Deleted, with its delivery log.", ref("WebhookDeleted")), errors=["NotFound"], params=[P("WebhookID")], perm="webhooks:write"))
add("/webhooks/{webhook_id}/rotate_secret", "post", op("rotateWebhookSecret", "Rotate an endpoint's secret", "Webhooks",
    ok("The endpoint with its new secret, shown this once.", ref("WebhookWithSecret")), errors=["NotFound"], params=[P("WebhookID")],
    perm="webhooks:write", post=True,
    desc="For 24 hours the old secret keeps signing too: `webhook-signature` then carries both signatures, space-separated, so receivers can switch at leisure."))
add("/webhooks/{webhook_id}/test", "post", op("testWebhook", "Send a test event", "Webhooks",
    ok("The webhook.test event and its pending delivery, sent within a second.", ref("WebhookTest"), "202"),
    errors=["NotFound", "Conflict"], params=[P("WebhookID")], perm="webhooks:write", post=True,
    desc="Emits a `webhook.test` event (data: `{webhook_id}`) delivered to this endpoint only. A disabled endpoint is 409 conflict."))
add("/webhooks/{webhook_id}/deliveries", "get", op("listDeliveries", "List an endpoint's delivery attempts", "Webhooks",
    ok("A page of attempts, oldest first.", {"type": "array", "items": ref("Delivery")}, listing=True), errors=["NotFound"],
    params=[P("WebhookID"), P("Limit"), P("Cursor"), {"name": "status", "in": "query", "schema": ref("DeliveryStatus")},
            {"name": "event_id", "in": "query", "description": "Only this event's.", "schema": {"type": "string"}}],
    perm="webhooks:read", desc="An unknown status, or an event_id that is not an event id, is 400 invalid_request."))
add("/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", "post", op("retryDelivery", "Send a delivery's event again now", "Webhooks",
    ok("The new pending attempt: the first of a new series.", ref("Delivery"), "202"), errors=["NotFound", "Conflict"],
    params=[P("WebhookID"), P("DeliveryID")], perm="webhooks:write", post=True,
    desc="A disabled endpoint is 409 conflict."))
