// Command openapigen writes the OpenAPI document of the Fleet API, built
// by fleethttp.GenerateOpenAPI from the route table, the wire types and the
// limits of package fleet. `go generate ./...` runs it:
//
//	go run ./internal/openapigen -o fleethttp/openapi.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fleetkit/fleetapi/fleethttp"
)

func main() {
	out := flag.String("o", "", "file to write (standard output when empty)")
	flag.Parse()
	doc, err := fleethttp.GenerateOpenAPI()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(doc)
		return
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
