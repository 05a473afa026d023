package fleetweb

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The drivers' pages: the list with its search, a driver's page, and,
// for admins, the forms that add, change and delete drivers and assign a
// vehicle's driver. Every form goes through the drivers' use cases with
// the person's principal; a refused one is shown again with what was
// typed and each mistake beside its field.

type driversData struct {
	Q     string
	Rows  []driverRow
	More  bool // the list was cut at maxListed
	Count int  // drivers in the account (maxListed at most)
	Limit int  // drivers the plan allows
	Form  driverForm
}

// driverRow is a driver as the list shows them: their vehicle by name,
// and their licence's expiry in words.
type driverRow struct {
	Driver      fleet.Driver
	VehicleName string
	License     licenseState
}

// licenseState says when a licence expires: "" when not known.
type licenseState struct {
	On      string
	Expired bool
	Soon    bool // within licenceSoon
}

// licenceSoon is how near a licence's expiry the pages warn of it.
const licenceSoon = 30 * 24 * time.Hour

// driverForm is what the add and edit forms hold: the fields as typed,
// and the mistakes the use case found, as sentences by field.
type driverForm struct {
	Name, Identifier, Phone, Email, LicenseNumber, LicenseExpiresOn, Notes, ExternalID string
	Errors                                                                             map[string]string
}

func formOf(d fleet.Driver) driverForm {
	return driverForm{Name: d.Name, Identifier: d.Identifier, Phone: d.Phone, Email: d.Email, LicenseNumber: d.LicenseNumber,
		LicenseExpiresOn: d.LicenseExpiresOn, Notes: d.Notes, ExternalID: d.ExternalID}
}

// readDriverForm reads the form's fields as typed.
func readDriverForm(r *http.Request) driverForm {
	v := r.PostFormValue
	return driverForm{Name: v("name"), Identifier: v("identifier"), Phone: v("phone"), Email: v("email"),
		LicenseNumber: v("license_number"), LicenseExpiresOn: v("license_expires_on"), Notes: v("notes"), ExternalID: v("external_id")}
}

// withErrors sets the form's mistakes from the page's error: each field's
// sentence (fieldSentence), beside its field.
func (f driverForm) withErrors(p page) driverForm {
	f.Errors = map[string]string{}
	for _, fe := range p.Fields {
		if _, ok := f.Errors[fe.Field]; !ok {
			f.Errors[fe.Field] = fieldSentence(fe)
		}
	}
	return f
}

func (f driverForm) driver() fleet.Driver {
	return fleet.Driver{Name: f.Name, Identifier: f.Identifier, Phone: f.Phone, Email: f.Email, LicenseNumber: f.LicenseNumber,
		LicenseExpiresOn: f.LicenseExpiresOn, Notes: f.Notes, ExternalID: f.ExternalID}
}

// patch is the form as a merge patch: every field is sent, an empty one
// clears it.
func (f driverForm) patch() fleet.DriverPatch {
	return fleet.DriverPatch{Name: fleet.Some(f.Name), Identifier: fleet.Some(f.Identifier), Phone: fleet.Some(f.Phone),
		Email: fleet.Some(f.Email), LicenseNumber: fleet.Some(f.LicenseNumber), LicenseExpiresOn: fleet.Some(f.LicenseExpiresOn),
		Notes: fleet.Some(f.Notes), ExternalID: fleet.Some(f.ExternalID)}
}

func licenseOf(d fleet.Driver, now time.Time) licenseState {
	if d.LicenseExpiresOn == "" {
		return licenseState{}
	}
	ls := licenseState{On: d.LicenseExpiresOn}
	if end, err := time.Parse(time.DateOnly, d.LicenseExpiresOn); err == nil {
		end = end.AddDate(0, 0, 1) // valid through the day it expires on
		ls.Expired = !now.Before(end)
		ls.Soon = !ls.Expired && end.Sub(now) <= licenceSoon
	}
	return ls
}

// driversPage lists the account's drivers, those the search (?q=) finds,
// with the vehicle each drives; an admin adds drivers here.
func (h *Handler) driversPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Drivers", Nav: "drivers", User: &us}
	if v, ok := h.takeNotice(r); ok {
		if s, ok := v.(string); ok {
			p.Notice = s
		}
	}
	h.showDrivers(w, r, us, http.StatusOK, p, driverForm{})
}

func (h *Handler) showDrivers(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, form driverForm) {
	ctx := r.Context()
	pr := us.Principal()
	d := driversData{Q: strings.TrimSpace(r.URL.Query().Get("q")), Limit: us.Account.Plan.Limits().Drivers, Form: form.withErrors(p)}
	drivers, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Driver], error) {
		return h.svc.ListDrivers(ctx, pr, fleet.DriverFilter{Query: d.Q}, q)
	})
	if err == nil && d.Q != "" {
		var all []fleet.Driver
		all, _, err = walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Driver], error) {
			return h.svc.ListDrivers(ctx, pr, fleet.DriverFilter{}, q)
		})
		d.Count = len(all)
	} else {
		d.Count = len(drivers)
	}
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeInvalidRequest { // a search with a control character
			errorPage(&p, err)
			status, drivers, d.Q = statusOf(err), nil, ""
		} else {
			h.fail(w, r, &us, err)
			return
		}
	}
	d.More = more
	names := map[string]string{}
	now := h.svc.Now()
	for _, dr := range drivers {
		row := driverRow{Driver: dr, License: licenseOf(dr, now)}
		if row.VehicleName, err = h.vehicleName(ctx, pr, dr.VehicleID, names); err != nil {
			h.fail(w, r, &us, err)
			return
		}
		d.Rows = append(d.Rows, row)
	}
	p.Data = d
	h.render(w, status, "drivers", p)
}

