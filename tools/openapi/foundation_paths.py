add("/account", "get", op("getAccount", "The account of the key", "Account",
    ok("The account.", ref("Account")), desc="Any valid key may call it (no permission needed): it is how a client checks a key."))
add("/api_keys", "get", op("listApiKeys", "List API keys", "API keys",
    ok("A page of keys, oldest first.", {"type": "array", "items": ref("ApiKey")}, listing=True),
    params=[P("Limit"), P("Cursor")], perm="keys:read"))
add("/api_keys", "post", op("createApiKey", "Create an API key", "API keys",
    ok("The new key with its secret in `key`, shown this once.", ref("NewApiKey"), "201"),
    errors=["ValidationError", "Conflict"], body=body("CreateKeyRequest"), perm="keys:write", post=True,
    desc="A key can only grant permissions it holds (403 otherwise), and a key cannot outlive the key that creates it: the new key's `expires_at` may not be later than the creating key's (422 naming `expires_at`), and without one it takes the creating key's. An account holds at most its plan's number of active (neither revoked nor expired) keys: free 10, pro 100, enterprise 1,000; one more is 409 conflict naming the cap, whoever creates it."))
add("/api_keys/{key_id}", "get", op("getApiKey", "Get an API key", "API keys", ok("The key.", ref("ApiKey")),
    errors=["NotFound"], params=[P("KeyID")], perm="keys:read"))
add("/api_keys/{key_id}", "delete", op("revokeApiKey", "Revoke an API key", "API keys",
    ok("The revoked key. Revoking a revoked key changes nothing.", ref("ApiKey")),
    errors=["NotFound"], params=[P("KeyID")], perm="keys:write",
    desc="The key is refused at once by this server, and by every server sharing the store within 5 seconds. A key may revoke itself; another key only if it holds every permission that key holds (403 insufficient_permissions naming what it lacks)."))
add("/api_keys/{key_id}/rotate", "post", op("rotateApiKey", "Rotate an API key", "API keys",
    ok("The new key with its secret, and the old key in `previous_key`.", ref("NewApiKey"), "201"),
    errors=["NotFound", "ValidationError", "Conflict"], params=[P("KeyID")], body=body("RotateKeyRequest", False), perm="keys:write",
    desc="Creates a key with the same name, permissions, environment and expiry; the old key expires after the grace period (sooner if it was to expire sooner). A revoked or expired key cannot be rotated (409 conflict). A key may rotate itself; another key only if it holds every permission that key holds and does not expire before it (403 insufficient_permissions). During a grace period both keys are active, so at the plan's cap of active keys a rotation with a grace period is 409 conflict; `grace_period_seconds: 0` replaces the key at once and is always allowed.", post=True))
add("/api_keys/{key_id}/usage", "get", op("getApiKeyUsage", "Hourly usage of an API key", "API keys",
    ok("Request counts per hour, newest first, with totals.", ref("KeyUsage")),
    errors=["NotFound"], params=[P("KeyID"), {"name": "hours", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 168, "default": 24}}],
    perm="keys:read"))
paths["/openapi.json"] = {"get": {"operationId": "getOpenAPI", "summary": "This document", "tags": ["Meta"], "security": [],
    "responses": {"200": {"description": "The OpenAPI 3.1 document.", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
for p, name, d in (("/healthz", "getHealth", "The process is alive."), ("/readyz", "getReady", "The store is reachable (503 when not).")):
    paths[p] = {"servers": [{"url": "/", "description": "Outside /v1"}], "get": {"operationId": name, "summary": d, "tags": ["Meta"], "security": [],
        "responses": {"200": {"description": d, "content": {"application/json": {"schema": ref("Health")}}},
                      "503": {"description": "Not ready.", "content": {"application/json": {"schema": ref("Health")}}}}}}
