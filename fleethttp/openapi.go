package fleethttp

import (
	_ "embed"
	"net/http"
	"strconv"
)

// OpenAPI is the OpenAPI 3.1 document of the API, served at
// GET /v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request, tag string) {
	tag = representationTag(r, tag, len(OpenAPI))
	h := w.Header()
	h["Etag"] = []string{tag}
	h["Cache-Control"] = []string{"public, max-age=300"}
	if notModified(r, tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(OpenAPI))}
	w.WriteHeader(http.StatusOK)
	w.Write(OpenAPI)
}
