package fleethttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// deprecationHeaders are the headers a deprecated route answers with
// (nil for a route that is not deprecated): Deprecation (RFC 9745, the
// structured date "@<unix seconds>" since when it is deprecated) and, once a
// sunset date is set, Sunset (RFC 8594, an HTTP-date) and a Link to the
// successor, rel="successor-version" (RFC 5829).
func deprecationHeaders(d opDoc) http.Header {
	if !d.deprecated {
		return nil
	}
	hd := http.Header{}
	hd["Deprecation"] = []string{"@" + strconv.FormatInt(d.deprecatedAt.Unix(), 10)}
	if !d.sunset.IsZero() {
		hd["Sunset"] = []string{d.sunset.UTC().Format(http.TimeFormat)}
		if d.replacement != "" {
			hd["Link"] = []string{"<" + d.replacement + `>; rel="successor-version"`}
		}
	}
	return hd
}

// deprecationNote is what the document adds to a deprecated operation's
// description.
func deprecationNote(d opDoc) string {
	s := "**Deprecated** since " + d.deprecatedAt.UTC().Format(time.DateOnly) + " (its answers carry the `Deprecation` header)."
	if !d.sunset.IsZero() {
		s += " It may be removed after " + d.sunset.UTC().Format(time.DateOnly) + " (`Sunset` header)"
		if d.replacement != "" {
			s += "; use `" + strings.TrimPrefix(d.replacement, "/v1") + "` instead (`Link` header, rel=\"successor-version\")"
		}
		s += "."
	}
	return s
}

// deprecationHeaderDocs adds the deprecation headers to the headers of a
// deprecated operation's success response.
func deprecationHeaderDocs(headers *obj, d opDoc) {
	headers.set("Deprecation", o("description", "RFC 9745: the operation is deprecated since this date, a structured date `@<Unix seconds>`.",
		"required", true, "schema", single(deprecationHeaders(d).Get("Deprecation"))))
	if d.sunset.IsZero() {
		return
	}
	headers.set("Sunset", o("description", "RFC 8594: the operation may be removed after this date (an HTTP-date).",
		"required", true, "schema", single(deprecationHeaders(d).Get("Sunset"))))
	if d.replacement != "" {
		headers.set("Link", o("description", "The successor: `<path>; rel=\"successor-version\"`.",
			"required", true, "schema", o("type", "string")))
	}
}

// checkDeprecation refuses a deprecation the headers cannot state: no
// date (RFC 9745 needs one), a sunset before it, a replacement without a
// sunset, or one that is not a path of /v1.
func (g *generator) checkDeprecation(rt route) {
	d := rt.doc
	name := rt.method + " " + rt.pattern
	switch {
	case d.deprecatedAt.IsZero():
		g.fail("%s is deprecated without deprecatedAt", name)
	case !d.sunset.IsZero() && !d.sunset.After(d.deprecatedAt):
		g.fail("%s: sunset %s is not after deprecatedAt %s", name, d.sunset.Format(time.DateOnly), d.deprecatedAt.Format(time.DateOnly))
	case !d.sunset.IsZero() && d.sunset.Before(d.deprecatedAt.Add(minDeprecation)):
		g.fail("%s: sunset %s is sooner than %d days after the deprecation", name, d.sunset.Format(time.DateOnly), int(minDeprecation/(24*time.Hour)))
	case d.replacement != "" && d.sunset.IsZero():
		g.fail("%s: a replacement is announced with the sunset date; set sunset", name)
	case d.replacement != "" && !strings.HasPrefix(d.replacement, "/v"):
		g.fail("%s: replacement %q is not a path of the API", name, d.replacement)
	}
}

// minDeprecation is the shortest time between a deprecation and its sunset:
// what the compatibility rules promise, and the generator enforces.
const minDeprecation = 365 * 24 * time.Hour

// compatibilityRules is the part of the document's description that says
// what may change within /v1 and what may not (docs/compatibility.md says the same).
func compatibilityRules() string {
	return "## Compatibility\n\n" +
		"`/v1` only grows. Within it, a release may add: operations and paths; optional request fields, query parameters and headers; response fields and headers; values of enumerations (statuses, alert and rule types...) and event types; error `details` and reworded messages (`code` is the contract, `message` is for people). " +
		"Clients must ignore response fields, headers, enumeration values and event types they do not know (the Go client, `fleetclient.Client`, does), and must not depend on the order of object members.\n\n" +
		"A release never, within `/v1`: removes or renames an operation, a field, a parameter or an enumeration value; adds a required request field or parameter; changes a type, a format, a unit, a success status, an error `code` or a meaning; or refuses what it accepted before (stricter validation). " +
		"The one exception is a security fix that cannot be made otherwise; it is listed, with its reason, in the release notes. Limits of the plans are stated per plan and may grow.\n\n" +
		"A deprecated operation is marked `deprecated: true` here and keeps working as before; every answer carries `Deprecation: @<Unix seconds>` (RFC 9745) with the date it was deprecated. " +
		"Once its removal is decided, answers also carry `Sunset` (RFC 8594), at least " + strconv.Itoa(int(minDeprecation/(24*time.Hour))) + " days after the deprecation, and `Link: <successor>; rel=\"successor-version\"`. " +
		"Removal happens only in a new version of the API (`/v2`), served beside `/v1`, and not before the sunset date. " +
		"A deprecated field, parameter or enumeration value is marked `deprecated: true` too, its description says what to use instead, and it keeps working.\n\n" +
		"Each response names the server's build in `" + VersionHeader + "`; `GET /account` gives `api_version` (`v1`). The document's `info.version` is the version of this contract."
}
