// Command client uses the Fleet API from Go: it checks its key, lists the
// vehicles, posts a location for the first one, and follows the live stream
// for a few reports.
//
//	FLEET_URL=http://127.0.0.1:8080 FLEET_KEY=fleet_... go run ./examples/client
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	base, key := os.Getenv("FLEET_URL"), os.Getenv("FLEET_KEY")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	if key == "" {
		log.Fatal("set FLEET_KEY to an API key (fleetserver --demo prints one)")
	}
	c := fleetclient.NewClient(base, key)

	acc, err := c.Account(ctx)
	if err != nil {
		log.Fatalf("check key: %v (code %s)", err, fleet.ErrorCode(err))
	}
	fmt.Printf("%s, %s plan, %d requests an hour per key\n", acc.CompanyName, acc.Plan, acc.RateLimitPerHour)

	var first *fleet.Vehicle
	for v, err := range c.Vehicles(ctx, fleetclient.VehicleQuery{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s  %-14s %-8s %v\n", v.ID, v.Name, v.Status, v.Tags)
		if first == nil {
			first = &v
		}
	}
	if first == nil {
		v, err := c.CreateVehicle(ctx, fleet.Vehicle{Name: "Example van"})
		if err != nil {
			log.Fatal(err)
		}
		first = &v
	}

	speed, heading := 38.5, 90.0
	res, err := c.IngestLocations(ctx, first.ID, []fleet.Point{{
		Latitude: 52.5200, Longitude: 13.4050, Timestamp: time.Now(), Speed: &speed, Heading: &heading,
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("posted: %d accepted, %d duplicates\n", res.Accepted, res.Duplicates)

	fmt.Println("live reports (Ctrl-C to stop):")
	n := 0
	for live, err := range c.Stream(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %-14s %8.5f,%9.5f %-7s %v km/h\n", live.Location.Timestamp.Format(time.TimeOnly), live.Name,
			live.Location.Latitude, live.Location.Longitude, live.Status, deref(live.Speed))
		if n++; n == 10 {
			return
		}
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
