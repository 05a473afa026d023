package fleethttp_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
)

// Serve the API over a store, and call it with the Go client (package
// fleetclient).
func ExampleNewHandler() {
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, key, _ := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})

	srv := httptest.NewServer(fleethttp.NewHandler(svc)) // or mount it in your own mux under /v1/
	defer srv.Close()

	c := fleetclient.NewClient(srv.URL, key.Secret)
	acc, err := c.Account(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(acc.CompanyName, acc.Plan, acc.RateLimitPerHour)
	// Output: Acme Haulage pro 10000
}
