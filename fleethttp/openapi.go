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

func serveOpenAPI(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(OpenAPI))}
	h["Cache-Control"] = []string{"public, max-age=300"}
	w.WriteHeader(http.StatusOK)
	w.Write(OpenAPI)
}
