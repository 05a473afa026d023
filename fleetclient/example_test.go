package fleetclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
)

// Check a key: the account it belongs to. (A server on loopback stands in
// for the API here; a program gives NewClient the server's address.)
func ExampleNewClient() {
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, key, _ := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
	srv := httptest.NewServer(fleethttp.NewHandler(svc))
	defer srv.Close()

	c := fleetclient.NewClient(srv.URL, key.Secret)
	acc, err := c.Account(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(acc.CompanyName, acc.Plan, acc.RateLimitPerHour)
	// Output: Acme Haulage pro 10000
}

// Every API error comes back as *fleet.Error, inside an *APIError that
// carries the HTTP status and the request id.
func ExampleClient_Vehicle() {
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, key, _ := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme"})
	srv := httptest.NewServer(fleethttp.NewHandler(svc))
	defer srv.Close()

	c := fleetclient.NewClient(srv.URL, key.Secret)
	_, err := c.Vehicle(ctx, "veh_unknown")
	fmt.Println(fleet.ErrorCode(err))
	var apiErr *fleetclient.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode)
	}
	// Output:
	// not_found
	// 404
}

// List methods walk every page; a page size only changes how many items a
// request asks for.
func ExampleClient_Vehicles() {
	ctx := context.Background()
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	_, key, _ := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme", Plan: fleet.PlanPro})
	srv := httptest.NewServer(fleethttp.NewHandler(svc))
	defer srv.Close()

	c := fleetclient.NewClient(srv.URL, key.Secret, fleetclient.WithPageSize(2))
	for _, name := range []string{"Truck 1", "Truck 2", "Van 1"} {
		if _, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: name, Tags: []string{"north"}}); err != nil {
			panic(err)
		}
	}
	for v, err := range c.Vehicles(ctx, fleetclient.VehicleQuery{Tag: "north"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(v.Name)
	}
	// Output:
	// Truck 1
	// Truck 2
	// Van 1
}
