package fleethttp

import (
	"fmt"
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Drivers go out as fleet.Driver, whose JSON is the API's.

func (h *Handler) createDriver(c *call) error {
	req, err := decode[fleetwire.DriverInput](c.body, false)
	if err != nil {
		return err
	}
	d, err := h.svc.CreateDriver(c.r.Context(), c.p, fleet.Driver{Name: req.Name, Identifier: deref(req.Identifier),
		Phone: deref(req.Phone), Email: deref(req.Email), LicenseNumber: deref(req.LicenseNumber),
		LicenseExpiresOn: deref(req.LicenseExpiresOn), Notes: deref(req.Notes), ExternalID: deref(req.ExternalID)})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, d)
}

func (h *Handler) getDriver(c *call) error {
	d, err := h.svc.Driver(c.r.Context(), c.p, c.r.PathValue("driver_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) listDrivers(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	f := fleet.DriverFilter{Query: q.Get("q"), Identifier: q.Get("identifier"), VehicleID: q.Get("vehicle_id")}
	l, err := h.svc.ListDrivers(c.r.Context(), c.p, f, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchDriver(c *call) error {
	p, err := decode[fleet.DriverPatch](c.body, false)
	if err != nil {
		return err
	}
	d, err := h.svc.UpdateDriver(c.r.Context(), c.p, c.r.PathValue("driver_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) deleteDriver(c *call) error {
	d, err := h.svc.DeleteDriver(c.r.Context(), c.p, c.r.PathValue("driver_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) putVehicleDriver(c *call) error {
	req, err := decode[fleet.DriverAssignment](c.body, false)
	if err != nil {
		return err
	}
	out, err := h.svc.AssignDriver(c.r.Context(), c.p, c.r.PathValue("vehicle_id"), req)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, out)
}

// The document's words on drivers.

func driverIdentifierSchema() *obj {
	return o("type", "string", "pattern", fmt.Sprintf("^[!-~]{1,%d}$", fleet.MaxDriverIdentifier), "minLength", 1, "maxLength", fleet.MaxDriverIdentifier,
		"examples", []string{"01A2B3C4D5E6F708"},
		"description", fmt.Sprintf("The key a device reads to tell who drives: an iButton's or an RFID card's number (hex or decimal, as the device reports it in its `driver_identifier` attribute), or a phone app's driver id. "+
			"1 to %d printable ASCII characters (`!` to `~`), no spaces. Unique in the account, compared without regard to case: `00000a1b2c3d` and `00000A1B2C3D` are one key.", fleet.MaxDriverIdentifier))
}

func descDrivers() string {
	return "A driver drives one vehicle at a time: `vehicle_id` is the vehicle they drive now, set by `PUT /v1/vehicles/{vehicle_id}/driver` or by a device's report carrying their identifier, never by a body here. " +
		"Driver changes emit no events of their own; every change of a vehicle's driver emits `vehicle.driver_changed`."
}

func descCreateDriver() string {
	return "An identifier or external_id another driver of the account has is 409 conflict naming it (`details`). " +
		"An account holds at most as many drivers as its plan allows (" + byPlan(func(l fleet.PlanLimits) int { return l.Drivers }) +
		"): one more is 409 conflict naming the plan's cap. The new driver drives no vehicle."
}

func descAssignDriver() string {
	return "Assigns the driver to the vehicle by hand (`{\"driver_id\": \"drv_...\"}`), or leaves it without one (`{\"driver_id\": null}`); the member is required. " +
		"A driver drives one vehicle at a time: one who drives another vehicle moves, and that vehicle has no driver from then on. " +
		"Each vehicle whose driver changes emits `vehicle.driver_changed` (`identifier` null), in the same transaction; assigning the driver the vehicle has already changes nothing and emits nothing. " +
		"The assignment holds until another assignment, or a device's report carrying another driver's identifier. Trips take the driver the vehicle has when they start. " +
		"It moves neither the vehicle's nor the driver's `updated_at`. A `driver_id` that is no driver of the account is 422 naming it; a vehicle of another account is 404."
}

func registerDriverComponents(g *generator) {
	comp[fleet.Driver](g, "Driver", output, func(s *shape) {
		s.describe(descDrivers()).
			replace("driver_id", id(fleet.PrefixDriver)).
			with("name", "minLength", 1, "maxLength", fleet.MaxDriverName).
			replace("identifier", nullable(driverIdentifierSchema())).
			null("phone email license_number license_expires_on notes external_id").
			with("license_expires_on", "format", "date").
			with("external_id", "description", "Your own id for the driver (from an HR or payroll system), unique in the account.").
			replace("vehicle_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixVehicle),
				"description", "The vehicle the driver drives now; null when none. Read-only: assign with `PUT /v1/vehicles/{vehicle_id}/driver`.")).
			with("updated_at", "description", "Last change by a client (an assignment does not move it).")
	})
	driverFields := func(s *shape) *shape {
		return s.with("name", "minLength", 1, "maxLength", fleet.MaxDriverName).
			with("phone", "maxLength", fleet.MaxDriverPhone, "pattern", `^[0-9 +().\/-]*$`,
				"description", "Digits, spaces and `+ - ( ) . /`, with at least 3 digits.").
			with("email", "maxLength", fleet.MaxDriverEmail, "format", "email").
			with("license_number external_id", "maxLength", fleet.MaxDriverText).
			with("license_expires_on", "format", "date").
			with("notes", "maxLength", fleet.MaxDriverNotes, "description", "Free text; line breaks and tabs allowed.")
	}
	comp[fleetwire.DriverInput](g, "DriverInput", input, func(s *shape) {
		driverFields(s).describe("Adds a driver. Unset optional fields are null. "+descCreateDriver()).
			require("name").replace("identifier", nullable(driverIdentifierSchema()))
	})
	comp[fleet.DriverPatch](g, "DriverPatch", input, func(s *shape) {
		driverFields(s).describe("JSON merge patch: an absent field is unchanged, null clears it (name cannot be cleared). A taken identifier or external_id is 409 conflict naming it. A new identifier takes effect from the next report that carries it.").
			replace("identifier", nullable(driverIdentifierSchema())).
			null("phone email license_number license_expires_on notes external_id")
	})
	comp[fleet.DriverDeleted](g, "DriverDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
	comp[fleet.DriverAssignment](g, "DriverAssignment", input, func(s *shape) {
		s.describe("Who drives the vehicle from now on.").require("driver_id").
			replace("driver_id", o("type", []string{"string", "null"}, "description", "A driver of the account (`drv_...`), or null for none."))
	})
	comp[fleet.VehicleDriver](g, "VehicleDriver", output, func(s *shape) {
		s.describe("A vehicle's driver after the change.").
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("driver_id", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver), "description", "null when the vehicle has no driver."))
	})
	comp[fleet.DriverChange](g, "VehicleDriverChange", output, func(s *shape) {
		s.describe("The data of a vehicle.driver_changed event: the vehicle's driver went from `from` to `to` (null: none).").
			replace("vehicle_id", id(fleet.PrefixVehicle)).
			replace("from", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver), "description", "The driver before; null when none.")).
			replace("to", o("type", []string{"string", "null"}, "pattern", fleet.IDPattern(fleet.PrefixDriver), "description", "The driver now; null when none.")).
			replace("identifier", o("type", []string{"string", "null"}, "description",
				"The driver key a device read that caused the change, as it reported it: with `to` null, no driver of the account has that key. "+
					"Null for a change by hand (`PUT /v1/vehicles/{vehicle_id}/driver`, deleting the driver) and for the vehicle a driver left when assigned to another.")).
			with("at", "description", "When the change happened: the report's time for a device's, the server's clock for one by hand.")
	})
}
