package fleethttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// What the OpenAPI document says beyond what the types and the route table
// carry: the component schemas' notes (descriptions, limits from package
// fleet), shared parameters and descriptions, and the assembly of the
// document. `go generate` writes it to openapi.json (see openapi.go).

//go:generate go run ../internal/openapigen -o openapi.json

// GenerateOpenAPI builds the OpenAPI 3.1 document of the API from the route
// table, the wire types, the error table, the permissions and the limits of
// package fleet. The handler serves the copy generated into openapi.json;
// a test checks the two are the same.
func GenerateOpenAPI() ([]byte, error) {
	h := &Handler{}
	return generateOpenAPI(h.routeTable())
}

// generateOpenAPI builds the document of routes.
func generateOpenAPI(routes []route) ([]byte, error) {
	g := &generator{byType: map[reflect.Type]string{}}
	g.ex = newExamples(g)
	registerComponents(g)
	paths := o()
	tags := []string{}
	for _, rt := range routes {
		path := strings.TrimPrefix(rt.pattern, "/v1")
		item, _ := paths.get(path).(*obj)
		if item == nil {
			item = o()
			paths.set(path, item)
		}
		item.set(strings.ToLower(rt.method), g.operation(rt))
		if !slices.Contains(tags, rt.doc.tag) {
			tags = append(tags, rt.doc.tag)
		}
	}
	for _, p := range metaPaths() {
		paths.set(p.path, p.item)
	}
	tags = append(tags, tagMeta)
	tagList := []any{}
	for _, t := range tags {
		tagList = append(tagList, o("name", t, "description", tagDescriptions[t]))
	}
	schemas := g.build()
	webhooks := g.webhooks()
	if len(g.errs) > 0 {
		return nil, errors.New("openapi: " + strings.Join(g.errs, "; "))
	}
	doc := o(
		"openapi", "3.1.0",
		"info", o("title", "Fleet API", "version", "1.0.0", "description", intro(),
			"contact", o("name", "Fleet", "url", "https://github.com/fleetkit/fleetapi/issues"),
			"license", o("name", "Apache-2.0", "identifier", "Apache-2.0")),
		"servers", []any{o("url", "/v1", "description", "This server")},
		"security", []any{o("bearerAuth", []string{})},
		"tags", tagList,
		"paths", paths,
		"webhooks", webhooks,
		"components", o(
			"securitySchemes", o("bearerAuth", o("type", "http", "scheme", "bearer",
				"description", "`Authorization: Bearer fleet_...`: an API key secret."),
				"streamToken", o("type", "apiKey", "in", "query", "name", tokenParam,
					"description", "`?token=fst_...`: a single-use stream token from `POST /v1/stream_tokens`, valid "+seconds(fleet.StreamTokenTTL)+", standing for the key that made it. Only the live stream takes one.")),
			"headers", headerComponents(),
			"responses", errorResponses(),
			"schemas", schemas,
			"parameters", o("IfNoneMatch", o("name", "If-None-Match", "in", "header",
				"description", "The `ETag` of a copy the client holds: while the resource is unchanged, the answer is 304 Not Modified without a body (it counts against the allowance like any request).",
				"schema", o("type", "string")),
				"IdempotencyKey", o("name", "Idempotency-Key", "in", "header",
					"description", "1 to 255 printable characters, scoped to the API key and kept 24 hours. A repeat with the same body returns the first response with `Idempotent-Replayed: true`; with another body, or while the first is running, it is 409 conflict. The stored response is encrypted with a key derived from the API key's secret, which the server does not keep: only a request made with that same key can replay it, and a secret in it (a new API key or webhook secret) does not rest in plain text.",
					"schema", o("type", "string", "minLength", 1, "maxLength", 255))),
		),
	)
	b, err := marshalNoEscape(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// webhooks describes what an endpoint receives: one entry per event type,
// the event whose data is the type's (fleet.EventData), POSTed with the
// Standard Webhooks headers.
func (g *generator) webhooks() *obj {
	out := o()
	for _, typ := range fleet.EventTypes() {
		data := fleet.EventData(typ)
		if data == nil {
			g.fail("event type %s has no data type", typ)
			continue
		}
		name, ok := g.byType[reflect.TypeOf(data)]
		if !ok {
			g.fail("event type %s: its data type %T is not a component", typ, data)
			continue
		}
		header := func(name, desc string) *obj {
			return o("name", name, "in", "header", "required", true, "description", desc, "schema", o("type", "string"))
		}
		out.set(typ, o("post", o(
			"operationId", webhookOperationID(typ),
			"summary", "The "+typ+" event",
			"tags", []string{tagWebhooks},
			"description", "Sent to every enabled endpoint subscribed to `"+typ+"` (or to `*`)"+
				map[bool]string{true: ", here only to the endpoint tested", false: ""}[typ == fleet.EventWebhookTest]+
				". The body is the event; its `data` is a "+name+". Verify `webhook-signature` before trusting it, and deduplicate on `webhook-id`: delivery is at least once, in no promised order.",
			"security", []any{},
			"parameters", []any{
				header("webhook-id", "The event id (`evt_...`): the same on every attempt, to deduplicate on."),
				header("webhook-timestamp", "Unix seconds when the attempt was signed; refuse one far from your clock (a replay)."),
				header("webhook-signature", "`v1,<base64 HMAC-SHA256(key, \"{webhook-id}.{webhook-timestamp}.{body}\")>` where key is the base64-decoded part of the secret after `"+fleet.WebhookSecretPrefix+"`; during the 24 hours after a secret rotation, two signatures separated by a space."),
			},
			"requestBody", o("required", true, "content", o("application/json", o("schema", o(
				"allOf", []any{ref("Event"), o("type", "object",
					"properties", o("type", single(typ), "data", ref(name)))},
			), "example", g.webhookExample(typ, data)))),
			"responses", o(
				"2XX", o("description", "Received: answer within "+seconds(fleet.WebhookTimeout)+"."),
				"410", o("description", "Gone: the endpoint is disabled at once and gets nothing more."),
				"default", o("description", "Any other answer, a redirect or no answer in time is a failed attempt, retried on the schedule (a `Retry-After` on 429, 502, 503 or 504 is honoured)."),
			),
		)))
	}
	return out
}

// webhookExample is the example of what an endpoint receives for an event
// type: an event whose data is the example of the type's data.
func (g *generator) webhookExample(typ string, data any) json.RawMessage {
	ev := fleet.Event{ID: exEvent, Type: typ, CreatedAt: exampleTime, Data: g.ex.must(reflect.TypeOf(data), "webhook "+typ)}
	b, err := jsonMarshal(ev)
	if err != nil {
		g.fail("webhook %s example: %v", typ, err)
	}
	return b
}

// webhookOperationID names an event type's webhook in the operations'
// camelCase: vehicle.status_changed is onVehicleStatusChanged.
func webhookOperationID(typ string) string {
	var b strings.Builder
	b.WriteString("on")
	for w := range strings.FieldsFuncSeq(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// Tags group the operations; their order is the order routes first use them.
const (
	tagAccount     = "Account"
	tagKeys        = "API keys"
	tagVehicles    = "Vehicles"
	tagTracking    = "Tracking"
	tagEvents      = "Events"
	tagMaintenance = "Maintenance"
	tagAlerts      = "Alerts"
	tagWebhooks    = "Webhooks"
	tagMeta        = "Meta"
	tagTrips       = "Trips"
	tagDevices     = "Devices"
	tagDrivers     = "Drivers"
	// tagNotifications: the people, their notification rules and their
	// scheduled reports.
	tagNotifications = "Notifications"
	tagShareLinks    = "Share links"
	tagCommands      = "Commands"
)

var tagDescriptions = map[string]string{
	tagAccount:       "The account of the key; any valid key may read it.",
	tagKeys:          "Keys of the account: create, rotate, revoke, and hourly usage.",
	tagVehicles:      "The fleet's vehicles.",
	tagTracking:      "Location ingest, the latest location of every vehicle, history, and the live stream.",
	tagEvents:        "The log of changes, kept 30 days.",
	tagMaintenance:   "Work orders and recurring service schedules.",
	tagWebhooks:      "Endpoints that receive every event, signed per Standard Webhooks, and the log of each delivery attempt.",
	tagAlerts:        "Alerts, the rules that open them, and geofences.",
	tagMeta:          "This document, liveness and readiness.",
	tagTrips:         "Trips, stops and the daily summary, derived from the location reports as they arrive; each also as CSV (`Accept: text/csv`).",
	tagDevices:       "Trackers and phone apps that report positions in their own protocols, and what each last sent.",
	tagNotifications: "E-mail notifications and scheduled reports for the account's people.",
	tagDrivers:       "The people who drive the fleet's vehicles, who drives which vehicle now, by hand or from the driver key a device reads.",
	tagCommands:      "Commands to devices: engine stop and resume, a position now, the reporting interval, outputs, reboot, the protocol's own text.",
	tagShareLinks:    "Links that show one vehicle's live position and today's route on a public page, for a while, and nothing else.",
}

// byPlan writes a per-plan figure of the plan table: "free 20, pro 200,
// enterprise 1,000".
func byPlan(f func(fleet.PlanLimits) int) string {
	var parts []string
	for _, p := range fleet.Plans() {
		parts = append(parts, string(p)+" "+num(f(p.Limits())))
	}
	return strings.Join(parts, ", ")
}

func days(d time.Duration) int { return int(d / (24 * time.Hour)) }

func intro() string {
	return "Fleet-data API: vehicles, real-time locations, maintenance, alerts, events and webhooks.\n\n" +
		"Every request under /v1 (except this document) carries `Authorization: Bearer <API_KEY>`. Bodies are JSON objects; unknown fields, and a member given twice in any object, are refused; a query parameter that takes one value is refused when given twice (those that take several, such as `vehicle_id` on the locations, are arrays here). Successful responses are `{\"success\": true, \"data\": ...}`; list endpoints add `pagination`. Errors are `{\"success\": false, \"error\": {\"code\", \"message\", \"request_id\", \"details\"}}`.\n\n" +
		"Every response under /v1 carries the rate-limit headers. Each key has an hourly allowance that depends on the account's plan (" +
		byPlan(func(l fleet.PlanLimits) int { return l.RequestsPerHour }) +
		", or the account's own higher limit), counted in a fixed one-hour window that starts at the first request after the previous window ended. Every authenticated request counts, except one the hourly allowance refuses (429). Requests that cannot be tied to a valid key are limited per client address (" + strconv.Itoa(fleet.DefaultAddressLimit) + " per hour unless the server sets otherwise); over that, the 429 says so.\n\n" +
		descText + " In a query parameter, a control character is 400 invalid_request naming it.\n\n" +
		"A request body must arrive within " + seconds(DefaultBodyTimeout) + " (location batches: " + seconds(DefaultBatchBodyTimeout) + "; each server sets its own), else the request is answered 400 `invalid_request` and the connection is closed. " +
		"A server holds a bounded number of connections open (" + num(DefaultMaxConnections) + " by default); one more is answered `503 unavailable` with `Retry-After` and closed before any request on it is read.\n\n" +
		"Timestamps are RFC 3339; output is UTC with `Z`. IDs are opaque, time-ordered strings with a type prefix.\n\n" +
		compatibilityRules() + "\n\n" +
		descCORS()
}

// descCORS is what the document says of browser access (see WithCORSOrigins).
func descCORS() string {
	return "**Browsers (CORS).** A server lets the pages of the origins it lists (`fleetserver serve --cors-origins https://app.example.com,...`; none by default) call the API. " +
		"A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from a listed origin is answered `204` before authentication: it needs no key and is counted against no allowance. " +
		"It allows the methods the path is served with, the request headers `" + strings.Join(CORSAllowHeaders, "`, `") + "`, and may be cached for " + strconv.Itoa(CORSMaxAge) + " seconds. " +
		"Every other response to a listed origin, errors included, carries `Access-Control-Allow-Origin` with that exact origin, `Vary: Origin`, and `Access-Control-Expose-Headers: " + corsExposeHeaders() + "`. " +
		"No credentials are allowed (the API authenticates with `Authorization`, not cookies). Any other origin gets no CORS headers, and its preflight is an ordinary request without a key (401), so the browser refuses the call.\n"
}

// The rate-limit headers every response under /v1 carries.
var rateLimitHeaders = []struct{ name, typ, desc string }{
	{"X-RateLimit-Limit", "integer", "Request allowance of the current window."},
	{"X-RateLimit-Remaining", "integer", "Requests left in the window, after this one."},
	{"X-RateLimit-Used", "integer", "Requests counted in the window."},
	{"X-RateLimit-Reset", "integer", "Unix time, in seconds, at which the window ends."},
	{"RateLimit-Policy", "string", "IETF policy: `\"hourly\";q=LIMIT;w=3600`."},
	{"RateLimit", "string", "IETF state: `\"hourly\";r=REMAINING;t=SECONDS_TO_RESET`."},
}

func headerComponents() *obj {
	h := o(
		"X-Request-Id", o("description", "The request's id: the client's own X-Request-Id if it sent a sane one, else a new one.", "required", true, "schema", o("type", "string")),
		"Retry-After", o("description", "Seconds until the rate-limit window resets.", "required", true, "schema", o("type", "integer", "minimum", 1)),
		VersionHeader, o("description", "The build of the server that answered (e.g. `v0.1.0`, or `(devel) (commit 075f69a4c2e1)`): quote it in a bug report.", "required", true, "schema", o("type", "string")),
		"Idempotent-Replayed", o("description", "`true` when this is the stored response of an earlier request with the same Idempotency-Key.", "schema", o("type", "string", "enum", []string{"true"})),
		"ETag", o("description", "A strong validator of the answer's body (a digest of it): send it back in `If-None-Match` to be answered 304 while the resource is unchanged. A gzipped answer has its own, ending `-gzip\"` (RFC 9110 asks a strong validator to change with the content coding); each is honoured for its own form.", "required", true, "schema", o("type", "string")),
	)
	for _, rl := range rateLimitHeaders {
		h.set(rl.name, o("description", rl.desc, "required", true, "schema", o("type", rl.typ)))
	}
	return h
}

// headerRefs lists the headers of a response: the request id, the
// rate-limit headers, and extra ones.
func headerRefs(extra ...string) *obj {
	h := o("X-Request-Id", o("$ref", "#/components/headers/X-Request-Id"),
		VersionHeader, o("$ref", "#/components/headers/"+VersionHeader))
	for _, rl := range rateLimitHeaders {
		h.set(rl.name, o("$ref", "#/components/headers/"+rl.name))
	}
	for _, e := range extra {
		h.set(e, o("$ref", "#/components/headers/"+e))
	}
	return h
}

// errorDocs describes each error code of the error table, in the order of
// its status. Their statuses come from fleetwire.StatusOf, the one table.
var errorDocs = []struct{ name, code, desc string }{
	{"BadRequest", fleet.CodeInvalidRequest, "Malformed JSON, an unknown or read-only field, a member given twice in one object, a value of the wrong JSON type (`details` names it by its whole path, e.g. `locations[1].timestamp`), an unknown, repeated or bad query parameter or cursor (a query parameter holding a control character, or given twice where it takes one value, included: `details` names it), or a body that did not arrive within its deadline (" + seconds(DefaultBodyTimeout) + "; " + seconds(DefaultBatchBodyTimeout) + " for location batches; the connection is then closed)."},
	{"Unauthorized", fleet.CodeUnauthorized, fmt.Sprintf("The API key is missing, malformed, unknown, revoked or expired. Such requests are limited per client address (%d an hour by default); the rate-limit headers describe that allowance, and are absent when the server turns the limit off (`--anonymous-limit 0`, for local development).", fleet.DefaultAddressLimit)},
	{"Forbidden", fleet.CodeInsufficientPermissions, "The key lacks the permission, or the plan lacks the feature."},
	{"NotFound", fleet.CodeNotFound, "No such route, or no such resource in the caller's account."},
	{"MethodNotAllowed", fleet.CodeMethodNotAllowed, "The path exists but not with this method; `Allow` lists the methods."},
	{"Conflict", fleet.CodeConflict, "A duplicate, a cap reached, an Idempotency-Key reused with another body or still in flight, or a forbidden state transition (`invalid_state_transition`)."},
	{"PayloadTooLarge", fleet.CodePayloadTooLarge, fmt.Sprintf("The body is over the limit (%d MiB; %d MiB for location batches).", MaxBody>>20, MaxBatchBody>>20)},
	{"UnsupportedMediaType", fleet.CodeUnsupportedMediaType, "The body's Content-Type is not application/json (nor, for PATCH, application/merge-patch+json)."},
	{"ValidationError", fleet.CodeValidation, "Well-formed but invalid values; `details` names every bad field. " + descText},
	{"TooManyRequests", fleet.CodeRateLimitExceeded, "Over the key's hourly allowance (\"Rate limit exceeded. Retry after N seconds.\"), or over the per-address allowance of requests without a valid API key (\"Too many requests without a valid API key from this address; retry after N seconds.\"); `Retry-After` says when to retry."},
	{"InternalError", fleet.CodeInternal, "Something unexpected; logged with the request id."},
	{"Unavailable", fleet.CodeUnavailable, "The server is shutting down, or its store failed in a way that heals by itself: unreachable or restarting, out of disk, past the server's deadline for a store call (`--store-timeout`), or still in conflict after its retries. Never answered for a bug (that is `internal_error`). A write answered 503 was not applied, unless the database failed while confirming its commit: retry it with the same Idempotency-Key to be safe. `Retry-After` says when to retry (" + strconv.Itoa(UnavailableRetryAfter) + " s)."},
}

// errorResponse returns the name of the response component of a code
// (invalid_state_transition shares conflict's).
func errorResponse(code string) string {
	if code == fleet.CodeInvalidStateTransition {
		code = fleet.CodeConflict
	}
	for _, e := range errorDocs {
		if e.code == code {
			return e.name
		}
	}
	return ""
}

func errorResponses() *obj {
	r := o()
	for _, e := range errorDocs {
		if e.code == fleet.CodeMethodNotAllowed {
			continue // answered for a path's other methods, never by an operation
		}
		var extra []string
		if e.code == fleet.CodeRateLimitExceeded {
			extra = []string{"Retry-After"}
		}
		headers := headerRefs(extra...)
		if e.code == fleet.CodeUnavailable {
			headers.set("Retry-After", o("description", "Seconds after which to retry.", "required", true, "schema", o("type", "integer", "minimum", 1)))
		}
		if e.code == fleet.CodeUnauthorized || e.code == fleet.CodeUnavailable {
			// 401: the per-address window's, none when the server turns
			// that limit off; 503: none when it comes before a key is
			// read (shutting down, too many connections).
			for _, rl := range rateLimitHeaders {
				headers.set(rl.name, o("description", rl.desc, "required", false, "schema", o("type", rl.typ)))
			}
		}
		r.set(e.name, o("description", e.desc+" (`"+e.code+"`)", "headers", headers,
			"content", o("application/json", o("schema", ref("ErrorEnvelope")))))
	}
	r.set("NotModified", o("description", "Not Modified: the resource's current ETag is one `If-None-Match` named, so the client's copy is current. No body.",
		"headers", headerRefs("ETag")))
	return r
}

// errorCodes lists every code of the error table.
func errorCodes() []string { return fleetwire.ErrorCodes() }

// param is a query or header parameter of an operation.
type param struct {
	name   string
	in     string // "query" (when empty) or "header"
	schema *obj
	desc   string
}

// repeatable reports whether the parameter takes several values (it is
// given once for each): a query parameter whose schema is an array. Any
// other is refused when given twice.
func (p param) repeatable() bool {
	return p.schema != nil && p.schema.vals["type"] == "array"
}

func (p param) doc() *obj {
	in := p.in
	if in == "" {
		in = "query"
	}
	d := o("name", p.name, "in", in)
	if p.desc != "" {
		d.set("description", p.desc)
	}
	d.set("schema", p.schema)
	if p.schema.get("type") == "array" {
		d.set("style", "form").set("explode", true)
	}
	return d
}

// Parameters routes share.
func pageParams() []param {
	return []param{
		{name: "limit", desc: "Page size.", schema: o("type", "integer", "minimum", 1, "maximum", fleet.MaxPageLimit, "default", fleet.DefaultPageLimit)},
		{name: "cursor", desc: "The `next_cursor` of the previous page.", schema: o("type", "string")},
	}
}

func listParams(more ...param) []param { return append(pageParams(), more...) }

func timeParam(name, desc string) param {
	return param{name: name, desc: desc, schema: o("type", "string", "format", "date-time")}
}

func idFilter(name, desc string) param {
	return param{name: name, desc: desc, schema: o("type", "string")}
}

func enumParam(name, component string) param { return param{name: name, schema: ref(component)} }

func repeatedIDs(name string) param {
	return param{name: name, desc: "Repeatable: only these vehicles.", schema: o("type", "array", "items", o("type", "string"))}
}

// operation writes one route's operation object.
func (g *generator) operation(rt route) *obj {
	d := rt.doc
	op := o("operationId", d.id, "summary", d.summary, "tags", []string{d.tag})
	desc := d.desc
	if d.deprecated {
		g.checkDeprecation(rt)
		if desc != "" {
			desc += "\n\n"
		}
		desc += deprecationNote(d)
	}
	if perm := rt.permission(); perm != "" {
		if desc != "" {
			desc += "\n\n"
		}
		desc += "Permission: `" + perm + "`."
	}
	if desc != "" {
		op.set("description", desc)
	}
	if d.deprecated {
		op.set("deprecated", true)
	}
	if d.tokenAuth {
		op.set("security", []any{o("bearerAuth", []string{}), o("streamToken", []string{})})
	}
	var params []any
	for _, name := range pathParams(rt.pattern) {
		params = append(params, o("name", name, "in", "path", "required", true, "schema", o("type", "string")))
	}
	for _, p := range d.query {
		params = append(params, p.doc())
	}
	hasBody := rt.method == http.MethodPost || rt.method == http.MethodPatch || rt.method == http.MethodPut
	if rt.method == http.MethodPost {
		params = append(params, o("$ref", "#/components/parameters/IdempotencyKey"))
	}
	if rt.validated() {
		params = append(params, o("$ref", "#/components/parameters/IfNoneMatch"))
	}
	if len(params) > 0 {
		op.set("parameters", params)
	}
	if d.in != nil {
		schema := g.schemaOf(reflect.TypeOf(d.in), input)
		// One media type per body: a generator makes a method per media
		// type, named after it. A PATCH also takes the same body as
		// application/merge-patch+json (RFC 7396), which the description
		// says rather than the content map, so that generated clients get
		// UpdateVehicle, not UpdateVehicleWithApplicationMergePatchPlusJSONBody
		// (docs/api.md).
		body := o("required", !d.inOptional)
		if rt.method == http.MethodPatch {
			body.set("description", descMergePatchBody)
		}
		body.set("content", o(mediaJSON, o("schema", schema, "example", g.ex.must(reflect.TypeOf(d.in), d.id+" request"))))
		op.set("requestBody", body)
	}
	resp := o()
	status := d.status
	if status == 0 {
		status = http.StatusOK
	}
	var extra []string
	if rt.method == http.MethodPost {
		extra = append(extra, "Idempotent-Replayed")
	}
	if rt.validated() {
		extra = append(extra, "ETag")
	}
	if d.stream {
		headers := headerRefs()
		if d.deprecated {
			deprecationHeaderDocs(headers, d)
		}
		resp.set(strconv.Itoa(status), o("description", d.outDesc, "headers", headers,
			"content", o("text/event-stream", o("schema", o("type", "string"), "example", g.ex.stream()))))
	} else {
		data := g.schemaOf(reflect.TypeOf(d.out), output)
		props := o("success", single(true), "data", data)
		required := []string{"success", "data"}
		if d.list {
			props.set("pagination", ref("Pagination"))
			required = append(required, "pagination")
		}
		headers := headerRefs(extra...)
		if d.deprecated {
			deprecationHeaderDocs(headers, d)
		}
		content := o("application/json", o("schema", o("type", "object", "additionalProperties", false,
			"required", required, "properties", props), "example", g.ex.envelope(d.id, reflect.TypeOf(d.out), d.list)))
		if d.csv != nil {
			content.set(mediaCSV, o("schema", o("type", "string",
				"description", "With `Accept: text/csv`: RFC 4180 CSV (CRLF line ends, quoted where needed), one page, with the header row `"+
					strings.Join(d.csv, ",")+"`. Times are RFC 3339 in UTC, absent values empty. The next page's cursor is in the `"+
					NextCursorHeader+"` header, absent on the last page.")))
		}
		resp.set(strconv.Itoa(status), o("description", d.outDesc, "headers", headers, "content", content))
		if rt.validated() {
			resp.set("304", o("$ref", "#/components/responses/NotModified"))
		}
	}
	codes := []string{fleet.CodeInvalidRequest, fleet.CodeUnauthorized, fleet.CodeInsufficientPermissions}
	if len(pathParams(rt.pattern)) > 0 {
		codes = append(codes, fleet.CodeNotFound)
	}
	if rt.method == http.MethodPost {
		codes = append(codes, fleet.CodeConflict) // an Idempotency-Key reused or in flight
	}
	codes = append(codes, d.errs...)
	if hasBody {
		codes = append(codes, fleet.CodePayloadTooLarge, fleet.CodeUnsupportedMediaType)
	}
	codes = append(codes, fleet.CodeRateLimitExceeded, fleet.CodeInternal, fleet.CodeUnavailable)
	byStatus := map[int]string{}
	for _, c := range codes {
		byStatus[StatusOf(c)] = errorResponse(c)
	}
	statuses := make([]int, 0, len(byStatus))
	for s := range byStatus {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	for _, s := range statuses {
		name := byStatus[s]
		var note string
		for code, n := range d.errNotes {
			if StatusOf(code) == s {
				note = n
			}
		}
		if note == "" {
			resp.set(strconv.Itoa(s), o("$ref", "#/components/responses/"+name))
			continue
		}
		r := errorResponses().get(name).(*obj).clone()
		r.set("description", note)
		resp.set(strconv.Itoa(s), r)
	}
	op.set("responses", resp)
	return op
}

var pathParamPattern = regexp.MustCompile(`\{([a-z_]+)\}`)

func pathParams(pattern string) []string {
	var out []string
	for _, m := range pathParamPattern.FindAllStringSubmatch(pattern, -1) {
		out = append(out, m[1])
	}
	return out
}

type metaPath struct {
	path string
	item *obj
}

// metaPaths are the paths outside the route table: this document, and the
// health checks. Those are served at /v1/healthz and /v1/readyz, where a
// client generated from the document calls them (under the document's
// server), and at /healthz and /readyz, where load balancers and
// orchestrators conventionally look.
func metaPaths() []metaPath {
	docHeaders := versionHeaderRef()
	docHeaders.set("ETag", o("$ref", "#/components/headers/ETag"))
	out := []metaPath{{"/openapi.json", o("get", o("operationId", "getOpenAPI", "summary", "This document", "tags", []string{tagMeta},
		"description", "The OpenAPI 3.1 document of the API, from which clients can be generated (docs/api.md). No key is needed. It carries an `ETag` (another for its gzipped form) and may be cached for 5 minutes.",
		"security", []any{}, "parameters", []any{o("$ref", "#/components/parameters/IfNoneMatch")},
		"responses", o("200", o("description", "The OpenAPI 3.1 document.", "headers", docHeaders,
			"content", o("application/json", o("schema", o("type", "object", "additionalProperties", true),
				"example", o("openapi", "3.1.0", "info", o("title", "Fleet API", "version", "1.0.0"), "paths", o())))),
			"304", o("description", "Not Modified: the document is the one `If-None-Match` named.", "headers", docHeaders))))}}
	for _, m := range []struct{ path, id, desc string }{
		{"/healthz", "getHealth", "The process is alive."},
		{"/readyz", "getReady", "The store is reachable (503 when not)."},
	} {
		out = append(out, metaPath{m.path, o(
			"get", o("operationId", m.id, "summary", m.desc, "tags", []string{tagMeta}, "security", []any{},
				"description", m.desc+" No key is needed. Also served outside /v1, at `"+m.path+"`, for load balancers and orchestrators.",
				"responses", o(
					"200", o("description", m.desc, "headers", versionHeaderRef(), "content", o("application/json", o("schema", ref("Health"),
						"example", o("status", "ok")))),
					"503", o("description", "Not ready.", "headers", versionHeaderRef(), "content", o("application/json", o("schema", ref("Health"),
						"example", o("status", "unavailable")))),
				)))})
	}
	return out
}

// versionHeaderRef lists the one header every response carries, the
// paths outside the route table included.
func versionHeaderRef() *obj {
	return o(VersionHeader, o("$ref", "#/components/headers/"+VersionHeader))
}

// Descriptions that operations share or that run long.

const descText = "Text never holds control characters (U+0000 to U+001F, U+007F), in any field, array item or nested member: such a string is 422 validation_error naming it. " +
	"Multi-line text (work order and webhook `description`, alert `message`, the strings of a custom alert's `data`) may hold tab, line feed and carriage return."

const descMergePatchBody = "A JSON merge patch (RFC 7396): an absent member is unchanged, null clears it. " +
	"Sent as `application/json`, or as `application/merge-patch+json`, which is accepted the same."

const descMultiline = "Multi-line text: tab, line feed and carriage return are allowed, other control characters are not (422)."

func descIngest() string {
	return "The batch is validated whole (422 `details` name each bad index, e.g. `locations[3].latitude`) and stored whole or not at all. " +
		"A point at a vehicle and timestamp already stored is a duplicate: skipped and counted, not an error. Points may come out of order; " +
		"history stays sorted and `last_location` only moves forward. A 2xx means the points are durable. Body limit " + num(MaxBatchBody>>20) + " MiB. " +
		"The points come out of the account's hourly points allowance (see the 429)."
}

// descPointsRefused describes the 429 of the location POSTs, which also
// answer it for the account's points allowance.
func descPointsRefused() string {
	return "Over the key's hourly allowance (\"Rate limit exceeded. Retry after N seconds.\"), or over the account's points allowance: " +
		"the location points an account may store in a fixed hourly window, through the API and from its devices alike (" +
		byPlan(func(l fleet.PlanLimits) int { return l.PointsPerHour }) + "; an account's own higher request limit raises it in proportion). " +
		"The window starts at the first point after the previous one ended. A batch that would pass the allowance is refused whole and stores nothing; " +
		"the message names the allowance (\"This account has stored 100,000 location points this hour, the most the free plan allows; retry after N seconds.\") " +
		"and, while part of it is left, how many points may still be sent. Points already stored (duplicates) take none of it. " +
		"`Retry-After` is the seconds to the window's end. The refused request counts against the key's request allowance like any other, " +
		"and is not remembered under its Idempotency-Key: the same request may be sent again. (`rate_limit_exceeded`)"
}

func descStream() string {
	return "Each report that moves a vehicle's latest location is sent as `event: location` with an `id:` and a LocationRecord as `data:`. " +
		"A comment heartbeat is sent every " + seconds(heartbeatEvery) + ". Reconnect with `Last-Event-ID` (or `last_event_id`) to get what was missed, up to " +
		minutes(fleet.StreamReplayWindow) + " back, before live data. A client that falls behind reads from the server's replay buffer; one that falls further behind than the buffer holds is disconnected and should reconnect the same way. " +
		"The stream ends within 5 seconds of its key being revoked, expiring or leaving its rotation grace (a reconnect is then 401). " +
		"A key may have " + byPlan(func(l fleet.PlanLimits) int { return l.StreamsPerKey }) + " streams open at once on each server. " +
		"On a single server (SQLite) the stream carries the reports that server ingests; servers sharing a PostgreSQL database share one stream: " +
		"each carries the reports ingested by all of them, with the same ids, so `Last-Event-ID` resumes on any of them without losing or repeating a report within the replay window.\n\n" +
		"A client that cannot send `Authorization` (a browser's `EventSource`) passes a stream token instead, `?token=` from `POST /v1/stream_tokens`, and no `Authorization` header (sending both is 400 invalid_request). " +
		"The token is spent by the GET, whatever its outcome, and the stream it opens is its key's: counted against the key's hourly allowance and its streams, ended when the key is revoked or expires. " +
		"A HEAD spends no token (it is 401 with one, which stays good for the GET) and, with a key, answers the stream's headers without opening a stream. " +
		"The browser reconnects with a new token, passing the last id it saw as `last_event_id` (EventSource cannot set `Last-Event-ID` on a new connection)."
}

const descStreamUnauthorized = "The API key is missing or invalid, or the stream token (`?token=`) is unknown, already used, expired or malformed, or its key is no longer valid. " +
	"Like every request without a valid key, it counts against the client address's allowance."

// descStreamToken documents POST /v1/stream_tokens.
func descStreamToken() string {
	return "Makes a token that opens one live stream (`GET /v1/vehicles/locations/stream?token=...`) without an `Authorization` header, for a browser's `EventSource`, which cannot send one. " +
		"It must be used within " + seconds(fleet.StreamTokenTTL) + " and is spent by its first use, whatever that use's outcome; " +
		"make one just before opening each stream, reconnection included. Tokens are single-use across every server sharing the store, are kept only as a hash, and never written to logs (the access log shows `token=REDACTED`). " +
		"The stream it opens belongs to the key that made the token: it counts against that key's hourly allowance and its live streams (" +
		byPlan(func(l fleet.PlanLimits) int { return l.StreamsPerKey }) + " per server), and ends when the key is revoked, expires or leaves its rotation grace. " +
		"A repeat with the same `Idempotency-Key` returns the same token, which its first use has spent: make a token without one, or with a new one each time. " +
		"The body, if any, is `{}`."
}

const descDeleteVehicle = "Removes the vehicle, its location history, its schedules and its share links (their pages answer 404, their live streams end); work orders and alerts stay as history. Emits vehicle.deleted.\n\n" +
	"In the same change the vehicle leaves the `vehicle_ids` of every alert rule that lists it (their `updated_at` moves; rule changes emit no event). " +
	"A rule that listed only this vehicle is left with empty `vehicle_ids` and is disabled (`enabled: false`): empty means every vehicle, " +
	"and a rule scoped to one vehicle must not widen to the whole fleet. It stays, with its id and settings, to be pointed at other vehicles " +
	"or deleted; enabling it again without setting `vehicle_ids` makes it watch every vehicle. Rules that watch every vehicle are unchanged."

const descPatchWorkOrder = "A status change the state machine forbids is 409 invalid_state_transition, naming from and to, and nothing of the patch is applied. " +
	"Emits work_order.updated when a field other than status changed and work_order.status_changed {work_order_id, vehicle_id, from, to, at} when the status did. " +
	"Moving to completed sets completed_at; when the work order has a schedule_id, it records the service on that schedule " +
	"(last_service_date: today; last_service_odometer_km: the work order's odometer_km, else the vehicle's odometer) and starts the schedule's next cycle."

const descScheduleDue = "A schedule is reviewed when a location report or a vehicle update moves its vehicle's odometer, when it is created or changed, " +
	"when a linked work order completes, and against the calendar every few seconds. When it becomes due_soon or overdue, the server emits " +
	"maintenance.due_soon or maintenance.overdue (data: the schedule) and, with auto_create_work_order, opens one linked work order " +
	"(title: the schedule's name; priority medium, or high if already overdue), each at most once per service cycle. " +
	"A cycle runs from one recorded service to the next."

const descRuleEvaluation = "Rules are judged as follows. speeding: on each stored point of a location report (late points too), in time order per vehicle, " +
	"in the transaction that stores the points. geofence_enter / geofence_exit: on each point that moves the vehicle forward in time, against " +
	"the position before it (the vehicle's last location, then each point of the batch in turn): enter = previous position outside, this one " +
	"inside; exit the converse. A vehicle's first position ever decides nothing, and points older than its last location decide no crossing. " +
	"vehicle_offline: by the server's clock, every few seconds, with no request: a vehicle that has reported and then been silent for " +
	"after_minutes; vehicles that never reported are not judged (a batch of old reports that leaves a vehicle silent past after_minutes " +
	"already opens that alert with the batch). " +
	"While an alert of a rule for a vehicle is open or acknowledged, the same condition opens no other; once it is resolved the next " +
	"occurrence opens a new one (for vehicle_offline: the next silence, after a new report). Maintenance alerts open when a schedule becomes " +
	"due_soon or overdue, one of each type per service cycle."

const descNoWebhooksOnFree = " The free plan has no webhooks: 403 insufficient_permissions naming the plan."

func descSending() string {
	return "Every event goes to each enabled endpoint whose `events` take its type, as a `POST` of the event JSON with headers " +
		"`webhook-id` (the event id), `webhook-timestamp` (Unix seconds) and `webhook-signature` " +
		"(`v1,<base64 HMAC-SHA256(key, \"{id}.{timestamp}.{body}\")>`, per the Standard Webhooks specification). " +
		"A 2xx within " + seconds(fleet.WebhookTimeout) + " is success; redirects are not followed. Failed attempts are retried after 5 s, 5 min, 30 min, 2 h, 5 h, " +
		"10 h, 14 h, 20 h and 24 h (with up to 10% jitter, and no sooner than a `Retry-After` on 429, 502, 503 or 504), then the delivery has failed. " +
		"A 410 disables the endpoint at once."
}
