//go:build ignore

// Command calls checks the Go client that oapi-codegen generates from the
// OpenAPI document with its default settings (models and client): it
// starts a Fleet server on loopback over memory and calls operations
// through the generated client, exercising what generated clients got
// wrong before (the union of event payloads, the geometry union, a merge
// patch that clears a field with null, typed webhook events, If-None-Match,
// typed deletion answers). check.sh builds it in a temporary module beside
// the generated package; any surprise exits 1.
package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleethttp"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/oapi-codegen/nullable"

	"clientcheck/fleetapi"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the generated Go client:", err)
		os.Exit(1)
	}
	fmt.Println("the generated Go client works: 12 calls")
}

func check(cond bool, format string, args ...any) error {
	if !cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}

func run(ctx context.Context) error {
	keys, err := fleet.NewSecretKeys(bytes.Repeat([]byte{0x5e}, fleet.SecretKeyLen))
	if err != nil {
		return err
	}
	svc := fleet.NewService(memstore.New(), fleet.Options{Logger: slog.New(slog.DiscardHandler), Webhooks: fleet.WebhookOptions{Insecure: true, SecretKeys: keys}})
	srv := httptest.NewServer(fleethttp.NewHandler(svc, fleethttp.WithLogger(slog.New(slog.DiscardHandler))))
	defer srv.Close()
	_, key, err := svc.Operator().CreateAccount(ctx, fleet.AccountParams{CompanyName: "Acme Haulage", Plan: fleet.PlanPro})
	if err != nil {
		return err
	}
	c, err := fleetapi.NewClientWithResponses(srv.URL+"/v1", fleetapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key.Secret)
		return nil
	}))
	if err != nil {
		return err
	}

	// 1. The account.
	acc, err := c.GetAccountWithResponse(ctx, nil)
	if err != nil {
		return err
	}
	if err := check(acc.JSON200 != nil && acc.JSON200.Success && acc.JSON200.Data.Plan == fleetapi.Pro, "GET /account: %d %s", acc.StatusCode(), acc.Body); err != nil {
		return err
	}

	// 2. A vehicle, then a merge patch that clears its make with null and
	// leaves its model (absent) as it was.
	mk, model := "Volvo", "FH16"
	veh, err := c.CreateVehicleWithResponse(ctx, nil, fleetapi.VehicleInput{Name: "Truck 7", Make: &mk, Model: &model, Tags: &[]string{"north"}})
	if err != nil {
		return err
	}
	if err := check(veh.JSON201 != nil, "POST /vehicles: %d %s", veh.StatusCode(), veh.Body); err != nil {
		return err
	}
	id := veh.JSON201.Data.VehicleId
	name := "Truck 7 (north)"
	upd, err := c.UpdateVehicleWithResponse(ctx, id, fleetapi.VehiclePatch{Name: &name, Make: nullable.NewNullNullable[string]()})
	if err != nil {
		return err
	}
	if err := check(upd.JSON200 != nil && upd.JSON200.Data.Name == name && upd.JSON200.Data.Make == nil &&
		upd.JSON200.Data.Model != nil && *upd.JSON200.Data.Model == model, "PATCH /vehicles/{id} with make: null: %d %s", upd.StatusCode(), upd.Body); err != nil {
		return err
	}

	// 3. Its ETag, sent back: 304.
	got, err := c.GetVehicleWithResponse(ctx, id, nil)
	if err != nil {
		return err
	}
	tag := got.HTTPResponse.Header.Get("ETag")
	again, err := c.GetVehicleWithResponse(ctx, id, &fleetapi.GetVehicleParams{IfNoneMatch: &tag})
	if err != nil {
		return err
	}
	if err := check(tag != "" && again.StatusCode() == http.StatusNotModified, "GET /vehicles/{id} with If-None-Match: %d", again.StatusCode()); err != nil {
		return err
	}

	// 4. Locations.
	lat, lon, speed := 52.520008, 13.404954, 44.0
	now := time.Now().UTC().Add(-time.Minute)
	ing, err := c.IngestLocationsWithResponse(ctx, id, nil, fleetapi.VehicleBatch{Locations: []fleetapi.LocationInput{
		{Latitude: lat, Longitude: lon, Timestamp: now, Speed: &speed}}})
	if err != nil {
		return err
	}
	if err := check(ing.JSON200 != nil && ing.JSON200.Data.Accepted == 1, "POST /vehicles/{id}/locations: %d %s", ing.StatusCode(), ing.Body); err != nil {
		return err
	}

	// 5. A custom alert whose data is any JSON object.
	data := map[string]interface{}{"axle": 2}
	al, err := c.CreateAlertWithResponse(ctx, nil, fleetapi.AlertInput{VehicleId: &id, Message: "Driver reports a flat tyre", Data: &data})
	if err != nil {
		return err
	}
	if err := check(al.JSON201 != nil && al.JSON201.Data.Data["axle"] == float64(2), "POST /alerts: %d %s", al.StatusCode(), al.Body); err != nil {
		return err
	}

	// 6. The events: data is the union of the payloads, read by type.
	evs, err := c.ListEventsWithResponse(ctx, &fleetapi.ListEventsParams{})
	if err != nil {
		return err
	}
	if err := check(evs.JSON200 != nil, "GET /events: %d %s", evs.StatusCode(), evs.Body); err != nil {
		return err
	}
	seen := map[fleetapi.EventType]bool{}
	for _, ev := range evs.JSON200.Data {
		seen[ev.Type] = true
		switch ev.Type {
		case fleetapi.EventTypeVehicleCreated:
			v, err := ev.Data.AsVehicle()
			if err := check(err == nil && v.VehicleId == id, "vehicle.created data: %v", err); err != nil {
				return err
			}
		case fleetapi.EventTypeAlertCreated:
			a, err := ev.Data.AsAlert()
			if err := check(err == nil && a.Message == "Driver reports a flat tyre", "alert.created data: %v", err); err != nil {
				return err
			}
		}
	}
	if err := check(seen[fleetapi.EventTypeVehicleCreated] && seen[fleetapi.EventTypeAlertCreated], "events %v", seen); err != nil {
		return err
	}

	// 7. A geofence, a circle: the geometry union, told apart by type.
	var geo fleetapi.Geometry
	if err := geo.FromPointGeometry(fleetapi.PointGeometry{Coordinates: []float64{lon, lat}}); err != nil {
		return err
	}
	radius := 500.0
	gf, err := c.CreateGeofenceWithResponse(ctx, nil, fleetapi.GeofenceInput{Name: "Depot", Geometry: geo, RadiusM: &radius})
	if err != nil {
		return err
	}
	if err := check(gf.JSON201 != nil, "POST /geofences: %d %s", gf.StatusCode(), gf.Body); err != nil {
		return err
	}
	gg, err := c.GetGeofenceWithResponse(ctx, gf.JSON201.Data.GeofenceId, nil)
	if err != nil {
		return err
	}
	shape, err := gg.JSON200.Data.Geometry.ValueByDiscriminator()
	if err != nil {
		return err
	}
	point, ok := shape.(fleetapi.PointGeometry)
	if err := check(ok && point.Type == fleetapi.PointGeometryTypePoint && len(point.Coordinates) == 2, "GET /geofences/{id}: geometry %#v", shape); err != nil {
		return err
	}

	// 8. A webhook endpoint with typed events.
	wh, err := c.CreateWebhookWithResponse(ctx, nil, fleetapi.WebhookInput{Url: "http://127.0.0.1:9/hooks",
		Events: &[]fleetapi.EventFilter{fleetapi.EventFilterVehicleStatusChanged, fleetapi.EventFilterAlertCreated}})
	if err != nil {
		return err
	}
	if err := check(wh.JSON201 != nil && len(wh.JSON201.Data.Events) == 2 && wh.JSON201.Data.Secret != "", "POST /webhooks: %d %s", wh.StatusCode(), wh.Body); err != nil {
		return err
	}

	// 9. Deleting the vehicle: a typed answer.
	del, err := c.DeleteVehicleWithResponse(ctx, id)
	if err != nil {
		return err
	}
	return check(del.JSON200 != nil && del.JSON200.Data.Deleted && del.JSON200.Data.VehicleId == id, "DELETE /vehicles/{id}: %d %s", del.StatusCode(), del.Body)
}
