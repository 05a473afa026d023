import json, sys, os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen.py")).read())
for part in sys.argv[2:]:
    exec(open(part).read())
doc = {"openapi": "3.1.0",
  "info": {"title": "Fleet API", "version": "1.0.0",
     "description": open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "intro.md")).read()},
  "servers": [{"url": "/v1", "description": "This server"}],
  "security": [{"bearerAuth": []}],
  "tags": [], "paths": paths, "components": components()}
tags = []
for p in paths.values():
    for m, o in p.items():
        if isinstance(o, dict) and "tags" in o:
            for t in o["tags"]:
                if t not in tags: tags.append(t)
TAGS = {
    "Account": "The account of the key; any valid key may read it.",
    "API keys": "Keys of the account: create, rotate, revoke, and hourly usage.",
    "Vehicles": "The fleet's vehicles.",
    "Tracking": "Location ingest, the latest location of every vehicle, history, and the live stream.",
    "Events": "The log of changes, kept 30 days.",
    "Maintenance": "Work orders and recurring service schedules.",
    "Webhooks": "Endpoints that receive every event, signed per Standard Webhooks, and the log of each delivery attempt.",
    "Alerts": "Alerts, the rules that open them, and geofences.",
    "Meta": "This document, liveness and readiness.",
}
doc["tags"] = [{"name": t, "description": TAGS.get(t, t)} for t in tags]
open(sys.argv[1], "w").write(json.dumps(doc, indent=2) + "\n")
