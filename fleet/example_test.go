package fleet_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/memstore"
)

// The domain used directly, without HTTP: create an account, a vehicle,
// report where it is, and read its status.
func ExampleNewService() {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	svc := fleet.NewService(memstore.New(), fleet.Options{Now: func() time.Time { return now }})

	acc, _, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
	if err != nil {
		panic(err)
	}
	p := fleet.SystemPrincipal(acc) // acting for the account with every permission
	v, err := svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	if err != nil {
		panic(err)
	}
	speed := 62.0
	res, err := svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 52.52, Longitude: 13.405, Timestamp: now, Speed: &speed}})
	if err != nil {
		panic(err)
	}
	v, _ = svc.Vehicle(ctx, p, v.ID)
	fmt.Println(res.Accepted, v.Status, v.LastLocation.Latitude)
	// Output: 1 moving 52.52
}

// Errors carry the API's codes; ErrorCode reads them on either side of the
// wire.
func ExampleErrorCode() {
	svc := fleet.NewService(memstore.New(), fleet.Options{})
	acc, _, _ := svc.Operator().CreateAccount(context.Background(), fleet.AccountParams{CompanyName: "Acme"})
	_, err := svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(acc), fleet.Vehicle{Name: "", VIN: "too short"})
	fmt.Println(fleet.ErrorCode(err))
	for _, d := range err.(*fleet.Error).Details {
		fmt.Println(d.Field)
	}
	// Output:
	// validation_error
	// name
	// vin
}

// A receiver checks a delivery with the endpoint's secret: here the example
// of the Standard Webhooks specification.
func ExampleVerifyWebhook() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	sig, _ := fleet.SignWebhook([]string{secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
	fmt.Println(sig)
	err := fleet.VerifyWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", sig, body, time.Unix(1614265330, 0))
	fmt.Println(err)
	err = fleet.VerifyWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", sig, body, time.Unix(1614265330, 0).Add(time.Hour))
	fmt.Println(err == fleet.ErrWebhookTimestamp)
	// Output:
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// <nil>
	// true
}