// vehicleName is the name of the account's vehicle id ("" for none),
// read once per page (names caches them).
func (h *Handler) vehicleName(ctx context.Context, p fleet.Principal, id string, names map[string]string) (string, error) {
	if id == "" {
		return "", nil
	}
	if n, ok := names[id]; ok {
		return n, nil
	}
	v, err := h.svc.Vehicle(ctx, p, id)
	if err != nil {
		return "", err
	}
	names[id] = v.Name
	return v.Name, nil
}

// addDriver adds a driver with the CreateDriver use case.
func (h *Handler) addDriver(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readDriverForm(r)
	d, err := h.svc.CreateDriver(r.Context(), us.Principal(), f.driver())
	if err != nil {
		p := page{Title: "Drivers", Nav: "drivers", User: &us}
		errorPage(&p, err)
		h.showDrivers(w, r, us, statusOf(err), p, f)
		return
	}
	http.Redirect(w, r, "/drivers?notice="+h.noticeOnce(r, d.Name+" is added.")+"#driver-"+d.ID, http.StatusSeeOther)
}

type driverData struct {
	Driver      fleet.Driver
	VehicleName string
	License     licenseState
	Form        driverForm
}

// driverPage shows one driver: their details and the vehicle they drive;
// an admin changes them here.
func (h *Handler) driverPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	d, err := h.svc.Driver(r.Context(), us.Principal(), r.PathValue("driver_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: d.Name, Nav: "drivers", User: &us}
	if v, ok := h.takeNotice(r); ok {
		if s, ok := v.(string); ok {
			p.Notice = s
		}
	}
	h.showDriver(w, r, us, http.StatusOK, p, d, formOf(d))
}

func (h *Handler) showDriver(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d fleet.Driver, form driverForm) {
	name, err := h.vehicleName(r.Context(), us.Principal(), d.VehicleID, map[string]string{})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p.Data = driverData{Driver: d, VehicleName: name, License: licenseOf(d, h.svc.Now()), Form: form.withErrors(p)}
	h.render(w, status, "driver", p)
}

// saveDriver changes a driver with the UpdateDriver use case: every field
// of the form, an empty one cleared.
func (h *Handler) saveDriver(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	f := readDriverForm(r)
	d, err := h.svc.UpdateDriver(ctx, us.Principal(), r.PathValue("driver_id"), f.patch())
	if err != nil {
		old, gerr := h.svc.Driver(ctx, us.Principal(), r.PathValue("driver_id"))
		if gerr != nil {
			h.fail(w, r, &us, gerr)
			return
		}
		p := page{Title: old.Name, Nav: "drivers", User: &us}
		errorPage(&p, err)
		h.showDriver(w, r, us, statusOf(err), p, old, f)
		return
	}
	http.Redirect(w, r, "/drivers/"+d.ID+"?notice="+h.noticeOnce(r, d.Name+" is saved."), http.StatusSeeOther)
}

// deleteDriverPage asks an admin to confirm a driver's deletion, naming
// them.
func (h *Handler) deleteDriverPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !us.Can(fleet.PermDriversWrite) {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Only an admin or a manager of the account can delete drivers."))
		return
	}
	d, err := h.svc.Driver(r.Context(), us.Principal(), r.PathValue("driver_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	name, err := h.vehicleName(r.Context(), us.Principal(), d.VehicleID, map[string]string{})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deletedriver", page{Title: "Delete a driver", Nav: "drivers", User: &us,
		Data: driverData{Driver: d, VehicleName: name}})
}

// deleteDriver deletes a driver with the DeleteDriver use case.
func (h *Handler) deleteDriver(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	d, err := h.svc.Driver(ctx, us.Principal(), r.PathValue("driver_id"))
	if err == nil {
		_, err = h.svc.DeleteDriver(ctx, us.Principal(), d.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/drivers?notice="+h.noticeOnce(r, d.Name+" is deleted. Their trips keep them as their driver."), http.StatusSeeOther)
}

// assignDriver sets a vehicle's driver from its page (driver_id "" for
// none) with the AssignDriver use case, and leads back to the vehicle.
func (h *Handler) assignDriver(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	id := r.PathValue("vehicle_id")
	vd, err := h.svc.AssignDriver(ctx, us.Principal(), id, fleet.AssignTo(r.PostFormValue("driver_id")))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	notice := "The vehicle has no driver now."
	if vd.DriverID != "" {
		d, err := h.svc.Driver(ctx, us.Principal(), vd.DriverID)
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		notice = d.Name + " drives this vehicle now."
	}
	http.Redirect(w, r, "/vehicles/"+url.PathEscape(vd.VehicleID)+"?notice="+h.noticeOnce(r, notice)+"#driver", http.StatusSeeOther)
}
